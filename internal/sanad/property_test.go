package sanad

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/testutil/gdbs"
)

// propertyDeals are the authored deals and, when present, the GDBS deals.
func propertyDeals(t *testing.T) []dealCase {
	deals := authoredDeals(t)
	if root, ok := gdbs.Find(); ok {
		deals = append(deals, listDeals(t, root)...)
	}
	return deals
}

// invariant is the part of a grading that must not move when ids are
// renamed: everything keyed by claim key, without ids or explanation text.
type invariant struct {
	Claims  map[string][]string
	Deal    []string
	Calcs   []string
	Defects []string
}

func invariantOf(g *debate.DealGrading, calcName func(string) string) invariant {
	inv := invariant{Claims: map[string][]string{}}
	for _, c := range g.Claims {
		inv.Claims[c.ClaimKey] = []string{string(c.Grade), string(c.Verdict), string(c.Action), string(c.Corroboration),
			strconv.Itoa(c.IndependentCount), string(c.BaseGrade), c.Metric, strconv.FormatBool(c.Blocked)}
		for _, d := range c.Defects {
			inv.Claims[c.ClaimKey] = append(inv.Claims[c.ClaimKey], string(d.Type)+"/"+string(d.Severity)+"/"+string(d.CureProtocol)+"/"+strconv.Itoa(len(d.EvidenceRefs)))
		}
	}
	inv.Deal = []string{strconv.Itoa(g.GradeDCount), strconv.FormatFloat(g.SanadCoverage, 'f', -1, 64), strings.Join(g.BlockedClaimKeys, ",")}
	for _, d := range g.Defects {
		inv.Defects = append(inv.Defects, d.ClaimKey+"/"+string(d.Type))
	}
	for _, c := range g.Calcs {
		s := calcName(c.CalcID) + "/" + string(c.Type) + "/" + string(c.Grade)
		for _, k := range sortedKeysF(c.Output) {
			s += "/" + k + "=" + strconv.FormatFloat(c.Output[k], 'f', -1, 64)
		}
		inv.Calcs = append(inv.Calcs, s)
	}
	slices.Sort(inv.Calcs)
	return inv
}

func sortedKeysF(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func identity(s string) string { return s }

// cloneBundle deep-copies the slices the mutations below touch.
func cloneBundle(b *debate.DealBundle) *debate.DealBundle {
	c := *b
	c.Claims = slices.Clone(b.Claims)
	for i := range c.Claims {
		if v := c.Claims[i].Value; v != nil {
			vv := *v
			if v.TimeWindow != nil {
				tw := *v.TimeWindow
				vv.TimeWindow = &tw
			}
			c.Claims[i].Value = &vv
		}
	}
	c.Evidence = slices.Clone(b.Evidence)
	c.Spans = slices.Clone(b.Spans)
	c.Documents = slices.Clone(b.Documents)
	c.Sanads = slices.Clone(b.Sanads)
	for i := range c.Sanads {
		s := &c.Sanads[i]
		s.CorroboratingEvidenceIDs = slices.Clone(s.CorroboratingEvidenceIDs)
		s.Chain = slices.Clone(s.Chain)
		for j := range s.Chain {
			s.Chain[j].InputRefs = slices.Clone(s.Chain[j].InputRefs)
		}
	}
	c.Calcs = slices.Clone(b.Calcs)
	for i := range c.Calcs {
		c.Calcs[i].InputClaimIDs = slices.Clone(c.Calcs[i].InputClaimIDs)
		inputs := map[string]debate.Decimal{}
		for k, v := range c.Calcs[i].Inputs {
			inputs[k] = v
		}
		spans := map[string]string{}
		for k, v := range c.Calcs[i].InputSpanIDs {
			spans[k] = v
		}
		c.Calcs[i].Inputs, c.Calcs[i].InputSpanIDs = inputs, spans
	}
	return &c
}

func shuffle[T any](r *rand.Rand, xs []T) {
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
}

// TestPropertyShuffle: shuffling every input array never changes any
// result, explanations included.
func TestPropertyShuffle(t *testing.T) {
	t.Parallel()
	for _, d := range propertyDeals(t) {
		b := loadDeal(t, d.dir)
		want := Grade(b)
		for seed := range uint64(5) {
			r := rand.New(rand.NewPCG(seed, 42))
			c := cloneBundle(b)
			shuffle(r, c.Claims)
			shuffle(r, c.Evidence)
			shuffle(r, c.Spans)
			shuffle(r, c.Documents)
			shuffle(r, c.Sanads)
			shuffle(r, c.Calcs)
			for i := range c.Sanads {
				s := &c.Sanads[i]
				shuffle(r, s.CorroboratingEvidenceIDs)
				shuffle(r, s.Chain)
				for j := range s.Chain {
					shuffle(r, s.Chain[j].InputRefs)
				}
			}
			for i := range c.Calcs {
				shuffle(r, c.Calcs[i].InputClaimIDs)
			}
			require.Equal(t, want, Grade(c), "%s, shuffle seed %d", d.name, seed)
		}
	}
}

// TestPropertyRename: renaming every id consistently (and every origin
// token) never changes a grade, verdict, action, defect or calc.
func TestPropertyRename(t *testing.T) {
	t.Parallel()
	for _, d := range propertyDeals(t) {
		b := loadDeal(t, d.dir)
		want := invariantOf(Grade(b), identity)
		for _, salt := range []string{"x", "reversed"} {
			ren := func(id string) string {
				if id == "" {
					return ""
				}
				sum := sha256.Sum256([]byte(salt + id))
				return "id-" + hex.EncodeToString(sum[:10])
			}
			c := cloneBundle(b)
			c.Deal.ID = ren(c.Deal.ID)
			for i := range c.Claims {
				cl := &c.Claims[i]
				cl.ID, cl.DealID, cl.PrimarySpanID, cl.CreatedBy = ren(cl.ID), ren(cl.DealID), ren(cl.PrimarySpanID), ren(cl.CreatedBy)
			}
			for i := range c.Evidence {
				e := &c.Evidence[i]
				e.ID, e.SourceSpanID, e.UpstreamOriginID = ren(e.ID), ren(e.SourceSpanID), ren(e.UpstreamOriginID)
			}
			for i := range c.Spans {
				c.Spans[i].ID, c.Spans[i].DocumentID = ren(c.Spans[i].ID), ren(c.Spans[i].DocumentID)
			}
			for i := range c.Documents {
				c.Documents[i].ID = ren(c.Documents[i].ID)
			}
			for i := range c.Sanads {
				s := &c.Sanads[i]
				s.ID, s.ClaimID, s.PrimaryEvidenceID = ren(s.ID), ren(s.ClaimID), ren(s.PrimaryEvidenceID)
				for j := range s.CorroboratingEvidenceIDs {
					s.CorroboratingEvidenceIDs[j] = ren(s.CorroboratingEvidenceIDs[j])
				}
				for j := range s.Chain {
					n := &s.Chain[j]
					n.ID, n.OutputRef = ren(n.ID), ren(n.OutputRef)
					for k := range n.InputRefs {
						n.InputRefs[k] = ren(n.InputRefs[k])
					}
				}
			}
			names := map[string]string{}
			for i := range c.Calcs {
				k := &c.Calcs[i]
				names[ren(k.ID)] = k.ID
				k.ID, k.CalcSanadID = ren(k.ID), ren(k.CalcSanadID)
				for j := range k.InputClaimIDs {
					k.InputClaimIDs[j] = ren(k.InputClaimIDs[j])
				}
				for name, span := range k.InputSpanIDs {
					k.InputSpanIDs[name] = ren(span)
				}
			}
			require.NoError(t, c.Validate())
			got := invariantOf(Grade(c), func(id string) string { return names[id] })
			require.Equal(t, want, got, "%s, renamed with %q", d.name, salt)
		}
	}
}

// respell writes every value of text in another accepted spelling: money
// with or without separators, with a K/M/B suffix or a scale word,
// percentages with or without decimals or as "percent", months as "mo".
// The scale words and signs are kept out of it.
func respell(text string, variant int) string {
	if _, _, _, ok := scaleNote(text); ok {
		return text
	}
	toks := FindValues(text)
	var b strings.Builder
	last := 0
	for _, tok := range toks {
		v := tok.Value
		alt, ok := spelling(v, variant)
		if !ok {
			continue
		}
		b.WriteString(text[last:tok.Start])
		b.WriteString(alt)
		last = tok.End
	}
	b.WriteString(text[last:])
	return b.String()
}

func spelling(v Value, variant int) (string, bool) {
	if v.Num < 0 || v.Per != PeriodNone {
		return "", false
	}
	plain := strconv.FormatFloat(v.Num, 'f', -1, 64)
	scaled := func(unit float64, suffix string) (string, bool) {
		x := v.Num / unit
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if x < 1 || math.Abs(x*unit-v.Num) > 1e-6 || len(s) > 12 {
			return "", false
		}
		return s + suffix, true
	}
	switch v.Kind {
	case KindCurrency:
		switch variant % 4 {
		case 0:
			return "$" + fmtNum(v.Num), true
		case 1:
			return "USD " + plain, true
		case 2:
			if s, ok := scaled(1e6, "M"); ok {
				return "$" + s, true
			}
			return "$" + plain, true
		default:
			if s, ok := scaled(1e6, " million"); ok {
				return "$" + s, true
			}
			if s, ok := scaled(1e3, "K"); ok {
				return "$" + s, true
			}
			return fmtNum(v.Num) + " USD", true
		}
	case KindBare:
		if v.Num < 100 {
			// Fractions and small figures: add trailing zeros.
			if strings.Contains(plain, ".") {
				return plain + "0", true
			}
			return plain + ".0", true
		}
		switch variant % 3 {
		case 0:
			return fmtNum(v.Num), true
		case 1:
			if s, ok := scaled(1e6, " million"); ok {
				return s, true
			}
			return plain, true
		default:
			if s, ok := scaled(1e3, "K"); ok {
				return s, true
			}
			return plain, true
		}
	case KindPercent:
		switch variant % 3 {
		case 0:
			return strconv.FormatFloat(v.Num, 'f', 2, 64) + "%", true
		case 1:
			return plain + " percent", true
		default:
			return plain + " %", true
		}
	case KindMonths:
		if variant%2 == 0 {
			return plain + " mo", true
		}
		return plain + " months", true
	}
	return "", false
}

// TestPropertyRespell: writing numbers in another accepted spelling never
// changes a result.
func TestPropertyRespell(t *testing.T) {
	t.Parallel()
	for _, d := range propertyDeals(t) {
		b := loadDeal(t, d.dir)
		want := invariantOf(Grade(b), identity)
		for variant := range 4 {
			c := cloneBundle(b)
			changed := 0
			for i := range c.Spans {
				s := respell(c.Spans[i].TextExcerpt, variant+i)
				if s != c.Spans[i].TextExcerpt {
					changed++
				}
				c.Spans[i].TextExcerpt = s
			}
			require.Positive(t, changed, d.name)
			require.Equal(t, want, invariantOf(Grade(c), identity), "%s, respelling variant %d", d.name, variant)
		}
	}
}

func TestRespellKeepsValues(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"ARR: $4,500,000 (as of Dec 2025)", "0.725", "Gross Margin: 72.50%", "Runway: 22.5 months", "$19,331,000", "4500000", "TAM: $25,000,000,000 (X)"} {
		for variant := range 4 {
			alt := respell(text, variant)
			a, b := FindValues(text), FindValues(alt)
			require.Len(t, b, len(a), "%q -> %q", text, alt)
			for i := range a {
				require.InDelta(t, a[i].Value.Num, b[i].Value.Num, 1e-6, "%q -> %q", text, alt)
			}
		}
	}
}

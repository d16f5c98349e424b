package rules

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Concession penalties: an upheld challenge lowers the score of the claim
// it names by the severity of its defect (a FATAL one takes it to D).
const (
	penaltyMajor = 0.15
	penaltyMinor = 0.05
	minScore     = 0.05
)

// concession is the worst upheld challenge against one claim.
type concession struct {
	claim    *claimView
	severity debate.Severity
	typ      debate.DefectType
	ids      []string // challenge ids, in transcript order
}

// concessions folds upheld challenges into one concession per claim of
// the deal, keeping the worst severity.
func (v *view) concessions(upheld []raised) map[string]*concession {
	out := map[string]*concession{}
	for _, r := range upheld {
		sev := debate.Severity(r.ch.Severity)
		if !slices.Contains(debate.Severities, sev) {
			sev = debate.DefectType(r.ch.DefectType).DefaultSeverity()
		}
		for _, id := range r.ch.ClaimRefs {
			c := v.byID[id]
			if c == nil {
				continue
			}
			con := out[id]
			if con == nil {
				con = &concession{claim: c, severity: sev, typ: debate.DefectType(r.ch.DefectType)}
				out[id] = con
			} else if severityRank(sev) < severityRank(con.severity) {
				con.severity, con.typ = sev, debate.DefectType(r.ch.DefectType)
			}
			if !slices.Contains(con.ids, r.ch.ChallengeID) {
				con.ids = append(con.ids, r.ch.ChallengeID)
			}
		}
	}
	return out
}

// effectiveScore is a claim's grade score after the challenges upheld
// against it. A challenge whose defect the registry already holds is priced
// into the grade; only what the grading does not show lowers the score.
func effectiveScore(c *claimView, con *concession) float64 {
	s := gradeScore(c.grade.Grade)
	if con != nil && !c.hasDefect(con.typ) {
		switch con.severity {
		case debate.SeverityFatal:
			s = math.Min(s, scoreD)
		case debate.SeverityMajor:
			s -= penaltyMajor
		default:
			s -= penaltyMinor
		}
	}
	return math.Max(s, minScore)
}

// risk is one downside figure computed from the claims.
type risk struct {
	name      string // runway, burn_multiple, gross_margin, nrr
	value     float64
	threshold float64
	flagged   bool // beyond the threshold
	severe    bool // far beyond it
	claims    []*claimView
	calc      *calcView
}

// Risk thresholds: runway under 18 months (severe under 12), annual burn
// above ARR (severe above twice), gross margin under 60% (severe under
// 40%), net revenue retention under 100% (severe under 85%).
const (
	runwayMin       = 18
	runwaySevere    = 12
	burnMultipleMax = 1
	burnMultipleBad = 2
	marginMin       = 60
	marginSevere    = 40
	nrrMin          = 100
	nrrSevere       = 85
)

// pick returns the claim a figure of the metric is read from: a claim of
// that metric with a value that is not blocked, material first, heaviest,
// then by key.
func (v *view) pick(metric string) *claimView {
	cs := filter(v.claims, func(c *claimView) bool { return c.grade.Metric == metric && c.claim.Value != nil && !c.blocked() })
	if len(cs) == 0 {
		return nil
	}
	return byMateriality(cs)[0]
}

func unitHas(c *claimView, parts ...string) bool {
	u := strings.ToLower(c.claim.Value.Unit)
	return slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(u, p) })
}

// asPercent reads a percentage claim in points: 0.725 stated as a ratio
// is 72.5.
func asPercent(c *claimView, ratioBelow float64) float64 {
	x := c.claim.Value.Value.Float64()
	if !unitHas(c, "percent", "%", "pct") && x <= ratioBelow {
		return x * 100
	}
	return x
}

// risks computes the downside figures the claims allow, in a fixed order.
// A recomputed calc (runway, gross margin) replaces a claim it contradicts
// or a claim that is missing: the recomputation rests on the inputs, the
// stated figure only on its source.
func (v *view) risks() []risk {
	var out []risk
	runway := func(m float64) risk {
		return risk{name: "runway", value: m, threshold: runwayMin, flagged: m < runwayMin, severe: m < runwaySevere}
	}
	margin := func(m float64) risk {
		return risk{name: "gross_margin", value: m, threshold: marginMin, flagged: m < marginMin, severe: m < marginSevere}
	}
	// recomputable appends the figure of claim c (nil: none usable) read
	// by value, replaced by the output of a calc of type t that disagrees
	// with it or stands in for it.
	recomputable := func(c *claimView, value func(*claimView) float64, t debate.CalcType, figure func(float64) risk) {
		k := v.calcFor(t, c)
		var r risk
		switch {
		case k != nil:
			m, _ := calcOutput(k)
			r = figure(m)
			r.calc = k
		case c != nil:
			r = figure(value(c))
		default:
			return
		}
		if c != nil {
			r.claims = []*claimView{c}
		}
		out = append(out, r)
	}
	runwayClaim := v.pick("RUNWAY")
	if runwayClaim != nil && !unitHas(runwayClaim, "month") {
		runwayClaim = nil
	}
	recomputable(runwayClaim, func(c *claimView) float64 { return c.claim.Value.Value.Float64() }, debate.CalcRunway, runway)
	burn, arr := v.pick("BURN"), v.pick("ARR")
	if burn != nil && arr != nil && arr.claim.Value.Value.Float64() > 0 {
		monthly := burn.claim.Value.Value.Float64()
		if unitHas(burn, "year", "/yr", "annual") {
			monthly /= 12
		}
		annualARR := arr.claim.Value.Value.Float64()
		if unitHas(arr, "month", "/mo") {
			annualARR *= 12
		}
		m := monthly * 12 / annualARR
		out = append(out, risk{name: "burn_multiple", value: m, threshold: burnMultipleMax, flagged: m > burnMultipleMax, severe: m > burnMultipleBad, claims: []*claimView{burn, arr}})
	}
	recomputable(v.pick("GROSS_MARGIN"), func(c *claimView) float64 { return asPercent(c, 1) }, debate.CalcGrossMargin, margin)
	if c := v.pick("NRR"); c != nil {
		m := asPercent(c, 3)
		out = append(out, risk{name: "nrr", value: m, threshold: nrrMin, flagged: m < nrrMin, severe: m < nrrSevere, claims: []*claimView{c}})
	}
	return out
}

// calcFor returns the first calc of type t with an output that disagrees
// with claim c, or any calc of type t with an output when c is nil.
func (v *view) calcFor(t debate.CalcType, c *claimView) *calcView {
	for _, k := range v.calcs {
		if k.calc.Type != t {
			continue
		}
		if _, ok := calcOutput(k); ok && (c == nil || !calcAgrees(k, c)) {
			return k
		}
	}
	return nil
}

// riskText states a risk figure with the claims or calc it comes from.
func (d *draft) riskText(r risk) string {
	src, note := "", ""
	switch {
	case r.calc != nil:
		src = d.calcFact(r.calc)
		if len(r.claims) > 0 {
			note = "; the stated " + d.fact(r.claims[0]) + " disagrees with the recomputation"
		}
	case len(r.claims) > 0:
		src = d.fact(r.claims[0])
	}
	below, exceeds := "clears", "stays within"
	if r.flagged {
		below, exceeds = "is below", "exceeds"
	}
	switch r.name {
	case "runway":
		return fmt.Sprintf("%s %s the %d-month threshold%s", src, below, runwayMin, note)
	case "burn_multiple":
		burn, arr := r.claims[0], r.claims[1]
		return fmt.Sprintf("annualised burn from %s is %s× ARR from %s, which %s the %s× limit",
			d.fact(burn), formatNumber(r.value), d.fact(arr), exceeds, formatNumber(burnMultipleMax))
	case "gross_margin":
		return fmt.Sprintf("%s %s the %d%% software benchmark%s", src, below, marginMin, note)
	case "nrr":
		if r.flagged {
			return fmt.Sprintf("%s is below %d%%: the installed base shrinks without new sales", src, nrrMin)
		}
		return fmt.Sprintf("%s is at or above %d%%: the installed base grows on its own", src, nrrMin)
	}
	return r.name
}

// riskCondition is the condition a flagged risk puts on an investment.
func (d *draft) riskCondition(r risk) string {
	switch r.name {
	case "runway":
		return fmt.Sprintf("financing that extends runway beyond %d months (now %s months)", runwayMin, formatNumber(r.value))
	case "burn_multiple":
		return fmt.Sprintf("a plan to bring annual burn under ARR (now %s×)", formatNumber(r.value))
	case "gross_margin":
		return fmt.Sprintf("a path to gross margin above %d%% (now %s%%)", marginMin, formatNumber(r.value))
	case "nrr":
		return fmt.Sprintf("retention above %d%% (now %s%%)", nrrMin, formatNumber(r.value))
	}
	return r.name
}

// assessment is a reading of the whole deal: what an investment would rest
// on, what blocks it and what it is conditional on.
type assessment struct {
	relied     []*claimView // the claims the thesis cites, heaviest first
	blocked    []*claimView // material claims No-Free-Facts blocks
	redFlags   []*claimView // material claims CONTRADICTED or INFLATED
	fatal      []*claimView // material claims with a FATAL defect (not red flags)
	unverified []*claimView // other material claims not VERIFIED
	weak       []*claimView // material VERIFIED claims graded C or D
	conceded   map[string]*concession
	risks      []risk

	strength      float64 // materiality-weighted mean effective score of relied
	verifiedShare float64 // materiality-weighted share of material claims VERIFIED
	confidence    float64 // strength × (0.5 + 0.5 × verifiedShare)
	rec           string
	passReasons   []*claimView // the claims that make it PASS
}

// assess reads the deal with the given upheld challenges conceded.
func (v *view) assess(conceded map[string]*concession) assessment {
	a := assessment{conceded: conceded, risks: v.risks()}
	a.relied = byMateriality(filter(v.claims, func(c *claimView) bool { return !c.blocked() }))
	if len(a.relied) > maxCited {
		a.relied = a.relied[:maxCited]
	}
	a.strength = weightedMean(a.relied, func(c *claimView) float64 { return effectiveScore(c, conceded[c.id()]) })
	pool := v.material()
	if len(pool) == 0 {
		pool = v.claims
	}
	a.verifiedShare = weightedShare(pool, (*claimView).verified)
	a.confidence = a.strength * (0.5 + 0.5*a.verifiedShare)

	for _, c := range v.material() {
		switch {
		case c.blocked():
			a.blocked = append(a.blocked, c)
		case c.redFlag():
			a.redFlags = append(a.redFlags, c)
		case c.fatal():
			a.fatal = append(a.fatal, c)
		case !c.verified():
			a.unverified = append(a.unverified, c)
		case c.rank() >= 2:
			a.weak = append(a.weak, c)
		}
	}
	severe := slices.Concat(a.redFlags, a.fatal, a.blocked)
	for _, con := range sortedConcessions(conceded) {
		if con.severity == debate.SeverityFatal && con.claim.material() && !slices.Contains(severe, con.claim) {
			severe = append(severe, con.claim)
		}
	}
	for _, c := range severe {
		if c.claim.Materiality == debate.MaterialityCritical {
			a.passReasons = append(a.passReasons, c)
		}
	}
	if len(a.passReasons) == 0 && len(severe) >= 2 {
		a.passReasons = severe
	}
	materialConcession := false
	for _, con := range a.conceded {
		materialConcession = materialConcession || con.claim.material() && con.severity != debate.SeverityMinor
	}
	switch {
	case len(v.claims) == 0 || len(a.passReasons) > 0:
		a.rec = debate.RecommendPass
	case len(severe) > 0 || len(a.unverified) > 0 || len(a.weak) > 0 || materialConcession || slices.ContainsFunc(a.risks, func(r risk) bool { return r.flagged }):
		a.rec = debate.RecommendConditional
	default:
		a.rec = debate.RecommendInvest
	}
	return a
}

// sortedConcessions orders concessions by claim key.
func sortedConcessions(m map[string]*concession) []*concession {
	out := slices.Collect(maps.Values(m))
	slices.SortFunc(out, func(a, b *concession) int {
		return cmp.Or(cmp.Compare(a.claim.claim.Key, b.claim.claim.Key), cmp.Compare(a.claim.id(), b.claim.id()))
	})
	return out
}

// weightedScore is the materiality-weighted mean grade score of cs (0 for
// none).
func weightedScore(cs []*claimView) float64 {
	return weightedMean(cs, func(c *claimView) float64 { return gradeScore(c.grade.Grade) })
}

// weightedShare is the materiality-weighted share of cs that in accepts
// (0 for none).
func weightedShare(cs []*claimView, in func(*claimView) bool) float64 {
	return weightedMean(cs, func(c *claimView) float64 {
		if in(c) {
			return 1
		}
		return 0
	})
}

// mean is the mean of score over xs; xs must not be empty.
func mean[T any](xs []T, score func(T) float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += score(x)
	}
	return sum / float64(len(xs))
}

// weightedMean is the materiality-weighted mean of score over cs (0 for
// none).
func weightedMean(cs []*claimView, score func(*claimView) float64) float64 {
	var w, s float64
	for _, c := range cs {
		w += c.weight
		s += c.weight * score(c)
	}
	if w == 0 {
		return 0
	}
	return s / w
}

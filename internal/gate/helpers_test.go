package gate

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// The authored fact set: one deal with eight claims chosen to cover every
// case the gates distinguish, three calcs and their evidence.
//
//	key  what                  materiality     grade  corroboration  notes
//	C1   ARR $4.5M FY2025      CRITICAL, IC    A      MUTAWATIR      strong
//	C2   gross margin 72.5%    HIGH            B      AHAD_2         weak (grade)
//	C3   120 customers         MEDIUM          A      AHAD_1         weak (āḥād)
//	C4   TAM $3bn              HIGH            D      NONE           critical (grade D)
//	C5   runway 18 months      LOW             C      AHAD_1         weak
//	C6   45 employees          HIGH            B      AHAD_2         critical (open FATAL)
//	C7   LOI with a bank       MEDIUM          D      NONE           blocked, not material
//	C8   Series A $12M         MEDIUM          A      MUTAWATIR      strong
//
// K1 (gross margin, C1+C2) is grade B, K2 (runway, C5) grade C, K3 (C1+C8)
// grade A.
const (
	dealID         = "00000000-0000-4000-8000-0000000000d1"
	otherDealClaim = "00000000-0000-4000-8000-00000000ffff" // a claim id of no deal here
)

func claimID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-0000000001%02d", n) }
func calcID(n int) string  { return fmt.Sprintf("00000000-0000-4000-8000-0000000002%02d", n) }
func evID(n int) string    { return fmt.Sprintf("00000000-0000-4000-8000-0000000003%02d", n) }
func spanID(n int) string  { return fmt.Sprintf("00000000-0000-4000-8000-0000000004%02d", n) }
func docID(n int) string   { return fmt.Sprintf("00000000-0000-4000-8000-0000000005%02d", n) }

const fatalDefectID = "00000000-0000-4000-8000-000000000601"

type authoredClaim struct {
	key   string
	class debate.ClaimClass
	text  string
	mat   debate.Materiality
	ic    bool
	grade debate.Grade
	corr  debate.CorroborationStatus
	// phrases say the claim's fact in varied wording.
	phrases []string
}

var authored = []authoredClaim{
	{"C1", debate.ClaimClassFinancial, "ARR is $4,500,000 as of December 2025", debate.MaterialityCritical, true, debate.GradeA, debate.CorroborationMutawatir,
		[]string{"ARR of $4.5M for FY2025", "annual recurring revenue of USD 4,500,000", "ARR standing at 4.5 million dollars in December 2025", "recurring revenue of $4,500,000"}},
	{"C2", debate.ClaimClassFinancial, "Gross margin is 72.5%", debate.MaterialityHigh, false, debate.GradeB, debate.CorroborationAhad2,
		[]string{"a gross margin of 72.5%", "gross margin at 72.50 percent", "margins of 72.5% in FY2025"}},
	{"C3", debate.ClaimClassTraction, "120 paying customers", debate.MaterialityMedium, false, debate.GradeA, debate.CorroborationAhad1,
		[]string{"120 paying customers", "a customer base of 120 accounts", "customers numbering 120 at year end"}},
	{"C4", debate.ClaimClassMarketSize, "TAM is $3bn", debate.MaterialityHigh, false, debate.GradeD, debate.CorroborationNone,
		[]string{"a TAM of $3bn", "an addressable market of €3bn", "market size of 3 billion dollars"}},
	{"C5", debate.ClaimClassFinancial, "Runway is 18 months", debate.MaterialityLow, false, debate.GradeC, debate.CorroborationAhad1,
		[]string{"18 months of runway", "a runway of 18 months at current burn", "cash runway into Q2 2027"}},
	{"C6", debate.ClaimClassTeam, "45 employees", debate.MaterialityHigh, false, debate.GradeB, debate.CorroborationAhad2,
		[]string{"45 employees", "a headcount of 45", "a team of 45 staff"}},
	{"C7", debate.ClaimClassLegal, "LOI signed with a bank", debate.MaterialityMedium, false, debate.GradeD, debate.CorroborationNone,
		[]string{"an LOI signed with a bank", "a signed letter of intent from a lender"}},
	{"C8", debate.ClaimClassFinancial, "Raised a $12M Series A", debate.MaterialityMedium, false, debate.GradeA, debate.CorroborationMutawatir,
		[]string{"a $12M Series A", "USD 12,000,000 raised in the Series A", "a Series A of 12 million dollars"}},
}

var calcPhrases = map[int][]string{
	1: {"gross margin recomputes to 72.5%", "the margin calc gives 72.5 percent"},
	2: {"runway recomputes to 18.2 months", "the runway calc gives 18 months"},
	3: {"capital efficiency of 0.375x", "ARR per dollar raised of 0.38"},
}

// fixture is the test bundle of the package: the authored deal, its
// grading and Facts.
type fixture struct {
	bundle  *debate.DealBundle
	grading *debate.DealGrading
	facts   *Facts
}

func newFixture() *fixture {
	b := &debate.DealBundle{Deal: debate.Deal{ID: dealID, CompanyName: "Northwind Analytics"}}
	g := &debate.DealGrading{DealID: dealID}
	for i, a := range authored {
		n := i + 1
		b.Claims = append(b.Claims, debate.Claim{ID: claimID(n), DealID: dealID, Key: a.key, Class: a.class, Text: a.text, Materiality: a.mat, ICBound: a.ic, PrimarySpanID: spanID(n)})
		b.Spans = append(b.Spans, debate.Span{ID: spanID(n), DocumentID: docID(1 + n%2), Type: debate.SpanTypePageText, TextExcerpt: a.text})
		b.Evidence = append(b.Evidence, debate.EvidenceItem{ID: evID(n), SourceSpanID: spanID(n), SourceGrade: a.grade})
		cg := debate.ClaimGrade{ClaimID: claimID(n), ClaimKey: a.key, BaseGrade: a.grade, Grade: a.grade, Corroboration: a.corr, Verdict: debate.VerdictVerified}
		if a.key == "C6" {
			d := debate.Defect{ID: fatalDefectID, DealID: dealID, Origin: debate.OriginFlagged, ClaimID: claimID(n), ClaimKey: a.key,
				Type: debate.DefectBrokenChain, Severity: debate.SeverityFatal, Status: debate.DefectOpen}
			cg.Defects = []debate.Defect{d}
			g.Defects = append(g.Defects, d)
		}
		if a.key == "C7" {
			cg.Blocked, cg.Verdict = true, debate.VerdictBlocked
		}
		g.Claims = append(g.Claims, cg)
	}
	for _, d := range []int{1, 2} {
		b.Documents = append(b.Documents, debate.Document{ID: docID(d), ArtifactType: debate.ArtifactPitchDeck, VersionLabel: "v1"})
	}
	b.Calcs = []debate.Calc{
		{ID: calcID(1), Type: debate.CalcGrossMargin, InputClaimIDs: []string{claimID(1), claimID(2)}},
		{ID: calcID(2), Type: debate.CalcRunway, InputClaimIDs: []string{claimID(5)}},
		{ID: calcID(3), Type: debate.CalcGrossMargin, InputClaimIDs: []string{claimID(1), claimID(8)}},
	}
	g.Calcs = []debate.CalcResult{{CalcID: calcID(1), Grade: debate.GradeB}, {CalcID: calcID(2), Grade: debate.GradeC}, {CalcID: calcID(3), Grade: debate.GradeA}}
	return &fixture{bundle: b, grading: g, facts: NewFacts(b, g)}
}

func setup(t testing.TB) *fixture {
	t.Helper()
	return newFixture()
}

// strong are the claim numbers an output may rest on without
// uncertainties.
func strongClaim(n int) bool { return n == 1 || n == 8 }

func rules(vs []debate.Violation) []string {
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	return out
}

func hasRule(vs []debate.Violation, rule string) bool {
	return slices.ContainsFunc(vs, func(v debate.Violation) bool { return v.Rule == rule })
}

func hasViolation(vs []debate.Violation, rule, field string) bool {
	return slices.ContainsFunc(vs, func(v debate.Violation) bool { return v.Rule == rule && v.Field == field })
}

func clone(t testing.TB, o *debate.AgentOutput) *debate.AgentOutput {
	t.Helper()
	data, err := json.Marshal(o)
	require.NoError(t, err)
	var c debate.AgentOutput
	require.NoError(t, json.Unmarshal(data, &c))
	return &c
}

// ---- the corpus generator ----

// gen writes valid outputs over the authored fact set, deterministically
// from its seed, with varied wording.
type gen struct {
	r *rand.Rand
	n int
}

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// mention names a claim in a text, in one of the ways agents do.
func (g *gen) mention(n int) string {
	key := authored[n-1].key
	switch g.r.IntN(5) {
	case 0:
		return "(claim " + key + ")"
	case 1:
		return "(" + key + ")"
	case 2:
		return "[" + claimID(n) + "]"
	case 3:
		return "per " + key + ","
	}
	return ""
}

var (
	openersFact = map[string][]string{
		debate.RoleAdvocate:            {"The thesis rests on %s.", "%s supports the case.", "Consider %s, which is the core of the case.", "The case for investment starts from %s."},
		debate.RoleSanadBreaker:        {"The chain behind %s is thin.", "%s comes from a single deck page.", "I question the sourcing of %s."},
		debate.RoleContradictionFinder: {"%s should reconcile with the model.", "The documents disagree about %s.", "Compare %s across the deck and the model."},
		debate.RoleRiskOfficer:         {"The downside case hinges on %s.", "%s is the main exposure.", "If %s fails to hold, the thesis weakens."},
		debate.RoleArbiter:             {"The record shows %s.", "Both sides accept %s.", "The ruling takes %s as established."},
	}
	// Sentences without any fact, for outputs that reference nothing.
	procedural = []string{
		"I reserve judgement until the evidence chains are repaired.",
		"The arbiter should weigh the open challenges before any recommendation is made.",
		"Nothing in this turn adds to the record; I defer to the next round.",
		"My view is unchanged: the thesis needs stronger support before it can carry a decision.",
		"This turn raises no new challenge.",
		"I have no further challenge at this point and will wait for the rebuttal.",
		"The debate should continue until the weak chains are either cured or waived.",
		"Without better sourcing, I would not put weight on the thesis.",
		"However, the burden of proof stays with the advocate.",
		"We should not decide on the present record.",
	}
	connectors = []string{" ", " Moreover, ", " Also, ", " In addition, ", " Separately, "}
)

func (g *gen) sentence(role string, n int) string {
	phrase := g.pick(authored[n-1].phrases)
	if m := g.mention(n); m != "" {
		phrase += " " + m
	}
	s := fmt.Sprintf(g.pick(openersFact[role]), phrase)
	return strings.ToUpper(s[:1]) + s[1:]
}

func (g *gen) test() debate.FalsifiabilityTest {
	return debate.FalsifiabilityTest{
		TestDescription:  g.pick([]string{"Audited accounts confirm the recurring revenue", "Bank statements confirm the cash position", "Signed contracts match the customer count"}),
		RequiredEvidence: g.pick([]string{"FY2025 audited financial statements", "Bank statements for the last 12 months", "Customer contracts and invoices"}),
		PassFailRule:     g.pick([]string{"Fail if the audited figure is more than 5% below the stated one", "Fail if the balance differs by more than 10%", "Fail if fewer than 100 contracts are signed"}),
	}
}

func (g *gen) uncertainty() debate.Uncertainty {
	return debate.Uncertainty{
		Uncertainty: g.pick([]string{"Single-source figure", "Corroboration comes from one origin", "The model and the deck may use different periods"}),
		Impact:      g.pick([]string{"The thesis overstates traction", "Valuation rests on an unverified number", "The margin may be lower"}),
		Mitigation:  g.pick([]string{"Request the audited accounts", "Ask for bank statements", "Reconcile the model with the deck"}),
	}
}

// output writes the i-th valid output of the corpus.
func (g *gen) output(i int) *debate.AgentOutput {
	g.n++
	role := debate.IDISRoles[i%len(debate.IDISRoles)]
	o := &debate.AgentOutput{
		AgentID:     role,
		Role:        role,
		RoundNumber: 1 + g.r.IntN(5),
		ClaimRefs:   []string{},
		Muhasabah:   debate.Muhasabah{SupportedClaimIDs: []string{}},
	}
	factual := g.r.IntN(6) != 0
	weak := false
	if factual {
		k := 1 + g.r.IntN(3)
		perm := g.r.Perm(len(authored))[:k]
		var parts []string
		for j, p := range perm {
			n := p + 1
			s := g.sentence(role, n)
			if j > 0 {
				if len(s) > 1 && s[1] >= 'a' && s[1] <= 'z' {
					s = strings.ToLower(s[:1]) + s[1:]
				}
				s = strings.TrimLeft(g.pick(connectors), " ") + s
			}
			parts = append(parts, s)
			o.ClaimRefs = append(o.ClaimRefs, claimID(n))
			weak = weak || !strongClaim(n)
		}
		if g.r.IntN(3) == 0 {
			c := 1 + g.r.IntN(3)
			parts = append(parts, "The "+g.pick(calcPhrases[c])+" (calc "+calcID(c)+").")
			o.CalcRefs = []string{calcID(c)}
			o.Muhasabah.SupportedCalcIDs = []string{calcID(c)}
			weak = weak || c != 3
		}
		o.Content = strings.Join(parts, " ")
		o.Muhasabah.SupportedClaimIDs = slices.Clone(o.ClaimRefs)
		o.Muhasabah.EvidenceSummary = "Grounded in the registry: " + strings.Join(keysOf(o.ClaimRefs), ", ") + "."
	} else {
		o.Content = g.pick(procedural)
		if g.r.IntN(2) == 0 {
			o.Content += " " + g.pick(procedural)
		}
		o.Muhasabah.ConfidenceJustification = "No new evidence this turn."
	}

	// Confidence, position and the record's duties.
	switch {
	case !factual:
		o.Muhasabah.Confidence = float64(g.r.IntN(51)) / 100 // ≤ 0.50
	default:
		o.Muhasabah.Confidence = float64(g.r.IntN(101)) / 100
	}
	if factual && (role == debate.RoleAdvocate || role == debate.RoleArbiter || g.r.IntN(4) == 0) {
		o.Position = &debate.Position{
			Recommendation: g.pick([]string{debate.RecommendInvest, debate.RecommendConditional, debate.RecommendPass}),
			Confidence:     o.Muhasabah.Confidence,
		}
	}
	if o.Position != nil || o.Muhasabah.Confidence > 0.5 || g.r.IntN(3) == 0 {
		for range 1 + g.r.IntN(2) {
			o.Muhasabah.FalsifiabilityTests = append(o.Muhasabah.FalsifiabilityTests, g.test())
		}
	}
	if weak || o.Muhasabah.Confidence > 0.8 || g.r.IntN(3) == 0 {
		for range 1 + g.r.IntN(2) {
			o.Muhasabah.Uncertainties = append(o.Muhasabah.Uncertainties, g.uncertainty())
		}
	}
	if g.r.IntN(2) == 0 {
		o.Muhasabah.CounterHypothesis = g.pick([]string{"The figures may reflect a one-off contract.", "The deck may be more optimistic than the model.", "Growth may be seasonal."})
	}
	if g.r.IntN(3) == 0 {
		o.Muhasabah.FailureModes = []string{g.pick([]string{"Relying on management figures", "Period mismatch", "Double counting"})}
	}

	// Role-specific parts.
	switch role {
	case debate.RoleSanadBreaker, debate.RoleContradictionFinder:
		if factual {
			o.Challenges = append(o.Challenges, g.challenge(i, o.ClaimRefs[0]))
		}
	case debate.RoleArbiter:
		o.Rulings = []debate.Ruling{{ChallengeID: fmt.Sprintf("ch-%d-1", i-3), Upheld: g.r.IntN(2) == 0, Reason: "The challenge cites evidence from the deal and names a defect of the taxonomy."}}
	case debate.RoleRiskOfficer:
		if factual && g.r.IntN(2) == 0 {
			o.EvidenceRequests = []debate.EvidenceRequest{{Query: "audited revenue for the last fiscal year", ClaimRefs: []string{o.ClaimRefs[0]}}}
		}
	}
	if g.r.IntN(4) == 0 {
		o.OpenQuestions = []string{g.pick([]string{"Are the accounts audited?", "Which period does the model cover?", "Who prepared the deck?"})}
	}
	if factual && g.r.IntN(4) == 0 {
		o.ToolCalls = []debate.ToolCall{{Tool: "lookup_claim", Args: json.RawMessage(`{"claim_id":"` + o.ClaimRefs[0] + `","include_sanad":true}`)}}
	}
	if g.r.IntN(2) == 0 {
		o.Timestamp = "2026-01-05T10:00:00Z"
	}
	return o
}

// challenge writes a valid challenge of claim id.
func (g *gen) challenge(i int, id string) debate.Challenge {
	n := 0
	for j := range authored {
		if claimID(j+1) == id {
			n = j + 1
		}
	}
	types := []debate.DefectType{debate.DefectInconsistency, debate.DefectMissingLink, debate.DefectUnknownSource, debate.DefectTimeWindow, debate.DefectBrokenChain}
	dt := types[g.r.IntN(len(types))]
	ev := []string{g.pick([]string{evID(n), spanID(n), docID(1 + n%2), calcID(1)})}
	if g.r.IntN(3) == 0 {
		other := 1 + (n % len(authored)) // another claim as evidence
		ev = append(ev, claimID(other))
	}
	desc := g.pick([]string{
		"The only source is one deck page and no independent document corroborates %s; the chain needs a second origin.",
		"The model and the deck report %s for different periods, so the figure cannot be corroborated as stated.",
		"The extraction node of %s points at a span that does not carry the stated figure in the cited document.",
	})
	return debate.Challenge{
		ChallengeID:  fmt.Sprintf("ch-%d-1", i),
		ClaimRefs:    []string{id},
		DefectType:   string(dt),
		Severity:     string(dt.DefaultSeverity()),
		CureProtocol: string(dt.DefaultCure()),
		EvidenceRefs: ev,
		Description:  fmt.Sprintf(desc, "claim "+authored[n-1].key),
	}
}

func keysOf(ids []string) []string {
	var out []string
	for _, id := range ids {
		for j, a := range authored {
			if claimID(j+1) == id {
				out = append(out, a.key)
			}
		}
	}
	return out
}

// validCorpus is the corpus of valid outputs.
func validCorpus(n int) []*debate.AgentOutput {
	g := newGen(20260105)
	out := make([]*debate.AgentOutput, n)
	for i := range out {
		out[i] = g.output(i)
	}
	return out
}

package rules

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
)

// Caps keep outputs readable and within the gate's limits on big deals.
const (
	maxCited        = 10 // claims a thesis cites
	maxChallenges   = 10 // new challenges of one role in one round
	maxTests        = 4
	maxUncertain    = 16
	maxOpenQuestion = 8
	maxListed       = 8 // claims named in one list of a sentence
)

// draft collects one output: its sentences and everything they reference.
// Claims and calcs enter the references only through its methods, so no
// sentence can name one that is not referenced.
type draft struct {
	v         *view
	sentences []string
	claimIDs  []string
	calcIDs   []string
	seen      map[string]bool

	tests         []debate.FalsifiabilityTest
	failureModes  []string
	counter       string
	justification string
	confidence    float64
	position      string // recommendation, empty for none

	challenges []debate.Challenge
	rulings    []debate.Ruling
	requests   []debate.EvidenceRequest
	questions  []string
	structured any
}

func newDraft(v *view) *draft { return &draft{v: v, seen: map[string]bool{}} }

// ref records a claim as referenced and returns "claim C1".
func (d *draft) ref(c *claimView) string {
	if !d.seen[c.id()] {
		d.seen[c.id()] = true
		d.claimIDs = append(d.claimIDs, c.id())
	}
	return "claim " + c.key()
}

// refCalc records a calc as referenced and returns "calc RUNWAY <id>".
func (d *draft) refCalc(c *calcView) string {
	if !d.seen["calc\x00"+c.id()] {
		d.seen["calc\x00"+c.id()] = true
		d.calcIDs = append(d.calcIDs, c.id())
	}
	return fmt.Sprintf("calc %s %s", c.calc.Type, c.id())
}

// fact states a claim with its value, grade and verdict, and references
// it: "ARR of $4,500,000 for FY2025 (claim C1, grade B, VERIFIED)". A
// blocked claim's value is never stated: No-Free-Facts keeps it out.
func (d *draft) fact(c *claimView) string {
	tag := fmt.Sprintf("(%s, grade %s, %s)", d.ref(c), c.grade.Grade, c.grade.Verdict)
	name := metricName(c)
	switch {
	case c.blocked():
		return name + " " + tag
	case c.claim.Value != nil:
		s := name + " of " + formatValue(c.claim.Value)
		if w := c.claim.Value.TimeWindow; w != nil && w.Label != "" {
			s += " for " + clip(w.Label, 30)
		}
		return s + " " + tag
	case strings.TrimSpace(c.claim.Text) != "":
		return fmt.Sprintf("%q %s", clip(c.claim.Text, 100), tag)
	}
	return name + " " + tag
}

// brief names a claim by metric and key with its grade, without its value:
// "ARR (claim C1, grade D)".
func (d *draft) brief(c *claimView) string {
	return fmt.Sprintf("%s (%s, grade %s)", metricName(c), d.ref(c), c.grade.Grade)
}

// calcFact states a calc's recomputed output and references it.
func (d *draft) calcFact(c *calcView) string {
	out := c.result.Output
	x, comparable := calcOutput(c)
	var s string
	switch {
	case comparable && c.calc.Type == debate.CalcGrossMargin:
		s = "gross margin recomputed at " + formatNumber(x) + "%"
	case comparable && c.calc.Type == debate.CalcRunway:
		s = "runway recomputed at " + formatNumber(x) + " months"
	case len(out) > 0:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(out)) {
			parts = append(parts, k+" "+formatNumber(out[k]))
		}
		s = strings.ToLower(string(c.calc.Type)) + " recomputed as " + strings.Join(parts, ", ")
	default:
		s = strings.ToLower(string(c.calc.Type)) + " not computable from its inputs"
	}
	return fmt.Sprintf("%s (%s, grade %s)", s, d.refCalc(c), c.result.Grade)
}

// someKeys references the claims and names at most maxListed of them:
// "claim C1, claim C2 and 3 more".
func someKeys(d *draft, cs []*claimView) string { return listSome(cs, d.ref) }

func (d *draft) say(format string, args ...any) {
	if s := sentence(fmt.Sprintf(format, args...)); s != "" {
		d.sentences = append(d.sentences, s)
	}
}

func (d *draft) test(desc, evidence, rule string) {
	d.tests = append(d.tests, debate.FalsifiabilityTest{TestDescription: sentence(desc), RequiredEvidence: sentence(evidence), PassFailRule: sentence(rule)})
}

func (d *draft) question(format string, args ...any) {
	if len(d.questions) < maxOpenQuestion {
		d.questions = append(d.questions, sentence(fmt.Sprintf(format, args...)))
	}
}

// output assembles the AgentOutput and completes the Muhasabah record so
// that seed 000 §7 holds whatever the role wrote: an uncertainty for every
// weak supported claim (and at least one), a falsifiability test when the
// confidence is above 0.50 or there is a position, a counter-hypothesis.
func (d *draft) output(role string, round int, calls []debate.ToolCall) *debate.AgentOutput {
	// Every id-shaped token of the texts is referenced or known, whatever
	// the texts quote (grader descriptions, claim texts, challenge ids of
	// other agents).
	for i := range d.sentences {
		d.sentences[i] = d.scrub(d.sentences[i])
	}
	for i := range d.challenges {
		d.challenges[i].Description = d.scrub(d.challenges[i].Description)
	}
	for i := range d.questions {
		d.questions[i] = d.scrub(d.questions[i])
	}
	for i := range d.requests {
		d.requests[i].Query = d.scrub(d.requests[i].Query)
	}
	conf := round2(max(0, min(d.confidence, 1)))
	unc := first(d.weakUncertainties(), maxUncertain)
	if len(unc) == 0 {
		unc = append(unc, debate.Uncertainty{
			Uncertainty: sentence(fmt.Sprintf("The debate sees only the registry of deal %s: evidence not yet registered cannot be weighed", d.v.deal.Deal.ID)),
			Impact:      "Conclusions may change when new evidence is registered.",
			Mitigation:  "Request the data room index and register every figure the thesis relies on.",
		})
	}
	tests := first(d.tests, maxTests)
	if len(tests) == 0 && (conf > 0.5 || d.position != "") {
		tests = append(tests, debate.FalsifiabilityTest{
			TestDescription:  sentence(fmt.Sprintf("Re-grade deal %s once new evidence is registered", d.v.deal.Deal.ID)),
			RequiredEvidence: "Primary documents (grade A or B) for every material claim.",
			PassFailRule:     sentence(fmt.Sprintf("This output fails if the re-grade changes the grade or verdict of any claim it relies on (confidence %s)", f2(conf))),
		})
	}
	counter := d.counter
	if strings.TrimSpace(counter) == "" {
		counter = "The registry may be incomplete: figures not yet registered could reverse this reading of the deal."
	}
	justification := cmp.Or(d.justification, "Confidence "+f2(conf)+" follows from the grades of the claims relied on.")
	// No-Free-Facts by construction: an output that references nothing
	// asserts nothing (a name or a figure would be a free fact).
	sentences := d.sentences
	if len(d.claimIDs) == 0 && len(d.calcIDs) == 0 {
		sentences = []string{"No claim or calc of this deal can be relied on, so this turn asserts no fact."}
		if d.position != "" {
			sentences = append(sentences, "Position "+d.position+".")
		}
	}
	out := &debate.AgentOutput{
		AgentID:     role,
		Role:        role,
		RoundNumber: round,
		Content:     strings.Join(sentences, " "),
		ClaimRefs:   append([]string{}, d.claimIDs...),
		CalcRefs:    clone(d.calcIDs),
		ToolCalls:   calls,
		Muhasabah: debate.Muhasabah{
			SupportedClaimIDs:       append([]string{}, d.claimIDs...),
			SupportedCalcIDs:        clone(d.calcIDs),
			EvidenceSummary:         d.evidenceSummary(),
			CounterHypothesis:       sentence(counter),
			FalsifiabilityTests:     tests,
			Uncertainties:           unc,
			FailureModes:            d.failureModes,
			Confidence:              conf,
			ConfidenceJustification: sentence(justification),
		},
		Challenges:       d.challenges,
		Rulings:          d.rulings,
		EvidenceRequests: d.requests,
		OpenQuestions:    d.questions,
	}
	if d.position != "" {
		out.Position = &debate.Position{Recommendation: d.position, Confidence: conf}
	}
	if d.structured != nil {
		if raw, err := json.Marshal(d.structured); err == nil {
			out.StructuredContent = raw
		}
	}
	return out
}

// weakUncertainties writes one uncertainty for each referenced claim below
// grade A or short of MUTAWATIR (seed 000 §7 rule 3).
func (d *draft) weakUncertainties() []debate.Uncertainty {
	var out []debate.Uncertainty
	for _, id := range d.claimIDs {
		c := d.v.byID[id]
		if c == nil || !c.weak() {
			continue
		}
		what := fmt.Sprintf("Claim %s (%s) is grade %s with %s corroboration (%s); verdict %s",
			c.key(), metricName(c), c.grade.Grade, c.grade.Corroboration, plural(c.grade.IndependentCount, "independent source group"), c.grade.Verdict)
		impact := fmt.Sprintf("Claim %s is %s: if its figure is wrong, every conclusion resting on it moves with it", c.key(), materialityText(c))
		out = append(out, debate.Uncertainty{Uncertainty: sentence(what), Impact: sentence(impact), Mitigation: sentence(mitigation(c))})
	}
	return out
}

// mitigation is what would lift a claim's uncertainty, from its action.
func mitigation(c *claimView) string {
	switch c.grade.Action {
	case debate.ActionRedFlag:
		return "Reconcile the conflicting sources of claim " + c.key() + " and correct the stated figure before relying on it"
	case debate.ActionRequestData:
		return "Request the source data for claim " + c.key() + " (" + requiredEvidence(c) + ") covering the claim's own period and latest version"
	case debate.ActionPartnerOverrideRequired:
		return "Reconstruct the transmission chain of claim " + c.key() + " or obtain a partner override"
	case debate.ActionRejectNoFreeFacts:
		return "Register an evidence span for claim " + c.key() + " or keep it out of IC-bound output"
	}
	if c.grade.Grade == debate.GradeA {
		return "Add independent sources for claim " + c.key() + " until it is MUTAWATIR"
	}
	return "Obtain an independent grade-A source for claim " + c.key() + ": " + requiredEvidence(c)
}

// evidenceFor names, by metric, the primary document that would test it.
var evidenceFor = map[string]string{
	"ARR":          "a billing-system export or audited revenue schedule",
	"GROSS_MARGIN": "an audited P&L with revenue and cost of revenue",
	"BURN":         "bank statements for the last three months",
	"RUNWAY":       "a bank statement of cash at the as-of date and the monthly burn",
	"CAC":          "sales and marketing spend and new-customer counts for the period",
	"NRR":          "revenue by customer cohort for both periods compared",
	"TAM":          "an independent market study with its method",
}

// requiredEvidence names the primary document that would test a claim's
// metric.
func requiredEvidence(c *claimView) string {
	return cmp.Or(evidenceFor[c.grade.Metric], "a primary document (grade A or B) stating the figure")
}

// tolerance says how far an independent figure may differ before a test
// fails: 5% for amounts, 2 points for percentages, 2 months for durations.
func tolerance(c *claimView) string {
	if c.claim.Value == nil {
		return "contradicts it"
	}
	switch strings.ToLower(c.claim.Value.Unit) {
	case "percent", "%", "pct":
		return "differs from " + formatValue(c.claim.Value) + " by more than 2 percentage points"
	case "months", "month":
		return "differs from " + formatValue(c.claim.Value) + " by more than 2 months"
	}
	return "differs from " + formatValue(c.claim.Value) + " by more than 5%"
}

func (d *draft) evidenceSummary() string {
	var verified, strong, weak int
	for _, id := range d.claimIDs {
		c := d.v.byID[id]
		if c == nil {
			continue
		}
		if c.verified() {
			verified++
		}
		if c.rank() <= 1 {
			strong++
		} else {
			weak++
		}
	}
	if len(d.claimIDs) == 0 && len(d.calcIDs) == 0 {
		return "No registry claims or calcs are relied on."
	}
	return sentence(fmt.Sprintf("Relies on %s (%d VERIFIED; %d graded A or B, %d graded C or D) and %s",
		plural(len(d.claimIDs), "claim"), verified, strong, weak, plural(len(d.calcIDs), "calc")))
}

func clone(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	return append([]string{}, xs...)
}

// unresolved replaces an id-shaped token that names nothing in the deal.
const unresolved = "an unresolved id"

// scrub walks text's id-shaped tokens as internal/gate reads them: a
// claim (by id or key) or calc of the deal is referenced, another id of the
// deal (evidence, span, document, defect, the deal) is kept, and a token
// shaped like a UUID or a claim key ("C12") that names nothing in the deal
// is replaced, so a text never cites what does not exist.
func (d *draft) scrub(text string) string {
	v := d.v
	var b strings.Builder
	changed, last := false, 0
	for i, j := range gate.IDTokens(text) {
		tok := text[i:j]
		if _, ok := v.ids[tok]; !ok {
			if gate.IDShaped(tok) {
				changed = true
				b.WriteString(text[last:i])
				b.WriteString(unresolved)
				last = j
			}
			continue
		}
		switch {
		case v.byID[tok] != nil:
			d.ref(v.byID[tok])
		case v.byKey[tok] != nil:
			d.ref(v.byKey[tok])
		case v.calcBy[tok] != nil:
			d.refCalc(v.calcBy[tok])
		}
	}
	if !changed {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

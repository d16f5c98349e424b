package rules

import (
	"cmp"
	"context"
	"fmt"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// riskFindings are the risk officer's challenges: claims graded D or with
// a FATAL defect that no turn has challenged yet, whose weakness is not a
// matn defect (the contradiction finder's, who speaks in parallel).
func (v *view) riskFindings() []finding {
	var out []finding
	for _, c := range v.claims {
		if (c.rank() < 3 && !c.fatal()) || c.onlyMatn() {
			continue
		}
		ds := c.openDefects()
		if len(ds) > 0 && !isMatn(ds[0].Type) {
			out = append(out, v.defectFinding(c, ds[0]))
			continue
		}
		if len(ds) == 0 && c.material() {
			out = append(out, v.weakSourceFinding(c, fmt.Sprintf("the claim is graded D (base grade %s) with no defect to cure: its source cannot carry a material figure", c.grade.BaseGrade)))
		}
	}
	sortFindings(out)
	return out
}

// riskTurn computes the downside figures from the claims (runway, annual
// burn against ARR, gross margin, net revenue retention), names the
// grade-D claims and FATAL defects, challenges those nobody has
// challenged, and takes a position: PASS on a severe risk or a FATAL /
// grade-D CRITICAL claim, INVEST_WITH_CONDITIONS on any flagged risk or
// grade-D material claim, INVEST otherwise. Its confidence is the weighted
// grade score of the claims (and calcs) its figures come from.
func riskTurn(ctx context.Context, v *view) (*debate.AgentOutput, error) {
	d := newDraft(v)
	risks := v.risks()
	fresh := d.raiseNew(v, v.riskFindings())

	d.say("Round %d: the risk officer computes %s from the registry", v.round, plural(len(risks), "downside figure"))
	var used []*claimView
	var usedCalcs []*calcView
	severe, flagged := 0, 0
	for _, r := range risks {
		label := "Within limits"
		switch {
		case r.severe:
			label, severe, flagged = "Severe risk", severe+1, flagged+1
		case r.flagged:
			label, flagged = "Risk", flagged+1
		}
		d.say("%s: %s", label, d.riskText(r))
		used = append(used, r.claims...)
		if r.calc != nil {
			usedCalcs = append(usedCalcs, r.calc)
		}
		if r.flagged {
			d.riskQuestion(r)
		}
	}
	if c := v.pick("CAC"); c != nil {
		d.question("How long is the payback on %s: the registry states no revenue or gross profit per new customer to compute it from", d.fact(c))
		used = append(used, c)
	}

	evidenceRisks := filter(v.claims, func(c *claimView) bool { return c.rank() == 3 || c.fatal() })
	criticals := filter(evidenceRisks, (*claimView).critical)
	critical := len(criticals)
	if len(evidenceRisks) > 0 {
		named := listSome(evidenceRisks, func(c *claimView) string { return d.flagged(c, nil) })
		d.say("Evidence risk: %s cannot carry a decision as graded", named)
		used = append(used, evidenceRisks...)
	}
	for i, f := range fresh {
		d.say("Challenge %s: %s is challenged (%s %s)", d.challenges[i].ChallengeID, d.ref(f.claim), f.severity, f.typ)
	}
	d.followUps(v)
	var arg argument
	for _, r := range risks {
		if r.severe || (r.flagged && arg.Text == "") {
			arg = d.argue(d.riskText(r), r.claims)
		}
	}
	if arg.Text == "" && len(evidenceRisks) > 0 {
		arg = d.argue(fmt.Sprintf("%s cannot carry a decision as graded", d.flagged(evidenceRisks[0], nil)), evidenceRisks[:1])
	}
	if arg.Text == "" && len(risks) > 0 {
		var parts []string
		var cs []*claimView
		for _, r := range risks {
			parts = append(parts, d.riskShort(r))
			cs = append(cs, r.claims...)
		}
		arg = d.argue(fmt.Sprintf("Every downside figure is within its limit: %s", joinList(parts)), cs)
	}

	switch {
	case severe > 0 || critical > 0:
		d.position = debate.RecommendPass
		d.say("Position PASS: %s and %s on CRITICAL claims", plural(severe, "severe risk"), plural(critical, "grade-D or FATAL defect"))
	case flagged > 0 || len(evidenceRisks) > 0:
		d.position = debate.RecommendConditional
		d.say("Position INVEST_WITH_CONDITIONS: %s to mitigate before closing", plural(flagged+len(evidenceRisks), "risk"))
	case len(risks) > 0:
		d.position = debate.RecommendInvest
		d.say("Position INVEST: every computed figure is within its limit")
	default:
		// No figure could be computed: no downside was measured, which is
		// not a reason to invest.
		d.say("No position: the registry allows no downside figure to be computed, so the risk officer abstains")
	}
	if severe == 0 && critical > 0 {
		// The PASS rests on the evidence, not on a figure: that is the
		// argument.
		c := criticals[0]
		arg = d.argue(fmt.Sprintf("%s is CRITICAL and cannot carry a decision as graded", d.flagged(c, nil)), []*claimView{c})
	}

	// Confidence: the figures are as reliable as the claims they come from.
	var w, s float64
	seen := map[*claimView]bool{}
	for _, c := range used {
		if !seen[c] {
			seen[c] = true
			w += c.weight
			s += c.weight * gradeScore(c.grade.Grade)
		}
	}
	for _, k := range usedCalcs {
		w++
		s += gradeScore(k.result.Grade)
	}
	if w > 0 {
		d.confidence = s / w
		d.justification = fmt.Sprintf("Confidence %s is the materiality-weighted grade score of the %s and %s the figures come from",
			f2(round2(d.confidence)), plural(len(seen), "claim"), plural(len(usedCalcs), "calc"))
	} else {
		d.confidence = weightedScore(v.material())
		d.justification = fmt.Sprintf("No figure could be computed: confidence %s is the weighted grade score of the material claims", f2(round2(d.confidence)))
	}

	tc := newCaller(ctx, v, 1)
	if err := tc.lookUp(v, tools.LookupCalc, mapStrings(usedCalcs, (*calcView).id)); err != nil {
		return nil, err
	}

	for _, r := range risks {
		if len(d.tests) == maxTests {
			break
		}
		d.riskTest(r)
	}
	d.counter = "The figures may be conservative snapshots: a financing round in progress, seasonal burn or a pricing change could move runway, burn and margins beyond what the registry states."
	for _, r := range risks {
		if r.flagged {
			d.counter = fmt.Sprintf("The %s figure may overstate the risk: it comes from a single snapshot in the registry, and a committed financing or a cost plan not yet registered could bring it within its limit", cmp.Or(riskLabels[r.name], r.name))
			break
		}
	}
	d.failureModes = []string{"A risk figure is computed from a claim later restated.", "A downside not expressed in the registry's metrics (regulatory, concentration) dominates."}
	d.structured = riskState(risks, arg)
	return d.output(v.role, v.round, tc.made), nil
}

// riskShort states a figure against its limit: "runway 28 months (limit
// 18)", naming the claims or calc it comes from.
func (d *draft) riskShort(r risk) string {
	src := mapStrings(r.claims, d.ref)
	if r.calc != nil {
		src = append(src, d.refCalc(r.calc))
	}
	var fig string
	switch r.name {
	case "runway":
		fig = fmt.Sprintf("runway %s months (at least %d)", formatNumber(r.value), runwayMin)
	case "burn_multiple":
		fig = fmt.Sprintf("annual burn %s× ARR (at most %s×)", formatNumber(r.value), formatNumber(burnMultipleMax))
	case "gross_margin":
		fig = fmt.Sprintf("gross margin %s%% (at least %d%%)", formatNumber(r.value), marginMin)
	case "nrr":
		fig = fmt.Sprintf("net revenue retention %s%% (at least %d%%)", formatNumber(r.value), nrrMin)
	default:
		fig = r.name + " " + formatNumber(r.value)
	}
	return fig + " from " + joinList(src)
}

// riskLabels name the figures whose id does not read as text.
var riskLabels = map[string]string{"burn_multiple": "burn multiple", "gross_margin": "gross margin", "nrr": "net revenue retention"}

// riskQuestion asks what would mitigate a flagged risk.
func (d *draft) riskQuestion(r risk) {
	src := ""
	if r.calc != nil {
		src = d.refCalc(r.calc)
	} else if len(r.claims) > 0 {
		src = d.ref(r.claims[0])
	}
	switch r.name {
	case "runway":
		d.question("What financing closes before the %s months of runway in %s run out", formatNumber(r.value), src)
	case "burn_multiple":
		d.question("What plan brings annual burn below ARR (now %s× from %s and %s)", formatNumber(r.value), d.ref(r.claims[0]), d.ref(r.claims[1]))
	case "gross_margin":
		d.question("What raises gross margin from %s%% (%s) above %d%%", formatNumber(r.value), src, marginMin)
	case "nrr":
		d.question("Why does net revenue retention of %s%% (%s) stay below %d%%, and which cohorts churn", formatNumber(r.value), src, nrrMin)
	}
}

// riskTest says what would show a risk figure wrong.
func (d *draft) riskTest(r risk) {
	evidence := "bank statements and the board-approved budget"
	if len(r.claims) > 0 {
		evidence = requiredEvidence(r.claims[0])
	}
	switch r.name {
	case "runway":
		rule := fmt.Sprintf("The runway reading fails if audited cash divided by average monthly burn is %d months or more", runwayMin)
		if !r.flagged {
			rule = fmt.Sprintf("The runway reading fails if audited cash divided by average monthly burn is under %d months", runwayMin)
		}
		d.test("Recompute runway from audited cash and the last three months of burn", evidence, rule)
	case "burn_multiple":
		d.test("Recompute annual burn against ARR from bank statements and billing data", evidence,
			fmt.Sprintf("The burn-multiple reading fails if the recomputed multiple falls on the other side of %s× from %s×", formatNumber(burnMultipleMax), formatNumber(r.value)))
	case "gross_margin":
		d.test("Recompute gross margin from an audited P&L", evidence,
			fmt.Sprintf("The margin reading fails if the audited margin falls on the other side of %d%% from %s%%", marginMin, formatNumber(r.value)))
	case "nrr":
		d.test("Recompute net revenue retention from customer-level revenue", evidence,
			fmt.Sprintf("The retention reading fails if the recomputed figure falls on the other side of %d%% from %s%%", nrrMin, formatNumber(r.value)))
	}
}

// riskState is the risk officer's structured content: each figure and
// whether it is flagged.
func riskState(rs []risk, arg argument) any {
	type fig struct {
		Name      string  `json:"name"`
		Value     float64 `json:"value"`
		Threshold float64 `json:"threshold"`
		Flagged   bool    `json:"flagged"`
		Severe    bool    `json:"severe"`
	}
	out := struct {
		Figures  []fig    `json:"figures"`
		Argument argument `json:"argument"`
	}{Figures: []fig{}, Argument: arg}
	for _, r := range rs {
		out.Figures = append(out.Figures, fig{r.name, round2(r.value), r.threshold, r.flagged, r.severe})
	}
	return out
}

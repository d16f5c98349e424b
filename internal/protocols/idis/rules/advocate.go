package rules

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// advocateState is the advocate's structured content.
type advocateState struct {
	Turn                 string   `json:"turn"` // opening or rebuttal
	Recommendation       string   `json:"recommendation"`
	Strength             float64  `json:"evidence_strength"`
	VerifiedShare        float64  `json:"verified_material_share"`
	ConcededChallengeIDs []string `json:"conceded_challenge_ids,omitempty"`
	Acknowledged         []string `json:"acknowledged_challenge_ids,omitempty"`
	Contested            []string `json:"contested_challenge_ids,omitempty"`
	Argument             argument `json:"argument"`
}

// advocateTurn presents the thesis (opening) or answers the round's
// challenges (rebuttal, once the round's sanad_breaker has spoken). Both
// concede the challenges upheld in earlier rounds, which lowers the scores
// of the claims they name; the confidence is the thesis's support:
// weighted effective grade score × (0.5 + 0.5 × verified material share).
func advocateTurn(ctx context.Context, v *view) (*debate.AgentOutput, error) {
	rebuttal := v.spoke(debate.RoleSanadBreaker, v.round)
	upheld := v.upheldBefore(v.round)
	opening := v.assess(v.concessions(upheld))
	a := opening
	d := newDraft(v)
	company := cmp.Or(v.deal.Deal.CompanyName, "the company")
	var answered []answerNote
	if rebuttal {
		// The challenges of this round the advocate concedes or narrows
		// count against the thesis at once: the position and confidence
		// are revised in the rebuttal, not a round later.
		answered = v.answers()
		conceded := slices.Clone(upheld)
		for _, n := range answered {
			if n.a.kind == answerConcede || n.a.kind == answerNarrow {
				conceded = append(conceded, n.r)
			}
		}
		a = v.assess(v.concessions(conceded))
	}
	st := advocateState{Turn: "opening", Recommendation: a.rec, Strength: round2(a.strength), VerifiedShare: round2(a.verifiedShare)}
	if rebuttal {
		st.Turn = "rebuttal"
		switch {
		case a.rec != opening.rec:
			d.say("Round %d rebuttal for %s: the advocate revises its position from %s at %s to %s at %s after this round's challenges",
				v.round, company, opening.rec, f2(round2(opening.confidence)), a.rec, f2(round2(a.confidence)))
		case round2(a.confidence) != round2(opening.confidence):
			d.say("Round %d rebuttal for %s: the advocate keeps %s but lowers its confidence from %s to %s for what this round's challenges showed",
				v.round, company, a.rec, f2(round2(opening.confidence)), f2(round2(a.confidence)))
		default:
			d.say("Round %d rebuttal for %s: the advocate keeps %s at %s, since no challenge this round moves the thesis", v.round, company, a.rec, f2(round2(a.confidence)))
		}
		st.Acknowledged, st.Contested = d.respond(answered)
	} else {
		d.say("Round %d opening for %s: the advocate recommends %s", v.round, company, a.rec)
	}
	var arg argument
	switch {
	case len(a.relied) == 0:
		d.say("The registry holds no usable claim for this deal, so no thesis can rest on it")
	case rebuttal:
		if usable := filter(a.relied, (*claimView).sound); len(usable) > 0 {
			d.say("The thesis still rests on %s", someKeys(d, usable))
			usable = first(usable, 3)
			arg = d.argue("After the challenges the thesis still rests on "+joinList(mapStrings(usable, d.fact)), usable)
		}
	default:
		usable := filter(a.relied, (*claimView).sound)
		facts := mapStrings(usable, d.fact)
		if len(facts) > 0 && a.rec == debate.RecommendPass {
			d.say("What holds up is %s, but it does not carry the deal", joinList(facts))
		} else if len(facts) > 0 {
			d.say("The thesis rests on %s", joinList(facts))
			n := min(3, len(usable))
			arg = d.argue("The thesis rests on "+joinList(facts[:n]), usable[:n])
		}
		d.calcChecks(v)
		for _, r := range a.risks {
			d.say("Unit economics: %s", d.riskText(r))
		}
	}
	d.conditions(&a)
	if a.rec == debate.RecommendPass && len(a.passReasons) > 0 {
		arg = d.passArgument("", &a)
	}

	cons := sortedConcessions(a.conceded)
	for _, con := range cons {
		st.ConcededChallengeIDs = append(st.ConcededChallengeIDs, con.ids...)
	}
	if len(cons) > 0 && !rebuttal {
		d.say("Conceded after the arbiter upheld them in earlier rounds: %s", listSome(cons, func(con *concession) string {
			if con.claim.hasDefect(con.typ) {
				return fmt.Sprintf("%s on %s (%s %s), already priced into its grade %s",
					joinList(con.ids), d.ref(con.claim), con.severity, con.typ, con.claim.grade.Grade)
			}
			return fmt.Sprintf("%s on %s (%s %s), which lowers its score from %s to %s",
				joinList(con.ids), d.ref(con.claim), con.severity, con.typ, f2(gradeScore(con.claim.grade.Grade)), f2(effectiveScore(con.claim, con)))
		}))
	}

	d.confidence = a.confidence
	d.position = a.rec
	d.justification = fmt.Sprintf("Confidence %s = weighted effective grade score %s over %s × (0.5 + 0.5 × verified material share %s); %s conceded",
		f2(round2(a.confidence)), f2(a.strength), plural(len(a.relied), "relied claim"), f2(a.verifiedShare), plural(len(cons), "claim"))
	if !rebuttal {
		d.say("Confidence %s follows from the grades of the claims relied on", f2(round2(a.confidence)))
	}
	d.advocateMuhasabah(&a)
	if arg.Text == "" && len(a.relied) > 0 {
		arg = d.argue(fmt.Sprintf("%s rests on %s", a.rec, someKeys(d, first(a.relied, 3))), first(a.relied, 3))
	}
	st.Argument = arg
	d.structured = st

	share := 0.5
	if rebuttal {
		share = 1
	}
	tc := newCaller(ctx, v, share)
	if err := tc.lookUp(v, tools.LookupClaim, d.claimIDs); err != nil {
		return nil, err
	}
	if err := tc.lookUp(v, tools.LookupCalc, d.calcIDs); err != nil {
		return nil, err
	}
	return d.output(v.role, v.round, tc.made), nil
}

// answerNote is a challenge of the round with the advocate's answer.
type answerNote struct {
	r raised
	a answer
}

// answers works out the advocate's answer to each challenge of the round
// by a role other than the arbiter, in transcript order, each id once.
func (v *view) answers() []answerNote {
	var out []answerNote
	for _, r := range v.distinctChallenges(func(r raised) bool { return r.round == v.round && r.role != debate.RoleArbiter }) {
		out = append(out, answerNote{r: r, a: v.answerTo(r.ch)})
	}
	return out
}

// respond answers each challenge of the round by name: it concedes with
// the consequence for the thesis, rebuts with evidence the challenger did
// not cite, narrows the claim to what its source can carry, or contests a
// challenge the registry does not support.
func (d *draft) respond(notes []answerNote) (ack, contested []string) {
	if len(notes) == 0 {
		d.say("No challenge was raised this round, so the thesis stands as opened")
		return nil, nil
	}
	for _, n := range notes {
		r, a := n.r, n.a
		id := clip(r.ch.ChallengeID, 80)
		typ := clip(r.ch.DefectType, 40)
		switch a.kind {
		case answerDismissT:
			contested = append(contested, r.ch.ChallengeID)
			d.say("On %s by %s: contested, it fails seed 000 §6.3 because %s", id, r.role, a.j.frivolous)
		case answerContest:
			contested = append(contested, r.ch.ChallengeID)
			target := "no claim of this deal"
			if a.claim != nil {
				target = d.fact(a.claim)
			}
			d.say("On %s by %s (%s on %s): contested, the registry shows no such defect and the claim is not weak in a material position", id, r.role, typ, target)
		case answerConcede:
			ack = append(ack, r.ch.ChallengeID)
			d.say("On %s by %s (%s on %s): conceded; %s", id, r.role, typ, d.fact(a.claim), d.consequence(a.claim))
		case answerRebut:
			ack = append(ack, r.ch.ChallengeID)
			d.say("On %s by %s (%s on %s): rebutted with %s, which the challenge did not cite and which supports the figure; the thesis keeps it",
				id, r.role, typ, d.fact(a.claim), d.rebuttalEvidence(a))
		case answerNarrow:
			ack = append(ack, r.ch.ChallengeID)
			d.say("On %s by %s (%s on %s): narrowed, the thesis keeps %s only as the company states it, lowers its weight from %s to %s and makes %s a condition",
				id, r.role, typ, d.ref(a.claim), formatValueOr(a.claim), f2(gradeScore(a.claim.grade.Grade)),
				f2(effectiveScore(a.claim, &concession{claim: a.claim, severity: debate.Severity(r.ch.Severity), typ: debate.DefectType(r.ch.DefectType)})),
				requiredEvidence(a.claim))
		}
	}
	return ack, contested
}

// consequence says what conceding a defect of c does to the thesis.
func (d *draft) consequence(c *claimView) string {
	name := metricName(c)
	switch {
	case c.critical() && (c.rank() == 3 || c.fatal() || c.redFlag()):
		return fmt.Sprintf("%s is CRITICAL, so without a reconciled %s the thesis cannot be recommended", d.ref(c), name)
	case c.rank() == 3 || c.fatal() || c.redFlag():
		return fmt.Sprintf("the thesis stops relying on %s and every figure computed from it until its sources are reconciled", name)
	}
	return fmt.Sprintf("%s stays in the thesis at grade %s, with its cure a condition", name, c.grade.Grade)
}

// formatValueOr is a claim's value, or its metric name when it has none.
func formatValueOr(c *claimView) string {
	if c.claim.Value == nil || c.blocked() {
		return metricName(c)
	}
	return metricName(c) + " of " + formatValue(c.claim.Value)
}

// calcClaim returns the claim a calc's output speaks of: an input claim of
// the calc's metric, else the deal's claim of that metric.
func (v *view) calcClaim(k *calcView) *claimView {
	metric := string(k.calc.Type) // GROSS_MARGIN and RUNWAY share the metric names
	for _, id := range k.calc.InputClaimIDs {
		if c := v.byID[id]; c != nil && c.grade.Metric == metric && c.claim.Value != nil && !c.blocked() {
			return c
		}
	}
	return v.pick(metric)
}

// calcOutputs name the output of each calc type that is comparable with a
// claim of its metric.
var calcOutputs = map[debate.CalcType]string{debate.CalcGrossMargin: "gross_margin_percent", debate.CalcRunway: "runway_months"}

// calcOutput is the calc's figure comparable with a claim of its metric.
func calcOutput(k *calcView) (float64, bool) {
	name, known := calcOutputs[k.calc.Type]
	x, ok := k.result.Output[name]
	return x, known && ok
}

// calcAgrees reports whether a calc's output agrees with the claim of its
// metric: within 0.1 and 0.5%, and no INCONSISTENCY of the claim cites it.
func calcAgrees(k *calcView, c *claimView) bool {
	if d, ok := c.defect(debate.DefectInconsistency); ok && slices.Contains(d.EvidenceRefs, k.id()) {
		return false
	}
	out, ok := calcOutput(k)
	if !ok {
		return false
	}
	x := c.claim.Value.Value.Float64()
	if k.calc.Type == debate.CalcGrossMargin {
		x = asPercent(c, 1)
	}
	return math.Abs(out-x) <= math.Max(0.1, 0.005*math.Abs(x))
}

// calcChecks states how each computable calc compares with its claim.
func (d *draft) calcChecks(v *view) {
	for _, k := range v.calcs {
		if _, ok := calcOutput(k); !ok {
			continue
		}
		c := v.calcClaim(k)
		switch {
		case c == nil:
			d.say("Cross-check: %s", d.calcFact(k))
		case calcAgrees(k, c):
			d.say("Cross-check: %s agrees with %s", d.calcFact(k), d.fact(c))
		default:
			d.say("Cross-check: %s disagrees with %s", d.calcFact(k), d.fact(c))
		}
	}
}

// conditions states what blocks the investment or what it is conditional
// on, naming at most maxListed claims per list.
func (d *draft) conditions(a *assessment) {
	if a.rec == debate.RecommendPass && len(a.passReasons) > 0 {
		why := listSome(a.passReasons, func(c *claimView) string { return d.flagged(c, a.conceded[c.id()]) })
		d.say("The thesis does not survive %s", why)
	}
	var conds []string
	extra := 0
	add := func(text func() string) {
		if len(conds) < maxListed {
			conds = append(conds, text())
		} else {
			extra++
		}
	}
	for _, c := range a.redFlags {
		add(func() string { return "reconcile " + d.flagged(c, nil) })
	}
	for _, c := range a.fatal {
		add(func() string { return "reconstruct the chain of " + d.flagged(c, nil) })
	}
	for _, c := range a.blocked {
		add(func() string {
			return "register evidence for " + d.brief(c) + ", which No-Free-Facts blocks and the thesis does not rely on"
		})
	}
	for _, c := range a.unverified {
		add(func() string { return "obtain data for " + d.flagged(c, nil) })
	}
	if extra > 0 {
		conds = append(conds, fmt.Sprintf("the same for %d more material claims", extra))
	}
	if len(a.weak) > 0 {
		conds = append(conds, "corroborate "+someKeys(d, a.weak)+" (graded C or D) with independent grade A or B sources")
	}
	for _, r := range a.risks {
		if r.flagged {
			conds = append(conds, d.riskCondition(r))
		}
	}
	switch {
	case len(conds) == 0:
	case a.rec == debate.RecommendPass:
		d.say("To be reconsidered, the deal needs to %s", joinList(conds))
	default:
		d.say("Conditions: %s", joinList(conds))
	}
}

// flagged names a claim with why it is a problem: its verdict and worst
// open defect, or the upheld challenge against it: "ARR (claim C1, grade
// D, CONTRADICTED, MAJOR INCONSISTENCY)".
func (d *draft) flagged(c *claimView, con *concession) string {
	note := string(c.grade.Verdict)
	if ds := c.openDefects(); len(ds) > 0 {
		note += fmt.Sprintf(", %s %s", ds[0].Severity, ds[0].Type)
	} else if con != nil {
		note += fmt.Sprintf(", upheld %s %s", con.severity, con.typ)
	}
	return fmt.Sprintf("%s (%s, grade %s, %s)", metricName(c), d.ref(c), c.grade.Grade, note)
}

// advocateMuhasabah writes the tests, counter-hypothesis and failure
// modes of the thesis.
func (d *draft) advocateMuhasabah(a *assessment) {
	if a.rec == debate.RecommendPass {
		for _, c := range a.passReasons {
			d.test(fmt.Sprintf("Cure the defect of claim %s and re-grade the deal", c.key()),
				requiredEvidence(c),
				fmt.Sprintf("The PASS fails if claim %s is re-graded VERIFIED at grade B or better", c.key()))
		}
	}
	for _, c := range first(a.relied, 3) {
		d.test(fmt.Sprintf("Reconcile %s of claim %s with an independent source", metricName(c), c.key()),
			requiredEvidence(c),
			fmt.Sprintf("The thesis fails if the independent figure %s", worseTolerance(c)))
	}
	if len(a.relied) > 0 {
		weakest := slices.Clone(a.relied)
		slices.SortStableFunc(weakest, func(x, y *claimView) int {
			return cmp.Or(cmp.Compare(effectiveScore(x, a.conceded[x.id()]), effectiveScore(y, a.conceded[y.id()])), cmp.Compare(y.weight, x.weight))
		})
		w := weakest[0]
		d.counter = fmt.Sprintf("The thesis may rest on optimistic company-prepared figures: claim %s (%s) is grade %s with %s corroboration, and an independent source could place it %s; if it does, the case for %s weakens with it",
			w.key(), metricName(w), w.grade.Grade, w.grade.Corroboration, worseWord(w), cmp.Or(d.v.deal.Deal.CompanyName, "the company"))
		if a.rec == debate.RecommendPass && len(a.passReasons) > 0 {
			p := a.passReasons[0]
			d.counter = fmt.Sprintf("The defect of claim %s may be clerical (another period, version or unit): if its sources reconcile, the remaining %s could carry an investment", p.key(), plural(len(a.relied), "claim"))
		}
		for _, c := range first(weakest, 3) {
			d.failureModes = append(d.failureModes, fmt.Sprintf("Claim %s (%s) is restated after diligence", c.key(), metricName(c)))
		}
	}
	d.failureModes = append(d.failureModes, "A material fact missing from the registry changes the recommendation.")
}

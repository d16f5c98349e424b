package rules

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// arbiterState is the arbiter's structured content.
type arbiterState struct {
	Upheld    int       `json:"upheld"`
	Dismissed int       `json:"dismissed"`
	Frivolous int       `json:"frivolous"`
	Dissent   []dissent `json:"dissent"`
	Argument  argument  `json:"argument"`
}

// dissent is a role whose latest position differs from the arbiter's, and
// whether evidence backs it (it has an upheld challenge, or it relies on a
// VERIFIED material claim).
type dissent struct {
	Role           string `json:"role"`
	Recommendation string `json:"recommendation"`
	EvidenceBacked bool   `json:"evidence_backed"`
	// Evidence is what backs it: the role's upheld challenges, else the
	// VERIFIED material claims its latest output relies on.
	UpheldChallengeIDs []string `json:"upheld_challenge_ids,omitempty"`
	ClaimIDs           []string `json:"claim_ids,omitempty"`
}

// arbiterTurn rules on every challenge not ruled on yet (seed 000 §6.3:
// frivolous without claims, defect type or evidence, or with ids outside
// the deal; upheld when the registry supports it; dismissed otherwise),
// takes a position on the deal with every upheld challenge conceded, asks
// for human review of material grade-D claims once per claim, and records
// the dissent. Its confidence is the support of its position: for PASS the
// strength of the evidence showing the decisive defects, otherwise the
// thesis support after the upheld challenges.
func arbiterTurn(ctx context.Context, v *view) (*debate.AgentOutput, error) {
	d := newDraft(v)
	rs := v.rulings()
	pending := filter(v.distinctChallenges(func(r raised) bool { return r.round <= v.round && r.role != debate.RoleArbiter }), func(r raised) bool {
		_, ruled := rs[r.ch.ChallengeID]
		return !ruled
	})
	st := arbiterState{Dissent: []dissent{}}
	upheldNow := []raised{}
	if len(pending) == 0 {
		d.say("Round %d: no challenge awaits a ruling", v.round)
	} else {
		d.say("Round %d: the arbiter rules on %s point by point", v.round, plural(len(pending), "challenge"))
	}
	for _, r := range pending {
		ans := v.answerTo(r.ch)
		j := ans.j
		note := d.onAnswer(v, r, ans)
		ru := debate.Ruling{ChallengeID: r.ch.ChallengeID, Upheld: j.upheld, Frivolous: j.frivolous != "", Reason: clip(j.reason+" "+sentence(note), 1900)}
		d.rulings = append(d.rulings, ru)
		target := cmp.Or(joinList(mapStrings(j.claims, d.brief)), "no claim of this deal")
		id := clip(r.ch.ChallengeID, 80)
		switch {
		case ru.Frivolous:
			st.Frivolous++
			d.say("On %s by %s: frivolous, %s", id, r.role, j.frivolous)
		case ru.Upheld:
			st.Upheld++
			upheldNow = append(upheldNow, r)
			d.say("On %s by %s (%s on %s): upheld, %s; %s", id, r.role, clip(r.ch.DefectType, 40), target, supportNote(d, j), note)
		default:
			st.Dismissed++
			d.say("On %s by %s (%s on %s): dismissed, the registry shows no such defect and the claim is not weak in a material position; %s", id, r.role, clip(r.ch.DefectType, 40), target, note)
		}
	}

	upheld := append(v.upheldBefore(v.round+1), upheldNow...)
	a := v.assess(v.concessions(upheld))
	d.position = a.rec
	if len(a.relied) > 0 {
		d.say("The deal's heaviest claims are %s", joinList(mapStrings(first(a.relied, 5), d.fact)))
	}
	d.conditions(&a)
	if a.rec == debate.RecommendPass && len(a.passReasons) > 0 {
		d.confidence = mean(a.passReasons, func(c *claimView) float64 { return reasonStrength(v, c, a.conceded[c.id()]) })
		d.justification = fmt.Sprintf("Confidence %s in PASS is the mean strength of the evidence showing the defects of %s",
			f2(round2(d.confidence)), someKeys(d, a.passReasons))
	} else {
		d.confidence = a.confidence
		d.justification = fmt.Sprintf("Confidence %s in %s = weighted effective grade score %s × (0.5 + 0.5 × verified material share %s), with %s upheld so far",
			f2(round2(a.confidence)), a.rec, f2(a.strength), f2(a.verifiedShare), plural(len(upheld), "challenge"))
	}
	d.say("Position %s with confidence %s, %s upheld in the debate so far", a.rec, f2(round2(d.confidence)), plural(len(upheld), "challenge"))

	// Dissent: the latest positions of the other roles this round.
	positions := v.latestPositions(v.round)
	for _, r := range debate.IDISRoles {
		p, ok := positions[r]
		if r == debate.RoleArbiter || !ok || p.Recommendation == a.rec {
			continue
		}
		x := dissent{Role: r, Recommendation: p.Recommendation}
		x.UpheldChallengeIDs, x.ClaimIDs = v.backing(r, upheld)
		x.EvidenceBacked = len(x.UpheldChallengeIDs)+len(x.ClaimIDs) > 0
		// The dissent's claims are cited in the structured content: the
		// output references them (No-Free-Facts reads structured content).
		for _, id := range x.ClaimIDs {
			if c := v.byID[id]; c != nil {
				d.ref(c)
			}
		}
		st.Dissent = append(st.Dissent, x)
	}
	if len(st.Dissent) > 0 {
		var parts []string
		for _, x := range st.Dissent {
			b := "not evidence-backed"
			if x.EvidenceBacked {
				b = "evidence-backed"
			}
			parts = append(parts, fmt.Sprintf("%s (%s, %s)", x.Role, x.Recommendation, b))
		}
		d.say("Dissent: %s", joinList(parts))
	}

	// Human review for material grade-D claims, once per claim.
	tc := newCaller(ctx, v, 1)
	done := v.reviewed()
	review := filter(v.material(), func(c *claimView) bool { return c.rank() == 3 && !done[c.id()] })
	if len(review) > 0 && tc.can(tools.RequestHumanReview) {
		ids, keys := mapStrings(review, (*claimView).id), mapStrings(review, (*claimView).key)
		priority, role := "HIGH", "ANALYST"
		for _, c := range review {
			if c.fatal() {
				priority = "CRITICAL"
			}
			if c.grade.Action == debate.ActionPartnerOverrideRequired {
				role = "PARTNER"
			}
		}
		reason := clip(fmt.Sprintf("Material claims graded D: %s. A grade-D claim in a material position cannot support the investment decision (CRITICAL_DEFECT); a person must cure, waive or override.", strings.Join(keys, ", ")), 1000)
		ok, err := tc.call(tools.RequestHumanReview, humanReviewArgs{ClaimIDs: ids, Reason: reason, Priority: priority, RequiredRole: role})
		if err != nil {
			return nil, err
		}
		if ok {
			d.say("Human review requested (%s priority, %s) for %s", priority, role, joinList(mapStrings(review, d.brief)))
		}
	}

	if a.rec == debate.RecommendPass {
		for _, c := range a.passReasons {
			if len(d.tests) == 2 {
				break
			}
			d.test(fmt.Sprintf("Cure the defect of claim %s and re-grade the deal", c.key()), requiredEvidence(c),
				fmt.Sprintf("The PASS ruling fails if claim %s is re-graded VERIFIED at grade B or better", c.key()))
		}
	}
	for _, r := range upheldNow {
		if len(d.tests) == 2 {
			break
		}
		for _, id := range r.ch.ClaimRefs {
			if c := v.byID[id]; c != nil {
				d.test(fmt.Sprintf("Check whether the %s upheld in %s on claim %s is cured", clip(r.ch.DefectType, 40), clip(r.ch.ChallengeID, 80), c.key()),
					requiredEvidence(c),
					fmt.Sprintf("The ruling on %s fails if claim %s is re-graded B or better with no open %s defect", clip(r.ch.ChallengeID, 80), c.key(), clip(r.ch.DefectType, 40)))
				break
			}
		}
	}
	for _, c := range first(a.relied, 2) {
		if a.rec == debate.RecommendPass {
			break
		}
		d.test(fmt.Sprintf("Reconcile %s of claim %s with an independent source", metricName(c), c.key()),
			requiredEvidence(c),
			fmt.Sprintf("The %s position fails if the independent figure %s", a.rec, worseTolerance(c)))
	}
	d.counter = "The upheld challenges may concern form rather than substance: if the challenged claims are corroborated, the deal reads stronger than this position."
	if a.rec != debate.RecommendPass && len(a.redFlags)+len(a.fatal) > 0 {
		d.counter = "The defects the conditions name may be worse than curable: if a contradicted or broken claim cannot be reconciled, the position should be PASS."
	}
	d.failureModes = []string{"A ruling relies on a grading that a re-grade changes.", "A frivolous challenge would have been valid with better references."}
	if a.rec == debate.RecommendPass && len(a.passReasons) > 0 {
		st.Argument = d.passArgument("PASS: ", &a)
	} else if len(a.relied) > 0 {
		usable := first(filter(a.relied, (*claimView).sound), 3)
		facts := joinList(mapStrings(usable, d.fact))
		text := fmt.Sprintf("%s at %s: the case rests on %s, with %s upheld against the deal", a.rec, f2(round2(d.confidence)), cmp.Or(facts, "no claim graded above D"), plural(len(upheld), "challenge"))
		var open []string
		for _, c := range slices.Concat(a.redFlags, a.fatal, a.blocked, a.unverified) {
			if len(open) < 3 {
				open = append(open, d.flagged(c, nil))
			}
		}
		if len(open) > 0 && a.rec == debate.RecommendConditional {
			text += "; the investment is conditional on curing " + joinList(open)
		}
		st.Argument = d.argue(text, usable)
	}
	d.structured = st
	return d.output(v.role, v.round, tc.made), nil
}

// passArgument argues, after prefix, that the thesis does not survive the
// first three of a's pass reasons.
func (d *draft) passArgument(prefix string, a *assessment) argument {
	reasons := first(a.passReasons, 3)
	why := mapStrings(reasons, func(c *claimView) string { return d.flagged(c, a.conceded[c.id()]) })
	return d.argue(prefix+"the thesis does not survive "+joinList(why), reasons)
}

// onAnswer says how the advocate answered a challenge and whether that
// answer meets the point, for the ruling.
func (d *draft) onAnswer(v *view, r raised, a answer) string {
	switch a.kind {
	case answerDismissT:
		return "the advocate contested it on the same ground"
	case answerContest:
		return "the advocate's contest stands"
	case answerConcede:
		return "the advocate conceded it, and the concession stands"
	case answerNarrow:
		return fmt.Sprintf("the advocate narrowed %s to the company's own figure, which the ruling accepts pending %s", d.ref(a.claim), requiredEvidence(a.claim))
	case answerRebut:
		g := gradeOf(v.rebuttalStrength(a))
		if g == "A" || g == "B" {
			return fmt.Sprintf("the advocate's rebuttal (%s) supports the figure at grade %s, so the challenge concerns the chain of %s, not its value", d.rebuttalEvidence(a), g, d.ref(a.claim))
		}
		return fmt.Sprintf("the advocate's rebuttal (%s) is no stronger than grade %s, so it does not cure the %s on %s", d.rebuttalEvidence(a), g, clip(r.ch.DefectType, 40), d.ref(a.claim))
	}
	return "the advocate did not answer it"
}

// supportNote names the claims that support an upheld challenge.
func supportNote(d *draft, j judgement) string {
	var parts []string
	for _, c := range j.support {
		if ds := c.openDefects(); len(ds) > 0 {
			parts = append(parts, fmt.Sprintf("%s is %s with an open %s", d.ref(c), c.grade.Verdict, ds[0].Type))
		} else {
			parts = append(parts, fmt.Sprintf("%s is graded %s in a material position", d.ref(c), c.grade.Grade))
		}
	}
	return joinList(parts)
}

// reasonStrength is how strongly the registry shows a claim's decisive
// defect: its worst open defect, else the upheld challenge's claimed
// weakness (1 minus its grade score).
func reasonStrength(v *view, c *claimView, con *concession) float64 {
	if ds := c.openDefects(); len(ds) > 0 {
		return v.defectStrength(ds[0])
	}
	if con != nil && con.severity == debate.SeverityFatal {
		return scoreA
	}
	return 1 - gradeScore(c.grade.Grade)
}

// backing returns what makes a role's dissent evidence-backed: its upheld
// challenges, else (for a position without them) the VERIFIED material
// claims its latest output relies on. Both empty: not evidence-backed.
func (v *view) backing(role string, upheld []raised) (challenges, claims []string) {
	for _, r := range upheld {
		if r.role == role && !slices.Contains(challenges, r.ch.ChallengeID) {
			challenges = append(challenges, r.ch.ChallengeID)
		}
	}
	if len(challenges) > 0 {
		return challenges, nil
	}
	for i := len(v.in.Transcript) - 1; i >= 0; i-- {
		o := v.in.Transcript[i]
		if o.Role != role {
			continue
		}
		for _, id := range o.ClaimRefs {
			if c := v.byID[id]; c != nil && c.material() && c.verified() && !slices.Contains(claims, id) {
				claims = append(claims, id)
			}
		}
		return nil, claims
	}
	return nil, nil
}

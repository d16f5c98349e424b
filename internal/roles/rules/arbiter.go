package rules

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// arbiterState is the arbiter's structured content.
type arbiterState struct {
	Upheld    int       `json:"upheld"`
	Dismissed int       `json:"dismissed"`
	Frivolous int       `json:"frivolous"`
	Dissent   []dissent `json:"dissent"`
}

// dissent is a role whose latest position differs from the arbiter's, and
// whether evidence backs it (it has an upheld challenge, or it relies on a
// VERIFIED material claim).
type dissent struct {
	Role           string `json:"role"`
	Recommendation string `json:"recommendation"`
	EvidenceBacked bool   `json:"evidence_backed"`
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
	var pending []raised
	seen := map[string]bool{}
	for _, r := range v.challenges() {
		if r.round > v.round || r.role == debate.RoleArbiter || seen[r.ch.ChallengeID] {
			continue
		}
		seen[r.ch.ChallengeID] = true
		if _, ruled := rs[r.ch.ChallengeID]; !ruled {
			pending = append(pending, r)
		}
	}
	st := arbiterState{Dissent: []dissent{}}
	upheldNow := []raised{}
	if len(pending) == 0 {
		d.say("No challenge awaits a ruling")
	} else {
		d.say("The arbiter rules on %s", plural(len(pending), "challenge"))
	}
	for _, r := range pending {
		j := v.judge(r.ch)
		ru := debate.Ruling{ChallengeID: r.ch.ChallengeID, Upheld: j.upheld, Frivolous: j.frivolous != "", Reason: j.reason}
		d.rulings = append(d.rulings, ru)
		var names []string
		for _, c := range j.claims {
			names = append(names, d.brief(c))
		}
		target := cmpOr(joinList(names), "no claim of this deal")
		id := clip(r.ch.ChallengeID, 80)
		switch {
		case ru.Frivolous:
			st.Frivolous++
			d.say("Challenge %s by %s is frivolous: %s", id, r.role, j.frivolous)
		case ru.Upheld:
			st.Upheld++
			upheldNow = append(upheldNow, r)
			d.say("Challenge %s by %s (%s on %s) is upheld: %s", id, r.role, clip(r.ch.DefectType, 40), target, supportNote(d, j))
		default:
			st.Dismissed++
			d.say("Challenge %s by %s (%s on %s) is dismissed: the registry does not support it", id, r.role, clip(r.ch.DefectType, 40), target)
		}
	}

	upheld := append(v.upheldBefore(v.round+1), upheldNow...)
	a := v.assess(v.concessions(upheld))
	d.position = a.rec
	if len(a.relied) > 0 {
		var facts []string
		for i, c := range a.relied {
			if i == 5 {
				break
			}
			facts = append(facts, d.fact(c))
		}
		d.say("The deal's heaviest claims are %s", joinList(facts))
	}
	d.conditions(&a)
	if a.rec == debate.RecommendPass && len(a.passReasons) > 0 {
		var sum float64
		for _, c := range a.passReasons {
			sum += reasonStrength(v, c, a.conceded[c.id()])
		}
		d.confidence = sum / float64(len(a.passReasons))
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
		st.Dissent = append(st.Dissent, dissent{Role: r, Recommendation: p.Recommendation, EvidenceBacked: v.backed(r, upheld)})
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
	var review []*claimView
	for _, c := range v.material() {
		if c.rank() == 3 && !done[c.id()] {
			review = append(review, c)
		}
	}
	if len(review) > 0 && tc.can(toolRequestHumanReview) {
		ids, keys := []string{}, []string{}
		priority, role := "HIGH", "ANALYST"
		for _, c := range review {
			ids = append(ids, c.id())
			keys = append(keys, c.key())
			if c.fatal() {
				priority = "CRITICAL"
			}
			if c.grade.Action == debate.ActionPartnerOverrideRequired {
				role = "PARTNER"
			}
		}
		reason := clip(fmt.Sprintf("Material claims graded D: %s. A grade-D claim in a material position cannot support the investment decision (CRITICAL_DEFECT); a person must cure, waive or override.", strings.Join(keys, ", ")), 1000)
		_, ok, err := tc.call(toolRequestHumanReview, humanReviewArgs{ClaimIDs: ids, Reason: reason, Priority: priority, RequiredRole: role})
		if err != nil {
			return nil, err
		}
		if ok {
			var names []string
			for _, c := range review {
				names = append(names, d.brief(c))
			}
			d.say("Human review requested (%s priority, %s) for %s", priority, role, joinList(names))
		}
	}

	for _, r := range upheldNow {
		if len(d.tests) == 2 {
			break
		}
		for _, id := range r.ch.ClaimRefs {
			if c := v.byID[id]; c != nil {
				d.test(fmt.Sprintf("Check whether the defect behind %s on claim %s is cured", clip(r.ch.ChallengeID, 80), c.key()),
					requiredEvidence(c),
					fmt.Sprintf("The ruling on %s fails if claim %s is re-graded B or better with no open %s defect", clip(r.ch.ChallengeID, 80), c.key(), clip(r.ch.DefectType, 40)))
				break
			}
		}
	}
	for i, c := range a.relied {
		if i == 2 {
			break
		}
		d.test(fmt.Sprintf("Reconcile %s of claim %s with an independent source", metricName(c), c.key()),
			requiredEvidence(c),
			fmt.Sprintf("The %s position fails if the independent figure %s", a.rec, tolerance(c)))
	}
	d.counter = "The upheld challenges may concern form rather than substance: if the challenged claims are corroborated, the deal reads stronger than this position."
	if a.rec != debate.RecommendPass && len(a.redFlags)+len(a.fatal) > 0 {
		d.counter = "The defects the conditions name may be worse than curable: if a contradicted or broken claim cannot be reconciled, the position should be PASS."
	}
	d.failureModes = []string{"A ruling relies on a grading that a re-grade changes.", "A frivolous challenge would have been valid with better references."}
	d.structured = st
	return d.output(v.role, v.round, tc.made), nil
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
		return v.defectStrength(c, ds[0])
	}
	if con != nil && con.severity == debate.SeverityFatal {
		return scoreA
	}
	return 1 - gradeScore(c.grade.Grade)
}

// backed reports whether a role's dissent is evidence-backed: one of its
// challenges was upheld, or (for a position without challenges) it relies
// on a VERIFIED material claim in its latest output.
func (v *view) backed(role string, upheld []raised) bool {
	if slices.ContainsFunc(upheld, func(r raised) bool { return r.role == role }) {
		return true
	}
	for i := len(v.in.Transcript) - 1; i >= 0; i-- {
		o := v.in.Transcript[i]
		if o.Role != role {
			continue
		}
		for _, id := range o.ClaimRefs {
			if c := v.byID[id]; c != nil && c.material() && c.verified() {
				return true
			}
		}
		return false
	}
	return false
}

package rules

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/debated/debated/internal/debate"
)

// direction is which way a metric is better: +1 higher (ARR, margin,
// retention, runway), -1 lower (CAC, burn, COGS), 0 unknown. It decides
// which way a counter-hypothesis or a falsifiability test points: a lower
// CAC helps a thesis, a lower ARR hurts it.
func direction(metric string) int {
	switch metric {
	case "ARR", "GROSS_MARGIN", "NRR", "RUNWAY", "TAM", "CASH":
		return 1
	case "CAC", "BURN", "COGS":
		return -1
	}
	return 0
}

// worseWord says which way an independent figure would have to move to hurt
// the thesis: "lower" for ARR, "higher" for CAC.
func worseWord(c *claimView) string {
	return cmp.Or(worseWords[direction(c.grade.Metric)], "elsewhere")
}

var worseWords = map[int]string{1: "lower", -1: "higher"}

// worseTolerance says how far an independent figure may move against the
// thesis before a test fails: "is more than 5% below $3,150,000" for a
// metric where higher is better, "above" where lower is better, and
// tolerance's two-sided reading for a metric of unknown direction.
func worseTolerance(c *claimView) string {
	if c.claim.Value == nil || direction(c.grade.Metric) == 0 {
		return tolerance(c)
	}
	side := "below"
	if direction(c.grade.Metric) < 0 {
		side = "above"
	}
	val := formatValue(c.claim.Value)
	switch unitKind(c) {
	case "percent":
		return fmt.Sprintf("is more than 2 percentage points %s %s", side, val)
	case "months":
		return fmt.Sprintf("is more than 2 months %s %s", side, val)
	}
	return fmt.Sprintf("is more than 5%% %s %s", side, val)
}

func unitKind(c *claimView) string {
	switch {
	case c.claim.Value == nil:
		return ""
	case unitHas(c, "percent", "%", "pct"):
		return "percent"
	case unitHas(c, "month") && !unitHas(c, "/month", "/mo"):
		return "months"
	}
	return "amount"
}

// Kinds of answer the advocate gives a challenge.
const (
	answerConcede  = "concede"   // the registry shows the defect: the claim leaves the case
	answerRebut    = "rebut"     // evidence the challenger did not cite speaks for the claim
	answerNarrow   = "narrow"    // the claim is kept only as the company states it
	answerContest  = "contest"   // the registry does not support the challenge
	answerDismissT = "frivolous" // it fails seed 000 §6.3
)

// answer is the advocate's answer to one challenge. It is a function of
// the challenge and the registry only, so every role computes the same
// answer from the transcript (the challengers to escalate or withdraw, the
// arbiter to rule on it), whatever backend wrote the rebuttal.
type answer struct {
	kind     string
	j        judgement
	claim    *claimView // the claim answered for (the first supporting one, else the first named)
	evidence []string   // rebut: evidence ids the challenge did not cite
	calc     *calcView  // rebut: a recomputation that agrees with the claim
}

// answerTo works out the advocate's answer to ch.
func (v *view) answerTo(ch debate.Challenge) answer {
	a := answer{j: v.judge(ch)}
	if len(a.j.claims) > 0 {
		a.claim = a.j.claims[0]
	}
	switch {
	case a.j.frivolous != "":
		a.kind = answerDismissT
		return a
	case !a.j.upheld:
		a.kind = answerContest
		return a
	}
	c := a.j.support[0]
	a.claim = c
	typ := debate.DefectType(ch.DefectType)
	if c.hasDefect(typ) || c.rank() == 3 || c.fatal() || c.redFlag() || ch.Severity == string(debate.SeverityFatal) {
		a.kind = answerConcede
		return a
	}
	// A weak source: evidence the challenger did not cite that states the
	// same figure, or a recomputation that agrees with it.
	if s := v.sanadOf[c.id()]; s != nil {
		for _, id := range slices.Sorted(slices.Values(s.CorroboratingEvidenceIDs)) {
			if v.evidence[id] != nil && !slices.Contains(ch.EvidenceRefs, id) && !slices.Contains(a.evidence, id) {
				a.evidence = append(a.evidence, id)
			}
		}
	}
	for _, k := range v.calcs {
		if slices.Contains(ch.EvidenceRefs, k.id()) {
			continue
		}
		if _, ok := calcOutput(k); ok && v.calcClaim(k) == c && calcAgrees(k, c) {
			a.calc = k
			break
		}
	}
	if len(a.evidence) > 0 || a.calc != nil {
		a.kind = answerRebut
		return a
	}
	a.kind = answerNarrow
	return a
}

// rebuttalStrength is the best grade score of the evidence a rebuttal
// cites.
func (v *view) rebuttalStrength(a answer) float64 {
	ids := slices.Clone(a.evidence)
	if a.calc != nil {
		ids = append(ids, a.calc.id())
	}
	return v.evidenceStrength(ids, scoreD)
}

// rebuttalEvidence describes the evidence of a rebuttal.
func (d *draft) rebuttalEvidence(a answer) string {
	parts := mapStrings(first(a.evidence, 2), d.v.describeEvidence)
	if a.calc != nil {
		parts = append(parts, d.calcFact(a.calc))
	}
	return joinList(parts)
}

// argument is a role's strongest argument, with the claims behind it: the
// committee brief quotes it.
type argument struct {
	Text     string   `json:"text"`
	ClaimIDs []string `json:"claim_ids"`
}

// argue records the role's strongest argument (a sentence it also says).
func (d *draft) argue(text string, cs []*claimView) argument {
	a := argument{Text: sentence(text), ClaimIDs: []string{}}
	for _, c := range cs {
		d.ref(c)
		if !slices.Contains(a.ClaimIDs, c.id()) {
			a.ClaimIDs = append(a.ClaimIDs, c.id())
		}
	}
	return a
}

// followUps is how a challenger answers what became of its own challenges
// ruled in the previous round: it withdraws a dismissed one, escalates an
// upheld one the advocate rebutted with evidence that does not cure it,
// and rests on one the advocate conceded or narrowed. Challenges ruled
// earlier are counted, not repeated.
func (d *draft) followUps(v *view) {
	rs := v.rulings()
	var withdrawn, escalated, rested []string
	older := 0
	for _, r := range v.challenges() {
		if r.role != v.role || r.round >= v.round {
			continue
		}
		ru, ruled := rs[r.ch.ChallengeID]
		if !ruled {
			continue
		}
		if r.round < v.round-1 {
			if ru.Upheld {
				older++
			}
			continue
		}
		id := clip(r.ch.ChallengeID, 80)
		a := v.answerTo(r.ch)
		if a.claim == nil {
			continue
		}
		switch {
		case !ru.Upheld:
			withdrawn = append(withdrawn, fmt.Sprintf("%s on %s, which the arbiter did not uphold", id, d.ref(a.claim)))
		case a.kind == answerRebut:
			escalated = append(escalated, fmt.Sprintf("%s on %s: the advocate's evidence (%s) is no stronger than grade %s, so it does not cure the %s",
				id, d.ref(a.claim), d.rebuttalEvidence(a), gradeOf(v.rebuttalStrength(a)), clip(r.ch.DefectType, 40)))
			d.question("Can the company produce %s to confirm %s, which the advocate's rebuttal does not?", requiredEvidence(a.claim), d.fact(a.claim))
		case a.kind == answerNarrow:
			rested = append(rested, fmt.Sprintf("%s (the advocate narrowed %s to the company's own figure)", id, d.ref(a.claim)))
		default:
			rested = append(rested, fmt.Sprintf("%s (the advocate conceded %s)", id, d.ref(a.claim)))
		}
	}
	if len(withdrawn) > 0 {
		d.say("Withdrawn: %s", joinList(withdrawn))
	}
	if len(escalated) > 0 {
		d.say("Escalated, the rebuttal does not answer the point: %s", joinList(escalated))
	}
	if len(rested) > 0 {
		d.say("Resting on the concessions: %s", joinList(rested))
	}
	if older > 0 {
		d.say("%s upheld before round %d still stand until cured", plural(older, "challenge"), v.round-1)
	}
}

// gradeOf maps a score back to the grade it stands for.
func gradeOf(s float64) string {
	switch {
	case s >= scoreA:
		return "A"
	case s >= scoreB:
		return "B"
	case s >= scoreC:
		return "C"
	}
	return "D"
}

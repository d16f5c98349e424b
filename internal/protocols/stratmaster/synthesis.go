package stratmaster

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
)

// Bounds of the agents' answers.
const (
	maxHypotheses = 30
	maxTextBytes  = 2000
)

type violations struct {
	rule string
	list []debate.Violation
}

func (v *violations) add(field, format string, args ...any) {
	v.list = append(v.list, debate.Violation{Rule: v.rule, Field: field, Detail: fmt.Sprintf(format, args...)})
}

func (v *violations) text(field, s string) {
	if t := strings.TrimSpace(s); t == "" || len(t) > maxTextBytes {
		v.add(field, "must be 1 to %d bytes", maxTextBytes)
	}
}

// ids checks that every id is one of known (and, when required, that
// there is one).
func (v *violations) ids(field string, ids []string, known func(string) bool, required bool) {
	if required && len(ids) == 0 {
		v.add(field, "at least one id is required")
	}
	for i, id := range ids {
		if !known(id) {
			v.add(fmt.Sprintf("%s[%d]", field, i), "%q is not in DATA", id)
		}
	}
}

// synthesise is the synthesiser's node: hypotheses from the collected
// evidence, each given its provenance, fingerprint and id by the protocol,
// and the decision whether to debate them (debateReasons).
func (p *proto) synthesise(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	v, err := p.view(ctx, in.DealID)
	if err != nil {
		return nil, err
	}
	ev := evidenceByID(s.Evidence)
	claims := v.claimsFor(s.Evidence)
	verdicts := map[string]debate.Verdict{} // of the claims in DATA
	for _, c := range claims {
		verdicts[c.ClaimID] = c.Verdict
	}
	ans, model, err := ask(ctx, p, in, SchemaHypotheses, fmt.Sprintf("state the hypotheses of pass %d", s.Pass),
		synthData{Question: t.Opts.Question, Pass: s.Pass, Evidence: s.Evidence, Claims: claims, Directives: s.Directives},
		func(a synthAnswer) []debate.Violation {
			g := violations{rule: "HYPOTHESES"}
			if len(a.Hypotheses) > maxHypotheses {
				g.add("hypotheses", "at most %d hypotheses", maxHypotheses)
			}
			for i, h := range a.Hypotheses {
				f := fmt.Sprintf("hypotheses[%d]", i)
				g.text(f+".statement", h.Statement)
				if h.Stance != StanceSupports && h.Stance != StanceCounter {
					g.add(f+".stance", "must be %q or %q", StanceSupports, StanceCounter)
				}
				g.ids(f+".claim_ids", h.ClaimIDs, func(id string) bool { _, ok := verdicts[id]; return ok }, true)
				g.ids(f+".evidence_ids", h.EvidenceIDs, func(id string) bool { _, ok := ev[id]; return ok }, true)
				if math.IsNaN(h.Confidence) || h.Confidence < 0 || h.Confidence > 1 {
					g.add(f+".confidence", "must be between 0 and 1")
				}
			}
			for i, sa := range a.SetAside {
				g.text(fmt.Sprintf("set_aside[%d].statement", i), sa.Statement)
				g.text(fmt.Sprintf("set_aside[%d].reason", i), sa.Reason)
			}
			return g.list
		})
	if err != nil {
		return nil, err
	}
	s.Hypotheses = s.Hypotheses[:0]
	for _, d := range ans.Hypotheses {
		ids := slices.Compact(slices.Sorted(slices.Values(d.EvidenceIDs)))
		fp := Fingerprint(d.Statement, ids)
		if slices.ContainsFunc(s.Hypotheses, func(h Hypothesis) bool { return h.Fingerprint == fp }) {
			continue // the same statement on the same evidence
		}
		h := Hypothesis{ID: hypothesisID(fp), Statement: strings.TrimSpace(d.Statement), Stance: d.Stance,
			ClaimIDs: slices.Compact(slices.Sorted(slices.Values(d.ClaimIDs))), EvidenceIDs: ids,
			Fingerprint: fp, Confidence: round2(d.Confidence), Rationale: d.Rationale}
		for _, id := range ids {
			h.Provenance = append(h.Provenance, ev[id].Provenance)
		}
		s.Hypotheses = append(s.Hypotheses, h)
	}
	s.SetAside = ans.SetAside
	s.DebateReasons = debateReasons(s.Hypotheses, ev, verdicts)
	return t.Save([]orchestrator.Emit{{Type: EventHypotheses, Payload: map[string]any{
		"pass": s.Pass, "hypotheses": protocol.NonNil(s.Hypotheses), "set_aside": protocol.NonNil(s.SetAside),
		"debate_required": len(s.DebateReasons) > 0, "debate_reasons": protocol.NonNil(s.DebateReasons),
		"thresholds": map[string]any{"confidence": DebateConfidenceThreshold, "grade_spread": ConflictGradeSpread},
		"model":      model,
	}}}, nil)
}

// afterSynthesis debates the hypotheses when there is a reason to.
func afterSynthesis(s *state) string {
	if len(s.DebateReasons) > 0 {
		return NodeChallenge
	}
	return NodeStrategise
}

func (s *state) hasHypothesis(id string) bool {
	return slices.ContainsFunc(s.Hypotheses, func(h Hypothesis) bool { return h.ID == id })
}

// challenge is the adversary's turn of the debate.
func (p *proto) challenge(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	v, err := p.view(ctx, in.DealID)
	if err != nil {
		return nil, err
	}
	ev := evidenceByID(s.Evidence)
	ans, model, err := ask(ctx, p, in, SchemaChallenges, fmt.Sprintf("challenge the hypotheses of pass %d", s.Pass),
		challengeData{Question: t.Opts.Question, Pass: s.Pass, Reasons: s.DebateReasons, Hypotheses: s.Hypotheses,
			Evidence: s.Evidence, Claims: v.claimsFor(s.Evidence)},
		func(a challengeAnswer) []debate.Violation {
			g := violations{rule: "CHALLENGES"}
			once := map[string]bool{}
			for i, c := range a.Challenges {
				f := fmt.Sprintf("challenges[%d]", i)
				g.ids(f+".hypothesis_id", []string{c.HypothesisID}, s.hasHypothesis, true)
				if once[c.HypothesisID] {
					g.add(f+".hypothesis_id", "%s is challenged twice", c.HypothesisID)
				}
				once[c.HypothesisID] = true
				g.text(f+".argument", c.Argument)
				g.ids(f+".evidence_ids", c.EvidenceIDs, func(id string) bool { _, ok := ev[id]; return ok }, false)
			}
			return g.list
		})
	if err != nil {
		return nil, err
	}
	s.Challenges = ans.Challenges
	turns := make([]DebateTurn, 0, len(ans.Challenges))
	for _, c := range ans.Challenges {
		turns = append(turns, DebateTurn{Pass: s.Pass, Speaker: RoleAdversary, HypothesisID: c.HypothesisID, Kind: "challenge", Text: c.Argument})
	}
	s.DebateLog = append(s.DebateLog, turns...)
	return t.Save([]orchestrator.Emit{{Type: EventDebateTurn, Payload: map[string]any{
		"pass": s.Pass, "speaker": RoleAdversary, "challenges": protocol.NonNil(ans.Challenges), "turns": turns, "model": model}}}, nil)
}

// rebut is the strategist's turn of the debate: a conceded challenge costs
// its hypothesis ConcedePenalty of confidence and marks it contested.
func (p *proto) rebut(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	ans, model, err := ask(ctx, p, in, SchemaRebuttal, fmt.Sprintf("answer the adversary's challenges of pass %d", s.Pass),
		rebuttalData{Question: t.Opts.Question, Pass: s.Pass, Hypotheses: s.Hypotheses, Challenges: protocol.NonNil(s.Challenges), Evidence: s.Evidence},
		func(a rebuttalAnswer) []debate.Violation {
			g := violations{rule: "REBUTTAL"}
			answered := map[string]bool{}
			for i, r := range a.Responses {
				f := fmt.Sprintf("responses[%d]", i)
				switch {
				case !slices.ContainsFunc(s.Challenges, func(c Challenge) bool { return c.HypothesisID == r.HypothesisID }):
					g.add(f+".hypothesis_id", "%q was not challenged", r.HypothesisID)
				case answered[r.HypothesisID]:
					g.add(f+".hypothesis_id", "%s is answered twice", r.HypothesisID)
				}
				answered[r.HypothesisID] = true
				if r.Decision != DecisionDefend && r.Decision != DecisionConcede {
					g.add(f+".decision", "must be %q or %q", DecisionDefend, DecisionConcede)
				}
				g.text(f+".argument", r.Argument)
			}
			for _, c := range s.Challenges {
				if !answered[c.HypothesisID] {
					g.add("responses", "the challenge to %s is not answered", c.HypothesisID)
				}
			}
			return g.list
		})
	if err != nil {
		return nil, err
	}
	conceded := map[string]bool{}
	turns := make([]DebateTurn, 0, len(ans.Responses))
	for _, r := range ans.Responses {
		conceded[r.HypothesisID] = r.Decision == DecisionConcede
		turns = append(turns, DebateTurn{Pass: s.Pass, Speaker: RoleStrategist, HypothesisID: r.HypothesisID, Kind: r.Decision, Text: r.Argument})
	}
	for i := range s.Hypotheses {
		if h := &s.Hypotheses[i]; conceded[h.ID] {
			h.Confidence, h.Contested = round2(max(0, h.Confidence-ConcedePenalty)), true
		}
	}
	s.DebateLog = append(s.DebateLog, turns...)
	return t.Save([]orchestrator.Emit{{Type: EventDebateTurn, Payload: map[string]any{
		"pass": s.Pass, "speaker": RoleStrategist, "responses": protocol.NonNil(ans.Responses), "turns": turns, "model": model}}}, nil)
}

// strategise is the strategist's plan over the pass's hypotheses.
func (p *proto) strategise(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	var turns []DebateTurn
	for _, d := range s.DebateLog {
		if d.Pass == s.Pass {
			turns = append(turns, d)
		}
	}
	plan, model, err := ask(ctx, p, in, SchemaPlan, fmt.Sprintf("draft the plan of pass %d", s.Pass),
		planData{Question: t.Opts.Question, Pass: s.Pass, Hypotheses: protocol.NonNil(s.Hypotheses), DebateLog: protocol.NonNil(turns), Directives: s.Directives},
		func(pl Plan) []debate.Violation {
			g := violations{rule: "PLAN"}
			g.text("summary", pl.Summary)
			for name, items := range map[string][]PlanItem{"recommendations": pl.Recommendations, "risks": pl.Risks} {
				if len(items) > maxHypotheses {
					g.add(name, "at most %d items", maxHypotheses)
				}
				for i, it := range items {
					f := fmt.Sprintf("%s[%d]", name, i)
					g.text(f+".text", it.Text)
					g.ids(f+".hypothesis_ids", it.HypothesisIDs, s.hasHypothesis, false)
					if it.Priority != "" && !slices.Contains([]string{priorityHigh, priorityMedium, priorityLow}, it.Priority) {
						g.add(f+".priority", "must be high, medium or low")
					}
				}
			}
			slices.SortFunc(g.list, func(a, b debate.Violation) int { return strings.Compare(a.Field, b.Field) })
			return g.list
		})
	if err != nil {
		return nil, err
	}
	plan.Recommendations, plan.Risks = protocol.NonNil(plan.Recommendations), protocol.NonNil(plan.Risks)
	s.Plan = &plan
	return t.Save([]orchestrator.Emit{{Type: EventPlan, Payload: map[string]any{"pass": s.Pass, "plan": plan, "model": model}}}, nil)
}

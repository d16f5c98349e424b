package idis

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/tools"
)

// NoPosition names the stance of a role that took no investment position
// in a round: the sanad breaker, which challenges chains, or an observer
// whose analysis found nothing to argue either way.
const NoPosition = "NO_POSITION"

// afterRebuttal goes to evidence retrieval only when an agent asked for
// evidence this round.
func afterRebuttal(s *state) string {
	if len(s.PendingQueries) > 0 {
		return NodeEvidence
	}
	return NodeClose
}

// retrieve runs the pending evidence requests (seed 001 §4.5) through the
// same search the agents' tool uses, and records what it found and whether
// any of it is new to the debate.
func (p *proto) retrieve(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	v, err := p.view(ctx, in.DealID, s)
	if err != nil {
		return nil, err
	}
	inv := tools.NewInvoker(tools.Config{
		Matrix:   tools.Matrix{actorEngine: {tools.SearchEvidence}},
		Limits:   tools.Limits{MaxCallsPerRound: map[string]int{tools.SearchEvidence: 1000}},
		Deal:     v.Deal,
		Searcher: p.cfg.Searcher,
		DealID:   in.DealID, DebateID: in.DebateID, Round: in.Round,
		Now: p.cfg.Now,
	})
	call := inv.Bind(actorEngine)
	type found struct {
		Query string          `json:"query"`
		Hits  json.RawMessage `json:"hits"`
	}
	var all []found
	s.NewEvidence = false
	for _, q := range s.PendingQueries {
		args, _ := json.Marshal(map[string]any{"query": q, "deal_id": in.DealID, "limit": 5})
		res, err := call.Call(ctx, debate.ToolCall{Tool: tools.SearchEvidence, Args: args})
		if err != nil {
			return nil, err
		}
		all = append(all, found{Query: q, Hits: res.Output})
		var out tools.SearchOutput
		_ = json.Unmarshal(res.Output, &out)
		for _, h := range out.Results {
			if !slices.Contains(s.SeenEvidence, h.EvidenceID) {
				s.SeenEvidence = append(s.SeenEvidence, h.EvidenceID)
				s.NewEvidence = true
			}
		}
		if len(res.Output) > 0 {
			s.Retrieved = append(s.Retrieved, res.Output)
		}
	}
	s.PendingQueries = nil
	return t.Save([]orchestrator.Emit{{Type: EventEvidenceRetrieved, Payload: map[string]any{
		"round": in.Round, "searches": all, "new_evidence": s.NewEvidence,
	}}}, nil)
}

// stop applies the stop rules in seed 001 §3's priority and records the
// decision; it ends the round.
func (p *proto) stop(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	v, outs, err := p.read(ctx, t)
	if err != nil {
		return nil, err
	}
	s.ReliedCritical = gate.ReliedOnCritical(outs, v.facts)
	var confs []float64
	for _, role := range debate.IDISRoles {
		if c, ok := s.RoundConf[role]; ok {
			confs = append(confs, c)
		}
	}
	positions := map[string][]gate.PositionBand{}
	for role, hist := range s.Positions {
		for _, b := range hist {
			// A role without a position (a challenger, an observer that
			// abstains) is named as such, never as a blank.
			positions[role] = append(positions[role], gate.PositionBand{Recommendation: cmp.Or(b.Recommendation, NoPosition), Band: b.Band})
		}
	}
	reason, why := gate.StopCondition(gate.StopState{
		Round: in.Round, MaxRounds: s.MaxRounds, ReliedOnCritical: s.ReliedCritical, Confidences: confs,
		Positions: positions, EvidenceRequested: s.EvidenceAsked, NewEvidenceFound: s.NewEvidence,
		OpenQuestions: len(s.OpenQuestions),
	})
	s.StopReason, s.StopWhy = reason, why
	decision := map[string]any{
		"round": in.Round, "stop_reason": reason, "why": why, "confidences": s.RoundConf,
		"relied_on_critical": s.ReliedCritical,
	}
	// The next round starts afresh.
	s.RoundConf, s.EvidenceAsked, s.NewEvidence = map[string]float64{}, false, false
	return t.Save([]orchestrator.Emit{{Type: EventStopDecision, Payload: decision}}, nil)
}

// afterStop validates and finishes once a stop rule fired, or starts the
// next round.
func afterStop(s *state) string {
	if s.StopReason != "" {
		return NodeValidate
	}
	return NodeOpening
}

// validateAll is seed 001 §4.8's hard gate over every accepted output of the
// debate, against the deal as it stands at the end.
func (p *proto) validateAll(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	s := t.State
	v, outs, err := p.read(ctx, t)
	if err != nil {
		return nil, err
	}
	type failure struct {
		AgentID    string             `json:"agent_id"`
		Round      int                `json:"round_number"`
		Violations []debate.Violation `json:"violations"`
	}
	var failed []failure
	for i := range outs {
		if r := gate.Validate(&outs[i], v.facts, debate.IDISRoles); !r.Valid {
			failed = append(failed, failure{AgentID: outs[i].AgentID, Round: outs[i].RoundNumber, Violations: r.Violations})
		}
	}
	return &orchestrator.NodeOutput{Events: []orchestrator.Emit{{Type: EventValidation, Payload: map[string]any{
		"outputs_checked": len(outs), "failed_on_recheck": failed, "accepted": s.Accepted, "rejected": s.Rejected, "pass_rate": s.passRate(),
	}}}}, nil
}

// finalize builds the deliverables and ends the debate with its stop
// reason.
func (p *proto) finalize(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	s := t.State
	v, outs, err := p.read(ctx, t)
	if err != nil {
		return nil, err
	}
	d := buildDeliverables(t.DebateID, s, v, outs)
	return &orchestrator.NodeOutput{
		Events: []orchestrator.Emit{{Type: EventDeliverables, Payload: d}},
		Stop:   &orchestrator.Stop{Reason: cmp.Or(s.StopReason, "MAX_ROUNDS")},
	}, nil
}

// read loads what a node works on: the deal's view and the transcript so
// far.
func (p *proto) read(ctx context.Context, t *turn) (*dealView, []debate.AgentOutput, error) {
	v, err := p.view(ctx, t.DealID, t.State)
	if err != nil {
		return nil, nil, err
	}
	outs, err := p.transcript(ctx, t.NodeInput)
	if err != nil {
		return nil, nil, err
	}
	return v, outs, nil
}

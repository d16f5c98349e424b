package legal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
)

type proto struct {
	models protocol.Models
}

// artifact is an artifact.created payload.
type artifact struct {
	Name    string            `json:"name"`
	Content any               `json:"content"`
	Model   *debate.ModelCall `json:"model,omitempty"`
}

// rejection is an output.rejected payload: the kit's, with the agent and
// the kind of output.
type rejection struct {
	protocol.Rejection
	Agent string `json:"agent"`
	Kind  string `json:"kind"`
}

// artifactName is §7's file name of an agent's output or critique set.
func artifactName(kind string, round int, agent string) string {
	if kind == KindCritique {
		return fmt.Sprintf("critique_round%d_%s_on_%s.json", round, strings.ToLower(agent), strings.ToLower(other(agent)))
	}
	return fmt.Sprintf("debate_round%d_%s.json", round, strings.ToLower(agent))
}

// SummaryArtifact is the file name of the debate summary (§7).
const SummaryArtifact = "debate_summary.json"

// call is one structured turn: the rules backend or the model composes the
// answer to req, and gate checks it (the model gets the gate's violations
// as repair requests first); gate keeps what it parsed.
func (p *proto) call(ctx context.Context, t *turn, node, role string, req *Request,
	gate func(json.RawMessage) []debate.Violation,
) (protocol.Answer, error) {
	c := protocol.Call{Prompt: prompts[role], CacheKey: fmt.Sprintf("%s/%s/r%d/a%d", t.DebateID, node, t.Round, t.Attempt),
		Task: fmt.Sprintf("%s: write the %s of %s in round %d", Name, req.Kind, role, req.Round), Data: req, Check: gate}
	if req.Kind == KindCritique {
		c.SchemaName, c.Schema = schemaCritique, critiqueSchema
	}
	return p.models.Ask(ctx, t.NodeInput, c)
}

// request builds an agent's DATA document for kind from the state.
func request(o *Options, s *state, agent, kind string, round int) (*Request, error) {
	r := &Request{Kind: kind, Round: round, Agent: agent, Query: o.Query, DomainHint: o.DomainHint, Context: o.Context}
	switch kind {
	case KindAnswer:
	case KindCritique:
		r.Own, r.Target = s.Outputs[agent], s.Outputs[other(agent)]
		if r.Own == nil || r.Target == nil {
			return nil, orchestrator.Permanent(fmt.Errorf("legal: %s cannot critique in round %d: an output is missing", agent, round))
		}
	case KindRevision:
		r.Own, r.Other = s.Outputs[agent], s.Outputs[other(agent)]
		if r.Own == nil {
			return nil, orchestrator.Permanent(fmt.Errorf("legal: %s has no output to revise in round %d", agent, round))
		}
		if cs := s.Critiques[other(agent)]; cs != nil && cs.Target == agent {
			r.Received = cs.Critiques
		}
	}
	return r, nil
}

// branch is one agent's turn of a parallel group: its answer, critique or
// revision, gated, left for merge as a turn.
func (p *proto) branch(agent, kind, node string) func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
	role := roleOf(agent)
	return func(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
		in := t.NodeInput
		req, err := request(t.Opts, t.State, agent, kind, in.Round)
		if err != nil {
			return nil, err
		}
		src := t.Opts.sources()
		r := branchResult{Agent: agent, Kind: kind, Round: in.Round}
		var content any // what the gate parsed last
		gate := func(raw json.RawMessage) (v []debate.Violation) {
			if kind == KindCritique {
				r.Critiques, v = checkCritiques(raw, in.Round, agent, req.Target)
				content = r.Critiques
			} else {
				r.Output, v = checkOutput(raw, in.Round, agent, src)
				content = r.Output
			}
			return v
		}
		ans, err := p.call(ctx, t, node, role, req, gate)
		if err != nil {
			return protocol.BudgetStop(role, err, nil, nil)
		}
		var ev orchestrator.Emit
		if len(ans.Violations) > 0 {
			r.Output, r.Critiques = nil, nil
			r.Rejected, ev = rejected(agent, kind, role, in.Round, ans)
		} else {
			r.Artifact = artifactName(kind, in.Round, agent)
			ev = orchestrator.Emit{Type: EventArtifact, Payload: artifact{Name: r.Artifact, Content: content, Model: ans.Model}}
		}
		st, err := protocol.Encode(r)
		if err != nil {
			return nil, err
		}
		return &orchestrator.NodeOutput{State: st, Events: []orchestrator.Emit{ev}}, nil
	}
}

// rejected is the record of an answer the gates refused and its
// output.rejected event.
func rejected(agent, kind, role string, round int, ans protocol.Answer) (*Rejection, orchestrator.Emit) {
	return &Rejection{Agent: agent, Round: round, Kind: kind, Rules: protocol.RuleNames(ans.Violations)},
		orchestrator.Emit{Type: EventRejected, Payload: rejection{Agent: agent, Kind: kind,
			Rejection: protocol.Rejection{Role: role, Round: round, Violations: ans.Violations, Model: ans.Model}}}
}

// merge applies the branches' results in declared order (NLA, then ALA).
func merge(s *state, outs []*orchestrator.NodeOutput) error {
	rs, err := protocol.Branches[branchResult](outs)
	for _, r := range rs {
		s.apply(r)
	}
	return err
}

// afterAnswers goes to the cross-critique, or to the check when an answer
// was rejected.
func afterAnswers(s *state) string {
	if s.RoundRejected {
		return NodeCheck
	}
	return NodeCritique
}

// afterRevision critiques the revisions unless they are calm (every
// convergence criterion holds on them) or one was rejected.
func afterRevision(s *state) string {
	if s.RoundRejected || Calm(s.signals(0)) {
		return NodeCheck
	}
	return NodeCritique
}

// afterCheck revises while the debate continues, else hands it to the
// supervisor.
func afterCheck(s *state) string {
	if s.Summary == nil {
		return NodeRevision
	}
	return NodeSupervisor
}

// decide decides the round (§5–§6) and, when the debate ends, writes the
// summary the supervisor reads. It ends the round.
func decide(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, o, s := t.NodeInput, t.Opts, t.State
	d := Decide(s.signals(in.Round))
	s.Decisions = append(s.Decisions, d)
	s.RoundRejected = false
	events := []orchestrator.Emit{{Type: EventDecision, Payload: d}}
	if d.Outcome != OutcomeContinue {
		s.Summary = summarize(o, in.DealID, s, d)
		s.Artifacts = append(s.Artifacts, SummaryArtifact)
		events = append(events, orchestrator.Emit{Type: EventArtifact, Payload: artifact{Name: SummaryArtifact, Content: s.Summary}})
	}
	return t.Save(events, nil)
}

// supervise is the supervisor's synthesis from the final revisions and the
// summary only (seed §9).
func (p *proto) supervise(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	s := t.State
	if s.Summary == nil {
		return nil, orchestrator.Permanent(errors.New("legal: the supervisor runs only after the debate ended"))
	}
	req := &Request{Kind: KindSynthesis, Round: s.Summary.Rounds, Finals: s.Outputs, Summary: s.Summary}
	var syn *Synthesis
	gate := func(raw json.RawMessage) (v []debate.Violation) {
		syn, v = checkSynthesis(raw, s.Outputs, s.Summary)
		return v
	}
	ans, err := p.call(ctx, t, NodeSupervisor, RoleSupervisor, req, gate)
	if err != nil {
		return protocol.BudgetStop(RoleSupervisor, err, nil, nil)
	}
	if len(ans.Violations) > 0 {
		rej, ev := rejected("SUP", KindSynthesis, RoleSupervisor, req.Round, ans)
		s.SynthesisRejected, s.Rejections = true, append(s.Rejections, *rej)
		return t.Save([]orchestrator.Emit{ev}, nil)
	}
	s.Synthesis = syn
	return t.Save([]orchestrator.Emit{{Type: EventSynthesis, Payload: map[string]any{"synthesis": syn, "model": ans.Model}}}, nil)
}

// finalize emits the deliverables and ends the debate: completed when it
// converged, needs_review when it escalated.
func finalize(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	s := t.State
	if s.Summary == nil {
		return nil, orchestrator.Permanent(errors.New("legal: finalize before the debate ended"))
	}
	d := &Deliverables{Summary: s.Summary, Synthesis: s.Synthesis, FinalRevisions: s.Outputs,
		NeedsHumanReview: s.Summary.NeedsHumanReview || s.SynthesisRejected || (s.Synthesis != nil && s.Synthesis.NeedsHumanReview),
		Artifacts:        s.Artifacts}
	d.Markdown = d.markdown()
	stop := &orchestrator.Stop{Status: debate.DebateCompleted, Reason: s.Summary.StopReason}
	if s.Summary.StopReason == ReasonEscalated {
		stop.Status = debate.DebateNeedsReview
	}
	return &orchestrator.NodeOutput{Events: []orchestrator.Emit{{Type: EventDeliverables, Payload: d}}, Stop: stop}, nil
}

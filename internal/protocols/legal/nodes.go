package legal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/roles/llm"
)

type proto struct {
	cfg Config
}

// artifact is an artifact.created payload.
type artifact struct {
	Name    string            `json:"name"`
	Content any               `json:"content"`
	Model   *debate.ModelCall `json:"model,omitempty"`
}

// rejection is an output.rejected payload.
type rejection struct {
	Agent      string             `json:"agent"`
	Round      int                `json:"round"`
	Kind       string             `json:"kind"`
	Violations []debate.Violation `json:"violations"`
	Model      *debate.ModelCall  `json:"model,omitempty"`
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

// load reads a node's options and state.
func load(in *orchestrator.NodeInput) (Options, *state, error) {
	o, err := ParseOptions(in.Options)
	if err != nil {
		return o, nil, orchestrator.Permanent(fmt.Errorf("legal: options: %w", err))
	}
	s, err := loadState(in.State)
	if err != nil {
		return o, nil, orchestrator.Permanent(err)
	}
	return o, s, nil
}

// caller returns the model for the tenant of ctx, nil for the rules
// backend.
func (p *proto) caller(ctx context.Context) (llm.Caller, error) {
	if p.cfg.ModelFor == nil {
		return nil, nil
	}
	c, err := p.cfg.ModelFor(ctx)
	if err != nil {
		return nil, fmt.Errorf("legal: model: %w", err)
	}
	return c, nil
}

// call is one structured turn: the rules backend or the model composes the
// answer to req, and gate checks it (the model gets the gate's violations
// as repair requests first); gate keeps what it parsed. It returns the
// gate's violations on the final answer and the model calls made (nil for
// the rules backend).
func (p *proto) call(ctx context.Context, in *orchestrator.NodeInput, node, role string, req *Request,
	gate func(json.RawMessage) []debate.Violation,
) ([]debate.Violation, *debate.ModelCall, error) {
	c, err := p.caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	if c == nil {
		data, err := json.Marshal(req)
		if err != nil {
			return nil, nil, fmt.Errorf("legal: encode request: %w", err)
		}
		ans, err := ComposeByRules(data)
		if err != nil {
			return nil, nil, err
		}
		return gate(ans), nil, nil
	}
	system, prompt, schemaName, schema := systemALA, promptALA, schemaOutput, outputSchema
	switch role {
	case RoleSupervisor:
		system, prompt, schemaName, schema = systemSupervisor, promptSupervisor, schemaSynthesis, synthesisSchema
	case RoleNLA:
		system, prompt = systemNLA, promptNLA
	}
	if req.Kind == KindCritique {
		schemaName, schema = schemaCritique, critiqueSchema
	}
	res, err := c.JSON(ctx, llm.JSONCall{
		TenantID: in.TenantID, DebateID: in.DebateID, Role: role,
		CacheKey: fmt.Sprintf("%s/%s/r%d/a%d", in.DebateID, node, in.Round, in.Attempt),
		PromptID: prompt, System: system,
		Task:       fmt.Sprintf("%s: write the %s of %s in round %d", Name, req.Kind, role, req.Round),
		Data:       req,
		SchemaName: schemaName, Schema: schema, Check: gate,
	})
	if err != nil {
		return nil, res.Model, err
	}
	if res.Answer == nil {
		return res.Violations, res.Model, nil
	}
	// Fail closed: the gate decides, whatever the backend reported.
	return gate(res.Answer), res.Model, nil
}

// budgetStop ends the debate for review when the model budget ran out;
// other errors are the engine's to retry.
func budgetStop(role string, err error) (*orchestrator.NodeOutput, error) {
	if !errors.Is(err, roles.ErrBudgetExceeded) {
		return nil, err
	}
	return &orchestrator.NodeOutput{
		Events: []orchestrator.Emit{{Type: EventBudgetExceeded, Actor: role, Payload: map[string]any{"role": role, "detail": err.Error()}}},
		Stop:   &orchestrator.Stop{Status: debate.DebateNeedsReview, Reason: ReasonTokenBudget},
	}, nil
}

// request builds an agent's DATA document for kind from the state.
func request(o Options, s *state, agent, kind string, round int) (*Request, error) {
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
func (p *proto) branch(agent, kind, node string) orchestrator.NodeFunc {
	role := roleOf(agent)
	return func(ctx context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
		o, s, err := load(in)
		if err != nil {
			return nil, err
		}
		req, err := request(o, s, agent, kind, in.Round)
		if err != nil {
			return nil, err
		}
		src := o.sources()
		var parsed any
		gate := func(raw json.RawMessage) []debate.Violation {
			if kind == KindCritique {
				cs, v := checkCritiques(raw, in.Round, agent, req.Target)
				parsed = cs
				return v
			}
			out, v := checkOutput(raw, in.Round, agent, src)
			parsed = out
			return v
		}
		violations, model, err := p.call(ctx, in, node, role, req, gate)
		if err != nil {
			return budgetStop(role, err)
		}
		t := turn{Agent: agent, Kind: kind, Round: in.Round}
		var ev orchestrator.Emit
		if len(violations) > 0 || parsed == nil {
			t.Rejected = &Rejection{Agent: agent, Round: in.Round, Kind: kind, Rules: ruleNames(violations)}
			ev = orchestrator.Emit{Type: EventRejected, Actor: role, Payload: rejection{Agent: agent, Round: in.Round, Kind: kind, Violations: violations, Model: model}}
		} else {
			switch v := parsed.(type) {
			case *CritiqueSet:
				t.Critiques = v
			case *Output:
				t.Output = v
			}
			t.Artifact = artifactName(kind, in.Round, agent)
			ev = orchestrator.Emit{Type: EventArtifact, Actor: role, Payload: artifact{Name: t.Artifact, Content: parsed, Model: model}}
		}
		st, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("legal: encode turn: %w", err)
		}
		return &orchestrator.NodeOutput{State: st, Events: []orchestrator.Emit{ev}}, nil
	}
}

func ruleNames(vs []debate.Violation) []string {
	out := []string{}
	for _, v := range vs {
		if len(out) == 0 || out[len(out)-1] != v.Rule {
			out = append(out, v.Rule)
		}
	}
	return out
}

// merge applies the branches' turns in declared order (NLA, then ALA).
func (p *proto) merge(st json.RawMessage, outs []*orchestrator.NodeOutput) (json.RawMessage, error) {
	s, err := loadState(st)
	if err != nil {
		return nil, err
	}
	for _, o := range outs {
		if o == nil || o.State == nil {
			continue // a branch that stopped the debate
		}
		var t turn
		if err := json.Unmarshal(o.State, &t); err != nil {
			return nil, fmt.Errorf("legal: branch turn: %w", err)
		}
		s.apply(t)
	}
	return s.save()
}

// afterAnswers goes to the cross-critique, or to the check when an answer
// was rejected.
func afterAnswers(st json.RawMessage) (string, error) {
	s, err := loadState(st)
	if err != nil {
		return "", err
	}
	if s.RoundRejected {
		return NodeCheck, nil
	}
	return NodeCritique, nil
}

// afterRevision critiques the revisions unless they are calm (every
// convergence criterion holds on them) or one was rejected.
func afterRevision(st json.RawMessage) (string, error) {
	s, err := loadState(st)
	if err != nil {
		return "", err
	}
	if s.RoundRejected || Calm(s.signals(0)) {
		return NodeCheck, nil
	}
	return NodeCritique, nil
}

// afterCheck revises while the debate continues, else hands it to the
// supervisor.
func afterCheck(st json.RawMessage) (string, error) {
	s, err := loadState(st)
	if err != nil {
		return "", err
	}
	if s.Summary == nil {
		return NodeRevision, nil
	}
	return NodeSupervisor, nil
}

// check decides the round (§5–§6) and, when the debate ends, writes the
// summary the supervisor reads. It ends the round.
func (p *proto) check(_ context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
	o, s, err := load(in)
	if err != nil {
		return nil, err
	}
	d := Decide(s.signals(in.Round))
	s.Decisions = append(s.Decisions, d)
	s.RoundRejected = false
	events := []orchestrator.Emit{{Type: EventDecision, Payload: d}}
	if d.Outcome != OutcomeContinue {
		s.Summary = summarize(o, in.DealID, s, d)
		s.Artifacts = append(s.Artifacts, SummaryArtifact)
		events = append(events, orchestrator.Emit{Type: EventArtifact, Payload: artifact{Name: SummaryArtifact, Content: s.Summary}})
	}
	st, err := s.save()
	if err != nil {
		return nil, err
	}
	return &orchestrator.NodeOutput{State: st, Events: events}, nil
}

// supervise is the supervisor's synthesis from the final revisions and the
// summary only (seed §9).
func (p *proto) supervise(ctx context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
	_, s, err := load(in)
	if err != nil {
		return nil, err
	}
	if s.Summary == nil {
		return nil, orchestrator.Permanent(errors.New("legal: the supervisor runs only after the debate ended"))
	}
	req := &Request{Kind: KindSynthesis, Round: s.Summary.Rounds, Finals: s.Outputs, Summary: s.Summary}
	var syn *Synthesis
	gate := func(raw json.RawMessage) []debate.Violation {
		var v []debate.Violation
		syn, v = checkSynthesis(raw, s.Outputs, s.Summary)
		return v
	}
	violations, model, err := p.call(ctx, in, NodeSupervisor, RoleSupervisor, req, gate)
	if err != nil {
		return budgetStop(RoleSupervisor, err)
	}
	var ev orchestrator.Emit
	if len(violations) > 0 || syn == nil {
		s.SynthesisRejected = true
		s.Rejections = append(s.Rejections, Rejection{Agent: "SUP", Round: req.Round, Kind: KindSynthesis, Rules: ruleNames(violations)})
		ev = orchestrator.Emit{Type: EventRejected, Payload: rejection{Agent: "SUP", Round: req.Round, Kind: KindSynthesis, Violations: violations, Model: model}}
	} else {
		s.Synthesis = syn
		ev = orchestrator.Emit{Type: EventSynthesis, Payload: map[string]any{"synthesis": syn, "model": model}}
	}
	st, err := s.save()
	if err != nil {
		return nil, err
	}
	return &orchestrator.NodeOutput{State: st, Events: []orchestrator.Emit{ev}}, nil
}

// finalize emits the deliverables and ends the debate: completed when it
// converged, needs_review when it escalated.
func (p *proto) finalize(_ context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
	_, s, err := load(in)
	if err != nil {
		return nil, err
	}
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

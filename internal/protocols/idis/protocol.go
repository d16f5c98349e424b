// Package idis is the IDIS venture debate (seeds 000 and 001): an advocate
// argues an investment thesis from the graded claim registry, a sanad
// breaker attacks weak evidence chains, a contradiction finder and a risk
// officer critique in parallel, the advocate rebuts, evidence is retrieved
// when asked for, the arbiter rules, and explicit stop rules end the
// debate, which finishes with deliverables an investment committee can act
// on. Every agent output passes the fail-closed gates (package gate) before
// it enters the transcript; every tool call is checked and audited by the
// server (package tools).
package idis

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/debated/debated/internal/canon"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/tools"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Registry is what the protocol reads of the tenant's deal.
type Registry interface {
	DealBundleGet(ctx context.Context, dealID string) (*debate.DealBundle, error)
	DefectList(ctx context.Context, dealID string) ([]debate.Defect, error)
}

// Ledger reads the debate's committed events (the transcript lives there).
type Ledger = debate.EventLister

// Config wires the protocol.
type Config struct {
	Registry Registry
	Ledger   Ledger
	// Roles by role name; the rules backend by default is the caller's
	// choice (package protocols/idis/rules).
	Roles map[string]roles.Role
	// RolesFor, if set, picks the roles for the tenant of ctx (a tenant's
	// own model); it is consulted before Roles.
	RolesFor func(ctx context.Context) (map[string]roles.Role, error)
	// Searcher ranks evidence in the store (full-text search); nil ranks
	// in memory.
	Searcher tools.Searcher
	// Enrichment returns the tenant's enrichment records for a deal; nil
	// means none.
	Enrichment func(ctx context.Context, dealID string) ([]tools.Enrichment, error)
	// Now is the clock of tool audits (time.Now by default).
	Now func() time.Time
	// Tracer makes a span per tool call (the global OpenTelemetry
	// provider's by default).
	Tracer trace.Tracer
	// Observe, if set, receives the time spent in each part of a turn:
	// "load" (deal, grading, transcript), "role", "tools" and "gate".
	Observe func(part string, d time.Duration)
	// Transcripts caches the debates' transcripts; pass the same value to
	// the runner as a Publisher so that it is fed the committed events and
	// turns read nothing from the store (see Transcripts). Nil means a
	// private cache that reads what it has not seen.
	Transcripts *Transcripts
}

// Event types the protocol emits.
const (
	EventAgentOutput       = "agent.output"
	EventToolCall          = protocol.EventToolCall
	EventMuhasabahRejected = "muhasabah.rejected"
	EventDefectFlagged     = "defect.flagged"
	EventReviewRequested   = "human_review.requested"
	EventEvidenceRetrieved = "evidence.retrieved"
	EventStopDecision      = "stop.decision"
	EventValidation        = "muhasabah.validated"
	EventDeliverables      = protocol.EventDeliverables
	EventBudgetExceeded    = protocol.EventBudgetExceeded
)

// Node names (seed 001 §1).
const (
	NodeOpening   = "advocate_opening"
	NodeChallenge = "sanad_breaker_challenge"
	NodeObservers = "observer_critiques_parallel"
	NodeRebuttal  = "advocate_rebuttal"
	NodeEvidence  = "evidence_call_retrieval"
	NodeClose     = "arbiter_close"
	NodeStop      = "stop_condition_check"
	NodeValidate  = "muhasabah_validate_all"
	NodeFinalize  = "finalize_outputs"
)

// actorEngine signs the protocol's bookkeeping nodes.
const actorEngine = orchestrator.ActorEngine

// node and turn are the protocol's typed kit node and turn.
type (
	node = protocol.Node[Options, state]
	turn = protocol.Turn[Options, state]
)

// Protocol returns the IDIS protocol over cfg.
func Protocol(cfg Config) *orchestrator.Protocol {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Tracer == nil {
		cfg.Tracer = otel.Tracer("github.com/debated/debated/internal/protocols/idis")
	}
	if cfg.Transcripts == nil {
		cfg.Transcripts = NewTranscripts()
	}
	p := &proto{cfg: cfg}
	agent := func(name, role string, edges ...string) *node {
		return &node{Name: name, Actor: role, Run: p.task(role), Edges: edges}
	}
	return protocol.Compile(&protocol.Spec[Options, state]{
		Name:        Name,
		Description: "IDIS venture debate (seeds 000/001): advocate, sanad breaker, contradiction finder ‖ risk officer, rebuttal, evidence call, arbiter; stop rules CRITICAL_DEFECT > MAX_ROUNDS > CONSENSUS > STABLE_DISSENT > EVIDENCE_EXHAUSTED",
		Roles:       slices.Clone(debate.IDISRoles),
		Start:       NodeOpening,
		MaxSteps:    5*8 + 10,
		// The transcript is the only thing a node reads from the ledger,
		// and it adds NodeInput.Pending.
		Pipelined:    true,
		Deliverables: render,
		CheckOutput:  checkOutput,
		Defaults:     defaults,
		Check:        check,
		NewState:     newState,
		// Its nodes keep no state once saved and change only what a state
		// owns (Spec.PassState).
		PassState: true,
		Init: func(o *Options, _ orchestrator.InitInput) (*state, error) {
			s := newState()
			s.MaxRounds, s.PauseForReview = o.MaxRounds, o.PauseForReview
			return s, nil
		},
		RoleGuard: map[string][]string{
			EventAgentOutput:       debate.IDISRoles,
			EventToolCall:          debate.IDISRoles,
			EventMuhasabahRejected: protocol.Everyone(debate.IDISRoles...),
			EventDefectFlagged:     {debate.RoleSanadBreaker},
			EventReviewRequested:   {debate.RoleArbiter},
			EventEvidenceRetrieved: {actorEngine},
			EventStopDecision:      {actorEngine},
			EventValidation:        {actorEngine},
			EventDeliverables:      {actorEngine},
			EventBudgetExceeded:    debate.IDISRoles,
		},
		Tools: Matrix,
		Nodes: []*node{
			agent(NodeOpening, debate.RoleAdvocate, NodeChallenge),
			agent(NodeChallenge, debate.RoleSanadBreaker, NodeObservers),
			{
				Name: NodeObservers,
				Branches: []*node{
					{Name: "contradiction_finder_critique", Actor: debate.RoleContradictionFinder, Run: p.branch(debate.RoleContradictionFinder)},
					{Name: "risk_officer_critique", Actor: debate.RoleRiskOfficer, Run: p.branch(debate.RoleRiskOfficer)},
				},
				Merge: merge,
				Edges: []string{NodeRebuttal},
			},
			{Name: NodeRebuttal, Actor: debate.RoleAdvocate, Run: p.task(debate.RoleAdvocate), Edges: []string{NodeEvidence, NodeClose}, Next: afterRebuttal},
			{Name: NodeEvidence, Actor: actorEngine, Run: p.retrieve, Edges: []string{NodeClose}},
			agent(NodeClose, debate.RoleArbiter, NodeStop),
			{Name: NodeStop, Actor: actorEngine, Run: p.stop, EndsRound: true, Edges: []string{NodeOpening, NodeValidate}, Next: afterStop},
			{Name: NodeValidate, Actor: actorEngine, Run: p.validateAll, Edges: []string{NodeFinalize}},
			{Name: NodeFinalize, Actor: actorEngine, Run: p.finalize},
		},
	})
}

type proto struct {
	cfg   Config
	cache caches
}

// dealView is the graded deal a node works on: the deal the tools read
// (it indexes the deal once for every step that shares it) and the gate's
// facts.
type dealView struct {
	*tools.Deal
	facts *gate.Facts
}

// view returns the deal graded with its stored defect records, and the
// gate's facts with the defects flagged in this debate added. The graded
// registry is cached: deals do not change once imported, and the key
// includes the defect records.
func (p *proto) view(ctx context.Context, dealID string, s *state) (*dealView, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	records, ok := p.cache.defectsOf(tenant+"\x00"+dealID, now)
	if !ok {
		if records, err = p.cfg.Registry.DefectList(ctx, dealID); err != nil {
			return nil, fmt.Errorf("idis: load defects: %w", err)
		}
		p.cache.defects.put(tenant+"\x00"+dealID, defectsEntry{at: now, records: records})
	}
	key := dealKey(tenant, dealID, records)
	base, _ := p.cache.deals.get(key)
	if base == nil {
		b, err := p.cfg.Registry.DealBundleGet(ctx, dealID)
		if err != nil {
			return nil, fmt.Errorf("idis: load deal: %w", err)
		}
		g := sanad.GradeWithOptions(b, sanad.Options{Records: records})
		base = &dealView{Deal: &tools.Deal{Bundle: b, Grading: g}, facts: gate.NewFacts(b, g)}
		if p.cfg.Enrichment != nil {
			if base.Enrichment, err = p.cfg.Enrichment(ctx, dealID); err != nil {
				return nil, fmt.Errorf("idis: load enrichment: %w", err)
			}
		}
		p.cache.deals.put(key, base)
	}
	// The deal is indexed once (base); the facts add this debate's flags.
	return &dealView{Deal: base.Deal, facts: base.facts.WithDefects(s.Flagged)}, nil
}

// transcript returns the accepted outputs of the debate as the step sees
// it: those committed through in.HeadSeq (reading from the ledger only the
// events after those already read), then those of in.Pending, the
// previous step's events when this step is computed while they commit.
func (p *proto) transcript(ctx context.Context, in *orchestrator.NodeInput) ([]debate.AgentOutput, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	outs, err := p.cfg.Transcripts.read(ctx, p.cfg.Ledger, tenant, in.DebateID, in.HeadSeq)
	if err != nil {
		return nil, err
	}
	pending, err := p.cfg.Transcripts.pending(tenant, in.DebateID, in.Pending)
	if err != nil {
		return nil, err
	}
	return append(append(make([]debate.AgentOutput, 0, len(outs)+len(pending)), outs...), pending...), nil
}

// payloadLedger is a ledger that can read the payloads of one event type
// only (both stores can): the transcript needs the agents' outputs alone.
type payloadLedger interface {
	EventPayloads(ctx context.Context, debateID string, afterSeq int64, eventType string, limit int) ([]debate.Event, error)
}

// turnResult is what one agent turn changes; a task node applies it to the
// state at once, a parallel group merges its branches' results in declared
// order.
type turnResult struct {
	Role     string              `json:"role"`
	Round    int                 `json:"round"`
	Accepted *debate.AgentOutput `json:"accepted,omitempty"`
	Rejected bool                `json:"rejected,omitempty"`
	Usage    tools.Usage         `json:"usage,omitempty"`
	Flagged  []debate.Defect     `json:"flagged,omitempty"`
	Reviews  []reviewRequest     `json:"reviews,omitempty"`
	Breaches int                 `json:"breaches,omitempty"`
}

// speak runs one role's turn: the role speaks with its tools bound to the
// server's invoker, the output goes through the gate, and the turn yields
// the tool-call audits, then the output (accepted) or its violations
// (rejected). A rejected output never enters the transcript.
func (p *proto) speak(ctx context.Context, t *turn, role string) (turnResult, []orchestrator.Emit, error) {
	in, s := t.NodeInput, t.State
	set := p.cfg.Roles
	if p.cfg.RolesFor != nil {
		var err error
		if set, err = p.cfg.RolesFor(ctx); err != nil {
			return turnResult{}, nil, err
		}
	}
	r, ok := set[role]
	if !ok {
		return turnResult{}, nil, orchestrator.Permanent(fmt.Errorf("idis: no backend for role %s", role))
	}
	t0 := time.Now()
	v, tr, err := p.read(ctx, t)
	if err != nil {
		return turnResult{}, nil, err
	}
	p.observe("load", time.Since(t0))
	seq := 0
	inv := tools.NewInvoker(tools.Config{
		Matrix:   Matrix,
		Limits:   tools.DefaultLimits(),
		Deal:     v.Deal,
		Searcher: p.cfg.Searcher,
		DealID:   in.DealID,
		DebateID: in.DebateID,
		Round:    in.Round,
		Usage:    s.usageFor(in.Round),
		NewID: func() string {
			seq++
			return fmt.Sprintf("%s-r%d-%s-%d", in.DebateID, in.Round, role, seq)
		},
		Now: p.cfg.Now,
	})
	bound := &timedTools{Tools: inv.Bind(role), tracer: p.cfg.Tracer, role: role}
	t1 := time.Now()
	out, err := r.Turn(ctx, &roles.Input{
		DebateID: in.DebateID, TenantID: in.TenantID, Round: in.Round, MaxRounds: s.MaxRounds,
		Deal: v.Bundle, Grading: v.Grading, Transcript: tr, Retrieved: s.Retrieved,
		Tools: bound,
		Check: func(o *debate.AgentOutput) []debate.Violation {
			return gate.Validate(o, v.facts, debate.IDISRoles).Violations
		},
	})
	if err != nil {
		return turnResult{}, nil, err
	}
	p.observe("role", time.Since(t1)-bound.spent)
	p.observe("tools", bound.spent)
	res := turnResult{Role: role, Round: in.Round, Usage: inv.Usage()}
	emits := protocol.AuditEvents(inv)
	for _, a := range inv.Audits() {
		if a.Rule == "quota" {
			res.Breaches++
		}
	}
	// The agent cannot speak for another role or round.
	out.AgentID, out.Role, out.RoundNumber = role, role, in.Round
	t2 := time.Now()
	verdict := gate.Validate(out, v.facts, debate.IDISRoles)
	p.observe("gate", time.Since(t2))
	if !verdict.Valid {
		res.Rejected = true
		emits = append(emits, orchestrator.Emit{Type: EventMuhasabahRejected, Actor: role, Payload: map[string]any{
			"agent_id": role, "round_number": in.Round, "violations": verdict.Violations,
		}})
		return res, emits, nil
	}
	res.Accepted = out
	var payload any = out
	if c, err := canon.Encode(out); err == nil {
		payload = c
		if tenant, err := debate.TenantFrom(ctx); err == nil {
			p.cfg.Transcripts.spoken(tenant, in.DebateID, c.Bytes(), out)
		}
	}
	emits = append(emits, orchestrator.Emit{Type: EventAgentOutput, Actor: role, Payload: payload})
	for _, d := range inv.Flagged() {
		res.Flagged = append(res.Flagged, d)
		emits = append(emits, orchestrator.Emit{Type: EventDefectFlagged, Actor: role, Payload: d})
	}
	for _, rr := range inv.ReviewRequests() {
		req := reviewRequest{ClaimIDs: rr.ClaimIDs, Reason: rr.Reason, Priority: rr.Priority, Round: in.Round}
		res.Reviews = append(res.Reviews, req)
		emits = append(emits, orchestrator.Emit{Type: EventReviewRequested, Actor: role, Payload: req})
	}
	return res, emits, nil
}

// ReasonTokenBudget is the stop reason of a debate whose model-backed roles
// reached its token budget.
const ReasonTokenBudget = protocol.ReasonTokenBudget

// task is a task node: the role speaks and its result is applied to the
// state at once. A spent token budget stops the debate for review.
func (p *proto) task(role string) func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
	return func(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
		res, emits, err := p.speak(ctx, t, role)
		if err != nil {
			return protocol.BudgetStop(role, err, nil, nil)
		}
		s := t.State
		s.apply(res, t.Round)
		out, err := t.Save(emits, nil)
		if err != nil || len(res.Reviews) == 0 || !s.PauseForReview {
			return out, err
		}
		var claims []string
		for _, r := range res.Reviews {
			claims = append(claims, r.ClaimIDs...)
		}
		out.Gate = &orchestrator.GateRequest{Reason: res.Reviews[0].Reason, ClaimIDs: claims}
		return out, nil
	}
}

// branch is a parallel branch: the role speaks and its result is left for
// merge, which applies the branches' results in declared order.
func (p *proto) branch(role string) func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
	return func(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
		res, emits, err := p.speak(ctx, t, role)
		if err != nil {
			return protocol.BudgetStop(role, err, nil, nil)
		}
		raw, err := protocol.Encode(res.forMerge())
		return &orchestrator.NodeOutput{State: raw, Events: emits}, err
	}
}

// merge applies the observers' results, in declared order.
func merge(s *state, outs []*orchestrator.NodeOutput) error {
	results, err := protocol.Branches[turnResult](outs)
	if err != nil {
		return err
	}
	for _, res := range results {
		s.apply(res, res.Round)
	}
	return nil
}

func (p *proto) observe(part string, d time.Duration) {
	if p.cfg.Observe != nil {
		p.cfg.Observe(part, d)
	}
}

// timedTools measures the time a turn spends in tool calls. A role calls
// its tools one at a time.
type timedTools struct {
	roles.Tools
	tracer trace.Tracer
	role   string
	spent  time.Duration
}

func (t *timedTools) Call(ctx context.Context, call debate.ToolCall) (debate.ToolResult, error) {
	start := time.Now()
	ctx, span := t.tracer.Start(ctx, "tool "+call.Tool, trace.WithAttributes(
		attribute.String("tool.name", call.Tool), attribute.String("agent.role", t.role)))
	res, err := t.Tools.Call(ctx, call)
	span.SetAttributes(attribute.String("tool.result", res.Status))
	span.End()
	t.spent += time.Since(start)
	return res, err
}

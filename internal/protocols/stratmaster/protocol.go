// Package stratmaster is the StratMaster agent flow (seed 004): a
// Researcher gathers evidence from the deal registry through the server's
// search_evidence and lookup_claim tools, a Synthesiser states hypotheses
// with provenance, fingerprints and confidence, the Strategist and an
// Adversary debate them when confidence is low or the evidence conflicts,
// the Strategist drafts a plan, and a constitutional Critic checks the work
// against the tenant's constitution (options.constitution, YAML) and sends
// it back to research with actionable feedback, a bounded number of times.
//
// The debate's deal_id is the task's evidence base: an imported deal whose
// claims, evidence, spans and sanads the tools read and package sanad
// grades. The debate id is the seed's task id. Seed 004's task statuses
// (pending, in_progress, needs_review, complete, failed) are recorded in
// task.status events and map onto the debate's (queued, running,
// needs_review, completed, failed).
package stratmaster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/tools"
)

// Name is the protocol's name.
const Name = "stratmaster.v1"

// Roles of the protocol.
const (
	RoleResearcher  = "researcher"
	RoleSynthesiser = "synthesiser"
	RoleStrategist  = "strategist"
	RoleAdversary   = "adversary"
	RoleCritic      = "critic"
)

// Roles lists the protocol's roles.
var Roles = []string{RoleResearcher, RoleSynthesiser, RoleStrategist, RoleAdversary, RoleCritic}

// Node names.
const (
	NodeResearch   = "research"
	NodeSynthesise = "synthesise"
	NodeChallenge  = "adversary_challenge"
	NodeRebuttal   = "strategist_rebuttal"
	NodeStrategise = "strategise"
	NodeReview     = "constitutional_review"
	NodeFinalize   = "finalize"
)

// Event types the protocol emits.
const (
	EventTaskStatus        = "task.status"
	EventToolCall          = protocol.EventToolCall
	EventResearchPlan      = "research.planned"
	EventEvidenceCollected = "evidence.collected"
	EventHypotheses        = "hypotheses.proposed"
	EventDebateTurn        = "debate.turn"
	EventPlan              = "plan.drafted"
	EventReview            = "constitution.reviewed"
	EventRevision          = "task.revision_requested"
	EventOutputRejected    = protocol.EventRejected
	EventArtifact          = protocol.EventArtifact
	EventDeliverables      = protocol.EventDeliverables
	EventBudgetExceeded    = protocol.EventBudgetExceeded
)

// Stop reasons.
const (
	ReasonSatisfied         = "CONSTITUTION_SATISFIED"
	ReasonUnsatisfied       = "CONSTITUTION_UNSATISFIED"
	ReasonNoEvidence        = "NO_EVIDENCE"
	ReasonAttemptsExhausted = "ATTEMPTS_EXHAUSTED"
	ReasonTokenBudget       = protocol.ReasonTokenBudget
)

// Registry is what the protocol reads of the tenant's deal.
type Registry interface {
	DealBundleGet(ctx context.Context, dealID string) (*debate.DealBundle, error)
	DefectList(ctx context.Context, dealID string) ([]debate.Defect, error)
}

// Config wires the protocol.
type Config struct {
	// Registry is the deal registry (the evidence base). Required.
	Registry Registry
	// ModelFor returns the model of the tenant of ctx; a nil Caller (or a
	// nil ModelFor) means the deterministic rules backend (Rules).
	ModelFor protocol.Models
	// Searcher ranks evidence in the store for search_evidence; nil ranks
	// in memory.
	Searcher tools.Searcher
	// Now is the clock of tool audits (time.Now by default): an audit
	// records when its call ran, as the engine's event times do (see
	// docs/decisions.md, "Tool audit times are the wall clock").
	Now func() time.Time
}

// Matrix is the protocol's tool permission matrix: only the researcher
// calls tools (search_evidence and lookup_claim); every other role is
// refused any tool.
var Matrix = tools.Matrix{RoleResearcher: {tools.SearchEvidence, tools.LookupClaim}}

type turn = protocol.Turn[Options, state]

// Protocol returns the StratMaster protocol over cfg.
func Protocol(cfg Config) *orchestrator.Protocol {
	p := &proto{cfg: cfg}
	everyone := protocol.Everyone(Roles...)
	node := func(name, actor string, f work, edges []string, next func(*state) string) *protocol.Node[Options, state] {
		return &protocol.Node[Options, state]{Name: name, Actor: actor, Run: p.guarded(actor, f), Edges: edges, Next: next}
	}
	review := node(NodeReview, RoleCritic, p.review, []string{NodeResearch, NodeFinalize}, unlessStopped(NodeResearch))
	review.EndsRound = true
	return protocol.Compile(&protocol.Spec[Options, state]{
		Name:        Name,
		Description: "StratMaster (seed 004): researcher (search_evidence, lookup_claim) → synthesiser → [adversary ↔ strategist debate when confidence < 0.6 or evidence conflicts] → strategist plan → constitutional critic, which sends work back to research (bounded by max_revisions); stops CONSTITUTION_SATISFIED, CONSTITUTION_UNSATISFIED (needs_review), ATTEMPTS_EXHAUSTED (needs_review) or NO_EVIDENCE (failed)",
		Roles:       append([]string(nil), Roles...),
		Start:       NodeResearch,
		MaxSteps:    6*(maxRevisionsLimit+1) + 5,
		// Nodes read the state and the deal, never the ledger: a step may be
		// computed while the previous one commits.
		Pipelined: true,
		Check:     check,
		Init: func(*Options, orchestrator.InitInput) (*state, error) {
			return &state{Status: StatusPending}, nil
		},
		RoleGuard: map[string][]string{
			EventTaskStatus:        everyone,
			EventToolCall:          {RoleResearcher},
			EventResearchPlan:      {RoleResearcher},
			EventEvidenceCollected: {RoleResearcher},
			EventHypotheses:        {RoleSynthesiser},
			EventDebateTurn:        {RoleAdversary, RoleStrategist},
			EventPlan:              {RoleStrategist},
			EventReview:            {RoleCritic},
			EventRevision:          {RoleCritic},
			EventOutputRejected:    Roles,
			EventBudgetExceeded:    Roles,
			// The node that ends the task signs its closing records: the
			// finaliser, or the role whose work failed its last attempt.
			EventArtifact:     everyone,
			EventDeliverables: everyone,
		},
		Tools: Matrix.Clone(),
		Nodes: []*protocol.Node[Options, state]{
			node(NodeResearch, RoleResearcher, p.research, []string{NodeSynthesise, NodeFinalize}, unlessStopped(NodeSynthesise)),
			node(NodeSynthesise, RoleSynthesiser, p.synthesise, []string{NodeChallenge, NodeStrategise}, afterSynthesis),
			node(NodeChallenge, RoleAdversary, p.challenge, []string{NodeRebuttal}, nil),
			node(NodeRebuttal, RoleStrategist, p.rebut, []string{NodeStrategise}, nil),
			node(NodeStrategise, RoleStrategist, p.strategise, []string{NodeReview}, nil),
			review,
			node(NodeFinalize, orchestrator.ActorEngine, p.finalize, nil, nil),
		},
	})
}

type proto struct{ cfg Config }

// unlessStopped goes on to next until a node ends the task (research that
// found no evidence, a review that decided), then to finalize.
func unlessStopped(next string) func(*state) string {
	return func(s *state) string {
		if s.StopReason != "" {
			return NodeFinalize
		}
		return next
	}
}

// ask makes the structured call schema, with its task, over data on the
// tenant's model, or on the rules backend without one, and returns the
// answer check accepted (the gate gets the answer decoded strictly) and the
// model call's record (nil for the rules backend). A gated-out answer is a
// *protocol.Rejected.
func ask[A any](ctx context.Context, p *proto, in *orchestrator.NodeInput, schema, task string, data any, check func(A) []debate.Violation) (A, *debate.ModelCall, error) {
	var a A
	c := protocol.Call{Prompt: prompts[schema], CacheKey: fmt.Sprintf("%s/r%d/%s/a%d", in.DebateID, in.Round, schema, in.Attempt),
		Task: "play " + prompts[schema].Role + ": " + task, Data: data, Check: protocol.DecodeCheck(check)}
	ans, err := p.cfg.ModelFor.Ask(ctx, in, c)
	if err != nil {
		return a, ans.Model, fmt.Errorf("stratmaster: %s: %w", c.Role, err)
	}
	return a, ans.Model, ans.Decode(c.Role, schema, &a)
}

type work func(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error)

// guarded runs a node's work with the task's attempt policy: a failed
// attempt is retried by the engine until options.max_attempts, and the
// last one ends the task in needs_review (ATTEMPTS_EXHAUSTED), recording
// the seed status and, for a gated-out answer, the rejection. A model over
// the debate's token budget ends it at once (TOKEN_BUDGET_EXCEEDED).
// Shutdown (a cancelled ctx) is left to the engine.
func (p *proto) guarded(role string, f work) func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
	return func(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
		in, o := t.NodeInput, t.Opts
		out, err := f(ctx, t)
		if err == nil || ctx.Err() != nil {
			return out, err
		}
		var events []orchestrator.Emit
		reason := ReasonAttemptsExhausted
		switch {
		case errors.Is(err, roles.ErrBudgetExceeded):
			reason = ReasonTokenBudget
			events = append(events, protocol.BudgetEvent(role, err, nil, nil))
		case in.Attempt < o.MaxAttempts:
			return nil, err
		}
		if rej, ok := errors.AsType[*protocol.Rejected](err); ok {
			events = append(events, protocol.Rejection{Role: role, Schema: rej.Schema, Round: in.Round, Violations: rej.Violations}.Event())
		}
		// The failing work's state is dropped: the work changed s in place
		// (a new pass clears the last one's hypotheses and plan before it
		// asks), so the task closes with the node's input state, the last
		// completed work, read afresh.
		s := &state{}
		if err := json.Unmarshal(in.State, s); err != nil {
			return nil, orchestrator.Permanent(fmt.Errorf("stratmaster: state: %w", err))
		}
		s.Status, s.StopReason = StatusNeedsReview, reason
		s.StopWhy = fmt.Sprintf("%s failed %d attempt(s): %v", role, in.Attempt, err)
		closed := &turn{NodeInput: in, Opts: o, State: s}
		return closed.Save(append(events, closing(closed)...), &orchestrator.Stop{Status: debate.DebateNeedsReview, Reason: reason})
	}
}

// statusEvent records the task's seed status and the debate status it
// maps onto.
func statusEvent(s *state, in *orchestrator.NodeInput, detail string) orchestrator.Emit {
	return orchestrator.Emit{Type: EventTaskStatus, Payload: map[string]any{
		"task_id": in.DebateID, "status": s.Status, "debate_status": debateStatus(s.Status),
		"pass": s.Pass, "attempt": in.Attempt, "detail": detail,
	}}
}

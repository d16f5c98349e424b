// Package agentproto is the agent protocol of seed 003 (agent.protocol.v1):
// a Planner turns a task spec into proposals, a Critic reviews them, an
// Executor signs a tool intent per approved proposal, the Critic approves or
// blocks each intent by its risk class, the Executor runs the approved ones
// through a built-in safe tool (storing the tool's input and output as
// artifacts) and issues evidence-backed claims, the Critic challenges claims
// its evidence contradicts, and the Auditor verifies the whole trace with the
// ledger's verifier and the protocol's invariants before the session
// completes. The session's lifecycle is a state machine (see Request) whose
// every transition is a signed event; a transition it refuses is recorded
// too.
//
// The debate's deal_id names the deal whose claim registry the claim_lookup
// tool reads; the session does not otherwise use it.
package agentproto

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
)

// Name is the protocol's name.
const Name = "agent.protocol.v1"

// Roles of the protocol (seed 003).
const (
	RolePlanner  = "planner"
	RoleExecutor = "executor"
	RoleCritic   = "critic"
	RoleAuditor  = "auditor"
)

// Event types the protocol emits. The seed's mandatory signed types are the
// ledger's (ledger.Type*), whose ordering rules the ledger verifies.
const (
	EventSessionInitialized   = "session_initialized"
	EventTransition           = "session.transition"
	EventTransitionRefused    = "transition.refused"
	EventProposalCreated      = ledger.TypeProposalCreated
	EventProposalReviewed     = "proposal_reviewed"
	EventIntentSigned         = ledger.TypeToolIntentSigned
	EventIntentApproved       = "tool_intent_approved"
	EventIntentBlocked        = ledger.TypeToolIntentBlocked
	EventExecutionStarted     = ledger.TypeToolExecutionStarted
	EventExecutionCompleted   = ledger.TypeToolExecutionCompleted
	EventExecutionFailed      = ledger.TypeToolExecutionFailed
	EventArtifact             = protocol.EventArtifact
	EventClaimIssued          = ledger.TypeClaimIssued
	EventClaimChallenged      = ledger.TypeClaimChallenged
	EventFinalStatement       = ledger.TypeFinalStatementSigned
	EventVerificationStarted  = ledger.TypeVerificationRunStarted
	EventVerificationComplete = ledger.TypeVerificationRunCompleted
	EventDeliverables         = protocol.EventDeliverables
	EventOutputRejected       = protocol.EventRejected
	// EventBudgetExceeded stops a session whose model token budget ran out,
	// signed by the role whose call it stopped.
	EventBudgetExceeded = protocol.EventBudgetExceeded
	// EventToolCall is the audit record of every tool call the executor
	// makes, run or refused (tools.Audit, with the intent and execution it
	// served).
	EventToolCall = protocol.EventToolCall
)

// Node names, in graph order.
const (
	NodeInit      = "session_init"
	NodePlan      = "plan"
	NodeReview    = "review"
	NodeIntend    = "sign_intents"
	NodeVet       = "vet_intents"
	NodeExecute   = "execute"
	NodeClaim     = "claim"
	NodeChallenge = "challenge"
	NodeAudit     = "audit"
	NodeFinalize  = "finalize"
	NodeVerify    = "verify"
)

// Stop reasons.
const (
	ReasonVerified           = "VERIFIED"
	ReasonIntegrity          = "INTEGRITY_VIOLATION"
	ReasonNoApprovedProposal = "NO_APPROVED_PROPOSAL"
	ReasonNoClaims           = "NO_CLAIMS"
	ReasonOutputRejected     = "OUTPUT_REJECTED"
	ReasonTokenBudget        = protocol.ReasonTokenBudget
)

// Registry is the tenant's claim registry that claim_lookup reads (the
// store's DealBundleGet, scoped by the tenant of ctx).
type Registry interface {
	DealBundleGet(ctx context.Context, dealID string) (*debate.DealBundle, error)
}

// Ledger reads a debate's committed events (the store's EventList).
type Ledger = debate.EventLister

// Keys serves the public keys the auditor verifies signatures with
// (*ledger.Keyring implements it).
type Keys interface {
	PublicKeys(tenantID string, actors []string) map[string]ledger.PublicKeyInfo
}

// Config wires the protocol.
type Config struct {
	// Registry backs claim_lookup; nil makes every lookup fail.
	Registry Registry
	// Ledger is where the executor and the auditor reload the trace.
	// Required.
	Ledger Ledger
	// Keys verify signatures in the auditor's runs; nil verifies everything
	// but the signatures and says so in a warning.
	Keys Keys
	// ModelFor returns the model for the tenant of ctx; a nil Caller (or a
	// nil ModelFor) means the deterministic rules backend.
	ModelFor protocol.Models
	// Now is the clock of the tool calls' audit records; default time.Now.
	Now func() time.Time
}

type proto struct{ cfg Config }

type (
	node = protocol.Node[Options, state]
	turn = protocol.Turn[Options, state]
)

// Protocol returns the agent protocol over cfg.
func Protocol(cfg Config) *orchestrator.Protocol {
	p := &proto{cfg: cfg}
	return protocol.Compile(&protocol.Spec[Options, state]{
		Name:        Name,
		Description: "agent protocol (seed 003): planner → critic review → signed tool intents → critic vetting → execution with artifacts → claims → challenges → final statement → auditor verification; a lifecycle state machine of signed transitions",
		Roles:       []string{RolePlanner, RoleExecutor, RoleCritic, RoleAuditor},
		Start:       NodeInit,
		MaxSteps:    8 + 3*(maxRetriesLimit+1), // 3 + a 3-node pass per attempt + 5
		Defaults:    defaults,
		Check:       check,
		Init: func(*Options, orchestrator.InitInput) (*state, error) {
			return &state{Lifecycle: StateInitialized}, nil
		},
		RoleGuard: RoleGuard(),
		Tools:     map[string][]string{RoleExecutor: SafeTools()},
		Nodes: []*node{
			{Name: NodeInit, Actor: RolePlanner, Run: p.initialize, Edges: []string{NodePlan}},
			{Name: NodePlan, Actor: RolePlanner, Run: p.plan, Edges: []string{NodeReview}},
			{Name: NodeReview, Actor: RoleCritic, Run: p.review, Edges: []string{NodeIntend}},
			{Name: NodeIntend, Actor: RoleExecutor, Run: p.intend, Edges: []string{NodeVet}},
			{Name: NodeVet, Actor: RoleCritic, Run: p.vet, Edges: []string{NodeExecute}},
			{Name: NodeExecute, Actor: RoleExecutor, Run: p.execute, Edges: []string{NodeIntend, NodeClaim}, Next: afterExecute},
			{Name: NodeClaim, Actor: RoleExecutor, Run: p.claim, Edges: []string{NodeChallenge}},
			{Name: NodeChallenge, Actor: RoleCritic, Run: p.challenge, Edges: []string{NodeAudit}},
			{Name: NodeAudit, Actor: RoleAuditor, Run: p.audit, Edges: []string{NodeFinalize}},
			{Name: NodeFinalize, Actor: orchestrator.ActorEngine, Run: p.finalize, Edges: []string{NodeVerify}},
			{Name: NodeVerify, Actor: RoleAuditor, Run: p.verify},
		},
	})
}

// RoleGuard is the protocol's role guard: the roles that may sign each of
// its event types (seed 003's role guard).
func RoleGuard() map[string][]string {
	all := []string{RolePlanner, RoleExecutor, RoleCritic, RoleAuditor}
	return map[string][]string{
		EventSessionInitialized:   {RolePlanner},
		EventTransition:           all,
		EventTransitionRefused:    all,
		EventProposalCreated:      {RolePlanner},
		EventProposalReviewed:     {RoleCritic},
		EventIntentSigned:         {RoleExecutor},
		EventIntentApproved:       {RoleCritic},
		EventIntentBlocked:        {RoleCritic},
		EventExecutionStarted:     {RoleExecutor},
		EventExecutionCompleted:   {RoleExecutor},
		EventExecutionFailed:      {RoleExecutor},
		EventArtifact:             {RoleExecutor},
		EventClaimIssued:          {RoleExecutor},
		EventClaimChallenged:      {RoleCritic},
		EventFinalStatement:       {RoleExecutor},
		EventVerificationStarted:  {RoleAuditor},
		EventVerificationComplete: {RoleAuditor},
		EventDeliverables:         {orchestrator.ActorEngine},
		EventOutputRejected:       {RolePlanner, RoleExecutor, RoleCritic},
		EventBudgetExceeded:       {RolePlanner, RoleExecutor, RoleCritic},
		EventToolCall:             {RoleExecutor},
	}
}

// LedgerPolicy is the verification policy of the protocol's sessions, the
// one the service verifies them with: the role guard merged with the
// engine's, strict, the engine's events as bookkeeping, nothing after the
// end.
func LedgerPolicy() ledger.Policy {
	guard := orchestrator.EngineRoleGuard()
	maps.Copy(guard, RoleGuard())
	return ledger.Policy{
		RoleGuard:   guard,
		StrictRoles: true,
		Bookkeeping: orchestrator.EngineEventTypes(),
		Terminal:    orchestrator.TerminalEventTypes(),
	}
}

// trace reads the debate's committed events: the trace head the executor
// and the auditor resume from.
func (p *proto) trace(ctx context.Context, debateID string) ([]debate.Event, error) {
	if p.cfg.Ledger == nil {
		return nil, orchestrator.Permanent(fmt.Errorf("agentproto: no ledger configured"))
	}
	out, err := debate.Ledger(ctx, p.cfg.Ledger, debateID)
	if err != nil {
		return nil, fmt.Errorf("agentproto: read trace of %s: %w", debateID, err)
	}
	return out, nil
}

package orchestrator

import (
	"maps"
	"slices"
	"strconv"

	"github.com/debated/debated/internal/debate"
)

// Event types the engine emits. Protocols may not emit them.
const (
	// EventDebateStarted opens a debate's ledger: the protocol, the deal,
	// the canonical options and the hash of the initial state.
	EventDebateStarted = "debate.started"
	// EventNodeStarted opens a node step (node, round, step, attempt,
	// input state hash).
	EventNodeStarted = "node.started"
	// EventNodeCompleted closes a successful node step with its audit
	// artifacts (seed 001 §7).
	EventNodeCompleted = "node.completed"
	// EventNodeRetry records one failed attempt that is retried.
	EventNodeRetry = "node.retry"
	// EventNodeFailed records the last failed attempt of a node that gave up.
	EventNodeFailed = "node.failed"
	// EventRoundCompleted follows a node that ends a round.
	EventRoundCompleted = debate.EventRoundCompleted
	// EventGateCreated records a human gate a node asked for.
	EventGateCreated = "human_gate.created"
	// EventGateResolved records an operator's approval or rejection.
	EventGateResolved = "human_gate.resolved"
	// EventDebateStopped ends a debate (completed, needs_review or failed).
	EventDebateStopped = "debate.stopped"
	// EventDebateAborted ends a debate by an operator's abort.
	EventDebateAborted = "debate.aborted"
)

// Actors of the engine's events. Neither may be a protocol role.
const (
	// ActorEngine signs the engine's bookkeeping events.
	ActorEngine = "engine"
	// ActorOperator signs the acts of people: gate resolutions and aborts.
	// Who acted is recorded in the payload ("by").
	ActorOperator = "operator"
)

// Stop reasons the engine sets itself. Protocols choose their own.
const (
	// ReasonEnd: the graph reached a node without a next node.
	ReasonEnd = "end"
	// ReasonMaxSteps: the protocol's MaxSteps would have been exceeded.
	ReasonMaxSteps = "max_steps"
	// ReasonNodeFailed: a node failed all its attempts.
	ReasonNodeFailed = "node_failed"
	// ReasonCheckpointIntegrity: the checkpoint's state does not hash to
	// its recorded output hash (seed 003: an integrity violation fails the
	// debate).
	ReasonCheckpointIntegrity = "checkpoint_integrity"
	// ReasonUnknownNode: the debate's next node is not in its protocol
	// (the protocol changed under a running debate).
	ReasonUnknownNode = "unknown_node"
	// ReasonAborted is the stop reason of an abort given without a reason.
	ReasonAborted = "aborted"
)

var engineGuard = map[string][]string{
	EventDebateStarted:  {ActorEngine},
	EventNodeStarted:    {ActorEngine},
	EventNodeCompleted:  {ActorEngine},
	EventNodeRetry:      {ActorEngine},
	EventNodeFailed:     {ActorEngine},
	EventRoundCompleted: {ActorEngine},
	EventGateCreated:    {ActorEngine},
	EventGateResolved:   {ActorOperator},
	EventDebateStopped:  {ActorEngine},
	EventDebateAborted:  {ActorOperator},
}

// EngineRoleGuard returns the role guard of the engine's event types (event
// type → the actors allowed to emit it): every type by ActorEngine except
// human_gate.resolved and debate.aborted, by ActorOperator. Merge it with a
// protocol's (Protocol.MergedRoleGuard does) for the ledger's policy. The
// map is a fresh copy.
func EngineRoleGuard() map[string][]string {
	out := make(map[string][]string, len(engineGuard))
	for k, v := range engineGuard {
		out[k] = slices.Clone(v)
	}
	return out
}

// EngineEventTypes returns the engine's event types, sorted. They are
// bookkeeping for the ledger's ordering rules: they may follow a final
// statement.
func EngineEventTypes() []string { return slices.Sorted(maps.Keys(engineGuard)) }

// TerminalEventTypes returns the event types that end a debate's ledger:
// debate.stopped and debate.aborted. Nothing follows them.
func TerminalEventTypes() []string { return []string{EventDebateAborted, EventDebateStopped} }

// GateID is the id of the human gate that the step numbered step of the
// debate opens. It is deterministic so that commits are reproducible, and it
// lets a runner find the gate to hand to the next Step:
// GateID(d.ID, cp.Step).
func GateID(debateID string, step int) string {
	return debateID + "-gate-" + strconv.Itoa(step)
}

// Payloads of the engine's events. Field order is fixed by the structs, so
// the encoding is deterministic (the ledger canonicalises it anyway).

type startedPayload struct {
	Protocol  string `json:"protocol"`
	DealID    string `json:"deal_id"`
	Options   any    `json:"options"`
	StateHash string `json:"state_hash,omitempty"`
}

type nodeStartedPayload struct {
	Node      string `json:"node"`
	Round     int    `json:"round"`
	Step      int    `json:"step"`
	Attempt   int    `json:"attempt"`
	InputHash string `json:"input_hash"`
}

type retryPayload struct {
	Node    string `json:"node"`
	Phase   string `json:"phase,omitempty"` // "init" for the protocol's Init
	Attempt int    `json:"attempt"`
	Error   string `json:"error"`
}

type branchSummary struct {
	Node     string         `json:"node"`
	Actor    string         `json:"actor"`
	Attempts int            `json:"attempts"`
	Events   map[string]int `json:"events"`
}

type stopPayload struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

type completedPayload struct {
	Node       string          `json:"node"`
	Step       int             `json:"step"`
	Attempts   int             `json:"attempts"`
	InputHash  string          `json:"input_hash"`
	OutputHash string          `json:"output_hash"`
	EventCount int             `json:"event_count"`
	Events     map[string]int  `json:"events"`
	Claims     []string        `json:"claims,omitempty"`
	Defects    []string        `json:"defects,omitempty"`
	Branches   []branchSummary `json:"branches,omitempty"`
	Stop       *stopPayload    `json:"stop,omitempty"`
	Gate       bool            `json:"gate,omitempty"`
	NextNode   string          `json:"next_node"`
	DurationMS int64           `json:"duration_ms"`
}

type failedPayload struct {
	Node           string   `json:"node"`
	Step           int      `json:"step"`
	Phase          string   `json:"phase,omitempty"`
	Attempts       int      `json:"attempts"`
	Error          string   `json:"error"`
	FailedBranches []string `json:"failed_branches,omitempty"`
}

type roundPayload struct {
	Round int `json:"round"`
}

type gateCreatedPayload struct {
	GateID   string   `json:"gate_id"`
	Reason   string   `json:"reason"`
	ClaimIDs []string `json:"claim_ids"`
	NextNode string   `json:"next_node"`
}

// gateResolvedPayload: By is the name shown (the caller's claimed actor,
// else its key); Authority, when the act came through the API, is what was
// authenticated (key id and scopes) and the claim as a claim.
type gateResolvedPayload struct {
	GateID    string            `json:"gate_id"`
	Status    string            `json:"status"`
	Reason    string            `json:"reason"`
	By        string            `json:"by"`
	Authority *debate.Authority `json:"authority,omitempty"`
}

type stoppedPayload struct {
	Status   string `json:"status"`
	Reason   string `json:"reason"`
	Node     string `json:"node,omitempty"`
	NextNode string `json:"next_node,omitempty"`
	Error    string `json:"error,omitempty"`
}

type abortedPayload struct {
	Reason    string            `json:"reason"`
	By        string            `json:"by"`
	Authority *debate.Authority `json:"authority,omitempty"`
	// CancelledGate is the open human gate the abort closed, if any.
	CancelledGate string `json:"cancelled_gate,omitempty"`
}

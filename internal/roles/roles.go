// Package roles is the agent-call runtime any protocol uses: the agent
// turn (one role's output for one round of a debate, from the graded
// registry and the transcript so far) and, in package llm, the model
// backend every protocol's model calls go through. A protocol brings its
// own roles, under internal/protocols/<name>/. No backend is trusted:
// every output goes through the protocol's gates, and every tool call
// through the server's permission and quota checks. The package imports
// neither tools nor gate: the protocol composes them.
package roles

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/debated/debated/internal/debate"
)

// Tools runs tool calls for one role in one round. The server checks the
// role's permission and quota for every call and records it in the ledger,
// allowed or refused; the agent only asks.
type Tools interface {
	Call(ctx context.Context, call debate.ToolCall) (debate.ToolResult, error)
}

// Input is what a role sees for its turn.
type Input struct {
	DebateID  string
	TenantID  string
	Round     int
	MaxRounds int
	Deal      *debate.DealBundle
	Grading   *debate.DealGrading
	// Transcript holds the accepted outputs of every earlier turn, oldest
	// first; rejected outputs never enter it.
	Transcript []debate.AgentOutput
	// Retrieved holds the evidence the evidence_call_retrieval node found
	// for this debate so far (search hits as JSON objects).
	Retrieved []json.RawMessage
	Tools     Tools
	// Check, optional, is the protocol's gate for this turn: the
	// violations that would reject an output (nil for a valid one). A
	// model backend repairs against it, so the deal is indexed once for
	// the turn and its gate; nil means the backend's own.
	Check func(*debate.AgentOutput) []debate.Violation
}

// ErrBudgetExceeded is wrapped by a Turn that stopped before a model call
// that would exceed the debate's token budget. The protocol stops the debate
// with a clear reason instead of retrying.
var ErrBudgetExceeded = errors.New("debate token budget exceeded")

// Role is one agent.
type Role interface {
	// Name is the role id (debate.RoleAdvocate, ...).
	Name() string
	// Turn returns the role's output for the round. An error is an
	// infrastructure failure (the engine retries the node); a bad output is
	// for the gates to reject.
	Turn(ctx context.Context, in *Input) (*debate.AgentOutput, error)
}

package agentproto

import (
	"fmt"
	"slices"

	"github.com/debated/debated/internal/orchestrator"
)

// Lifecycle states of a session (seed 003).
const (
	StateInitialized = "initialized"
	StatePlanning    = "planning"
	StateReviewing   = "reviewing"
	StateExecuting   = "executing"
	StateClaiming    = "claiming"
	StateAuditing    = "auditing"
	StateCompleted   = "completed"
	StateFailed      = "failed"
	StateAborted     = "aborted"
)

// States lists every lifecycle state, in lifecycle order.
var States = []string{StateInitialized, StatePlanning, StateReviewing, StateExecuting,
	StateClaiming, StateAuditing, StateCompleted, StateFailed, StateAborted}

// Facts are what the transition guards read: the session's progress so far.
type Facts struct {
	Initialized bool // session_initialized is recorded
	Proposals   int  // proposal_created events
	Approved    int  // proposals reviewed approved or conditionally approved
	Settled     bool // no intent is waiting for review or execution
	Claims      int  // claim_issued events
	// Verification is the auditor's verdict: pass, pass_with_warnings or
	// fail ("" before it ran).
	Verification string
	Integrity    bool // an unrecoverable integrity violation was found
	Abort        bool // an operator asked to abort
}

// transition is one allowed edge of the lifecycle: the role that signs it
// and the guard it needs.
type transition struct {
	role  string
	guard func(Facts) string // "" when the guard holds, else why not
}

func need(ok bool, why string) string {
	if ok {
		return ""
	}
	return why
}

// lifecycle is the session state machine, exactly seed 003's transitions:
// the six forward edges, failed from any non-terminal state on an integrity
// violation, aborted from any non-terminal state on an operator's abort.
// The engine records an abort itself (debate.aborted, signed by the
// operator); the table still lists it so that the verifier accepts it.
var lifecycle = func() map[string]map[string]transition {
	t := map[string]map[string]transition{
		StateInitialized: {StatePlanning: {RolePlanner, func(f Facts) string { return need(f.Initialized, "session_initialized is not recorded") }}},
		StatePlanning:    {StateReviewing: {RoleCritic, func(f Facts) string { return need(f.Proposals > 0, "no proposal_created") }}},
		StateReviewing:   {StateExecuting: {RoleExecutor, func(f Facts) string { return need(f.Approved > 0, "no proposal was approved") }}},
		StateExecuting:   {StateClaiming: {RoleExecutor, func(f Facts) string { return need(f.Settled, "intents are still pending") }}},
		StateClaiming:    {StateAuditing: {RoleAuditor, func(f Facts) string { return need(f.Claims > 0, "no claim_issued") }}},
		StateAuditing: {StateCompleted: {RoleAuditor, func(f Facts) string {
			return need(f.Verification == VerificationPass || f.Verification == VerificationWarn, "the verifier did not pass")
		}}},
	}
	for _, from := range []string{StateInitialized, StatePlanning, StateReviewing, StateExecuting, StateClaiming, StateAuditing} {
		t[from][StateFailed] = transition{RoleAuditor, func(f Facts) string { return need(f.Integrity, "no integrity violation") }}
		t[from][StateAborted] = transition{orchestrator.ActorOperator, func(f Facts) string { return need(f.Abort, "no operator abort") }}
	}
	return t
}()

// Terminal reports whether state ends the lifecycle.
func Terminal(state string) bool {
	return state == StateCompleted || state == StateFailed || state == StateAborted
}

// Allowed reports whether the table has an edge from → to, whatever its
// guard.
func Allowed(from, to string) bool {
	_, ok := lifecycle[from][to]
	return ok
}

// DesignatedRole is the role that signs the transition from → to ("" when
// the table has no such edge).
func DesignatedRole(from, to string) string {
	return lifecycle[from][to].role
}

// Refusal is a transition request the state machine refused.
type Refusal struct {
	From   string `json:"from"`
	To     string `json:"to"`
	By     string `json:"requested_by"`
	Reason string `json:"reason"`
}

// Error implements error.
func (r *Refusal) Error() string {
	return fmt.Sprintf("agentproto: transition %s → %s by %s refused: %s", r.From, r.To, r.By, r.Reason)
}

// Request asks the state machine to move from → to on behalf of role, with
// the session's facts. It returns nil when the transition is allowed: an
// edge of the table, requested by its designated role, whose guard holds.
// Anything else returns a *Refusal saying why.
func Request(from, to, role string, f Facts) error {
	refuse := func(format string, args ...any) error {
		return &Refusal{From: from, To: to, By: role, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case !slices.Contains(States, from):
		return refuse("unknown state %q", from)
	case !slices.Contains(States, to):
		return refuse("unknown state %q", to)
	}
	tr, ok := lifecycle[from][to]
	switch {
	case !ok:
		return refuse("%s → %s is not a transition of the lifecycle", from, to)
	case role != tr.role:
		return refuse("only %s may move the session from %s to %s", tr.role, from, to)
	}
	if why := tr.guard(f); why != "" {
		return refuse("%s", why)
	}
	return nil
}

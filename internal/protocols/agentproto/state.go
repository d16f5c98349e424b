package agentproto

import (
	"errors"
	"fmt"
	"slices"

	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/tools"
)

// Review statuses of a proposal (seed 003's proposal workflow) and its
// outcomes.
const (
	ReviewApproved    = "approved"
	ReviewConditional = "conditionally_approved"
	ReviewRejected    = "rejected"

	outcomeCompleted = "completed"
	outcomeFailed    = "failed"
	outcomeBlocked   = "blocked"
)

// Intent statuses.
const (
	intentSigned    = "signed"
	intentApproved  = "approved"
	intentBlocked   = "blocked"
	intentCompleted = "completed"
	intentFailed    = "failed"
)

// proposal is one proposal unit: a task step with the planner's reasoning
// and the critic's review.
type proposal struct {
	ID            string   `json:"id"`
	StepID        string   `json:"step_id"`
	Tool          string   `json:"tool"`
	Risk          string   `json:"risk_class"`
	Objective     string   `json:"objective"`
	Assumptions   []string `json:"assumptions"`
	Justification string   `json:"justification"`
	Review        string   `json:"review,omitempty"`
	Attempts      int      `json:"attempts,omitempty"`
	// Outcome is completed, failed (retries exhausted) or blocked; ""
	// while the proposal may still run.
	Outcome   string `json:"outcome,omitempty"`
	Execution string `json:"execution,omitempty"` // the completed execution
}

func (pr *proposal) approved() bool {
	return pr.Review == ReviewApproved || pr.Review == ReviewConditional
}

// intent is one signed tool intent and what became of it.
type intent struct {
	ID          string         `json:"id"`
	ProposalID  string         `json:"proposal_id"`
	Attempt     int            `json:"attempt"`
	InputHash   string         `json:"input_hash"`
	Risk        string         `json:"risk_class"`
	Status      string         `json:"status"`
	ExecutionID string         `json:"execution_id,omitempty"`
	Output      map[string]any `json:"output,omitempty"`
	Error       string         `json:"error,omitempty"`
	Artifacts   []string       `json:"artifacts,omitempty"`
	// Refused is set when the server refused to run the tool (not
	// registered for the session, quota spent): the proposal gets no retry.
	Refused bool `json:"refused,omitempty"`
}

type claim struct {
	ID          string   `json:"id"`
	ProposalID  string   `json:"proposal_id"`
	ExecutionID string   `json:"execution_id"`
	Text        string   `json:"text"`
	Confidence  float64  `json:"confidence"`
	Evidence    []string `json:"evidence_refs"`
	Challenged  string   `json:"challenged,omitempty"` // the critic's reason
}

// state is the session's compact state; the events themselves live in the
// ledger.
type state struct {
	Lifecycle string      `json:"lifecycle"`
	Init      bool        `json:"initialized,omitempty"`
	Proposals []*proposal `json:"proposals,omitempty"`
	Intents   []*intent   `json:"intents,omitempty"`
	Claims    []*claim    `json:"claims,omitempty"`
	Refusals  int         `json:"refusals,omitempty"`
	// ToolUsage counts the executor's tool calls so far (the quotas of
	// the tool invoker are per session).
	ToolUsage tools.Usage `json:"tool_usage,omitempty"`
	// PreCheck is the auditor's verdict on the trace before the final
	// statement (the finalization guard).
	PreCheck string `json:"pre_check,omitempty"`
}

func (s *state) proposal(id string) *proposal {
	for _, pr := range s.Proposals {
		if pr.ID == id {
			return pr
		}
	}
	return nil
}

// facts are the guards' view of the state.
func (s *state) facts() Facts {
	f := Facts{Initialized: s.Init, Proposals: len(s.Proposals), Claims: len(s.Claims), Verification: s.PreCheck,
		Integrity: s.PreCheck == VerificationFail}
	for _, pr := range s.Proposals {
		if pr.approved() {
			f.Approved++
		}
	}
	f.Settled = !slices.ContainsFunc(s.Intents, func(in *intent) bool { return in.Status == intentSigned || in.Status == intentApproved })
	return f
}

// open reports whether an approved proposal may still get a new intent.
func (s *state) open(pr *proposal, maxRetries int) bool {
	return pr.approved() && pr.Outcome == "" && pr.Attempts <= maxRetries
}

// transit asks the state machine to move the session to "to" on behalf of
// role: an allowed transition is recorded as session.transition and
// applied; a refused one is recorded as transition.refused and changes
// nothing. It reports whether the transition happened.
func (s *state) transit(to, role string, f Facts) (orchestrator.Emit, bool) {
	if err := Request(s.Lifecycle, to, role, f); err != nil {
		s.Refusals++
		return orchestrator.Emit{Type: EventTransitionRefused, Actor: role, Payload: refusalOf(err, s.Lifecycle, to, role)}, false
	}
	e := orchestrator.Emit{Type: EventTransition, Actor: role, Payload: map[string]any{"from": s.Lifecycle, "to": to}}
	s.Lifecycle = to
	return e, true
}

// refusalOf is the transition.refused payload of a refused request: the
// *Refusal err holds, or one built from err's text, so that a refusal is
// never recorded without its from, to, requester and reason.
func refusalOf(err error, from, to, role string) *Refusal {
	if r, ok := errors.AsType[*Refusal](err); ok {
		return r
	}
	return &Refusal{From: from, To: to, By: role, Reason: err.Error()}
}

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
	tr, ok := lifecycle[from][to]
	switch {
	case !slices.Contains(States, from):
		return refuse("unknown state %q", from)
	case !slices.Contains(States, to):
		return refuse("unknown state %q", to)
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

package stratmaster

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

// rejectedError is an answer the protocol's gate refused: it never enters
// the state, and the attempt fails.
type rejectedError struct {
	role       string
	schema     string
	violations []debate.Violation
}

func (e *rejectedError) Error() string {
	parts := make([]string, 0, len(e.violations))
	for _, v := range e.violations {
		parts = append(parts, v.Rule+" "+v.Field+": "+v.Detail)
	}
	return fmt.Sprintf("stratmaster: %s's %s answer rejected: %s", e.role, e.schema, strings.Join(parts, "; "))
}

// asked is one structured call: the schema names the answer, the role
// and the prompt; check is the protocol's gate over the answer.
type asked struct {
	schema string
	task   string
	data   any
	check  func(answer json.RawMessage) []debate.Violation
}

// ask makes a structured call on the tenant's model, or on the rules
// backend without one, gates the answer and decodes it into out. It returns
// the model call's record (nil for the rules backend). A gated-out answer
// is a *rejectedError.
func (p *proto) ask(ctx context.Context, in *orchestrator.NodeInput, a asked, out any) (*debate.ModelCall, error) {
	role := roleOf[a.schema]
	var caller llm.Caller
	if p.cfg.ModelFor != nil {
		var err error
		if caller, err = p.cfg.ModelFor(ctx); err != nil {
			return nil, fmt.Errorf("stratmaster: model of the tenant: %w", err)
		}
	}
	var raw json.RawMessage
	var model *debate.ModelCall
	if caller == nil {
		data, err := json.Marshal(a.data)
		if err != nil {
			return nil, fmt.Errorf("stratmaster: encode DATA: %w", err)
		}
		if raw, err = Rules(a.schema, data); err != nil {
			return nil, err
		}
		if vs := a.check(raw); len(vs) > 0 {
			return nil, &rejectedError{role: role, schema: a.schema, violations: vs}
		}
	} else {
		res, err := caller.JSON(ctx, llm.JSONCall{
			TenantID: in.TenantID, DebateID: in.DebateID, Role: role,
			CacheKey:   fmt.Sprintf("%s/r%d/%s/a%d", in.DebateID, in.Round, a.schema, in.Attempt),
			PromptID:   a.schema + ".v1",
			System:     systemPrompts[a.schema],
			Task:       "play " + role + ": " + a.task,
			Data:       a.data,
			SchemaName: a.schema, Schema: schemas[a.schema], Check: a.check,
		})
		if err != nil {
			return res.Model, fmt.Errorf("stratmaster: %s model call: %w", role, err)
		}
		model = res.Model
		if vs := regate(a.check, res); len(vs) > 0 {
			return model, &rejectedError{role: role, schema: a.schema, violations: vs}
		}
		raw = res.Answer
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return model, &rejectedError{role: role, schema: a.schema, violations: []debate.Violation{{Rule: "SCHEMA", Field: "answer", Detail: err.Error()}}}
	}
	return model, nil
}

// regate is the protocol's verdict on a model's answer: the caller ran the
// gate already (to ask for repairs), but the protocol does not take its
// word. The gate runs again on the answer, and an answer is refused if
// either the gate or the caller finds fault with it, or if there is none
// (fail closed).
func regate(check func(json.RawMessage) []debate.Violation, res llm.JSONResult) []debate.Violation {
	if res.Answer == nil {
		if len(res.Violations) > 0 {
			return res.Violations
		}
		return []debate.Violation{{Rule: "SCHEMA", Field: "answer", Detail: "the model gave no JSON object"}}
	}
	if vs := check(res.Answer); len(vs) > 0 {
		return vs
	}
	return res.Violations
}

// decodeCheck is a gate that decodes the answer strictly into T and checks
// it with f.
func decodeCheck[T any](f func(T) []debate.Violation) func(json.RawMessage) []debate.Violation {
	return func(raw json.RawMessage) []debate.Violation {
		var v T
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return []debate.Violation{{Rule: "SCHEMA", Field: "answer", Detail: err.Error()}}
		}
		return f(v)
	}
}

// task is what a node works on.
type task struct {
	in   *orchestrator.NodeInput
	opts Options
	cons *Constitution
	s    *state
}

// work is a node's work over a task.
type work func(ctx context.Context, t *task) (*orchestrator.NodeOutput, error)

// guarded runs a node's work with the task's attempt policy: a failed
// attempt is retried by the engine until options.max_attempts, and the
// last one ends the task in needs_review (ATTEMPTS_EXHAUSTED), recording
// the seed status and, for a gated-out answer, the rejection. A model over
// the debate's token budget ends it at once (TOKEN_BUDGET_EXCEEDED).
// Shutdown (a cancelled ctx) is left to the engine.
func (p *proto) guarded(role string, f work) orchestrator.NodeFunc {
	return func(ctx context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
		o, c, err := parseOptions(in.Options)
		if err != nil {
			return nil, orchestrator.Permanent(err)
		}
		s, err := loadState(in.State)
		if err != nil {
			return nil, orchestrator.Permanent(err)
		}
		out, err := f(ctx, &task{in: in, opts: o, cons: c, s: s})
		if err == nil || ctx.Err() != nil {
			return out, err
		}
		var events []orchestrator.Emit
		reason := ReasonAttemptsExhausted
		switch {
		case errors.Is(err, roles.ErrBudgetExceeded):
			reason = ReasonTokenBudget
			events = append(events, orchestrator.Emit{Type: EventBudgetExceeded, Payload: map[string]any{"agent_id": role, "detail": err.Error()}})
		case in.Attempt < o.MaxAttempts:
			return nil, err
		}
		var rej *rejectedError
		if errors.As(err, &rej) {
			events = append(events, orchestrator.Emit{Type: EventOutputRejected, Payload: map[string]any{
				"agent_id": role, "schema": rej.schema, "round_number": in.Round, "violations": rej.violations}})
		}
		// The failing work's state is dropped: the work changed s in place
		// (a new pass clears the last one's hypotheses and plan before it
		// asks), so the task closes with the node's input state, the last
		// completed work, read afresh.
		last, lerr := loadState(in.State)
		if lerr != nil {
			return nil, orchestrator.Permanent(lerr)
		}
		s = last
		s.Status, s.StopReason = StatusNeedsReview, reason
		s.StopWhy = fmt.Sprintf("%s failed %d attempt(s): %v", role, in.Attempt, err)
		out, serr := saveWith(s, append(events, closing(&task{in: in, opts: o, cons: c, s: s})...)...)
		if serr != nil {
			return nil, serr
		}
		out.Stop = &orchestrator.Stop{Status: debate.DebateNeedsReview, Reason: reason}
		return out, nil
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

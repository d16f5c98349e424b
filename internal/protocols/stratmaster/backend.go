package stratmaster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/roles"
)

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

// work is a node's work.
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

package agentproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/tools"
)

// newInvoker returns the invoker of an execute node, which runs the
// executor's tool calls through the server's tools layer (the safe tools as
// its Config.Tools): a matrix that gives the executor exactly the tools the
// tenant registered for the session, a quota per tool of the calls the task
// can need (each step naming it, once per allowed attempt) counted on from
// the calls already made (usage, which the session keeps in its state),
// tools.Result statuses and rules, and a tools.Audit record (an
// agent.tool_call event) for every call, run or refused.
func newInvoker(in *orchestrator.NodeInput, o *Options, usage tools.Usage, env toolEnv, now func() time.Time) *tools.Invoker {
	quota := map[string]int{}
	run := map[string]tools.Func{}
	for name, t := range safeTools {
		quota[name] = 0 // a tool no step names may not run at all
		run[name] = func(ctx context.Context, args json.RawMessage) (any, error) {
			out, err := t.run(ctx, env, args)
			switch {
			case errors.Is(err, errNotFound):
				return nil, fmt.Errorf("%w: %w", tools.ErrNotFound, err)
			case errors.Is(err, errToolFailed):
				return nil, fmt.Errorf("%w: %w", tools.ErrArguments, err)
			}
			return out, err
		}
	}
	for _, st := range o.Task.Steps {
		quota[st.Tool] += o.MaxRetries + 1
	}
	return tools.NewInvoker(tools.Config{
		Matrix:   tools.Matrix{RoleExecutor: slices.Clone(o.Tools)},
		Limits:   tools.Limits{MaxCallsPerRound: quota, DefaultMaxCalls: 1},
		Usage:    usage,
		Tools:    run,
		Why:      "it is not registered for this session",
		DebateID: in.DebateID,
		Round:    in.Round,
		Now:      now,
	})
}

// toolCall is one call's outcome.
type toolCall struct {
	res   tools.Result
	audit tools.Audit
	// out is the tool's output (SUCCESS), or what the executor records of
	// a call that did not succeed.
	out map[string]any
	// refused is set when the server would not run the tool at all (an
	// unknown tool, permission or quota): the attempt is final.
	refused bool
}

// failure is what a call that did not succeed records as its error ("" on
// success).
func (c toolCall) failure() string {
	if c.res.Status == tools.StatusSuccess {
		return ""
	}
	return fmt.Sprintf("%s (%s): %s", c.res.Status, c.res.Rule, c.res.Error)
}

// call runs one tool call of role through the tools layer, which checks,
// in order, that the tool is a safe tool (else INVALID, unknown_tool),
// that the matrix gives it to the role (else DENIED, permission) and that
// the quota is not spent (else DENIED, quota) before it runs the tool; a
// runtime failure on its input is INVALID (arguments, or not_found for an
// unknown claim). Every call is audited. The error is non-nil only when the
// tool could not run (the registry unreachable, ctx ended: an ERROR result,
// not counted against the quota), which fails the node.
func call(ctx context.Context, inv *tools.Invoker, role, tool string, input json.RawMessage) (toolCall, error) {
	res, audit, cause := inv.Invoke(ctx, role, debate.ToolCall{Tool: tool, Args: input})
	c := toolCall{res: res, audit: audit,
		refused: res.Rule == tools.RuleUnknownTool || res.Rule == tools.RulePermission || res.Rule == tools.RuleQuota}
	if res.Status == tools.StatusSuccess {
		if err := json.Unmarshal(res.Output, &c.out); err != nil {
			return c, fmt.Errorf("agentproto: %s output: %w", tool, err)
		}
		return c, nil
	}
	c.out = map[string]any{"error": res.Error, "status": res.Status, "rule": res.Rule}
	return c, cause
}

// toolCallEvent is the agent.tool_call event of a call made for an intent:
// the tools layer's audit record, with the intent and execution it served.
func toolCallEvent(a tools.Audit, ids map[string]any) orchestrator.Emit {
	type payload struct {
		tools.Audit
		IntentID    any `json:"intent_id"`
		ExecutionID any `json:"execution_id"`
		ProposalID  any `json:"proposal_id"`
	}
	return orchestrator.Emit{Type: EventToolCall, Actor: RoleExecutor, Payload: payload{Audit: a,
		IntentID: ids["intent_id"], ExecutionID: ids["execution_id"], ProposalID: ids["proposal_id"]}}
}

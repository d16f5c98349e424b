package agentproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/debated/debated/internal/canon"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/tools"
)

// invoker is the server-side enforcement of the executor's tool calls,
// with the rules and records of the tools layer (package tools): a
// tools.Matrix that gives the executor exactly the tools the tenant
// registered for the session, tools.Limits quotas counted in a tools.Usage
// the session keeps in its state, tools.Result statuses and rules, and a
// tools.Audit record (an agent.tool_call event) for every call, run or
// refused. tools.Invoker itself runs only the IDIS tools (it refuses any
// other name as unknown), so the safe tools are dispatched here, after the
// same checks in the same order.
type invoker struct {
	matrix   tools.Matrix
	limits   tools.Limits
	usage    tools.Usage
	env      toolEnv
	debateID string
	round    int
	now      func() time.Time
}

// newInvoker returns the invoker of an execute node: the session's
// registered tools for the executor, a quota per tool of the calls the
// task can need (each step naming it, once per allowed attempt) and the
// calls already made (usage, copied).
func newInvoker(in *orchestrator.NodeInput, o Options, usage tools.Usage, env toolEnv, now func() time.Time) *invoker {
	quota := map[string]int{}
	for _, name := range SafeTools() {
		quota[name] = 0 // a tool no step names may not run at all
	}
	for _, st := range o.Task.Steps {
		quota[st.Tool] += o.MaxRetries + 1
	}
	return &invoker{
		matrix:   tools.Matrix{RoleExecutor: slices.Clone(o.Tools)},
		limits:   tools.Limits{MaxCallsPerRound: quota, DefaultMaxCalls: 1},
		usage:    usage.Clone(),
		env:      env,
		debateID: in.DebateID,
		round:    in.Round,
		now:      now,
	}
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

// call runs one tool call of role. It checks, in the tools layer's order:
// that the tool is a safe tool (else INVALID, unknown_tool), that the
// matrix gives it to the role (else DENIED, permission), that the quota is
// not spent (else DENIED, quota); only then does it run the tool, whose
// runtime failure on its input is INVALID (arguments, or not_found for an
// unknown claim). Every call is audited. The error is non-nil only when
// the tool could not run (the registry unreachable, ctx ended: an ERROR
// result, not counted against the quota), which fails the node.
func (inv *invoker) call(ctx context.Context, role, tool string, input json.RawMessage) (toolCall, error) {
	var c toolCall
	_, known := safeTools[tool]
	switch {
	case !known:
		c.res, c.refused = tools.Result{Status: tools.StatusInvalid, Rule: tools.RuleUnknownTool, Field: "tool",
			Error: "unknown tool; the tools are " + strings.Join(SafeTools(), ", ")}, true
	case !inv.matrix.Allows(role, tool):
		c.res, c.refused = tools.Result{Status: tools.StatusDenied, Rule: tools.RulePermission,
			Error: fmt.Sprintf("the %s role may not call %s: it is not registered for this session", role, tool)}, true
	case inv.usage.Count(role, tool) >= inv.limits.MaxCalls(tool):
		c.res, c.refused = tools.Result{Status: tools.StatusDenied, Rule: tools.RuleQuota,
			Error: fmt.Sprintf("at most %d %s calls in this session", inv.limits.MaxCalls(tool), tool)}, true
	}
	var cause error
	at := inv.now().UTC()
	if c.res.Status == "" {
		c.out, c.res, cause = inv.run(ctx, tool, input)
		if c.res.Status != tools.StatusError {
			inv.count(role, tool)
		}
	}
	if c.res.Status != tools.StatusSuccess {
		c.out = map[string]any{"error": c.res.Error, "status": c.res.Status, "rule": c.res.Rule}
	}
	args, err := canon.Transform(input)
	if err != nil {
		args = json.RawMessage(`{"malformed":true}`)
	}
	c.audit = tools.Audit{
		EventType: tools.EventToolCall, AgentID: role, ToolName: tool, ToolArgs: args,
		ResultStatus: c.res.Status, ResultHash: c.res.Hash(), DebateID: inv.debateID, RoundNumber: inv.round, Timestamp: at,
	}
	if c.res.Status == tools.StatusDenied || c.res.Status == tools.StatusInvalid {
		c.audit.Rule = c.res.Rule
	}
	return c, cause
}

// run runs an admitted call; a panic of a tool is an ERROR.
func (inv *invoker) run(ctx context.Context, tool string, input json.RawMessage) (out map[string]any, res tools.Result, cause error) {
	defer func() {
		if r := recover(); r != nil {
			out, res, cause = nil, errorResult(), fmt.Errorf("agentproto: %s: panic: %v", tool, r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, errorResult(), err
	}
	out, err := safeTools[tool].run(ctx, inv.env, input)
	switch {
	case errors.Is(err, errNotFound):
		return nil, tools.Result{Status: tools.StatusInvalid, Rule: tools.RuleNotFound, Error: err.Error()}, nil
	case errors.Is(err, errToolFailed):
		return nil, tools.Result{Status: tools.StatusInvalid, Rule: tools.RuleArguments, Error: err.Error()}, nil
	case err != nil:
		return nil, errorResult(), err
	}
	raw, err := json.Marshal(out)
	if err == nil {
		raw, err = canon.Transform(raw)
	}
	if err != nil {
		return nil, errorResult(), fmt.Errorf("agentproto: %s output: %w", tool, err)
	}
	return out, tools.Result{Status: tools.StatusSuccess, Output: raw}, nil
}

func errorResult() tools.Result {
	return tools.Result{Status: tools.StatusError, Error: "the tool could not run; the call may be retried"}
}

func (inv *invoker) count(role, tool string) {
	if inv.usage == nil {
		inv.usage = tools.Usage{}
	}
	if inv.usage[role] == nil {
		inv.usage[role] = map[string]int{}
	}
	inv.usage[role][tool]++
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

package agentproto

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/tools"
)

// Built-in safe tools. They are pure Go functions over their input (and,
// for claim_lookup, the tenant's claim registry): no code from the task,
// no network.
const (
	ToolArithmetic  = "arithmetic"
	ToolUnitConvert = "unit_convert"
	ToolClaimLookup = "claim_lookup"
)

// errToolFailed marks a tool's runtime failure on its input (division by
// zero, an unknown claim): recorded as tool_execution_failed, and retried
// with a new intent when the policy permits. Any other tool error (the
// registry unreachable) fails the node, which the engine retries.
var errToolFailed = errors.New("tool failed")

// errNotFound marks, beside errToolFailed, a lookup of something the
// registry does not hold.
var errNotFound = errors.New("not found")

// toolEnv is what a tool may read beyond its input.
type toolEnv struct {
	registry Registry
	dealID   string
}

// tool is one safe tool: check validates an input's shape when the task is
// submitted; run executes it.
type tool struct {
	check func(input json.RawMessage) error
	run   func(ctx context.Context, env toolEnv, input json.RawMessage) (map[string]any, error)
}

var safeTools = map[string]tool{
	ToolArithmetic:  safeTool(checkArithmetic, runArithmetic),
	ToolUnitConvert: safeTool(checkConvert, runConvert),
	ToolClaimLookup: safeTool(checkLookup, runLookup),
}

// safeTool is the tool of a typed check and run: the input is decoded
// strictly and checked, when the task is submitted and again before it
// runs (a bad input is then errToolFailed).
func safeTool[In any](check func(In) error, run func(context.Context, toolEnv, In) (map[string]any, error)) tool {
	decode := func(input json.RawMessage) (In, error) {
		var in In
		if err := protocol.DecodeStrict(input, &in); err != nil {
			return in, fmt.Errorf("input: %w", err)
		}
		return in, check(in)
	}
	return tool{
		check: func(input json.RawMessage) error {
			_, err := decode(input)
			return err
		},
		run: func(ctx context.Context, env toolEnv, input json.RawMessage) (map[string]any, error) {
			in, err := decode(input)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", errToolFailed, err)
			}
			return run(ctx, env, in)
		},
	}
}

// SafeTools returns the names of the built-in safe tools, sorted.
func SafeTools() []string { return slices.Sorted(maps.Keys(safeTools)) }

type arithmeticInput struct {
	Op       string    `json:"op"`
	Operands []float64 `json:"operands"`
}

var arithmeticOps = []string{"add", "sub", "mul", "div", "min", "max"}

func checkArithmetic(in arithmeticInput) error {
	if !slices.Contains(arithmeticOps, in.Op) {
		return fmt.Errorf("op must be one of %v", arithmeticOps)
	}
	if len(in.Operands) < 2 || len(in.Operands) > 100 {
		return errors.New("between 2 and 100 operands are required")
	}
	return nil
}

func runArithmetic(_ context.Context, _ toolEnv, in arithmeticInput) (map[string]any, error) {
	r := in.Operands[0]
	for _, x := range in.Operands[1:] {
		switch in.Op {
		case "add":
			r += x
		case "sub":
			r -= x
		case "mul":
			r *= x
		case "div":
			if x == 0 {
				return nil, fmt.Errorf("%w: division by zero", errToolFailed)
			}
			r /= x
		case "min":
			r = math.Min(r, x)
		case "max":
			r = math.Max(r, x)
		}
	}
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return nil, fmt.Errorf("%w: the result is not a finite number", errToolFailed)
	}
	return map[string]any{"result": r}, nil
}

// unit is a unit of a dimension, as a factor of the dimension's base unit.
type unit struct {
	dim    string
	factor float64
}

var units = map[string]unit{
	"second": {"time", 1}, "minute": {"time", 60}, "hour": {"time", 3600}, "day": {"time", 86400},
	"week": {"time", 7 * 86400}, "month": {"time", 2629746}, "year": {"time", 31556952},
	"mm": {"length", 0.001}, "cm": {"length", 0.01}, "m": {"length", 1}, "km": {"length", 1000},
	"inch": {"length", 0.0254}, "foot": {"length", 0.3048}, "mile": {"length", 1609.344},
	"g": {"mass", 0.001}, "kg": {"mass", 1}, "tonne": {"mass", 1000}, "lb": {"mass", 0.45359237},
	"fraction": {"ratio", 1}, "percent": {"ratio", 0.01}, "bps": {"ratio", 0.0001},
	"units": {"scale", 1}, "thousands": {"scale", 1e3}, "millions": {"scale", 1e6}, "billions": {"scale", 1e9},
}

type convertInput struct {
	Value float64 `json:"value"`
	From  string  `json:"from"`
	To    string  `json:"to"`
}

func checkConvert(in convertInput) error {
	for _, u := range []string{in.From, in.To} {
		if _, ok := units[u]; !ok {
			return fmt.Errorf("unknown unit %q (one of %v)", u, slices.Sorted(maps.Keys(units)))
		}
	}
	if from, to := units[in.From], units[in.To]; from.dim != to.dim {
		return fmt.Errorf("cannot convert %s (%s) to %s (%s)", in.From, from.dim, in.To, to.dim)
	}
	return nil
}

func runConvert(_ context.Context, _ toolEnv, in convertInput) (map[string]any, error) {
	r := in.Value * units[in.From].factor / units[in.To].factor
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return nil, fmt.Errorf("%w: the result is not a finite number", errToolFailed)
	}
	return map[string]any{"result": r, "unit": in.To}, nil
}

type lookupInput struct {
	ClaimKey string `json:"claim_key"`
	ClaimID  string `json:"claim_id"`
}

func checkLookup(in lookupInput) error {
	if (in.ClaimKey == "") == (in.ClaimID == "") {
		return errors.New("exactly one of claim_key and claim_id is required")
	}
	return nil
}

// runLookup reads a claim of the session's deal in the tenant's registry.
func runLookup(ctx context.Context, env toolEnv, in lookupInput) (map[string]any, error) {
	if env.registry == nil {
		return nil, fmt.Errorf("%w: no claim registry is configured", errToolFailed)
	}
	b, err := env.registry.DealBundleGet(ctx, env.dealID)
	switch {
	case errors.Is(err, debate.ErrNotFound):
		return nil, fmt.Errorf("%w: %w: deal %q is not in the registry", errToolFailed, errNotFound, env.dealID)
	case err != nil:
		return nil, fmt.Errorf("agentproto: claim_lookup: read deal %s: %w", env.dealID, err)
	}
	for _, c := range b.Claims {
		if (in.ClaimKey != "" && c.Key == in.ClaimKey) || (in.ClaimID != "" && c.ID == in.ClaimID) {
			out := map[string]any{"claim_id": c.ID, "claim_key": c.Key, "text": c.Text, "class": string(c.Class)}
			if c.Value != nil {
				out["result"] = c.Value.Value
				out["unit"] = c.Value.Unit
				if c.Value.AsOf != "" {
					out["as_of"] = c.Value.AsOf
				}
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: %w: no claim %s in deal %s", errToolFailed, errNotFound, cmp.Or(in.ClaimKey, in.ClaimID), env.dealID)
}

// resultText renders a tool output's result for claims: the number as Go
// formats it shortest, with its unit.
func resultText(out map[string]any) string {
	r, ok := out["result"]
	if !ok {
		t, _ := out["text"].(string)
		return t
	}
	s := fmt.Sprint(r)
	if f, ok := r.(float64); ok {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	if u, ok := out["unit"].(string); ok && u != "" {
		s += " " + u
	}
	return strings.TrimSpace(s)
}

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

package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/tools"
)

// Standard event types: one spelling for every protocol.
const (
	// EventArtifact is an accepted output kept as a named artifact.
	EventArtifact = "artifact.created"
	// EventRejected is an answer the gates refused, with its violations.
	EventRejected = "output.rejected"
	// EventDeliverables is the debate's deliverables.
	EventDeliverables = "deliverables.created"
	// EventBudgetExceeded stops a debate whose model token budget ran out:
	// {"role": ROLE, "detail": TEXT, ...}, signed by ROLE.
	EventBudgetExceeded = "budget.exceeded"
	// EventToolCall is a tool call's audit record.
	EventToolCall = tools.EventToolCall
)

// ReasonTokenBudget is the stop reason of a debate whose model budget ran
// out.
const ReasonTokenBudget = "TOKEN_BUDGET_EXCEEDED"

// Models returns the model of the tenant of ctx; a nil Models, or a nil
// Caller, means the protocol's rules answer.
type Models func(ctx context.Context) (llm.Caller, error)

// Prompt is one kind of structured call of a protocol, apart from its
// DATA and its gate: the role that answers, the prompt (its id and system
// text), the answer's schema (its name and JSON Schema) and the rules that
// answer without a model.
type Prompt struct {
	// Role, PromptID, System, SchemaName and Schema are the llm.JSONCall's.
	Role, PromptID, System, SchemaName string
	Schema                             json.RawMessage
	// Rules answers the call's encoded DATA without a model.
	Rules func(data json.RawMessage) (json.RawMessage, error)
	// GateOnly lets the gate alone judge a model's answer (Gate); by
	// default the caller's findings refuse it too (Regate).
	GateOnly bool
}

// Prompts are a protocol's prompts by schema name.
type Prompts map[string]Prompt

// Answer is the rules' answer to the call named schema over its DATA,
// exactly what a model is asked to produce. It returns an error wrapping
// debate.ErrInvalid for an unknown schema or DATA the rules cannot read.
func (ps Prompts) Answer(schema string, data json.RawMessage) (json.RawMessage, error) {
	p, ok := ps[schema]
	if !ok {
		return nil, fmt.Errorf("%w: unknown schema %q", debate.ErrInvalid, schema)
	}
	a, err := p.Rules(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s data: %w", debate.ErrInvalid, schema, err)
	}
	return a, nil
}

// Call is one structured agent call: the rules or the model answer its
// prompt over Data, and Check, the protocol's gate, has the last word.
type Call struct {
	Prompt
	// CacheKey and Task are the llm.JSONCall's.
	CacheKey, Task string
	// Data is the call's DATA: any value, or encoded as a
	// json.RawMessage.
	Data any
	// Check is the gate: the model's repairs are asked for its violations,
	// and it runs again on the final answer whatever the model reported.
	Check func(answer json.RawMessage) []debate.Violation
}

// Answer is a gated answer.
type Answer struct {
	// Raw is the answer (nil when there was none).
	Raw json.RawMessage
	// Violations are the gate's findings: non-empty means rejected.
	Violations []debate.Violation
	// Model describes the model calls (nil for the rules).
	Model *debate.ModelCall
}

// Decode decodes an accepted answer into out. A rejected answer, or one
// that does not decode, is a *Rejected of the role's schema.
func (a Answer) Decode(role, schema string, out any) error {
	vs := a.Violations
	if len(vs) == 0 {
		if err := json.Unmarshal(a.Raw, out); err != nil {
			vs = []debate.Violation{{Rule: "SCHEMA", Field: "answer", Detail: err.Error()}}
		}
	}
	if len(vs) > 0 {
		return &Rejected{Role: role, Schema: schema, Violations: vs}
	}
	return nil
}

// Ask answers c with the tenant's model, or with c.Rules without one, and
// gates the answer. The error is the model's (with the calls made so far
// in Answer.Model: errors.Is roles.ErrBudgetExceeded when the budget ran
// out), the rules' or the tenant's model lookup's; a rejected answer is
// not an error.
func (m Models) Ask(ctx context.Context, in *orchestrator.NodeInput, c Call) (Answer, error) {
	var caller llm.Caller
	if m != nil {
		var err error
		if caller, err = m(ctx); err != nil {
			return Answer{}, fmt.Errorf("protocol: model of the tenant: %w", err)
		}
	}
	if caller == nil {
		data, ok := c.Data.(json.RawMessage)
		if !ok {
			var err error
			if data, err = json.Marshal(c.Data); err != nil {
				return Answer{}, fmt.Errorf("protocol: encode %s data: %w", c.SchemaName, err)
			}
		}
		raw, err := c.Rules(data)
		if err != nil {
			return Answer{}, err
		}
		return Answer{Raw: raw, Violations: c.Check(raw)}, nil
	}
	res, err := caller.JSON(ctx, llm.JSONCall{
		TenantID: in.TenantID, DebateID: in.DebateID, Role: c.Role, CacheKey: c.CacheKey,
		PromptID: c.PromptID, System: c.System, Task: c.Task, Data: c.Data,
		SchemaName: c.SchemaName, Schema: c.Schema, Check: c.Check,
	})
	if err != nil {
		return Answer{Model: res.Model}, err
	}
	judge := Regate
	if c.GateOnly {
		judge = Gate
	}
	return Answer{Raw: res.Answer, Violations: judge(c.Check, res), Model: res.Model}, nil
}

// Gate is the gate's verdict on a model's result: it runs on the answer
// whatever the caller reported, so a caller that under-reports cannot let
// an answer through; a result without an answer is refused even when the
// caller reports nothing (fail closed).
func Gate(check func(json.RawMessage) []debate.Violation, res llm.JSONResult) []debate.Violation {
	if res.Answer == nil {
		return Regate(check, res)
	}
	return check(res.Answer)
}

// Rules adapts a protocol's rules answer f, from its DATA D to its answer
// A, to Call.Rules: the DATA is decoded, the answer encoded.
func Rules[D, A any](f func(D) A) func(json.RawMessage) (json.RawMessage, error) {
	return func(data json.RawMessage) (json.RawMessage, error) {
		var d D
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, fmt.Errorf("rules: DATA: %w", err)
		}
		return json.Marshal(f(d))
	}
}

// Regate is the protocol's verdict on a model's result: the caller ran the
// gate already (to ask for repairs), but the protocol does not take its
// word. The gate runs again on the answer, and an answer is refused if
// either the gate or the caller finds fault with it, or if there is none
// (fail closed).
func Regate(check func(json.RawMessage) []debate.Violation, res llm.JSONResult) []debate.Violation {
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

// DecodeStrict decodes raw into out refusing unknown members and
// trailing data.
func DecodeStrict(raw json.RawMessage, out any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// DecodeCheck is a gate that decodes the answer strictly into T and checks
// it with f.
func DecodeCheck[T any](f func(T) []debate.Violation) func(json.RawMessage) []debate.Violation {
	return func(raw json.RawMessage) []debate.Violation {
		var v T
		if err := DecodeStrict(raw, &v); err != nil {
			return []debate.Violation{{Rule: "SCHEMA", Field: "answer", Detail: err.Error()}}
		}
		return f(v)
	}
}

// BudgetStop turns a spent token budget into the debate's stop for review
// (ReasonTokenBudget) with a budget.exceeded event signed by role:
// {"role", "detail", "model"?} and extra's members. Any other error is
// returned as is, for the engine to retry.
func BudgetStop(role string, err error, model *debate.ModelCall, extra map[string]any) (*orchestrator.NodeOutput, error) {
	if !errors.Is(err, roles.ErrBudgetExceeded) {
		return nil, err
	}
	return &orchestrator.NodeOutput{
		Events: []orchestrator.Emit{BudgetEvent(role, err, model, extra)},
		Stop:   &orchestrator.Stop{Status: debate.DebateNeedsReview, Reason: ReasonTokenBudget},
	}, nil
}

// BudgetEvent is BudgetStop's event.
func BudgetEvent(role string, err error, model *debate.ModelCall, extra map[string]any) orchestrator.Emit {
	p := map[string]any{"role": role, "detail": err.Error()}
	if model != nil {
		p["model"] = model
	}
	for k, v := range extra {
		p[k] = v
	}
	return orchestrator.Emit{Type: EventBudgetExceeded, Actor: role, Payload: p}
}

// AuditEvents are the agent.tool_call events of the invoker's calls, run
// or refused, each signed by the role that made it.
func AuditEvents(inv *tools.Invoker) []orchestrator.Emit {
	var out []orchestrator.Emit
	for _, a := range inv.Audits() {
		out = append(out, orchestrator.Emit{Type: EventToolCall, Actor: a.AgentID, Payload: a})
	}
	return out
}

// Clip shortens s to at most n bytes, on a rune boundary, marking a cut
// with an ellipsis.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// NonNil returns xs, or an empty slice for nil (a JSON [] rather than
// null).
func NonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// RuleNames lists the rules of violations, consecutive repeats once.
func RuleNames(vs []debate.Violation) []string {
	out := []string{}
	for _, v := range vs {
		if len(out) == 0 || out[len(out)-1] != v.Rule {
			out = append(out, v.Rule)
		}
	}
	return out
}

// Everyone lists the roles and the engine (for events any of them signs).
func Everyone(roles ...string) []string {
	return append(append([]string{}, roles...), orchestrator.ActorEngine)
}

// Rejection is the output.rejected payload: the role whose answer its gate
// refused, the call's schema and round when known, the violations and the
// model calls made.
type Rejection struct {
	Role       string             `json:"role"`
	Schema     string             `json:"schema,omitempty"`
	Round      int                `json:"round,omitempty"`
	Violations []debate.Violation `json:"violations"`
	Model      *debate.ModelCall  `json:"model,omitempty"`
}

// Event is the rejection's output.rejected event, signed by its role.
func (r Rejection) Event() orchestrator.Emit {
	return orchestrator.Emit{Type: EventRejected, Actor: r.Role, Payload: r}
}

// Rejected is an answer its gate refused, as an error.
type Rejected struct {
	Role, Schema string
	Violations   []debate.Violation
}

func (e *Rejected) Error() string {
	parts := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		parts = append(parts, v.Rule+" "+v.Field+": "+v.Detail)
	}
	return fmt.Sprintf("the %s's %s answer was rejected: %s", e.Role, e.Schema, strings.Join(parts, "; "))
}

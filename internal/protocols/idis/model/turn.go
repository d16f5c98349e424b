package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/tools"
)

// spec is what a role's turns share whatever the backend: the rendered
// system prompt, the output schema and the tools offered.
type spec struct {
	name                string
	system              string
	promptID, promptSHA string
	schema              json.RawMessage
	tools               []openai.Tool
}

// specs are the five roles' specs, built once: they depend on the embedded
// templates and idis.Matrix only.
var specs = sync.OnceValues(func() (map[string]*spec, error) {
	m := make(map[string]*spec, len(debate.IDISRoles))
	for _, name := range debate.IDISRoles {
		schema, err := outputSchema(name)
		if err != nil {
			return nil, fmt.Errorf("model: schema of %s: %w", name, err)
		}
		defs, offered, err := toolDefs(idis.Matrix.Tools(name))
		if err != nil {
			return nil, fmt.Errorf("model: tools of %s: %w", name, err)
		}
		system, err := renderPrompt(name, offered)
		if err != nil {
			return nil, err
		}
		id, sum := PromptID(name)
		m[name] = &spec{name: name, system: system, schema: schema, tools: defs, promptID: id, promptSHA: sum}
	}
	return m, nil
})

// New returns the five IDIS roles played by the model cfg names, keyed by
// role id. See llm.NewBackend for the errors.
func New(cfg llm.Config) (map[string]roles.Role, error) {
	b, err := llm.NewBackend(cfg)
	if err != nil {
		return nil, err
	}
	return Roles(b)
}

// Roles returns the five IDIS roles played by b's model, keyed by role id
// (a new map each time). The error is an embedded template's or schema's,
// a build fault.
func Roles(b *llm.Backend) (map[string]roles.Role, error) {
	ss, err := specs()
	if err != nil {
		return nil, err
	}
	m := make(map[string]roles.Role, len(ss))
	for name, sp := range ss {
		m[name] = &role{b: b, spec: sp}
	}
	return m, nil
}

// cacheKey is the context key of a response cache prefix that replaces a
// turn's place in the debate (tests set it: WithCacheKey).
type cacheKey struct{}

// role is one model-backed agent.
type role struct {
	b *llm.Backend
	*spec
}

var _ roles.Role = (*role)(nil)

// Name returns the role id.
func (r *role) Name() string { return r.name }

// Turn plays the role for one round (see the package documentation). The
// error is nil whenever the model answered, valid or not: an output still
// invalid after the repairs is returned for the protocol's gate to reject.
// It wraps ErrBudgetExceeded when the debate's budget would be exceeded,
// ErrModel when the model cannot be reached or answers nothing usable, the
// context's error when ctx ends, and a tool's infrastructure error (which
// the engine retries like a model failure).
func (r *role) Turn(ctx context.Context, in *roles.Input) (*debate.AgentOutput, error) {
	if in == nil {
		return nil, fmt.Errorf("%w: model: nil input", debate.ErrInvalid)
	}
	cfg := r.b.Config()
	user, err := dataMessage(in, r.name, cfg.DataChars, cfg.TranscriptChars)
	if err != nil {
		return nil, err
	}
	prefix, _ := ctx.Value(cacheKey{}).(string)
	if prefix == "" && in.DebateID != "" {
		// The turn's place in the debate: a node re-run after a crash or a
		// handover finds the same key and reuses the persisted responses.
		prefix = fmt.Sprintf("%s/r%d/%s/%d", in.DebateID, in.Round, r.name, spoken(in, r.name))
	}
	gateOf := in.Check
	if gateOf == nil {
		facts := gate.NewFacts(in.Deal, in.Grading)
		gateOf = func(o *debate.AgentOutput) []debate.Violation {
			return gate.Validate(o, facts, debate.IDISRoles).Violations
		}
	}
	var out *debate.AgentOutput // the last answer, parsed
	var calls []debate.ToolCall // the tool calls the server ran, for the output
	c := llm.JSONCall{TenantID: in.TenantID, DebateID: in.DebateID, Role: r.name, CacheKey: prefix,
		PromptID: r.promptID, PromptSHA256: r.promptSHA, System: r.system, User: user,
		SchemaName: schemaName, Schema: r.schema,
		Check: func(answer json.RawMessage) []debate.Violation {
			var vs []debate.Violation
			out, vs = r.check(answer, in, gateOf)
			return vs
		},
	}
	if in.Tools != nil && len(r.tools) > 0 {
		c.Tools = r.tools
		c.CallTool = func(ctx context.Context, name string, args json.RawMessage) (string, error) {
			call := debate.ToolCall{Tool: name, Args: args}
			res, err := in.Tools.Call(ctx, call)
			if err != nil {
				if ctx.Err() != nil {
					return "", fmt.Errorf("model: %s tool call cancelled: %w", r.name, context.Cause(ctx))
				}
				return "", fmt.Errorf("model: %s tool %s: %w", r.name, name, err)
			}
			if rec, ok := recordable(call); ok && res.Status == tools.StatusSuccess && len(calls) < gate.MaxToolCalls {
				calls = append(calls, rec)
			}
			return toolMessage(res), nil
		}
	}
	res, err := r.b.JSON(ctx, c)
	if err != nil {
		return nil, err
	}
	if res.Answer == nil || out == nil {
		out = unparsed(r.name, in.Round, res.Content)
	}
	out.ToolCalls = calls
	out.Model = res.Model
	return out, nil
}

// check parses and validates an answer. The output is nil when the answer
// does not parse.
func (r *role) check(answer json.RawMessage, in *roles.Input, gateOf func(*debate.AgentOutput) []debate.Violation) (*debate.AgentOutput, []debate.Violation) {
	out, err := gate.ParseOutput(answer, debate.IDISRoles)
	if err != nil {
		var ve *debate.ValidationError
		if errors.As(err, &ve) {
			vs := make([]debate.Violation, 0, len(ve.Violations))
			for _, fv := range ve.Violations {
				vs = append(vs, debate.Violation{Rule: gate.RuleSchema, Field: fv.Field, Detail: fv.Description})
			}
			if len(vs) > 0 {
				return nil, vs
			}
		}
		return nil, []debate.Violation{{Rule: gate.RuleSchema, Field: "agent_output", Detail: err.Error()}}
	}
	var vs []debate.Violation
	if out.RoundNumber == 0 { // optional in the schema: the turn knows it
		out.RoundNumber = in.Round
	}
	if out.Role != r.name || out.AgentID != r.name {
		vs = append(vs, debate.Violation{Rule: gate.RuleSchema, Field: "role", Detail: fmt.Sprintf("agent_id and role must be %q", r.name)})
	}
	if out.RoundNumber != in.Round {
		vs = append(vs, debate.Violation{Rule: gate.RuleSchema, Field: "round_number", Detail: fmt.Sprintf("must be %d", in.Round)})
	}
	return out, append(vs, gateOf(out)...)
}

// unparsed is the output of a turn whose answer never parsed: the gate
// always rejects it (its Muḥāsabah record is empty), and the record of the
// rejection keeps the model's answer.
func unparsed(role string, round int, content string) *debate.AgentOutput {
	return &debate.AgentOutput{AgentID: role, Role: role, RoundNumber: round,
		Content: protocol.Clip(content, gate.MaxContentLen-4), ClaimRefs: []string{}, Muhasabah: debate.Muhasabah{SupportedClaimIDs: []string{}}}
}

// recordable returns a successful call as the output records it (refused
// calls are in the server's ledger, not in the output), when its name and
// arguments pass the gate's shape rules (a JSON object within
// MaxToolArgsLen, a short name).
func recordable(c debate.ToolCall) (debate.ToolCall, bool) {
	if c.Tool == "" || len(c.Tool) > gate.MaxShortTextLen || len(c.Args) > gate.MaxToolArgsLen {
		return c, false
	}
	// Marshalling validates and compacts the arguments, as gate.ParseOutput
	// normalises them.
	canon, err := json.Marshal(c.Args)
	if err != nil || canon[0] != '{' {
		return c, false
	}
	return debate.ToolCall{Tool: c.Tool, Args: canon}, true
}

// spoken counts the role's outputs already in this round's transcript (the
// advocate speaks twice a round).
func spoken(in *roles.Input, role string) int {
	n := 0
	for _, o := range in.Transcript {
		if o.Role == role && o.RoundNumber == in.Round {
			n++
		}
	}
	return n
}

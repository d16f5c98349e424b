package custom

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/tools"
)

// Event types a data-defined protocol emits.
const (
	// EventAnswer is a role's accepted answer: {"node", "role", "round",
	// "answer", "model"}.
	EventAnswer = "role.answer"
	// EventRejected is an answer the gates refused, with its violations;
	// it never enters the debate.
	EventRejected = protocol.EventRejected
	// EventJoin is a join's combined answers.
	EventJoin = "join.completed"
	// EventStopCheck is a loop's evaluation of the stop rules.
	EventStopCheck = "stop.decision"
	// EventBudgetExceeded: the debate's model budget is spent.
	EventBudgetExceeded = protocol.EventBudgetExceeded
	// EventDeliverables is the debate's deliverables, in the document's
	// shape.
	EventDeliverables = protocol.EventDeliverables
	// EventToolCall is a tool call's audit record (allowed or refused).
	EventToolCall = protocol.EventToolCall
)

// Stop reasons besides the name of the rule that fired, in upper case
// (MAX_ROUNDS, CONSENSUS, STABLE_DISSENT, JUDGE_VERDICT, BUDGET).
const (
	ReasonBudgetExceeded   = "BUDGET_EXCEEDED"
	ReasonGraphEnd         = "GRAPH_END"
	ReasonModelUnavailable = "MODEL_UNAVAILABLE"
)

// agentTimeout bounds one attempt of a model-backed node (its calls, tool
// rounds and repairs).
const agentTimeout = 5 * time.Minute

// maxToolRounds bounds the rounds of tool calls of one turn.
const maxToolRounds = 2

// maxDealClaims bounds the claims (and calcs) a DATA block lists.
const maxDealClaims = 200

// Registry is what a data-defined protocol reads of the tenant's deal.
type Registry interface {
	DealBundleGet(ctx context.Context, dealID string) (*debate.DealBundle, error)
}

// Config wires the data-defined protocols.
type Config struct {
	// Registry reads the debate's deal (claims and calcs for the DATA block,
	// No-Free-Facts and the tools). Required.
	Registry Registry
	// ModelFor returns the model of the tenant of ctx (its own or the
	// deployment's); nil means none is configured. Required.
	ModelFor func(ctx context.Context) (llm.Caller, error)
	// Searcher runs search_evidence (nil: in memory).
	Searcher tools.Searcher
	// Now is the clock of tool audit records; nil means time.Now.
	Now func() time.Time
}

// Compile turns a validated document into the protocol a debate runs under
// ref (NAME@VERSION). Every role is model-backed; there is no rules
// backend.
func Compile(d *Document, ref string, cfg Config) (*orchestrator.Protocol, error) {
	if err := d.Validate(nil); err != nil {
		return nil, err
	}
	p := &proto{doc: d, cfg: cfg, matrix: tools.Matrix{}, schemas: map[string]map[string]any{}}
	roleIDs := make([]string, 0, len(d.Roles))
	for i := range d.Roles {
		r := &d.Roles[i]
		roleIDs = append(roleIDs, r.ID)
		p.matrix[r.ID] = slices.Clone(r.Tools)
		s, err := answerSchema(r)
		if err != nil {
			return nil, fmt.Errorf("custom: role %q: %w", r.ID, err)
		}
		p.schemas[r.ID] = s
	}
	var nodes []*node
	for i := range d.Graph.Nodes {
		n := &d.Graph.Nodes[i]
		after := cmp.Or(n.Next, NodeFinalize)
		edges := []string{after}
		if n.Kind == KindLoop {
			edges = append([]string{n.Repeat}, edges...)
		}
		if !slices.Contains(edges, NodeFinalize) {
			edges = append(edges, NodeFinalize)
		}
		on := &node{Name: n.ID, Edges: edges, Next: func(s *state) string {
			switch {
			case s.Halt != "":
				return NodeFinalize
			case n.Kind == KindLoop && s.Reason == "":
				return n.Repeat
			}
			return after
		}}
		switch n.Kind {
		case KindCall, KindJudge:
			on.Actor, on.Run, on.Timeout = n.Role, p.call(n), agentTimeout
		case KindParallel:
			on.Merge = p.merge(n)
			for j, b := range n.Branches {
				on.Branches = append(on.Branches, &node{
					Name: fmt.Sprintf("%s.%d.%s", n.ID, j, b.Role), Actor: b.Role, Run: p.branch(n, j), Timeout: agentTimeout})
			}
		case KindJoin:
			on.Actor, on.Run = orchestrator.ActorEngine, p.join(n)
		case KindLoop:
			on.Actor, on.Run, on.EndsRound = orchestrator.ActorEngine, p.loop(n), true
		}
		nodes = append(nodes, on)
	}
	nodes = append(nodes, &node{Name: NodeFinalize, Actor: orchestrator.ActorEngine, Run: p.finalize})
	return protocol.Compile(&protocol.Spec[protocol.None, state]{
		Name:        ref,
		Description: cmp.Or(d.Description, "a protocol registered as data"),
		Roles:       roleIDs,
		Start:       d.Graph.Start,
		Nodes:       nodes,
		// Every node once per round, the nodes after the loop and finalize.
		MaxSteps: (len(d.Graph.Nodes)+1)*(cmp.Or(d.rule(StopMaxRounds).Rounds, 1)+1) + 1,
		NewState: newState,
		RoleGuard: map[string][]string{
			EventAnswer:         roleIDs,
			EventRejected:       roleIDs,
			EventToolCall:       roleIDs,
			EventBudgetExceeded: protocol.Everyone(roleIDs...),
			EventJoin:           {orchestrator.ActorEngine},
			EventStopCheck:      {orchestrator.ActorEngine},
			EventDeliverables:   {orchestrator.ActorEngine},
		},
		Tools: p.matrix.Clone(),
	}), nil
}

type (
	node = protocol.Node[protocol.None, state]
	turn = protocol.Turn[protocol.None, state]
)

// proto is a compiled document.
type proto struct {
	doc     *Document
	cfg     Config
	matrix  tools.Matrix
	schemas map[string]map[string]any // role → answer schema
}

type state struct {
	// Outputs are the last accepted answers by node: a call's or judge's
	// answer, a parallel node's {role: answer}, a join's {input: answer}.
	Outputs map[string]json.RawMessage `json:"outputs"`
	// AnsweredIn is the round each node last answered in.
	AnsweredIn map[string]int `json:"answered_in"`
	// Dissent holds, per stable_dissent rule (by index), the positions of
	// the rounds of unbroken dissent, oldest first.
	Dissent map[string][]string `json:"dissent,omitempty"`
	// Tokens are the model tokens the debate used.
	Tokens int `json:"tokens"`
	// Usage counts the tool calls of UsageRound.
	Usage      tools.Usage `json:"usage,omitempty"`
	UsageRound int         `json:"usage_round,omitempty"`
	// Reason is the stop rule that fired; Halt a reason that ends the
	// debate at once (budget).
	Reason string `json:"reason,omitempty"`
	Halt   string `json:"halt,omitempty"`
	// Rounds is the last round a node ran in (the round after a loop's
	// last is not counted until a node runs in it).
	Rounds int `json:"rounds"`
}

func newState() *state {
	return &state{Outputs: map[string]json.RawMessage{}, AnsweredIn: map[string]int{}, Dissent: map[string][]string{}}
}

func (s *state) usage(round int) tools.Usage {
	if s.UsageRound != round {
		return tools.Usage{}
	}
	return s.Usage
}

// turnResult is one role's turn: a branch returns it as its state for the
// group's merge.
type turnResult struct {
	Role   string          `json:"role"`
	Round  int             `json:"round"`
	Answer json.RawMessage `json:"answer,omitempty"` // nil: rejected or none
	Tokens int             `json:"tokens"`
	Calls  tools.Usage     `json:"calls,omitempty"` // tool calls made
	Halt   string          `json:"halt,omitempty"`
}

// call is a call or judge node.
func (p *proto) call(n *Node) func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
	return func(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
		in, s := t.NodeInput, t.State
		res, events, stop, err := p.turn(ctx, in, s, n, n.Role, n.Task)
		if err != nil || stop != nil {
			return &orchestrator.NodeOutput{Events: events, Stop: stop}, err
		}
		s.apply(in.Round, res)
		if res.Answer != nil {
			s.Outputs[n.ID], s.AnsweredIn[n.ID] = res.Answer, in.Round
		}
		return t.Save(events, nil)
	}
}

// apply folds a turn of round into the state: its tokens, halt (the first
// one stands) and tool calls (counted per round).
func (s *state) apply(round int, r turnResult) {
	s.Tokens += r.Tokens
	s.Halt = cmp.Or(s.Halt, r.Halt)
	s.Rounds = max(s.Rounds, round)
	if len(r.Calls) == 0 {
		return
	}
	if s.UsageRound != round || s.Usage == nil {
		s.Usage, s.UsageRound = tools.Usage{}, round
	}
	for role, ts := range r.Calls {
		if s.Usage[role] == nil {
			s.Usage[role] = map[string]int{}
		}
		for t, n := range ts {
			s.Usage[role][t] += n
		}
	}
}

// branch is one agent of a parallel node.
func (p *proto) branch(n *Node, i int) func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
	b := n.Branches[i]
	return func(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
		res, events, stop, err := p.turn(ctx, t.NodeInput, t.State, n, b.Role, b.Task)
		if err != nil || stop != nil {
			return &orchestrator.NodeOutput{Events: events, Stop: stop}, err
		}
		st, err := protocol.Encode(res)
		return &orchestrator.NodeOutput{State: st, Events: events}, err
	}
}

// merge folds a parallel node's turns into the state, in branch order: the
// node's answer is {role: answer} of this round's accepted answers.
func (p *proto) merge(n *Node) func(*state, []*orchestrator.NodeOutput) error {
	return func(s *state, outs []*orchestrator.NodeOutput) error {
		rs, err := protocol.Branches[turnResult](outs)
		if err != nil {
			return err
		}
		answers := map[string]json.RawMessage{}
		round := 0
		for _, r := range rs {
			round = max(round, r.Round)
			s.apply(round, r)
			if r.Answer != nil {
				answers[r.Role] = r.Answer
			}
		}
		all, err := json.Marshal(answers)
		s.Outputs[n.ID], s.AnsweredIn[n.ID] = all, round
		return err
	}
}

// turn runs one role's model-backed turn: the DATA block, up to
// maxToolRounds rounds of tool calls (every call checked against the
// document's matrix and audited), the gates with the backend's repair
// requests, and the events. A nil Answer in the result means the answer
// was rejected (an output.rejected event says why) or the budget is spent.
func (p *proto) turn(ctx context.Context, in *orchestrator.NodeInput, s *state, n *Node, roleID, task string) (turnResult, []orchestrator.Emit, *orchestrator.Stop, error) {
	res := turnResult{Role: roleID, Round: in.Round}
	if limit := p.doc.rule(StopBudget).Tokens; limit > 0 && s.Tokens >= limit {
		res.Halt = ReasonBudgetExceeded
		return res, []orchestrator.Emit{{Type: EventBudgetExceeded, Actor: roleID,
			Payload: map[string]any{"role": roleID, "node": n.ID, "tokens": s.Tokens, "budget": limit}}}, nil, nil
	}
	var caller llm.Caller
	if p.cfg.ModelFor != nil {
		var err error
		if caller, err = p.cfg.ModelFor(ctx); err != nil {
			return res, nil, nil, err
		}
	}
	if caller == nil {
		return res, nil, &orchestrator.Stop{Status: debate.DebateFailed, Reason: ReasonModelUnavailable}, nil
	}
	role := p.doc.role(roleID)
	bundle, err := p.deal(ctx, in.DealID)
	if err != nil {
		return res, nil, nil, err
	}
	facts := gate.NewFacts(bundle, nil)
	before := s.usage(in.Round)
	inv := tools.NewInvoker(tools.Config{Matrix: p.matrix, Deal: &tools.Deal{Bundle: bundle}, Searcher: p.cfg.Searcher,
		DealID: in.DealID, DebateID: in.DebateID, Round: in.Round, Usage: before, Now: p.cfg.Now,
		Why: "the protocol document does not list it for this role"})
	schema, err := json.Marshal(p.schemas[roleID])
	if err != nil {
		return res, nil, nil, err
	}
	data := map[string]any{
		"protocol": p.doc.Name, "node": n.ID, "role": roleID, "round": in.Round,
		"outputs": p.visible(s, n), "deal": dealData(in.DealID, bundle),
	}
	if len(role.Tools) > 0 {
		data["tools"] = role.Tools
	}
	var (
		answer     json.RawMessage
		violations []debate.Violation
		model      debate.ModelCall
		spent      error // the debate's model budget ran out
	)
	for toolRound := 0; ; toolRound++ {
		final := toolRound >= maxToolRounds
		t := cmp.Or(task, "Answer as the "+roleID+" role.")
		if final {
			t += " No more tool calls will be run: answer now."
			delete(data, "tools")
		}
		r, err := caller.JSON(ctx, llm.JSONCall{
			TenantID: in.TenantID, DebateID: in.DebateID, Role: roleID,
			CacheKey: fmt.Sprintf("%s/r%d/%s/%s/a%d/t%d", in.DebateID, in.Round, n.ID, roleID, in.Attempt, toolRound),
			PromptID: p.doc.Name + "@" + fmt.Sprint(p.doc.Version) + "/" + roleID,
			System:   role.Prompt, Task: t, Data: data,
			SchemaName: "answer_" + roleID, Schema: schema,
			Check: func(a json.RawMessage) []debate.Violation { return p.check(role, a, facts, final) },
		})
		if r.Model != nil {
			model.Model, model.PromptID, model.PromptSHA256 = r.Model.Model, r.Model.PromptID, r.Model.PromptSHA256
			model.Calls += r.Model.Calls
			model.CachedCalls += r.Model.CachedCalls
			model.PromptTokens += r.Model.PromptTokens
			model.CompletionTokens += r.Model.CompletionTokens
		}
		if errors.Is(err, roles.ErrBudgetExceeded) {
			spent = err
			break
		}
		if err != nil {
			return res, nil, nil, err
		}
		calls := toolCalls(r.Answer)
		if final || len(calls) == 0 || len(r.Violations) > 0 {
			// Fail closed: the gate decides, whatever the backend reported.
			answer = withoutToolCalls(r.Answer)
			violations = protocol.Regate(func(a json.RawMessage) []debate.Violation { return p.check(role, a, facts, final) }, r)
			break
		}
		var results []map[string]any
		for _, c := range calls {
			out, _, err := inv.Invoke(ctx, roleID, c)
			if err != nil {
				return res, nil, nil, err // the server's failure: the node runs again
			}
			results = append(results, map[string]any{"tool": c.Tool, "args": c.Args, "result": out})
		}
		prev, _ := data["tool_results"].([]map[string]any)
		data["tool_results"] = append(prev, results...)
	}
	events := protocol.AuditEvents(inv)
	res.Tokens, res.Calls = model.PromptTokens+model.CompletionTokens, usageDelta(before, inv.Usage())
	if spent != nil {
		res.Halt = ReasonBudgetExceeded
		return res, append(events, protocol.BudgetEvent(roleID, spent, nil, map[string]any{"node": n.ID, "tokens": s.Tokens + res.Tokens})), nil, nil
	}
	payload := map[string]any{"node": n.ID, "role": roleID, "round": in.Round, "model": model}
	if len(violations) > 0 {
		payload["violations"] = violations
		events = append(events, orchestrator.Emit{Type: EventRejected, Actor: roleID, Payload: payload})
		return res, events, nil, nil
	}
	payload["answer"] = answer
	if ids := claimRefs(answer, facts); len(ids) > 0 {
		payload["claim_ids"] = ids
	}
	events = append(events, orchestrator.Emit{Type: EventAnswer, Actor: roleID, Payload: payload})
	res.Answer = answer
	return res, events, nil, nil
}

// visible is what a call sees of the debate: the answers of its inputs, or
// of every node that answered.
func (p *proto) visible(s *state, n *Node) map[string]json.RawMessage {
	if len(n.Inputs) == 0 {
		return maps.Clone(s.Outputs)
	}
	out := map[string]json.RawMessage{}
	for _, k := range n.Inputs {
		if v, ok := s.Outputs[k]; ok {
			out[k] = v
		}
	}
	return out
}

func (p *proto) deal(ctx context.Context, dealID string) (*debate.DealBundle, error) {
	if p.cfg.Registry == nil || dealID == "" {
		return nil, nil
	}
	b, err := p.cfg.Registry.DealBundleGet(ctx, dealID)
	if errors.Is(err, debate.ErrNotFound) {
		return nil, nil // a debate about no deal: every fact is free, and refused
	}
	return b, err
}

// dealData is the deal as the DATA block shows it.
func dealData(dealID string, b *debate.DealBundle) map[string]any {
	out := map[string]any{"deal_id": dealID}
	if b == nil {
		out["claims"], out["calcs"] = []any{}, []any{}
		return out
	}
	out["company"], out["stage"], out["sector"] = b.Deal.CompanyName, b.Deal.Stage, b.Deal.Sector
	claims := make([]map[string]any, 0, min(len(b.Claims), maxDealClaims))
	for _, c := range b.Claims[:cap(claims)] {
		claims = append(claims, map[string]any{"claim_id": c.ID, "key": c.Key, "class": c.Class, "text": c.Text,
			"materiality": c.Materiality})
	}
	calcs := make([]map[string]any, 0, min(len(b.Calcs), maxDealClaims))
	for _, c := range b.Calcs[:cap(calcs)] {
		calcs = append(calcs, map[string]any{"calc_id": c.ID, "type": c.Type, "input_claim_ids": c.InputClaimIDs})
	}
	out["claims"], out["calcs"] = claims, calcs
	return out
}

func usageDelta(before, after tools.Usage) tools.Usage {
	out := tools.Usage{}
	for r, ts := range after {
		for t, n := range ts {
			if d := n - before.Count(r, t); d != 0 {
				if out[r] == nil {
					out[r] = map[string]int{}
				}
				out[r][t] = d
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// toolCalls reads an answer's tool_calls (nil when it has none or they are
// malformed: the gate reports that).
func toolCalls(answer json.RawMessage) []debate.ToolCall {
	var a struct {
		ToolCalls []debate.ToolCall `json:"tool_calls"`
	}
	if json.Unmarshal(answer, &a) != nil {
		return nil
	}
	return a.ToolCalls
}

func withoutToolCalls(answer json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(answer, &m) != nil {
		return answer
	}
	if _, ok := m[fieldToolCalls]; !ok {
		return answer
	}
	delete(m, fieldToolCalls)
	out, err := json.Marshal(m)
	if err != nil {
		return answer
	}
	return out
}

// check is the gate of a role's answer: the schema (with what the server
// adds), No-Free-Facts over every text of the answer and the Muḥāsabah
// record, as the role's gates ask. An answer that asks for tools (before
// the last tool round) is checked only for the shape of its calls.
func (p *proto) check(r *Role, answer json.RawMessage, f *gate.Facts, final bool) []debate.Violation {
	val, err := decodeValue(answer)
	if err != nil {
		return []debate.Violation{{Rule: RuleSchema, Field: "answer", Detail: "not a JSON object"}}
	}
	m, _ := val.(map[string]any)
	if calls, ok := m[fieldToolCalls].([]any); ok && len(calls) > 0 && !final {
		return validate(fieldToolCalls, calls, toolCallsSchema)
	}
	delete(m, fieldToolCalls)
	vs := validate("", m, p.schemas[r.ID])
	refs := stringList(m[fieldRefs])
	ts := texts("", m)
	if slices.Contains(r.Gates, GateNoFreeFacts) {
		for i, t := range ts {
			for _, v := range gate.NoFreeFacts(t.text, refs, f) {
				if strings.HasPrefix(v.Field, "refs") && i > 0 {
					continue // a bad ref is reported once
				}
				if v.Field == "text" {
					v.Field = t.path
				}
				vs = append(vs, v)
			}
		}
	}
	if slices.Contains(r.Gates, GateMuhasabah) {
		var rec debate.Muhasabah
		raw, _ := json.Marshal(m[fieldMuhasabah])
		if err := json.Unmarshal(raw, &rec); err != nil {
			vs = append(vs, debate.Violation{Rule: RuleSchema, Field: fieldMuhasabah, Detail: "is not a Muhasabah record: " + err.Error()})
		} else {
			out := &debate.AgentOutput{AgentID: r.ID, Role: r.ID, Muhasabah: rec}
			for _, id := range refs {
				if _, ok := f.Calc(id); ok {
					out.CalcRefs = append(out.CalcRefs, id)
				} else {
					out.ClaimRefs = append(out.ClaimRefs, id)
				}
			}
			if !slices.Contains(r.Gates, GateNoFreeFacts) {
				all := make([]string, len(ts))
				for i, t := range ts {
					all[i] = t.text
				}
				out.Content = strings.Join(all, "\n")
			}
			vs = append(vs, gate.Muhasabah(out, f)...)
		}
	}
	return vs
}

// decodeValue decodes a JSON value with its numbers as json.Number.
func decodeValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func stringList(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

type text struct{ path, text string }

// texts lists the strings of an answer (its own fields, not the refs or the
// Muḥāsabah record), by path, in a fixed order.
func texts(path string, v any) []text {
	switch x := v.(type) {
	case string:
		return []text{{path, x}}
	case []any:
		var out []text
		for i, e := range x {
			out = append(out, texts(fmt.Sprintf("%s[%d]", path, i), e)...)
		}
		return out
	case map[string]any:
		var out []text
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if path == "" && (k == fieldRefs || k == fieldMuhasabah || k == fieldToolCalls) {
				continue
			}
			out = append(out, texts(join(path, k), x[k])...)
		}
		return out
	}
	return nil
}

func claimRefs(answer json.RawMessage, f *gate.Facts) []string {
	var a struct {
		Refs []string `json:"refs"`
	}
	if json.Unmarshal(answer, &a) != nil {
		return nil
	}
	var out []string
	for _, id := range a.Refs {
		if _, ok := f.Claim(id); ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// join combines the answers of its inputs.
func (p *proto) join(n *Node) func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
	return func(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
		in, s := t.NodeInput, t.State
		combined := map[string]json.RawMessage{}
		for _, k := range n.Inputs {
			if v, ok := s.Outputs[k]; ok && s.AnsweredIn[k] == in.Round {
				combined[k] = v
			}
		}
		raw, err := json.Marshal(combined)
		if err != nil {
			return nil, err
		}
		s.Outputs[n.ID], s.AnsweredIn[n.ID] = raw, in.Round
		return t.Save([]orchestrator.Emit{{Type: EventJoin,
			Payload: map[string]any{"node": n.ID, "round": in.Round, "inputs": combined}}}, nil)
	}
}

// loop evaluates the stop rules at the end of a round.
func (p *proto) loop(n *Node) func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
	return func(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
		s := t.State
		reason, why := p.evaluate(s, t.Round)
		s.Reason = reason
		s.Rounds = max(s.Rounds, t.Round)
		payload := map[string]any{"node": n.ID, "round": t.Round, "stop": reason != "", "reason": reason, "why": why, "tokens": s.Tokens}
		return t.Save([]orchestrator.Emit{{Type: EventStopCheck, Payload: payload}}, nil)
	}
}

// evaluate checks every stop rule (stable dissent keeps its history each
// round) and returns the first that holds, or "".
func (p *proto) evaluate(s *state, round int) (reason, why string) {
	for i, r := range p.doc.Stop {
		var fired bool
		var w string
		switch r.Rule {
		case StopMaxRounds:
			fired, w = round >= r.Rounds, fmt.Sprintf("round %d of %d", round, r.Rounds)
		case StopBudget:
			fired, w = s.Tokens >= r.Tokens, fmt.Sprintf("%d of %d tokens used", s.Tokens, r.Tokens)
		case StopConsensus:
			vals, complete := p.positions(s, r, round)
			fired = complete && distinct(maps.Values(vals)) == 1
			w = "positions " + positionString(vals)
		case StopStableDissent:
			key := fmt.Sprint(i)
			vals, complete := p.positions(s, r, round)
			if !complete || distinct(maps.Values(vals)) < 2 {
				delete(s.Dissent, key)
			} else {
				s.Dissent[key] = append(s.Dissent[key], positionString(vals))
				if h := s.Dissent[key]; len(h) > r.Rounds {
					s.Dissent[key] = h[len(h)-r.Rounds:]
				}
			}
			h := s.Dissent[key]
			fired = len(h) >= r.Rounds && distinct(slices.Values(h)) == 1
			w = fmt.Sprintf("%d round(s) of the same dissent, %d needed", len(h), r.Rounds)
		case StopJudgeVerdict:
			if s.AnsweredIn[r.Node] == round {
				var a map[string]any
				_ = json.Unmarshal(s.Outputs[r.Node], &a)
				v, _ := a[p.doc.node(r.Node).Verdict].(string)
				fired, w = slices.Contains(r.Values, v), fmt.Sprintf("verdict %q", v)
			} else {
				w = "no verdict this round"
			}
		}
		if fired && reason == "" {
			reason, why = strings.ToUpper(r.Rule), w
		}
	}
	return reason, why
}

// positions returns each branch role's value of the rule's field in this
// round's answers of its node, and whether every branch answered.
func (p *proto) positions(s *state, r StopRule, round int) (map[string]string, bool) {
	n := p.doc.node(r.Node)
	if s.AnsweredIn[r.Node] == 0 || n == nil {
		return nil, false
	}
	var answers map[string]map[string]any
	_ = json.Unmarshal(s.Outputs[r.Node], &answers)
	out := map[string]string{}
	for _, b := range n.Branches {
		a, ok := answers[b.Role]
		if !ok {
			return out, false
		}
		v, _ := json.Marshal(a[r.Field])
		out[b.Role] = string(v)
	}
	return out, s.AnsweredIn[r.Node] == round
}

func distinct(vals iter.Seq[string]) int {
	out := map[string]bool{}
	for x := range vals {
		out[x] = true
	}
	return len(out)
}

func positionString(vals map[string]string) string {
	parts := make([]string, 0, len(vals))
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		parts = append(parts, k+"="+vals[k])
	}
	return strings.Join(parts, ", ")
}

// finalize emits the deliverables and stops the debate.
func (p *proto) finalize(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	s := t.State
	reason := cmp.Or(s.Halt, s.Reason)
	if reason == "" {
		reason, _ = p.evaluate(s, max(s.Rounds, 1))
	}
	reason = cmp.Or(reason, ReasonGraphEnd)
	fields := map[string]any{}
	for _, dl := range p.doc.Deliverables.Fields {
		node, field, _ := strings.Cut(dl.From, ".")
		raw, ok := s.Outputs[node]
		if !ok {
			fields[dl.Name] = nil
			continue
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		if field == "" {
			fields[dl.Name] = v
			continue
		}
		m, _ := v.(map[string]any)
		if n := p.doc.node(node); n != nil && n.Kind == KindParallel {
			byRole := map[string]any{}
			for role, a := range m {
				am, _ := a.(map[string]any)
				byRole[role] = am[field]
			}
			fields[dl.Name] = byRole
			continue
		}
		fields[dl.Name] = m[field]
	}
	rounds := max(s.Rounds, 1)
	return &orchestrator.NodeOutput{
		Events: []orchestrator.Emit{{Type: EventDeliverables, Payload: map[string]any{
			"protocol": p.doc.Name, "version": p.doc.Version, "stop_reason": reason, "rounds": rounds,
			"tokens": s.Tokens, "fields": fields, "markdown": p.markdown(reason, rounds, fields)}}},
		Stop: &orchestrator.Stop{Status: debate.DebateCompleted, Reason: reason},
	}, nil
}

// markdown renders the deliverables for GetDeliverables' Markdown: each
// field in the document's order, as indented JSON.
func (p *proto) markdown(reason string, rounds int, fields map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s@%d\n\nStopped after round %d: %s.\n", p.doc.Name, p.doc.Version, rounds, reason)
	for _, dl := range p.doc.Deliverables.Fields {
		js, err := json.MarshalIndent(fields[dl.Name], "", "  ")
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n```json\n%s\n```\n", dl.Name, js)
	}
	return b.String()
}

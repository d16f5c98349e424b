package agentproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/tools"
	"github.com/stretchr/testify/require"
)

var testClock = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }

// approvedSession is a session in executing whose every step has an
// approved intent, and the trace that signed and approved them.
func approvedSession(t *testing.T, opts string) (*orchestrator.NodeInput, *Options, *state, []debate.Event) {
	t.Helper()
	o, err := protocol.ParseOptions(json.RawMessage(opts), defaults, check)
	require.NoError(t, err)
	s := &state{Lifecycle: StateExecuting, Init: true}
	var trace []debate.Event
	for i, st := range o.Task.Steps {
		hash, err := contentHash(st.Input)
		require.NoError(t, err)
		pr := &proposal{ID: "p-" + st.ID, StepID: st.ID, Tool: st.Tool, Risk: st.RiskClass, Review: ReviewApproved, Attempts: 1}
		it := &intent{ID: pr.ID + "-i1", ProposalID: pr.ID, Attempt: 1, InputHash: hash, Risk: st.RiskClass, Status: intentApproved}
		s.Proposals, s.Intents = append(s.Proposals, pr), append(s.Intents, it)
		trace = append(trace,
			debate.Event{Seq: int64(2*i + 1), Type: EventIntentSigned, Payload: json.RawMessage(fmt.Sprintf(`{"intent_id":%q,"input_hash":%q}`, it.ID, hash))},
			debate.Event{Seq: int64(2*i + 2), Type: EventIntentApproved, Payload: json.RawMessage(fmt.Sprintf(`{"intent_id":%q}`, it.ID))})
	}
	return &orchestrator.NodeInput{DebateID: "d-1", TenantID: "t-1", DealID: "deal-1", Round: 1, Attempt: 1}, o, s, trace
}

func payloadOf(t *testing.T, e orchestrator.Emit) map[string]any {
	t.Helper()
	raw, err := json.Marshal(e.Payload)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

// TestUnregisteredToolRefusedAtExecution: an approved intent whose tool the
// tenant did not register for the session (the critic's review is not the
// only line) is refused by the tool invoker when it would run: the call is
// audited DENIED (permission), the refusal is stored as the output
// artifact, the execution fails, and the proposal gets no retry. The
// registered tool beside it runs, audited SUCCESS.
func TestUnregisteredToolRefusedAtExecution(t *testing.T) {
	t.Parallel()
	in, o, s, trace := approvedSession(t, `{"task":{"objective":"o","steps":[
		{"id":"add","tool":"arithmetic","input":{"op":"add","operands":[2,3]}},
		{"id":"conv","tool":"unit_convert","input":{"value":1,"from":"km","to":"m"}}]},
		"tools":["arithmetic"],"max_retries":2}`)
	p := &proto{cfg: Config{Now: testClock}}
	events, err := p.executeIntents(context.Background(), in, o, s, trace)
	require.NoError(t, err)

	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	perExec := []string{EventExecutionStarted, EventArtifact, EventToolCall, EventArtifact}
	want := append(append(append(append([]string{}, perExec...), EventExecutionCompleted), perExec...), EventExecutionFailed, EventTransition)
	require.Equal(t, want, types)

	ok, refused := payloadOf(t, events[2]), payloadOf(t, events[7])
	require.Equal(t, RoleExecutor, events[7].Actor)
	require.Equal(t, "p-add-i1-x", ok["execution_id"])
	require.Equal(t, tools.StatusSuccess, ok["result_status"])
	require.Equal(t, "p-conv-i1-x", refused["execution_id"])
	require.Equal(t, ToolUnitConvert, refused["tool_name"])
	require.Equal(t, tools.StatusDenied, refused["result_status"])
	require.Equal(t, tools.RulePermission, refused["rule"])
	require.Equal(t, map[string]any{"from": "km", "to": "m", "value": 1.0}, refused["tool_args"])
	require.Equal(t, "d-1", refused["debate_id"])
	require.Equal(t, "2025-01-02T03:04:05Z", refused["timestamp"])

	out := payloadOf(t, events[8])
	require.Equal(t, "output", out["kind"])
	content, _ := out["content"].(map[string]any)
	require.Equal(t, tools.StatusDenied, content["status"])
	require.Contains(t, content["error"], "not registered")
	failed := payloadOf(t, events[9])
	require.Contains(t, failed["error"], "DENIED (permission)")
	require.Len(t, failed["artifact_hashes"], 2)

	conv := s.proposal("p-conv")
	require.Equal(t, outcomeFailed, conv.Outcome, "a refusal is final: no retry")
	require.True(t, s.Intents[1].Refused)
	require.Equal(t, outcomeCompleted, s.proposal("p-add").Outcome)
	require.Equal(t, StateClaiming, s.Lifecycle)
	require.Equal(t, 1, s.ToolUsage.Count(RoleExecutor, ToolArithmetic), "the admitted call counts toward the quota")
	require.Zero(t, s.ToolUsage.Count(RoleExecutor, ToolUnitConvert), "a refused call counts toward nothing")
}

// TestInvokerChecks: the invoker's checks in the tools layer's order, each
// audited: unknown tool, permission, quota (counted per session across
// calls), the tool's own failures (INVALID), and success.
func TestInvokerChecks(t *testing.T) {
	t.Parallel()
	o, err := protocol.ParseOptions(json.RawMessage(`{"task":{"objective":"o","steps":[
		{"id":"a","tool":"arithmetic","input":{"op":"add","operands":[1,2]}},
		{"id":"c","tool":"claim_lookup","input":{"claim_key":"C9"}}]},
		"tools":["arithmetic","claim_lookup","unit_convert"],"max_retries":1}`), defaults, check)
	require.NoError(t, err)
	reg, ctx := sampleRegistry(t)
	env := toolEnv{dealID: "d1", registry: reg}
	inv := newInvoker(&orchestrator.NodeInput{DebateID: "d-1", Round: 1}, o, nil, env, testClock)
	add := json.RawMessage(`{"op":"add","operands":[1,2]}`)
	for i, tc := range []struct {
		role, tool, input  string
		status, rule, want string
		refused            bool
	}{
		{RoleExecutor, "shell", `{"cmd":"rm -rf /"}`, tools.StatusInvalid, tools.RuleUnknownTool, "", true},
		{RoleCritic, ToolArithmetic, string(add), tools.StatusDenied, tools.RulePermission, "", true},
		{RoleExecutor, ToolUnitConvert, `{"value":1,"from":"km","to":"m"}`, tools.StatusDenied, tools.RuleQuota, "", true}, // no step names it
		{RoleExecutor, ToolArithmetic, string(add), tools.StatusSuccess, "", "3", false},
		{RoleExecutor, ToolArithmetic, `{"op":"div","operands":[1,0]}`, tools.StatusInvalid, tools.RuleArguments, "", false},
		{RoleExecutor, ToolArithmetic, string(add), tools.StatusDenied, tools.RuleQuota, "", true}, // 1 step × 2 attempts spent
		{RoleExecutor, ToolClaimLookup, `{"claim_key":"C9"}`, tools.StatusInvalid, tools.RuleNotFound, "", false},
	} {
		c, err := call(ctx, inv, tc.role, tc.tool, json.RawMessage(tc.input))
		require.NoError(t, err, "call %d", i)
		require.Equal(t, tc.status, c.res.Status, "call %d: %s", i, c.res.Error)
		require.Equal(t, tc.rule, c.res.Rule, "call %d", i)
		require.Equal(t, tc.refused, c.refused, "call %d", i)
		require.Equal(t, tc.status, c.audit.ResultStatus, "call %d", i)
		require.Equal(t, tc.rule, c.audit.Rule, "call %d", i)
		require.Equal(t, c.res.Hash(), c.audit.ResultHash, "call %d", i)
		require.Equal(t, tc.role, c.audit.AgentID, "call %d", i)
		if tc.want != "" {
			require.Equal(t, tc.want, resultText(c.out))
			require.Empty(t, c.failure())
		} else {
			require.Contains(t, c.failure(), tc.status)
		}
	}
	require.Equal(t, 2, inv.Usage().Count(RoleExecutor, ToolArithmetic))

	// The registry unreachable: an ERROR, the node's failure, not counted.
	inv = newInvoker(&orchestrator.NodeInput{DebateID: "d-1", Round: 1}, o, nil, toolEnv{dealID: "d1", registry: closedRegistry(t)}, testClock)
	c, err := call(ctx, inv, RoleExecutor, ToolClaimLookup, json.RawMessage(`{"claim_key":"C1"}`))
	require.Error(t, err)
	require.Equal(t, tools.StatusError, c.res.Status)
	require.Zero(t, inv.Usage().Count(RoleExecutor, ToolClaimLookup))
}

// TestGateRunsWhateverTheModelReports: the gate runs on the model's answer
// even when the client reports no violation, and a result without an
// answer is rejected even when it reports none (fail closed).
func TestGateRunsWhateverTheModelReports(t *testing.T) {
	t.Parallel()
	var data claimData
	require.NoError(t, json.Unmarshal(json.RawMessage(`{"objective":"o","executions":[{"execution_id":"x1","proposal_id":"p","step_id":"s","tool":"arithmetic","output":{"result":5},"result_text":"5"}]}`), &data))
	for name, tc := range map[string]struct {
		res  llm.JSONResult
		rule string // "" when the answer passes
	}{
		"a lie reported clean": {llm.JSONResult{Answer: json.RawMessage(`{"claims":[{"execution_id":"x1","text":"it returned 42","confidence":0.9}]}`)}, "NO_FREE_FACTS"},
		"a good answer reported bad": {llm.JSONResult{Answer: json.RawMessage(`{"claims":[{"execution_id":"x1","text":"it returned 5","confidence":0.9}]}`),
			Violations: []debate.Violation{{Rule: "X"}}}, ""},
		"no answer, no violation":   {llm.JSONResult{}, "SCHEMA"},
		"no answer, its violation":  {llm.JSONResult{Violations: []debate.Violation{{Rule: "SCHEMA", Detail: "not JSON"}}}, "SCHEMA"},
		"a confidence out of range": {llm.JSONResult{Answer: json.RawMessage(`{"claims":[{"execution_id":"x1","text":"5","confidence":7}]}`)}, "SCHEMA"},
	} {
		_, vs := gated(data, tc.res)
		if tc.rule == "" {
			require.Empty(t, vs, name)
			continue
		}
		require.NotEmpty(t, vs, name)
		require.Equal(t, tc.rule, vs[0].Rule, name)
	}
}

// TestCacheKey: a model call's cache key names the debate, the node, the
// round and the attempt, so a retried node asks the model again.
func TestCacheKey(t *testing.T) {
	t.Parallel()
	in := &orchestrator.NodeInput{DebateID: "d-1", Round: 1, Attempt: 1}
	require.Equal(t, "d-1/agentproto/claim/r1/a1", cacheKey(in, NodeClaim))
	seen := map[string]bool{cacheKey(in, NodeClaim): true}
	for _, k := range []string{
		cacheKey(&orchestrator.NodeInput{DebateID: "d-1", Round: 1, Attempt: 2}, NodeClaim),
		cacheKey(&orchestrator.NodeInput{DebateID: "d-1", Round: 2, Attempt: 1}, NodeClaim),
		cacheKey(in, NodePlan),
		cacheKey(&orchestrator.NodeInput{DebateID: "d-2", Round: 1, Attempt: 1}, NodeClaim),
	} {
		require.False(t, seen[k], k)
		seen[k] = true
	}
}

// gated is the gate's verdict on a model's result for call c over data.
func gated(data claimData, res llm.JSONResult) (json.RawMessage, []debate.Violation) {
	return res.Answer, protocol.Gate(gate(data, checkClaims), res)
}

// TestRefusalOf: a refused transition is recorded with its from, to,
// requester and reason, whatever error the state machine returned.
func TestRefusalOf(t *testing.T) {
	t.Parallel()
	r := &Refusal{From: StateReviewing, To: StateExecuting, By: RoleExecutor, Reason: "no proposal was approved"}
	require.Same(t, r, refusalOf(r, "x", "y", "z"))
	require.Same(t, r, refusalOf(fmt.Errorf("wrapped: %w", r), "x", "y", "z"))
	got := refusalOf(errors.New("the guard failed"), StatePlanning, StateReviewing, RoleCritic)
	require.Equal(t, &Refusal{From: StatePlanning, To: StateReviewing, By: RoleCritic, Reason: "the guard failed"}, got)
	raw, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, `{"from":"planning","to":"reviewing","requested_by":"critic","reason":"the guard failed"}`, string(raw))
}

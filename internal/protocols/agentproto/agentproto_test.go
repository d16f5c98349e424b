package agentproto_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/agentproto"
	"github.com/stretchr/testify/require"
)

// roleEvents returns the event types in order, engine bookkeeping left out.
func roleEvents(evs []debate.Event) []string {
	engine := map[string]bool{}
	for _, t := range orchestrator.EngineEventTypes() {
		engine[t] = true
	}
	var out []string
	for _, e := range evs {
		if !engine[e.Type] {
			out = append(out, e.Type)
		}
	}
	return out
}

// TestSessionEndToEnd: a clean session goes through every forward state,
// each transition signed by its designated role, executes every intent
// once with its artifacts, claims after the executions, signs the final
// statement last and verifies with status pass.
func TestSessionEndToEnd(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	d, evs := b.finish(t, b.create(t, runwayTask()))
	require.Equal(t, debate.DebateCompleted, d.Status)
	require.Equal(t, agentproto.ReasonVerified, d.StopReason)

	var path []string
	for _, e := range ofType(evs, agentproto.EventTransition) {
		to := field(t, e, "to").(string)
		require.Equal(t, agentproto.DesignatedRole(field(t, e, "from").(string), to), e.Actor)
		path = append(path, to)
	}
	last := ofType(evs, agentproto.EventVerificationComplete)
	require.Len(t, last, 1)
	tr := field(t, last[0], "transition").(map[string]any)
	path = append(path, tr["to"].(string))
	require.Equal(t, []string{"planning", "reviewing", "executing", "claiming", "auditing", "completed"}, path)
	require.Equal(t, agentproto.VerificationPass, field(t, last[0], "status"))

	require.Len(t, ofType(evs, agentproto.EventProposalCreated), 4)
	require.Len(t, ofType(evs, agentproto.EventIntentSigned), 4)
	require.Len(t, ofType(evs, agentproto.EventExecutionStarted), 4)
	require.Len(t, ofType(evs, agentproto.EventExecutionCompleted), 4)
	require.Len(t, ofType(evs, agentproto.EventArtifact), 8, "an input and an output per execution")
	claims := ofType(evs, agentproto.EventClaimIssued)
	require.Len(t, claims, 4)
	texts := ""
	for _, c := range claims {
		texts += field(t, c, "text").(string) + "\n"
	}
	require.Contains(t, texts, "12500000 USD", "ARR looked up in the tenant's registry")
	require.Contains(t, texts, "650000 USD/month")
	require.Contains(t, texts, "19.23076923076923")
	require.Contains(t, texts, "1.5 year")

	roles := roleEvents(evs)
	require.Equal(t, agentproto.EventVerificationComplete, roles[len(roles)-1])
	require.Equal(t, agentproto.EventFinalStatement, roles[len(roles)-2], "the final statement is the last role event")
	require.Equal(t, agentproto.EventDeliverables, roles[len(roles)-3])

	audited(t, evs)
	for _, e := range ofType(evs, agentproto.EventToolCall) {
		require.Equal(t, agentproto.RoleExecutor, e.Actor)
		require.Equal(t, "SUCCESS", field(t, e, "result_status"))
	}

	rep := b.verify(evs)
	require.Equal(t, agentproto.VerificationPass, rep.Status, "%v %v", rep.Problems, rep.Warnings)
	require.True(t, rep.SignaturesChecked)
	require.True(t, ledger.Verify(evs, b.keys.PublicKeys(b.tenant, ledger.Actors(evs)), agentproto.LedgerPolicy()).OK)
}

// TestPolicyPaths: a proposal whose tool the tenant did not register is
// rejected and never gets an intent; a high-risk intent is blocked and
// never executes; a tool that fails is retried with new intents up to
// max_retries, every attempt kept; a claim that contradicts its step's
// expectation is challenged. The session still completes, with warnings.
func TestPolicyPaths(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	opts := map[string]any{
		"task": map[string]any{"objective": "Exercise every guard", "steps": []any{
			step("ok", agentproto.ToolArithmetic, map[string]any{"op": "add", "operands": []any{2, 3}}, "low"),
			step("unregistered", agentproto.ToolUnitConvert, map[string]any{"value": 1, "from": "km", "to": "m"}, "low"),
			step("risky", agentproto.ToolArithmetic, map[string]any{"op": "mul", "operands": []any{2, 3}}, "high"),
			step("broken", agentproto.ToolArithmetic, map[string]any{"op": "div", "operands": []any{1, 0}}, "low"),
			map[string]any{"id": "wrong", "tool": agentproto.ToolArithmetic, "input": map[string]any{"op": "sub", "operands": []any{10, 4}}, "expect": 7},
		}},
		"tools":              []any{agentproto.ToolArithmetic},
		"block_risk_classes": []any{"high"},
		"max_retries":        2,
	}
	d, evs := b.finish(t, b.create(t, opts))
	require.Equal(t, debate.DebateCompleted, d.Status, d.Error)

	reviews := map[string]string{}
	for _, e := range ofType(evs, agentproto.EventProposalReviewed) {
		reviews[field(t, e, "proposal_id").(string)] = field(t, e, "status").(string)
	}
	require.Equal(t, agentproto.ReviewRejected, reviews["p-unregistered"])
	require.Equal(t, agentproto.ReviewConditional, reviews["p-risky"])
	intents := map[string]int{}
	for _, e := range ofType(evs, agentproto.EventIntentSigned) {
		intents[field(t, e, "proposal_id").(string)]++
	}
	require.Zero(t, intents["p-unregistered"], "a rejected proposal never gets an intent")
	require.Equal(t, 3, intents["p-broken"], "the first attempt and two retries, each a new intent")

	blocked := ofType(evs, agentproto.EventIntentBlocked)
	require.Len(t, blocked, 1)
	require.Equal(t, "p-risky-i1", field(t, blocked[0], "intent_id"))
	for _, e := range ofType(evs, agentproto.EventExecutionStarted) {
		require.NotEqual(t, "p-risky-i1", field(t, e, "intent_id"), "a blocked intent never executes")
	}
	failed := ofType(evs, agentproto.EventExecutionFailed)
	require.Len(t, failed, 3)
	require.Contains(t, field(t, failed[0], "error"), "division by zero")
	retry := ofType(evs, agentproto.EventIntentSigned)
	var retries []string
	for _, e := range retry {
		if r, ok := field(t, e, "retry_of").(string); ok {
			retries = append(retries, r)
		}
	}
	require.Equal(t, []string{"p-broken-i1", "p-broken-i2"}, retries)

	ch := ofType(evs, agentproto.EventClaimChallenged)
	require.Len(t, ch, 1)
	require.Equal(t, "c-wrong", field(t, ch[0], "claim_id"))
	require.Len(t, ofType(evs, agentproto.EventClaimIssued), 2, "only completed executions are claimed")
	audited(t, evs)

	rep := b.verify(evs)
	require.Equal(t, agentproto.VerificationWarn, rep.Status, "%v", rep.Problems)
	require.NotEmpty(t, rep.Warnings)
}

// TestNoApprovedProposalIsRefused: when the critic approves nothing, the
// move to executing is refused and recorded, nothing executes and the
// session stops for review; the trace still verifies.
func TestNoApprovedProposalIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	opts := runwayTask()
	opts["tools"] = []any{}
	d, evs := b.finish(t, b.create(t, opts))
	require.Equal(t, debate.DebateNeedsReview, d.Status)
	require.Equal(t, agentproto.ReasonNoApprovedProposal, d.StopReason)
	ref := ofType(evs, agentproto.EventTransitionRefused)
	require.Len(t, ref, 1)
	require.Equal(t, "reviewing", field(t, ref[0], "from"))
	require.Equal(t, "executing", field(t, ref[0], "to"))
	require.Empty(t, ofType(evs, agentproto.EventIntentSigned))
	rep := b.verify(evs)
	require.NotEqual(t, agentproto.VerificationFail, rep.Status, "%v", rep.Problems)
}

// flakyRegistry fails its first read with a transient error (or, with
// block, waits for the context to end: a process that dies mid-call).
type flakyRegistry struct {
	agentproto.Registry
	mu      sync.Mutex
	calls   int
	block   bool
	entered chan struct{}
}

func (f *flakyRegistry) DealBundleGet(ctx context.Context, dealID string) (*debate.DealBundle, error) {
	f.mu.Lock()
	f.calls++
	first := f.calls == 1
	f.mu.Unlock()
	if first && f.block {
		close(f.entered)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if first {
		return nil, errors.New("registry unreachable")
	}
	return f.Registry.DealBundleGet(ctx, dealID)
}

// audited checks that every execution has exactly one agent.tool_call
// audit, recorded between its start and its end, whose status agrees with
// its outcome.
func audited(t *testing.T, evs []debate.Event) {
	t.Helper()
	calls := map[string]int{}
	status := map[string]string{}
	started := map[string]any{} // execution id → tool
	for _, e := range evs {
		switch e.Type {
		case agentproto.EventExecutionStarted:
			started[field(t, e, "execution_id").(string)] = field(t, e, "tool")
		case agentproto.EventToolCall:
			x := field(t, e, "execution_id").(string)
			require.Contains(t, started, x, "the audit of %s follows its start", x)
			calls[x]++
			status[x] = field(t, e, "result_status").(string)
			require.Equal(t, started[x], field(t, e, "tool_name"))
		case agentproto.EventExecutionCompleted:
			require.Equal(t, "SUCCESS", status[field(t, e, "execution_id").(string)])
		case agentproto.EventExecutionFailed:
			x := field(t, e, "execution_id").(string)
			require.NotEmpty(t, status[x], "failed execution %s is audited", x)
			require.NotEqual(t, "SUCCESS", status[x])
		}
	}
	require.Len(t, calls, len(started), "an audit per execution")
	for x, n := range calls {
		require.Equal(t, 1, n, "execution %s", x)
	}
}

// executedOnce checks that every signed intent executed exactly once.
func executedOnce(t *testing.T, evs []debate.Event) {
	t.Helper()
	started := map[string]int{}
	for _, e := range ofType(evs, agentproto.EventExecutionStarted) {
		started[field(t, e, "intent_id").(string)]++
	}
	for _, e := range ofType(evs, agentproto.EventIntentSigned) {
		require.Equal(t, 1, started[field(t, e, "intent_id").(string)], "intent %v", field(t, e, "intent_id"))
	}
}

// TestExecutionRetriedAfterIntentCommit: the execution node fails once
// after the intents were committed (the registry is unreachable); the
// engine re-runs it from the checkpoint and every intent executes exactly
// once.
func TestExecutionRetriedAfterIntentCommit(t *testing.T) {
	t.Parallel()
	reg := &flakyRegistry{}
	b := setup(t, reg, nil)
	reg.Registry = b.st
	d, evs := b.finish(t, b.create(t, runwayTask()))
	require.Equal(t, debate.DebateCompleted, d.Status, d.Error)
	var retried bool
	for _, e := range ofType(evs, orchestrator.EventNodeRetry) {
		retried = retried || e.Node == agentproto.NodeExecute
	}
	require.True(t, retried, "the execution node failed once")
	executedOnce(t, evs)
	require.Equal(t, agentproto.VerificationPass, b.verify(evs).Status)
}

// TestCrashBetweenIntentAndExecution: the process dies while the tool
// runs (its context ends, nothing of the step is committed); a new run
// resumes from the trace head, after the committed intents, and executes
// each intent exactly once.
func TestCrashBetweenIntentAndExecution(t *testing.T) {
	t.Parallel()
	reg := &flakyRegistry{block: true, entered: make(chan struct{})}
	b := setup(t, reg, nil)
	reg.Registry = b.st
	id := b.create(t, runwayTask())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.run.Run(ctx, b.tenant, id) }()
	<-reg.entered
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	mid, err := b.st.EventList(b.ctx, id, 0, 5000)
	require.NoError(t, err)
	require.Len(t, ofType(mid, agentproto.EventIntentSigned), 4, "the intents were committed before the crash")
	require.Empty(t, ofType(mid, agentproto.EventExecutionStarted), "nothing of the crashed step was committed")
	dd, err := b.st.DebateGet(b.ctx, id)
	require.NoError(t, err)
	require.Equal(t, agentproto.NodeExecute, dd.NextNode)

	d, evs := b.finish(t, id)
	require.Equal(t, debate.DebateCompleted, d.Status, d.Error)
	executedOnce(t, evs)
	require.Equal(t, agentproto.VerificationPass, b.verify(evs).Status)
}

// TestModelBackend: with a model, the planner's, critic's and executor's
// texts come from it, through the gates; the session verifies. Its
// responses are cached under the node, round and attempt of the call.
func TestModelBackend(t *testing.T) {
	t.Parallel()
	m := newModel(t, nil)
	b := setup(t, nil, m)
	id := b.create(t, runwayTask())
	d, evs := b.finish(t, id)
	require.Equal(t, debate.DebateCompleted, d.Status, d.Error)
	require.Equal(t, []string{agentproto.SchemaPlan, agentproto.SchemaReview, agentproto.SchemaClaims}, m.schemas())
	claims := ofType(evs, agentproto.EventClaimIssued)
	require.NotEmpty(t, claims)
	mc, ok := field(t, claims[0], "model").(map[string]any)
	require.True(t, ok, "a model-backed claim records its calls")
	require.Equal(t, "agentproto-test", mc["model"])
	require.Equal(t, agentproto.VerificationPass, b.verify(evs).Status)

	for _, key := range []string{id + "/agentproto/plan/r1/a1/planner/0", id + "/agentproto/review/r1/a1/critic/0", id + "/agentproto/claim/r1/a1/executor/0"} {
		_, found, err := b.st.ModelResponseGet(b.ctx, key)
		require.NoError(t, err)
		require.True(t, found, "response cached under %s", key)
	}
}

// lie changes every claim of a claims answer: the number its execution
// returned becomes 42, a fact the execution does not show.
func lie(schema string, data json.RawMessage, answer map[string]any) {
	if schema != agentproto.SchemaClaims {
		return
	}
	var d struct {
		Executions []struct {
			ExecutionID string `json:"execution_id"`
			ResultText  string `json:"result_text"`
		} `json:"executions"`
	}
	if json.Unmarshal(data, &d) != nil {
		return
	}
	claims, _ := answer["claims"].([]any)
	for _, c := range claims {
		cl, _ := c.(map[string]any)
		text, _ := cl["text"].(string)
		for _, x := range d.Executions {
			if x.ExecutionID == cl["execution_id"] && x.ResultText != "" {
				cl["text"] = strings.ReplaceAll(text, x.ResultText, "42")
			}
		}
	}
}

// TestModelClaimFailingTheGate: a model claim that does not quote its
// execution's result is sent back for repair, then rejected, recorded, and
// the session stops for review before any claim enters the trace.
func TestModelClaimFailingTheGate(t *testing.T) {
	t.Parallel()
	m := newModel(t, lie)
	b := setup(t, nil, m)
	d, evs := b.finish(t, b.create(t, runwayTask()))
	require.Equal(t, debate.DebateNeedsReview, d.Status)
	require.Equal(t, agentproto.ReasonOutputRejected, d.StopReason)
	rej := ofType(evs, agentproto.EventOutputRejected)
	require.Len(t, rej, 1)
	require.Equal(t, agentproto.RoleExecutor, rej[0].Actor)
	require.Contains(t, string(rej[0].Payload), "NO_FREE_FACTS")
	require.Empty(t, ofType(evs, agentproto.EventClaimIssued))
	require.Equal(t, []string{agentproto.SchemaPlan, agentproto.SchemaReview,
		agentproto.SchemaClaims, agentproto.SchemaClaims, agentproto.SchemaClaims}, m.schemas(), "the answer and its two repairs")
	require.NotEqual(t, agentproto.VerificationFail, b.verify(evs).Status)
}

// TestModelBudgetExceeded: when the tenant's token budget cannot pay for
// the next call, no request is sent, budget.exceeded is recorded (signed
// by the role whose call it was) and the session stops for review.
func TestModelBudgetExceeded(t *testing.T) {
	t.Parallel()
	m := newModel(t, nil)
	m.budget = 100
	b := setup(t, nil, m)
	d, evs := b.finish(t, b.create(t, runwayTask()))
	require.Equal(t, debate.DebateNeedsReview, d.Status)
	require.Equal(t, agentproto.ReasonTokenBudget, d.StopReason)
	ex := ofType(evs, agentproto.EventBudgetExceeded)
	require.Len(t, ex, 1)
	require.Equal(t, agentproto.RolePlanner, ex[0].Actor)
	require.Equal(t, agentproto.SchemaPlan, field(t, ex[0], "schema"))
	require.Contains(t, field(t, ex[0], "detail"), "budget")
	require.Zero(t, m.srv.Calls(), "no request over the budget")
	require.Empty(t, ofType(evs, agentproto.EventProposalCreated))
	require.NotEqual(t, agentproto.VerificationFail, b.verify(evs).Status)
}

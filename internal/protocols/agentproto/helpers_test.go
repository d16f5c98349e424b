package agentproto_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/agentproto"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// bench is an embedded store with a tenant, the sample deal and an engine
// running the agent protocol.
type bench struct {
	st     *sqlite.Store
	ctx    context.Context
	tenant string
	keys   *ledger.Keyring
	run    *runner.Runner
}

// setup wires the protocol over the store; registry (if not nil) stands in
// front of the store's claim registry and model (if not nil) is the
// tenant's model.
func setup(t *testing.T, registry agentproto.Registry, model llm.Caller) *bench {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx, tenant := storetest.NewTenant(t, st)
	b := storetest.SampleBundle("deal-ap")
	_, err = st.DealImport(ctx, b, "deal-ap-hash", time.Now())
	require.NoError(t, err)
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("agentproto-test-signing-secret-32b!")}, "v1")
	require.NoError(t, err)
	if registry == nil {
		registry = st
	}
	cfg := agentproto.Config{Registry: registry, Ledger: st, Keys: keys}
	if model != nil {
		cfg.ModelFor = func(context.Context) (llm.Caller, error) { return model, nil }
	}
	reg, err := orchestrator.NewRegistry(agentproto.Protocol(cfg))
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{Store: st, Engine: eng, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return &bench{st: st, ctx: ctx, tenant: tenant, keys: keys, run: r}
}

// create validates opts and creates a queued session.
func (b *bench) create(t *testing.T, opts map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(opts)
	require.NoError(t, err)
	canon, err := agentproto.Protocol(agentproto.Config{}).ValidateOptions(raw)
	require.NoError(t, err)
	id := uuid.NewString()
	_, _, err = b.st.DebateCreate(b.ctx, debate.Debate{ID: id, TenantID: b.tenant, DealID: "deal-ap", Protocol: agentproto.Name,
		Options: canon, Status: debate.DebateQueued, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	require.NoError(t, err)
	return id
}

// finish runs a session to its end and returns it with its events.
func (b *bench) finish(t *testing.T, id string) (debate.Debate, []debate.Event) {
	t.Helper()
	require.NoError(t, b.run.Run(context.Background(), b.tenant, id))
	d, err := b.st.DebateGet(b.ctx, id)
	require.NoError(t, err)
	evs, err := b.st.EventList(b.ctx, id, 0, 5000)
	require.NoError(t, err)
	return d, evs
}

// verify is the auditor's verification over the stored events.
func (b *bench) verify(evs []debate.Event) agentproto.Report {
	return agentproto.Verify(evs, b.keys.PublicKeys(b.tenant, ledger.Actors(evs)))
}

func ofType(evs []debate.Event, typ string) []debate.Event {
	var out []debate.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func field(t *testing.T, e debate.Event, name string) any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(e.Payload, &m))
	return m[name]
}

// step is a task step.
func step(id, tool string, input map[string]any, risk string) map[string]any {
	return map[string]any{"id": id, "tool": tool, "input": input, "risk_class": risk, "expected_evidence": "evidence of " + id}
}

// runwayTask computes a runway from the sample deal's registry: ARR and
// burn looked up, one division, one conversion.
func runwayTask() map[string]any {
	return map[string]any{"task": map[string]any{
		"objective": "Check the months of runway the company's figures imply",
		"steps": []any{
			step("arr", agentproto.ToolClaimLookup, map[string]any{"claim_key": "C1"}, "low"),
			step("burn", agentproto.ToolClaimLookup, map[string]any{"claim_key": "C3"}, "low"),
			step("ratio", agentproto.ToolArithmetic, map[string]any{"op": "div", "operands": []any{12500000, 650000}}, "medium"),
			step("years", agentproto.ToolUnitConvert, map[string]any{"value": 18, "from": "month", "to": "year"}, "low"),
		},
	}}
}

// rulesModel is a model that answers like the rules backend, through the
// same gate a model's answer passes.
type rulesModel struct{ calls int }

func (m *rulesModel) Model() string { return "rules-as-model" }

func (m *rulesModel) JSON(_ context.Context, c llm.JSONCall) (llm.JSONResult, error) {
	m.calls++
	data, err := json.Marshal(c.Data)
	if err != nil {
		return llm.JSONResult{}, err
	}
	a, err := agentproto.Answer(c.SchemaName, data)
	if err != nil {
		return llm.JSONResult{}, err
	}
	return llm.JSONResult{Answer: a, Violations: c.Check(a), Model: &debate.ModelCall{Model: m.Model(), PromptID: c.PromptID, Calls: 1}}, nil
}

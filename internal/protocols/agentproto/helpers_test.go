package agentproto_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
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
	"github.com/debated/debated/internal/testutil/enginetest"
	"github.com/debated/debated/internal/testutil/openaitest"
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
// front of the store's claim registry and m (if not nil) is the tenant's
// model, its responses cached in the store.
func setup(t *testing.T, registry agentproto.Registry, m *model) *bench {
	t.Helper()
	e := enginetest.New(t, func(st *sqlite.Store, keys *ledger.Keyring) []*orchestrator.Protocol {
		if registry == nil {
			registry = st
		}
		cfg := agentproto.Config{Registry: registry, Ledger: st, Keys: keys}
		if m != nil {
			b := m.backend(t, st) // the store keeps the responses, as in the service
			cfg.ModelFor = func(context.Context) (llm.Caller, error) { return b, nil }
		}
		return []*orchestrator.Protocol{agentproto.Protocol(cfg)}
	}, enginetest.Options{})
	e.ImportDeal(t, storetest.SampleBundle("deal-ap"))
	return &bench{st: e.Store, ctx: e.Ctx, tenant: e.Tenant, keys: e.Keys, run: e.Runner}
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

// model is a tenant's model for the tests: the service's model client
// (llm.Backend) against an OpenAI-compatible server in the test process
// (openaitest) that answers each structured call the way a model would,
// by running the rules backend over the DATA block the request carries.
// alter, if set, changes that computed answer before it is sent (a model
// that lies).
type model struct {
	srv    *openaitest.Server
	budget int
}

func newModel(t *testing.T, alter func(schema string, data json.RawMessage, answer map[string]any)) *model {
	t.Helper()
	return &model{srv: openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		a, err := agentproto.Answer(r.SchemaName, r.Data)
		if err != nil {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: err.Error()}
		}
		if alter != nil {
			var obj map[string]any
			if err := json.Unmarshal(a, &obj); err != nil {
				return openaitest.Answer{Status: http.StatusInternalServerError, Content: err.Error()}
			}
			alter(r.SchemaName, r.Data, obj)
			if a, err = json.Marshal(obj); err != nil {
				return openaitest.Answer{Status: http.StatusInternalServerError, Content: err.Error()}
			}
		}
		return openaitest.Answer{Content: string(a)}
	})}
}

// backend is the model client pointed at the server, caching its
// responses in cache.
func (m *model) backend(t *testing.T, cache llm.ResponseCache) *llm.Backend {
	t.Helper()
	b, err := llm.NewBackend(llm.Config{BaseURL: m.srv.URL, APIKey: "test-key", Model: "agentproto-test", Budget: m.budget,
		Cache: cache, Retry: llm.Retry{Attempts: 1}, Logger: slog.New(slog.DiscardHandler), Sleep: func(context.Context, time.Duration) error { return nil }})
	require.NoError(t, err)
	return b
}

// schemas are the schemas of the requests the server received, in order.
func (m *model) schemas() []string {
	var out []string
	for _, r := range m.srv.Requests() {
		out = append(out, r.SchemaName)
	}
	return out
}

package stratmaster_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/stratmaster"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// auditClock is the tools' clock in the tests: the time every tool call's
// audit records.
var auditClock = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

// bench is an embedded store with a tenant and an engine running the
// StratMaster protocol, on the rules backend or on a model.
type bench struct {
	st     *sqlite.Store
	ctx    context.Context
	tenant string
	run    *runner.Runner
}

func setup(t testing.TB, model llm.Caller) *bench {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx, tenant := storetest.NewTenant(t, st)
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("stratmaster-test-signing-secret-32b")}, "v1")
	require.NoError(t, err)
	cfg := stratmaster.Config{Registry: st, Now: func() time.Time { return auditClock }}
	if model != nil {
		cfg.ModelFor = func(context.Context) (llm.Caller, error) { return model, nil }
	}
	reg, err := orchestrator.NewRegistry(stratmaster.Protocol(cfg))
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys),
		BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{Store: st, Engine: eng, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return &bench{st: st, ctx: ctx, tenant: tenant, run: r}
}

func (b *bench) importDeal(t testing.TB, bundle *debate.DealBundle) {
	t.Helper()
	_, err := b.st.DealImport(b.ctx, bundle, bundle.Deal.ID+"-hash", time.Now())
	require.NoError(t, err)
}

// task runs one task to its end and returns the debate and its events.
func (b *bench) task(t testing.TB, dealID string, opts map[string]any) (debate.Debate, []debate.Event) {
	t.Helper()
	raw, err := json.Marshal(opts)
	require.NoError(t, err)
	id := uuid.NewString()
	_, _, err = b.st.DebateCreate(b.ctx, debate.Debate{ID: id, TenantID: b.tenant, DealID: dealID, Protocol: stratmaster.Name,
		Options: raw, Status: debate.DebateQueued, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	require.NoError(t, err)
	require.NoError(t, b.run.Run(context.Background(), b.tenant, id))
	d, err := b.st.DebateGet(b.ctx, id)
	require.NoError(t, err)
	evs, err := b.st.EventList(b.ctx, id, 0, 5000)
	require.NoError(t, err)
	return d, evs
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

// statuses are the seed statuses the task.status events recorded, in order.
func statuses(t *testing.T, evs []debate.Event) []string {
	t.Helper()
	var out []string
	for _, e := range ofType(evs, stratmaster.EventTaskStatus) {
		var p struct {
			Status string `json:"status"`
		}
		require.NoError(t, json.Unmarshal(e.Payload, &p))
		out = append(out, p.Status)
	}
	return out
}

// The constitutions of the tests.
const (
	// twoSources fails on the first pass (the question's searches find one
	// item for some claims) and is satisfied once the critic's feedback
	// has the researcher look the claims' evidence up.
	twoSources = `
id: two-sources
version: "1.0"
principles:
  - id: P1
    description: Every hypothesis rests on at least two evidence items.
    rule:
      min_evidence_per_hypothesis: 2
  - id: P2
    description: Without grade A evidence, confidence stays modest.
    rule:
      max_confidence_without_grade_a: 0.9
review_metrics:
  - name: hypothesis_count
    threshold: 1
`
	// unreachable asks for more hypotheses than the deal has claims.
	unreachable = `
id: unreachable
version: "1"
principles:
  - id: P1
    description: At least fifty hypotheses.
    rule:
      min_hypotheses: 50
`
	question = "Do the ARR, gross margin, burn and runway support the Series B?"
)

// modelServer is the test double of the model API (openaitest): it
// answers like a model, composing its answer with the rules backend over
// the DATA block of the request, for the schema the request asks for.
// refuse, if set, picks the requests it answers with text that is not
// JSON instead.
func modelServer(t testing.TB, refuse func(r openaitest.Request) bool) (*llm.Backend, *openaitest.Server) {
	t.Helper()
	srv := openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		if refuse != nil && refuse(r) {
			return openaitest.Answer{Content: "I would rather not answer in JSON."}
		}
		out, err := stratmaster.Rules(r.SchemaName, r.Data)
		if err != nil {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: err.Error()}
		}
		return openaitest.Answer{Content: string(out)}
	})
	b, err := llm.NewBackend(llm.Config{BaseURL: srv.URL, Model: "test-model", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return b, srv
}

// always refuses every request.
func always(openaitest.Request) bool { return true }

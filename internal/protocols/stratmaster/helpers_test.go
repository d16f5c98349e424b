package stratmaster_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/stratmaster"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/testutil/enginetest"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// auditClock is the tools' clock in the tests: the time every tool call's
// audit records.
var auditClock = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

// bench is an embedded store with a tenant and an engine running the
// StratMaster protocol, on the rules backend or on a model.
type bench struct{ *enginetest.Env }

func setup(t testing.TB, model llm.Caller) *bench {
	t.Helper()
	e := enginetest.New(t, func(st *sqlite.Store, _ *ledger.Keyring) []*orchestrator.Protocol {
		cfg := stratmaster.Config{Registry: st, Now: func() time.Time { return auditClock }}
		if model != nil {
			cfg.ModelFor = func(context.Context) (llm.Caller, error) { return model, nil }
		}
		return []*orchestrator.Protocol{stratmaster.Protocol(cfg)}
	}, enginetest.Options{BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	return &bench{e}
}

func (b *bench) importDeal(t testing.TB, bundle *debate.DealBundle) { b.ImportDeal(t, bundle) }

// task runs one task to its end and returns the debate and its events.
func (b *bench) task(t testing.TB, dealID string, opts map[string]any) (debate.Debate, []debate.Event) {
	t.Helper()
	raw, err := json.Marshal(opts)
	require.NoError(t, err)
	return b.Run(t, dealID, stratmaster.Name, raw)
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

package stratmaster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
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
)

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
	cfg := stratmaster.Config{Registry: st}
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

// modelServer is an OpenAI-compatible chat completions server in the test
// process that answers like a model: it reads the schema the request asks
// for and the DATA block it carries, and composes its answer with the
// rules backend over that DATA. garbage makes it answer text that is not
// JSON.
func modelServer(t testing.TB, garbage bool) (*llm.Backend, *atomic.Int64) {
	t.Helper()
	schema := regexp.MustCompile(`one JSON object of the (\w+) schema`)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var name, data string
		for _, m := range req.Messages {
			if m.Role != "user" {
				continue
			}
			if s := schema.FindStringSubmatch(m.Content); s != nil && name == "" {
				name = s[1]
			}
			if _, rest, ok := strings.Cut(m.Content, "<<<DATA>>>\n```json\n"); ok && data == "" {
				data, _, _ = strings.Cut(rest, "\n```\n<<<END DATA>>>")
			}
		}
		content := "I would rather not answer in JSON."
		if !garbage {
			out, err := stratmaster.Rules(name, json.RawMessage(data))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			content = string(out)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1, "model": "m",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
		})
	}))
	t.Cleanup(srv.Close)
	b, err := llm.NewBackend(llm.Config{BaseURL: srv.URL + "/v1", Model: "test-model", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return b, &calls
}

package legal

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
)

// caseID is the deal the test debates are filed under.
const caseID = "case-1"

// bench is an embedded store with a tenant and an engine running the
// legal protocol over cfg.
type bench struct {
	st     *sqlite.Store
	ctx    context.Context
	tenant string
	run    *runner.Runner
	keys   *ledger.Keyring
}

func setup(t testing.TB, cfg Config) *bench {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx, tenant := storetest.NewTenant(t, st)
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("legal-test-signing-secret-32-byte!!")}, "v1")
	require.NoError(t, err)
	reg, err := orchestrator.NewRegistry(Protocol(cfg))
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{Store: st, Engine: eng, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	// The store keys debates by deal: the case needs a deal row.
	_, err = st.DealImport(ctx, storetest.SampleBundle(caseID), caseID+"-hash", time.Now())
	require.NoError(t, err)
	return &bench{st: st, ctx: ctx, tenant: tenant, run: r, keys: keys}
}

// fixture reads a testdata case as options, with maxRounds set.
func fixture(t testing.TB, name string, maxRounds int) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	require.NoError(t, err)
	var o map[string]any
	require.NoError(t, json.Unmarshal(data, &o))
	o["max_rounds"] = maxRounds
	out, err := json.Marshal(o)
	require.NoError(t, err)
	return out
}

// result is a finished debate: its row, events and deliverables.
type result struct {
	d      debate.Debate
	events []debate.Event
	del    Deliverables
}

func (r *result) artifacts() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, e := range r.events {
		if e.Type != EventArtifact {
			continue
		}
		var a struct {
			Name    string          `json:"name"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(e.Payload, &a) == nil {
			out[a.Name] = a.Content
		}
	}
	return out
}

func (r *result) count(typ string) int {
	n := 0
	for _, e := range r.events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func (r *result) decisions(t *testing.T) []Decision {
	t.Helper()
	var out []Decision
	for _, e := range r.events {
		if e.Type == EventDecision {
			var d Decision
			require.NoError(t, json.Unmarshal(e.Payload, &d))
			out = append(out, d)
		}
	}
	return out
}

// debate runs one debate with options to its end.
func (b *bench) debate(t testing.TB, opts json.RawMessage) *result {
	t.Helper()
	p := Protocol(Config{})
	canon, err := p.ValidateOptions(opts)
	require.NoError(t, err)
	id := uuid.NewString()
	_, _, err = b.st.DebateCreate(b.ctx, debate.Debate{ID: id, TenantID: b.tenant, DealID: caseID, Protocol: Name,
		Options: canon, Status: debate.DebateQueued, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	require.NoError(t, err)
	require.NoError(t, b.run.Run(context.Background(), b.tenant, id))
	d, err := b.st.DebateGet(b.ctx, id)
	require.NoError(t, err)
	evs, err := b.st.EventList(b.ctx, id, 0, 5000)
	require.NoError(t, err)
	res := &result{d: d, events: evs}
	for _, e := range evs {
		if e.Type == EventDeliverables {
			require.NoError(t, json.Unmarshal(e.Payload, &res.del))
		}
	}
	return res
}

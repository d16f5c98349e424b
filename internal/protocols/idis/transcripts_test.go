package idis_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/roles/rules"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
)

// countingLedger counts the transcript reads that reach the store.
type countingLedger struct {
	*sqlite.Store
	reads atomic.Int64
}

func (c *countingLedger) EventPayloads(ctx context.Context, debateID string, afterSeq int64, eventType string, limit int) ([]debate.Event, error) {
	c.reads.Add(1)
	return c.Store.EventPayloads(ctx, debateID, afterSeq, eventType, limit)
}

// runIDIS runs one debate on st with a fresh engine; feed wires the
// transcript cache to the runner as the service does.
func runIDIS(t *testing.T, st *sqlite.Store, ctx context.Context, tenant string, feed bool, cache *idis.Transcripts) (*countingLedger, []debate.Event) {
	t.Helper()
	led := &countingLedger{Store: st}
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("idis-test-signing-secret-32-bytes!!")}, "v1")
	require.NoError(t, err)
	reg, err := orchestrator.NewRegistry(idis.Protocol(idis.Config{Registry: st, Ledger: led, Roles: rules.New(), Transcripts: cache}))
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)
	cfg := runner.Config{Store: st, Engine: eng, Logger: slog.New(slog.DiscardHandler)}
	if feed {
		cfg.Publisher = cache
	}
	r, err := runner.New(cfg)
	require.NoError(t, err)
	id := uuid.NewString()
	_, _, err = st.DebateCreate(ctx, debate.Debate{ID: id, TenantID: tenant, DealID: "deal-feed", Protocol: idis.Name,
		Options: json.RawMessage(`{"max_rounds":3}`), Status: debate.DebateQueued, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	require.NoError(t, err)
	require.NoError(t, r.Run(context.Background(), tenant, id))
	evs, err := st.EventList(ctx, id, 0, 5000)
	require.NoError(t, err)
	return led, evs
}

// outputs returns the agent outputs of a ledger, without their times.
func outputs(t *testing.T, evs []debate.Event) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		if e.Type == idis.EventAgentOutput {
			out = append(out, e.Actor+" "+string(e.Payload))
		}
	}
	return out
}

// TestTranscriptCacheFedByTheRunner: fed the events the runner commits, the
// transcript cache lets turns read nothing from the store after the first
// step, and the debate says exactly what it says when every turn reads its
// transcript from the store.
func TestTranscriptCacheFedByTheRunner(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx, tenant := storetest.NewTenant(t, st)
	_, err = st.DealImport(ctx, storetest.SampleBundle("deal-feed"), "h", time.Now())
	require.NoError(t, err)

	unfed, reference := runIDIS(t, st, ctx, tenant, false, nil)
	fed, evs := runIDIS(t, st, ctx, tenant, true, idis.NewTranscripts())
	require.NotEmpty(t, outputs(t, reference))
	require.Equal(t, outputs(t, reference), outputs(t, evs), "the same debate either way")
	require.Greater(t, unfed.reads.Load(), int64(3), "without the feed every turn reads")
	require.LessOrEqual(t, fed.reads.Load(), int64(1), "with it, at most the first turn reads (nothing is committed yet)")

}

package sqlite

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

// CountDebateRows gives the conformance suite a direct count of a tenant's
// rows in the debate tables.
func (c counted) CountDebateRows(ctx context.Context, tenantID string) (map[string]int, error) {
	out := map[string]int{}
	for _, table := range []string{"debates", "debate_events", "debate_checkpoints", "human_gates"} {
		var n int
		if err := c.read.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE tenant_id = ?`, tenantID).Scan(&n); err != nil {
			return nil, err
		}
		out[table] = n
	}
	return out, nil
}

// TestDebateHistoryAppendOnly: the triggers refuse every UPDATE and DELETE
// of the ledger and the checkpoints, also on the writer connection.
func TestDebateHistoryAppendOnly(t *testing.T) {
	t.Parallel()
	s := openFile(t)
	ctx, tenant, d := storetest.NewDebate(t, s)
	l := storetest.NewLedger(tenant, d, time.Date(2026, 2, 3, 0, 0, 0, 0, time.UTC))
	c := l.Next(2)
	require.NoError(t, s.StepCommit(ctx, c))

	bg := context.Background()
	for _, table := range []string{"debate_events", "debate_checkpoints"} {
		_, err := s.write.ExecContext(bg, `UPDATE `+table+` SET seq = seq WHERE tenant_id = ?`, tenant)
		require.ErrorContains(t, err, table+" is append-only: UPDATE refused")
		_, err = s.write.ExecContext(bg, `DELETE FROM `+table+` WHERE tenant_id = ?`, tenant)
		require.ErrorContains(t, err, table+" is append-only: DELETE refused")
	}
	events, err := s.EventList(ctx, d.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, events, 2)
	require.Equal(t, string(c.Events[1].Payload), string(events[1].Payload))
}

// hookCalls records the calls of an OnRunnable or OnEvents function.
type hookCalls struct {
	mu    sync.Mutex
	calls []string
}

func (h *hookCalls) fn(tenantID, debateID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, tenantID+"/"+debateID)
}

func (h *hookCalls) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.calls
	h.calls = nil
	return out
}

// TestDebateHooks: a step with events wakes its watchers, after its
// commit and only then; nothing else calls the hook. (Scheduling a
// runnable debate is the application's: see runner's
// TestLocalSchedulesRunnableDebates.)
func TestDebateHooks(t *testing.T) {
	t.Parallel()
	s := openFile(t)
	var events hookCalls
	s.SetOnEvents(events.fn)

	ctx, tenant, d := storetest.NewDebate(t, s)
	me := tenant + "/" + d.ID
	require.Empty(t, events.take(), "creating a debate wakes no watcher")

	l := storetest.NewLedger(tenant, d, d.CreatedAt)
	c := l.Next(2)
	require.NoError(t, s.StepCommit(ctx, c))
	l.Commit(c)
	require.Equal(t, []string{me}, events.take())

	c = l.Next(0)
	c.Checkpoint, c.Enqueue, c.Status = nil, true, debate.DebateQueued
	require.NoError(t, s.StepCommit(ctx, c))
	l.Commit(c)
	require.Empty(t, events.take(), "a step without events wakes no watcher")

	stale := l.Next(1)
	stale.ExpectSeq, stale.Enqueue = 0, true
	stale.Events = nil
	stale.Checkpoint = nil
	require.ErrorIs(t, s.StepCommit(ctx, stale), debate.ErrConflict)
	require.Empty(t, events.take(), "a failed commit calls nothing")

	s.SetOnEvents(nil)
	c = l.Next(1)
	c.Enqueue = true
	require.NoError(t, s.StepCommit(ctx, c))
	require.Empty(t, events.take())
}

// TestRunnableDebates: queued and running debates of every tenant, oldest
// first; not the others.
func TestRunnableDebates(t *testing.T) {
	t.Parallel()
	s := openFile(t)
	runnable, err := s.RunnableDebates(context.Background())
	require.NoError(t, err)
	require.Empty(t, runnable)

	var want []RunnableDebate
	statuses := []debate.DebateStatus{debate.DebateQueued, debate.DebateRunning, debate.DebateAwaitingReview, debate.DebateCompleted, debate.DebateRunning}
	base := time.Date(2026, 2, 3, 0, 0, 0, 0, time.UTC)
	for i, status := range statuses {
		ctx, tenant := storetest.NewTenant(t, s)
		b := storetest.SampleBundle(fmt.Sprintf("deal-%d", i))
		h, err := b.ContentHash()
		require.NoError(t, err)
		_, err = s.DealImport(ctx, b, h, base)
		require.NoError(t, err)
		// Created newest first: the list is oldest first.
		d, _, err := s.DebateCreate(ctx, storetest.SampleDebate(b.Deal.ID, base.Add(-time.Duration(i)*time.Hour)))
		require.NoError(t, err)
		if status != debate.DebateQueued {
			c := storetest.NewLedger(tenant, d, base).Next(1)
			c.Status = status
			require.NoError(t, s.StepCommit(ctx, c))
		}
		if status.Runnable() {
			want = append([]RunnableDebate{{TenantID: tenant, DebateID: d.ID}}, want...)
		}
	}
	runnable, err = s.RunnableDebates(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, runnable)
}

// TestDebateIndexedLookups: the lists and the fence read use indexes and
// need no sort.
func TestDebateIndexedLookups(t *testing.T) {
	t.Parallel()
	s := openFile(t)
	ctx := context.Background()
	plan := func(q string, args ...any) string {
		rows, err := s.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		require.NoError(t, err)
		defer rows.Close()
		var out string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
			out += detail + "\n"
		}
		require.NoError(t, rows.Err())
		return out
	}
	for q, index := range map[string]string{
		`SELECT debate_id FROM debates WHERE tenant_id = ? AND created_at <= ? AND (created_at < ? OR debate_id > ?)
			ORDER BY created_at DESC, debate_id LIMIT 51`: "debates_list_idx",
		`SELECT debate_id FROM debates WHERE tenant_id = ? AND status = ? ORDER BY created_at DESC, debate_id LIMIT 51`:  "debates_status_idx",
		`SELECT debate_id FROM debates WHERE tenant_id = ? AND deal_id = ? ORDER BY created_at DESC, debate_id LIMIT 51`: "debates_deal_idx",
		`SELECT seq FROM debate_events WHERE tenant_id = ? AND debate_id = ? AND seq > ? ORDER BY seq LIMIT 500`:         "sqlite_autoindex_debate_events_1",
		`SELECT step FROM debate_checkpoints WHERE tenant_id = ? AND debate_id = ? ORDER BY step DESC LIMIT 1`:           "sqlite_autoindex_debate_checkpoints_1",
		`SELECT gate_id FROM human_gates WHERE tenant_id = ? AND debate_id = ? ORDER BY created_at, gate_id`:             "human_gates_list_idx",
	} {
		var args []any
		for range countPlaceholders(q) {
			args = append(args, "x")
		}
		p := plan(q, args...)
		require.Contains(t, p, index, q)
		require.NotContains(t, p, "TEMP B-TREE", q)
	}
}

func countPlaceholders(q string) int {
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
		}
	}
	return n
}

func BenchmarkStepCommit(b *testing.B) {
	storetest.BenchStepCommit(b, openFile(b))
}

func BenchmarkStepCommitParallel(b *testing.B) {
	storetest.BenchStepCommitParallel(b, openFile(b), 16)
}

// The same with PRAGMA synchronous=NORMAL on the writer connection: in WAL
// mode a commit then no longer waits for an fsync (the WAL is synced at
// checkpoints), so a power loss may lose the last commits but never
// corrupts the file. This measures the store without the disk's sync
// latency; the store opens files with SQLite's default, FULL.
func BenchmarkStepCommitSyncNormal(b *testing.B) {
	storetest.BenchStepCommit(b, openSyncNormal(b))
}

func BenchmarkStepCommitParallelSyncNormal(b *testing.B) {
	storetest.BenchStepCommitParallel(b, openSyncNormal(b), 16)
}

func openSyncNormal(b *testing.B) *Store {
	s := openFile(b)
	// The writer is one connection, never recycled: the pragma sticks.
	_, err := s.write.ExecContext(context.Background(), `PRAGMA synchronous = NORMAL`)
	require.NoError(b, err)
	return s
}

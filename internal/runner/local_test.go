package runner_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
)

// TestLocalSchedulesRunnableDebates: through the in-process scheduler, a
// created debate and a step that asks to be enqueued make the debate
// runnable, each after its commit and only then; an idempotent replay and
// a fenced step schedule nothing. Before Run, what is scheduled waits in
// the queue (QueueDepth counts it).
func TestLocalSchedulesRunnableDebates(t *testing.T) {
	t.Parallel()
	sq, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(sq.Close)
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	local := runner.NewLocal(sq, nil, runner.LocalConfig{})
	s := runner.Scheduled(sq, local)
	pending := func() int {
		n, err := local.QueueDepth(context.Background())
		require.NoError(t, err)
		return n
	}

	ctx, tenant := storetest.NewTenant(t, sq)
	b := storetest.SampleBundle("deal-local")
	h, err := b.ContentHash()
	require.NoError(t, err)
	_, err = sq.DealImport(ctx, b, h, at)
	require.NoError(t, err)
	d, created, err := s.DebateCreate(ctx, storetest.SampleDebate(b.Deal.ID, at))
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, 1, pending(), "a created debate is runnable")

	again := storetest.SampleDebate(d.DealID, d.CreatedAt)
	again.IdempotencyKey = "key-1"
	_, created, err = s.DebateCreate(ctx, again)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, 2, pending())
	_, created, err = s.DebateCreate(ctx, again)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, 2, pending(), "an idempotent replay schedules nothing")

	// A debate already waiting is not queued twice: follow another one.
	other := storetest.SampleDebate(d.DealID, d.CreatedAt)
	other, _, err = sq.DebateCreate(ctx, other)
	require.NoError(t, err)
	l := storetest.NewLedger(tenant, other, other.CreatedAt)
	c := l.Next(2)
	require.NoError(t, s.StepCommit(ctx, c))
	l.Commit(c)
	require.Equal(t, 2, pending(), "a plain step schedules nothing")

	stale := l.Next(1)
	stale.ExpectSeq, stale.Enqueue = 0, true
	stale.Events, stale.Checkpoint = nil, nil
	require.ErrorIs(t, s.StepCommit(ctx, stale), debate.ErrConflict)
	require.Equal(t, 2, pending(), "a failed commit schedules nothing")

	c = l.Next(0)
	c.Checkpoint, c.Enqueue, c.Status = nil, true, debate.DebateQueued
	require.NoError(t, s.StepCommit(ctx, c))
	require.Equal(t, 3, pending(), "a step that asks to be enqueued makes the debate runnable")
}

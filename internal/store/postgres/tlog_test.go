package postgres

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/tlog"
	"github.com/debated/debated/migrations"
)

// TestLogMigrationLogsExistingHeads: debates committed before migration
// 0010 have their current heads as the log's first leaves.
func TestLogMigrationLogsExistingHeads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	before := fstest.MapFS{}
	entries, err := fs.ReadDir(migrations.Postgres, ".")
	require.NoError(t, err)
	for _, e := range entries {
		// The schema before the log, with the one later column this
		// binary's debates need (0014 touches nothing the log does).
		if e.Name() < "0010" || strings.HasPrefix(e.Name(), "0014_") {
			data, err := fs.ReadFile(migrations.Postgres, e.Name())
			require.NoError(t, err)
			before[e.Name()] = &fstest.MapFile{Data: data}
		}
	}
	require.NoError(t, migrate(ctx, dbURL, before))
	s, err := New(ctx, Config{URL: dbURL})
	require.NoError(t, err)
	defer s.Close()
	dctx, tenant, d := storetest.NewDebate(t, s)
	l := storetest.NewLedger(tenant, d, stepAt)
	c := l.Next(3)
	// This binary queues a leaf with every step, which the old schema has
	// no table for; the head an older binary committed is set as the owner.
	err = s.StepCommit(dctx, c)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "tlog_queue"), err.Error())
	conn, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `RESET ROLE`)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `UPDATE debates SET last_seq = 3, head_hash = $1 WHERE debate_id = $2`, c.Events[2].Hash, d.ID)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `SET ROLE `+AppRole)
	require.NoError(t, err)
	conn.Release()

	require.NoError(t, Migrate(ctx, dbURL))
	head, err := s.LogIntegrate(dctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1), head.Size)
	leaves, err := s.LogLeaves(dctx, tlog.KindStep, d.ID)
	require.NoError(t, err)
	require.Equal(t, []tlog.IndexedLeaf{{Index: 0, Leaf: tlog.Leaf{Kind: tlog.KindStep, Subject: d.ID, Seq: 3, Hash: c.Events[2].Hash}}}, leaves)
}

// TestQueueLogLeafInTransaction: a leaf queued inside any transaction (the
// deal audit log's) is logged when it commits, and not when it rolls back.
func TestQueueLogLeafInTransaction(t *testing.T) {
	t.Parallel()
	setup(t)
	ctx := context.Background()
	s, err := New(ctx, Config{URL: testDB.url})
	require.NoError(t, err)
	defer s.Close()
	tctx, tenant := storetest.NewTenant(t, s)
	hash := strings.Repeat("ab", 32)
	for _, commit := range []bool{false, true} {
		tx, err := s.pool.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, setTenantSQL, tenant)
		require.NoError(t, err)
		require.NoError(t, QueueLogLeaf(ctx, tx, tenant, tlog.Leaf{Kind: tlog.KindDeal, Subject: "deal-1", Seq: 1, Hash: hash}))
		require.ErrorIs(t, QueueLogLeaf(ctx, tx, tenant, tlog.Leaf{Kind: tlog.KindDeal, Subject: "deal-1", Seq: 0, Hash: hash}), tlog.ErrInvalidLeaf)
		if commit {
			require.NoError(t, tx.Commit(ctx))
		} else {
			require.NoError(t, tx.Rollback(ctx))
		}
	}
	head, err := s.LogIntegrate(tctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1), head.Size)
	leaves, err := s.LogLeaves(tctx, tlog.KindDeal, "deal-1")
	require.NoError(t, err)
	require.Equal(t, []tlog.IndexedLeaf{{Index: 0, Leaf: tlog.Leaf{Kind: tlog.KindDeal, Subject: "deal-1", Seq: 1, Hash: hash}}}, leaves)
}

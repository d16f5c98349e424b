package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/tlog"
)

// TestQueueLogLeafInTransaction: a leaf queued inside any write
// transaction (the deal audit log's) is logged when it commits, and not
// when it rolls back.
func TestQueueLogLeafInTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openFile(t)
	tctx, tenant := storetest.NewTenant(t, s)
	hash := strings.Repeat("ab", 32)
	for _, commit := range []bool{false, true} {
		tx, err := s.write.BeginTx(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, QueueLogLeaf(ctx, tx, tenant, tlog.Leaf{Kind: tlog.KindDeal, Subject: "deal-1", Seq: 1, Hash: hash}))
		require.ErrorIs(t, QueueLogLeaf(ctx, tx, tenant, tlog.Leaf{Kind: tlog.KindDeal, Subject: "deal-1", Seq: 0, Hash: hash}), tlog.ErrInvalidLeaf)
		if commit {
			require.NoError(t, tx.Commit())
		} else {
			require.NoError(t, tx.Rollback())
		}
	}
	head, err := s.LogIntegrate(tctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1), head.Size)
	leaves, err := s.LogLeaves(tctx, tlog.KindDeal, "deal-1")
	require.NoError(t, err)
	require.Equal(t, []tlog.IndexedLeaf{{Index: 0, Leaf: tlog.Leaf{Kind: tlog.KindDeal, Subject: "deal-1", Seq: 1, Hash: hash}}}, leaves)
}

package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tlog"
)

// LogStore is what a store offers of the tenants' transparency logs; every
// store of the suite implements it.
type LogStore interface {
	LogIntegrate(ctx context.Context) (tlog.Head, error)
	LogHead(ctx context.Context) (tlog.Head, error)
	LogHeadAt(ctx context.Context, size uint64) (tlog.Head, error)
	LogNodes(ctx context.Context, ids []tlog.NodeID) ([][]byte, error)
	LogLeaves(ctx context.Context, kind, subject string) ([]tlog.IndexedLeaf, error)
}

var tlogCases = []struct {
	name string
	fn   func(t *testing.T, s Store)
}{
	{"LogLeafPerStep", testLogLeafPerStep},
	{"LogConcurrentDebates", testLogConcurrentDebates},
	{"LogTenantsIsolated", testLogTenantsIsolated},
}

func logStore(t *testing.T, s Store) LogStore {
	t.Helper()
	ls, ok := s.(LogStore)
	require.True(t, ok, "%T does not keep transparency logs", s)
	return ls
}

// newDebates creates n debates of one new tenant.
func newDebates(t *testing.T, s Store, n int) (context.Context, string, []debate.Debate) {
	t.Helper()
	ctx, tenant := NewTenant(t, s)
	b := SampleBundle("deal-" + uuid.NewString())
	h, err := b.ContentHash()
	require.NoError(t, err)
	_, err = s.DealImport(ctx, b, h, importedAt)
	require.NoError(t, err)
	out := make([]debate.Debate, n)
	for i := range out {
		d, _, err := s.DebateCreate(ctx, SampleDebate(b.Deal.ID, debateCreatedAt))
		require.NoError(t, err)
		out[i] = d
	}
	return ctx, tenant, out
}

// requireLogProves checks the whole log against an independent rebuild
// from its leaves: dense indexes, the head's root, every leaf's inclusion
// proof and the consistency of every stored head with the latest.
func requireLogProves(t *testing.T, ctx context.Context, ls LogStore, head tlog.Head, leaves []tlog.IndexedLeaf) {
	t.Helper()
	byIndex := make([][]byte, head.Size)
	for _, il := range leaves {
		require.Less(t, il.Index, head.Size)
		require.Nil(t, byIndex[il.Index], "index %d given twice", il.Index)
		h, err := il.Leaf.LeafHash()
		require.NoError(t, err)
		byIndex[il.Index] = h
	}
	for i, h := range byIndex {
		require.NotNil(t, h, "index %d has no leaf", i)
	}
	_, rebuilt, err := tlog.Append(0, nil, byIndex)
	require.NoError(t, err)
	require.Equal(t, head, rebuilt, "the stored head is the root of the leaves")
	for _, il := range leaves {
		plan, err := tlog.InclusionPlan(il.Index, head.Size)
		require.NoError(t, err)
		hashes, err := ls.LogNodes(ctx, plan.IDs())
		require.NoError(t, err)
		p, err := plan.Proof(hashes)
		require.NoError(t, err)
		require.NoError(t, tlog.VerifyInclusion(il.Index, head.Size, byIndex[il.Index], p, head.Root))
	}
	for size := uint64(1); size <= head.Size; size++ {
		old, err := ls.LogHeadAt(ctx, size)
		if err != nil {
			require.ErrorIs(t, err, debate.ErrNotFound) // integration may skip sizes
			continue
		}
		plan, err := tlog.ConsistencyPlan(size, head.Size)
		require.NoError(t, err)
		hashes, err := ls.LogNodes(ctx, plan.IDs())
		require.NoError(t, err)
		p, err := plan.Proof(hashes)
		require.NoError(t, err)
		require.NoError(t, tlog.VerifyConsistency(size, head.Size, p, old.Root, head.Root))
	}
}

func testLogLeafPerStep(t *testing.T, s Store) {
	ls := logStore(t, s)
	ctx, tenant, d := NewDebate(t, s)
	head, err := ls.LogIntegrate(ctx)
	require.NoError(t, err)
	require.Equal(t, tlog.Head{Root: tlog.EmptyRoot()}, head, "a new tenant's log is empty")

	l := NewLedger(tenant, d, debateCreatedAt)
	loser := *l
	c1 := commitStep(t, ctx, s, l, 3, nil)
	commitStep(t, ctx, s, l, 0, nil) // no event: no new head, no leaf
	// A step that lost its fence queues nothing.
	require.ErrorIs(t, s.StepCommit(ctx, loser.Next(1)), debate.ErrConflict)
	c3 := commitStep(t, ctx, s, l, 2, nil)

	// Nothing is a leaf before integration; LogHead does not integrate.
	head, err = ls.LogHead(ctx)
	require.NoError(t, err)
	require.Zero(t, head.Size)
	head, err = ls.LogIntegrate(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(2), head.Size)

	leaves, err := ls.LogLeaves(ctx, tlog.KindStep, d.ID)
	require.NoError(t, err)
	require.Equal(t, []tlog.IndexedLeaf{
		{Index: 0, Leaf: tlog.Leaf{Kind: tlog.KindStep, Subject: d.ID, Seq: 3, Hash: c1.Events[2].Hash}},
		{Index: 1, Leaf: tlog.Leaf{Kind: tlog.KindStep, Subject: d.ID, Seq: 5, Hash: c3.Events[1].Hash}},
	}, leaves)
	requireLogProves(t, ctx, ls, head, leaves)

	// Integrating again changes nothing; the next step extends the log.
	again, err := ls.LogIntegrate(ctx)
	require.NoError(t, err)
	require.Equal(t, head, again)
	commitStep(t, ctx, s, l, 1, nil)
	head2, err := ls.LogIntegrate(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(3), head2.Size)
	old, err := ls.LogHeadAt(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, head, old)
	leaves, err = ls.LogLeaves(ctx, tlog.KindStep, d.ID)
	require.NoError(t, err)
	requireLogProves(t, ctx, ls, head2, leaves)

	_, err = ls.LogHeadAt(ctx, 99)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = ls.LogNodes(ctx, []tlog.NodeID{{Level: 0, Index: 99}})
	require.ErrorIs(t, err, debate.ErrDataLoss)
	_, err = ls.LogIntegrate(context.Background())
	require.ErrorIs(t, err, debate.ErrNoTenant)
}

// testLogConcurrentDebates commits steps of many debates of one tenant at
// once (the PostgreSQL store groups them into shared transactions) while
// integrating: every head is logged once, indexes are dense.
func testLogConcurrentDebates(t *testing.T, s Store) {
	ls := logStore(t, s)
	const debates, steps = 12, 4
	ctx, tenant, ds := newDebates(t, s, debates)
	var wg sync.WaitGroup
	errs := make(chan error, debates*steps+steps)
	ledgers := make([]*Ledger, debates)
	for i, d := range ds {
		ledgers[i] = NewLedger(tenant, d, debateCreatedAt)
		wg.Go(func() {
			for range steps {
				c := ledgers[i].Next(2)
				if err := s.StepCommit(ctx, c); err != nil {
					errs <- err
					return
				}
				ledgers[i].Commit(c)
			}
		})
	}
	wg.Go(func() {
		for range steps {
			if _, err := ls.LogIntegrate(ctx); err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	head, err := ls.LogIntegrate(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(debates*steps), head.Size)
	var all []tlog.IndexedLeaf
	for i, d := range ds {
		leaves, err := ls.LogLeaves(ctx, tlog.KindStep, d.ID)
		require.NoError(t, err)
		require.Len(t, leaves, steps)
		for j, il := range leaves {
			require.Equal(t, int64(2*(j+1)), il.Leaf.Seq)
		}
		require.Equal(t, ledgers[i].Hash, leaves[steps-1].Leaf.Hash)
		all = append(all, leaves...)
	}
	requireLogProves(t, ctx, ls, head, all)
}

func testLogTenantsIsolated(t *testing.T, s Store) {
	ls := logStore(t, s)
	ctxA, tenantA, d := NewDebate(t, s)
	commitStep(t, ctxA, s, NewLedger(tenantA, d, debateCreatedAt), 2, nil)
	headA, err := ls.LogIntegrate(ctxA)
	require.NoError(t, err)
	require.Equal(t, uint64(1), headA.Size)

	ctxB, _ := NewTenant(t, s)
	headB, err := ls.LogIntegrate(ctxB)
	require.NoError(t, err)
	require.Zero(t, headB.Size, "another tenant's leaves are not in this tenant's log")
	leaves, err := ls.LogLeaves(ctxB, tlog.KindStep, d.ID)
	require.NoError(t, err)
	require.Empty(t, leaves)
	_, err = ls.LogNodes(ctxB, []tlog.NodeID{{Level: 0, Index: 0}})
	require.ErrorIs(t, err, debate.ErrDataLoss)
	_, err = ls.LogHeadAt(ctxB, 1)
	require.ErrorIs(t, err, debate.ErrNotFound)
}

package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/tlog"
)

// groupFixture is a store with one group slot, a tenant and debates of one
// deal, and a connection of the owner to hold row locks with and to look
// at the rows' transactions.
type groupFixture struct {
	s      *Store
	ctx    context.Context
	tenant string
	owner  *pgx.Conn
}

func newGroupFixture(t *testing.T) *groupFixture {
	t.Helper()
	setup(t)
	s, err := New(context.Background(), Config{URL: testDB.url, CommitGroups: 1})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	owner, err := pgx.Connect(context.Background(), testDB.url)
	require.NoError(t, err)
	t.Cleanup(func() { owner.Close(context.Background()) })
	return &groupFixture{s: s, owner: owner}
}

// debates creates n debates in the fixture's tenant (made on first use)
// and returns their ledgers.
func (f *groupFixture) debates(t *testing.T, n int) []*storetest.Ledger {
	t.Helper()
	var ls []*storetest.Ledger
	for range n {
		if f.ctx == nil {
			ctx, tenant, d := storetest.NewDebate(t, f.s)
			f.ctx, f.tenant = ctx, tenant
			ls = append(ls, storetest.NewLedger(tenant, d, stepAt))
			continue
		}
		first, err := f.s.DebateGet(f.ctx, ls[0].DebateID)
		require.NoError(t, err)
		d, created, err := f.s.DebateCreate(f.ctx, storetest.SampleDebate(first.DealID, stepAt))
		require.NoError(t, err)
		require.True(t, created)
		ls = append(ls, storetest.NewLedger(f.tenant, d, stepAt))
	}
	return ls
}

// block locks the debate's row in a transaction of the owner until the
// returned function commits it.
func (f *groupFixture) block(t *testing.T, debateID string) func() {
	t.Helper()
	tx, err := f.owner.Begin(context.Background())
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), `SELECT 1 FROM debates WHERE debate_id = $1 FOR UPDATE`, debateID)
	require.NoError(t, err)
	return func() { require.NoError(t, tx.Commit(context.Background())) }
}

// commitAsync commits c in the background; its result arrives on the
// channel.
func (f *groupFixture) commitAsync(c debate.StepCommit) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f.s.StepCommit(f.ctx, c) }()
	return done
}

// waitQueued waits until n steps wait in the committer's queue behind the
// group in flight.
func (f *groupFixture) waitQueued(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		f.s.group.mu.Lock()
		defer f.s.group.mu.Unlock()
		queued := 0
		for _, q := range f.s.group.queues {
			queued += len(q)
		}
		return queued == n && f.s.group.inflight == 1
	}, 10*time.Second, time.Millisecond)
}

// txOf is the transaction that wrote each debate's events (xmin is the
// inserting transaction's id): one transaction per debate, or none.
func (f *groupFixture) txOf(t *testing.T, debateIDs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range debateIDs {
		var xmins []string
		rs, err := f.owner.Query(context.Background(), `SELECT DISTINCT xmin::text FROM debate_events WHERE debate_id = $1`, id)
		require.NoError(t, err)
		xmins, err = pgx.CollectRows(rs, pgx.RowTo[string])
		require.NoError(t, err)
		require.LessOrEqual(t, len(xmins), 1, "debate %s's step was written by one transaction", id)
		if len(xmins) == 1 {
			out[id] = xmins[0]
		}
	}
	return out
}

// TestStepCommitGroup: steps of several debates that wait while another
// commit is in flight share the next transaction, each still fenced by its
// own head: a stale step in the group is refused with ErrConflict and
// writes nothing while the others commit.
func TestStepCommitGroup(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	ls := f.debates(t, 4)
	a, b, c, d := ls[0], ls[1], ls[2], ls[3]

	release := f.block(t, a.DebateID)
	stepA := a.Next(2)
	doneA := f.commitAsync(stepA) // takes the only slot and waits for the row lock
	f.waitQueued(t, 0)
	stepB, stepD := b.Next(3), d.Next(1)
	// Rounds completed in a group count as alone: b completes two, d one.
	stepB.Events[0].Type, stepB.Events[2].Type = debate.EventRoundCompleted, debate.EventRoundCompleted
	stepD.Events[0].Type = debate.EventRoundCompleted
	staleC := *c
	staleC.Seq, staleC.Hash = 7, "0000000000000000000000000000000000000000000000000000000000000000"
	stepC := staleC.Next(2)
	doneB, doneC, doneD := f.commitAsync(stepB), f.commitAsync(stepC), f.commitAsync(stepD)
	f.waitQueued(t, 3)
	release()

	require.NoError(t, <-doneA)
	require.NoError(t, <-doneB)
	require.ErrorIs(t, <-doneC, debate.ErrConflict)
	require.NoError(t, <-doneD)

	tx := f.txOf(t, a.DebateID, b.DebateID, c.DebateID, d.DebateID)
	require.Equal(t, tx[b.DebateID], tx[d.DebateID], "the queued steps shared one transaction")
	require.NotEqual(t, tx[a.DebateID], tx[b.DebateID])
	require.NotContains(t, tx, c.DebateID, "the stale step wrote no event")

	for _, step := range []struct {
		l *storetest.Ledger
		c debate.StepCommit
	}{{a, stepA}, {b, stepB}, {d, stepD}} {
		got, err := f.s.EventList(f.ctx, step.l.DebateID, 0, 100)
		require.NoError(t, err)
		require.Len(t, got, len(step.c.Events))
		for i, e := range got {
			require.Equal(t, step.c.Events[i].Hash, e.Hash)
			require.JSONEq(t, string(step.c.Events[i].Payload), string(e.Payload))
		}
		dd, err := f.s.DebateGet(f.ctx, step.l.DebateID)
		require.NoError(t, err)
		require.Equal(t, step.c.Events[len(step.c.Events)-1].Seq, dd.LastSeq)
		require.Equal(t, step.c.Events[len(step.c.Events)-1].Hash, dd.HeadHash)
		require.Equal(t, step.c.NextNode, dd.NextNode)
		require.Equal(t, step.c.RoundsCompleted(), dd.RoundsCompleted)
		cp, err := f.s.CheckpointLatest(f.ctx, step.l.DebateID)
		require.NoError(t, err)
		require.Equal(t, step.c.Checkpoint.Step, cp.Step)
		require.JSONEq(t, string(step.c.Checkpoint.State), string(cp.State))
		step.l.Commit(step.c)
	}
	dc, err := f.s.DebateGet(f.ctx, c.DebateID)
	require.NoError(t, err)
	require.Zero(t, dc.LastSeq)
	_, err = f.s.CheckpointLatest(f.ctx, c.DebateID)
	require.ErrorIs(t, err, debate.ErrNotFound)

	// Each moved head queued its log leaf in its step's transaction (the
	// grouped steps' one statement included); the stale step queued none.
	for _, id := range []string{a.DebateID, b.DebateID, d.DebateID} {
		var xmin string
		require.NoError(t, f.owner.QueryRow(context.Background(),
			`SELECT xmin::text FROM tlog_queue WHERE subject = $1`, id).Scan(&xmin), id)
		require.Equal(t, tx[id], xmin, "debate %s's leaf was queued by its step's transaction", id)
	}
	var stale int
	require.NoError(t, f.owner.QueryRow(context.Background(), `SELECT count(*) FROM tlog_queue WHERE subject = $1`, c.DebateID).Scan(&stale))
	require.Zero(t, stale)
	head, err := f.s.LogIntegrate(f.ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(3), head.Size)
	for _, l := range []*storetest.Ledger{a, b, d} {
		leaves, err := f.s.LogLeaves(f.ctx, tlog.KindStep, l.DebateID)
		require.NoError(t, err)
		require.Len(t, leaves, 1)
		require.Equal(t, l.Hash, leaves[0].Leaf.Hash)
	}

	// The steps after a grouped step carry on from the head it wrote.
	require.NoError(t, f.s.StepCommit(f.ctx, b.Next(1)))
}

// TestStepCommitGroupFailure: when one step of a group fails the
// statement (its checkpoint's step exists), every step of the group is
// committed again on its own: the others commit and the bad one gets its
// own error, having written nothing.
func TestStepCommitGroupFailure(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	ls := f.debates(t, 3)
	a, b, e := ls[0], ls[1], ls[2]
	first := e.Next(1)
	require.NoError(t, f.s.StepCommit(f.ctx, first))
	e.Commit(first)

	release := f.block(t, a.DebateID)
	doneA := f.commitAsync(a.Next(1))
	f.waitQueued(t, 0)
	stepB := b.Next(2)
	bad := e.Next(2)
	bad.Checkpoint.Step = first.Checkpoint.Step // already stored
	doneB, doneBad := f.commitAsync(stepB), f.commitAsync(bad)
	f.waitQueued(t, 2)
	release()

	require.NoError(t, <-doneA)
	require.NoError(t, <-doneB)
	require.ErrorIs(t, <-doneBad, debate.ErrAlreadyExists)
	got, err := f.s.EventList(f.ctx, e.DebateID, 0, 100)
	require.NoError(t, err)
	require.Len(t, got, 1, "the failed step wrote no event")
	got, err = f.s.EventList(f.ctx, b.DebateID, 0, 100)
	require.NoError(t, err)
	require.Len(t, got, 2)
}

// TestStepCommitGroupsConcurrent: debates of several tenants stepping at
// once through the default store (grouped per tenant, since row-level
// security binds a transaction to one tenant) all end with complete,
// contiguous ledgers and their last checkpoints.
func TestStepCommitGroupsConcurrent(t *testing.T) {
	t.Parallel()
	stepConcurrently(t, setup(t))
}

// TestStepCommitGroupsTakeTurns: with one slot for the whole store,
// tenants take turns group by group, and every debate of every tenant
// finishes.
func TestStepCommitGroupsTakeTurns(t *testing.T) {
	t.Parallel()
	setup(t)
	s, err := New(context.Background(), Config{URL: testDB.url, CommitGroups: 1})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	stepConcurrently(t, s)
	g := s.GroupCommitStats()
	require.Equal(t, int64(3*6*8), g.Steps)
	require.Less(t, g.Transactions, g.Steps, "steps shared transactions")
}

// stepConcurrently runs 6 debates of each of 3 tenants, 8 steps each, all
// at once, and checks their ledgers.
func stepConcurrently(t *testing.T, s *Store) {
	t.Helper()
	const tenants, perTenant, steps = 3, 6, 8
	type run struct {
		ctx context.Context
		l   *storetest.Ledger
	}
	var runs []run
	for range tenants {
		ctx, tenant, d := storetest.NewDebate(t, s)
		runs = append(runs, run{ctx, storetest.NewLedger(tenant, d, stepAt)})
		for range perTenant - 1 {
			dd, _, err := s.DebateCreate(ctx, storetest.SampleDebate(d.DealID, stepAt))
			require.NoError(t, err)
			runs = append(runs, run{ctx, storetest.NewLedger(tenant, dd, stepAt)})
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(runs))
	for i, r := range runs {
		wg.Go(func() {
			for n := range steps {
				c := r.l.Next(1 + n%3)
				if err := s.StepCommit(r.ctx, c); err != nil {
					errs[i] = fmt.Errorf("step %d: %w", n+1, err)
					return
				}
				r.l.Commit(c)
			}
		})
	}
	wg.Wait()
	for i, r := range runs {
		require.NoError(t, errs[i])
		evs, err := s.EventList(r.ctx, r.l.DebateID, 0, 1000)
		require.NoError(t, err)
		require.Len(t, evs, int(r.l.Seq))
		for j, e := range evs {
			require.Equal(t, int64(j+1), e.Seq)
		}
		d, err := s.DebateGet(r.ctx, r.l.DebateID)
		require.NoError(t, err)
		require.Equal(t, r.l.Seq, d.LastSeq)
		require.Equal(t, r.l.Hash, d.HeadHash)
		cp, err := s.CheckpointLatest(r.ctx, r.l.DebateID)
		require.NoError(t, err)
		require.Equal(t, steps, cp.Step)
	}
}

// TestStepCommitGroupPlan: once the statistics know a tenant's debates,
// a group moves its debates' heads by primary-key lookups, not by a scan
// of every debate the tenant has (groupSettingsSQL).
func TestStepCommitGroupPlan(t *testing.T) {
	t.Parallel()
	url := newDatabase(t)
	require.NoError(t, Migrate(context.Background(), url))
	s, err := New(context.Background(), Config{URL: url})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	ctx, tenant, d := storetest.NewDebate(t, s)
	for range 400 {
		_, _, err := s.DebateCreate(ctx, storetest.SampleDebate(d.DealID, stepAt))
		require.NoError(t, err)
	}
	owner, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer owner.Close(context.Background())
	_, err = owner.Exec(context.Background(), `ANALYZE debates`)
	require.NoError(t, err)

	tx, err := s.pool.Begin(context.Background())
	require.NoError(t, err)
	defer tx.Rollback(context.Background()) //nolint:errcheck
	_, err = tx.Exec(context.Background(), groupSettingsSQL, tenant)
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), `SET LOCAL plan_cache_mode = force_generic_plan`)
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), `PREPARE grp AS `+stepGroupSQL)
	require.NoError(t, err)
	rs, err := tx.Query(context.Background(), `EXPLAIN EXECUTE grp(`+placeholders(36)+`)`, append([]any{pgx.QueryExecModeSimpleProtocol}, groupArgs(tenant)...)...)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rs, pgx.RowTo[string])
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	require.Contains(t, plan, "Index Scan using debates_pkey on debates", plan)
	require.Regexp(t, `Index Cond: \(\(tenant_id = .*\) AND \(debate_id = `, plan)
	require.NotContains(t, plan, "debates_deal_idx", plan)
	require.NotContains(t, plan, "Seq Scan on debates", plan)
}

func placeholders(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	return strings.Join(ps, ", ")
}

// groupArgs are stepGroupSQL's arguments for a group of two steps of one
// event and one checkpoint each (the values do not matter to the plan).
func groupArgs(tenant string) []any {
	ids, at := []string{"a", "b"}, []time.Time{stepAt, stepAt}
	two := func(s string) []string { return []string{s, s} }
	return []any{tenant,
		ids, []int64{1, 1}, two("h"), two("running"), two(""), two(""), []int32{1, 1}, two("n"), []int32{0, 0}, []int64{2, 2}, two("h2"), at,
		ids, []int64{2, 2}, two("t"), two("a"), two("n"), []int32{1, 1}, two("{}"), at, two("h"), two("h2"), two("k"), two("s"),
		ids, []int64{1, 1}, []int64{2, 2}, two("n"), two("m"), []int32{1, 1}, two("{}"), two("i"), two("o"), at,
		[]int32{0, 1}}
}

// TestStepCommitGroupCallerGone: a caller whose context ends while its
// step waits in the queue gets an error saying the outcome is unknown; the
// step still commits with its group, and the head shows it.
func TestStepCommitGroupCallerGone(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	ls := f.debates(t, 2)
	a, b := ls[0], ls[1]

	release := f.block(t, a.DebateID)
	doneA := f.commitAsync(a.Next(1))
	f.waitQueued(t, 0)
	ctx, cancel := context.WithCancel(f.ctx)
	stepB := b.Next(2)
	doneB := make(chan error, 1)
	go func() { doneB <- f.s.StepCommit(ctx, stepB) }()
	f.waitQueued(t, 1)
	cancel()
	err := <-doneB
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "outcome unknown")
	release()
	require.NoError(t, <-doneA)

	require.Eventually(t, func() bool {
		d, err := f.s.DebateGet(f.ctx, b.DebateID)
		return err == nil && d.LastSeq == stepB.Events[1].Seq
	}, 10*time.Second, 5*time.Millisecond, "the step committed with the next group")
}

// TestPresized: a presized argument encodes as its strings would, into a
// buffer grown once for the arguments after it.
func TestPresized(t *testing.T) {
	t.Parallel()
	m := pgtype.NewMap()
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryPresized}, m.TryWrapEncodePlanFuncs...)
	v := []string{"a", "", "debate-1"}
	want, err := m.Encode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, v, nil)
	require.NoError(t, err)
	got, err := m.Encode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, presized{v, 1 << 16}, []byte("x"))
	require.NoError(t, err)
	require.Equal(t, append([]byte("x"), want...), got)
	require.GreaterOrEqual(t, cap(got), 1+1<<16)
}

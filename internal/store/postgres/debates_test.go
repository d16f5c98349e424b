package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

var debateTables = []string{"debates", "debate_events", "debate_checkpoints", "human_gates"}

// sqlstateDebateNotFound is the error of the fence function debate_fence
// (migrations/postgres/0003) for a debate the caller's tenant does not
// have; the store's step commits fence in their own statement now, the
// function stays for direct use.
const sqlstateDebateNotFound = "DB404"

// CountDebateRows gives the conformance suite a count of a tenant's rows in
// the debate tables, read through row-level security as the tenant.
func (c counted) CountDebateRows(ctx context.Context, tenantID string) (map[string]int, error) {
	out := map[string]int{}
	err := tenantBatch(ctx, c.pool, tenantID, func(b *pgx.Batch) {
		for _, table := range debateTables {
			b.Queue(`SELECT count(*) FROM `+table+` WHERE tenant_id = $1`, tenantID).QueryRow(func(row pgx.Row) error {
				var n int
				err := row.Scan(&n)
				out[table] = n
				return err
			})
		}
	})
	return out, err
}

var stepAt = time.Date(2026, 2, 3, 9, 0, 0, 0, time.UTC)

// debateWithGate makes a debate in a new tenant and commits one step: two
// events, a checkpoint and an open gate.
func debateWithGate(t *testing.T, s *Store) (context.Context, string, debate.Debate, *storetest.Ledger) {
	t.Helper()
	ctx, tenant, d := storetest.NewDebate(t, s)
	l := storetest.NewLedger(tenant, d, stepAt)
	c := l.Next(2)
	c.OpenGate = &debate.HumanGate{ID: "gate-1", Node: "arbiter_close", Reason: "review", ClaimIDs: []string{"c1"}}
	require.NoError(t, s.StepCommit(ctx, c))
	l.Commit(c)
	return ctx, tenant, d, l
}

// TestDebateHistoryAppendOnly: no UPDATE, DELETE or TRUNCATE of the ledger
// or the checkpoints goes through, not even the owner's; the service's role
// lacks the privileges in the first place.
func TestDebateHistoryAppendOnly(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tctx, tenant, d, _ := debateWithGate(t, s)
	before, err := s.EventList(tctx, d.ID, 0, 0)
	require.NoError(t, err)

	owner := ownerConn(t)
	for _, table := range []string{"debate_events", "debate_checkpoints"} {
		for _, sql := range []string{
			`UPDATE ` + table + ` SET seq = seq WHERE tenant_id = $1 AND debate_id = $2`,
			`UPDATE ` + table + ` SET seq = seq WHERE tenant_id = $1 AND debate_id = $2 AND false`,
			`DELETE FROM ` + table + ` WHERE tenant_id = $1 AND debate_id = $2`,
			`TRUNCATE ` + table + ` CASCADE`,
		} {
			args := []any{tenant, d.ID}
			if sql[:8] == "TRUNCATE" {
				args = nil
			}
			_, err := owner.Exec(ctx, sql, args...)
			requireSQLState(t, err, "23001")
			require.ErrorContains(t, err, table+" is append-only", sql)
		}
		for _, sql := range []string{
			`UPDATE ` + table + ` SET seq = seq WHERE debate_id = $1`,
			`DELETE FROM ` + table + ` WHERE debate_id = $1`,
		} {
			inTenantTx(t, s, tenant, func(tx pgx.Tx) {
				_, err := tx.Exec(ctx, sql, d.ID)
				requireSQLState(t, err, "42501")
			})
		}
	}
	after, err := s.EventList(tctx, d.ID, 0, 0)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

// TestServiceRoleDebatePrivileges: the service's role deletes nothing, and
// changes no debate column a step does not move, nor a gate's identity.
func TestServiceRoleDebatePrivileges(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	_, tenant, d, _ := debateWithGate(t, s)
	for _, sql := range []string{
		`DELETE FROM debates WHERE debate_id = $1`,
		`DELETE FROM human_gates WHERE debate_id = $1`,
		`UPDATE debates SET deal_id = deal_id WHERE debate_id = $1`,
		`UPDATE debates SET created_at = now() WHERE debate_id = $1`,
		`UPDATE debates SET request_hash = 'x' WHERE debate_id = $1`,
		`UPDATE human_gates SET reason = 'x' WHERE debate_id = $1`,
		`UPDATE human_gates SET claim_ids = '{}' WHERE debate_id = $1`,
	} {
		inTenantTx(t, s, tenant, func(tx pgx.Tx) {
			_, err := tx.Exec(ctx, sql, d.ID)
			requireSQLState(t, err, "42501")
		})
	}
	inTenantTx(t, s, tenant, func(tx pgx.Tx) {
		ct, err := tx.Exec(ctx, `UPDATE debates SET status = 'aborted' WHERE debate_id = $1`, d.ID)
		require.NoError(t, err, "a step moves the status")
		require.Equal(t, int64(1), ct.RowsAffected())
	})
}

// TestDebatesRLSWrongTenant: as the service's role with another tenant (or
// none) set, no row of tenant A's debate tables is visible, even when the
// query names A; none can be changed, none written for A, and the fence
// does not find A's debate.
func TestDebatesRLSWrongTenant(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	_, tenantA, d, l := debateWithGate(t, s)
	_, tenantB := storetest.NewTenant(t, s)

	inTenantTx(t, s, tenantA, func(tx pgx.Tx) {
		for _, table := range debateTables {
			var n int
			require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n))
			require.NotZero(t, n, "A sees its own %s", table)
		}
	})
	for _, other := range []string{tenantB, ""} {
		inTenantTx(t, s, other, func(tx pgx.Tx) {
			for _, table := range debateTables {
				var all, named int
				require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&all))
				require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE tenant_id = $1`, tenantA).Scan(&named))
				require.Zero(t, all, table)
				require.Zero(t, named, table)
			}
			for _, sql := range []string{
				`UPDATE debates SET status = 'aborted' WHERE tenant_id = $1`,
				`UPDATE human_gates SET status = 'approved' WHERE tenant_id = $1`,
			} {
				ct, err := tx.Exec(ctx, sql, tenantA)
				require.NoError(t, err)
				require.Zero(t, ct.RowsAffected(), "%s touches no row of A", sql)
			}
		})
		inTenantTx(t, s, other, func(tx pgx.Tx) {
			_, err := tx.Exec(ctx, `SELECT debate_fence($1, $2, $3, $4)`, tenantA, d.ID, l.Seq, l.Hash)
			requireSQLState(t, err, sqlstateDebateNotFound)
		})
		for _, sql := range []string{
			`INSERT INTO debates (tenant_id, debate_id, deal_id, protocol, request_hash, status, stop_reason, error,
				round, next_node, attempt, last_seq, head_hash, created_at, updated_at)
				VALUES ($1, 'smuggled', $2, 'p', '', 'queued', '', '', 0, '', 0, 0, '', now(), now())`,
			`INSERT INTO debate_events (tenant_id, debate_id, seq, type, actor, node, round, payload, time,
				prev_hash, hash, key_id, signature)
				VALUES ($1, $2, 1000, 'forged', 'x', '', 0, '{}', now(), '', '', '', '')`,
			`INSERT INTO debate_checkpoints (tenant_id, debate_id, step, seq, node, next_node, round, state,
				input_hash, output_hash, created_at) VALUES ($1, $2, 1000, 0, '', '', 0, '{}', '', '', now())`,
			`INSERT INTO human_gates (tenant_id, debate_id, gate_id, node, reason, status, resolution, resolved_by, created_at)
				VALUES ($1, $2, 'smuggled', '', '', 'open', '', '', now())`,
		} {
			arg := d.ID
			if sql[12:19] == "debates" {
				arg = d.DealID
			}
			inTenantTx(t, s, other, func(tx pgx.Tx) {
				_, err := tx.Exec(ctx, sql, tenantA, arg)
				requireSQLState(t, err, "42501")
				require.ErrorContains(t, err, "row-level security")
			})
		}
	}
	n, err := counted{s}.CountDebateRows(ctx, tenantA)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"debates": 1, "debate_events": 2, "debate_checkpoints": 1, "human_gates": 1}, n)
}

// recordingJobs stands in for the application that schedules a debate's
// job in the transaction of the write that makes the debate runnable
// (DebateCreateWith, StepCommitWith; runner.River does this with River's
// InsertTx): it records its calls, checks that they run inside that
// transaction, and fails when told.
type recordingJobs struct {
	*Store
	mu    sync.Mutex
	calls []string
	fail  error
	off   bool // schedule nothing
}

func (j *recordingJobs) inTx(tenantID, debateID string) func(context.Context, pgx.Tx) error {
	if j.off {
		return nil
	}
	return func(ctx context.Context, tx pgx.Tx) error { return j.InsertDebateJob(ctx, tx, tenantID, debateID) }
}

func (j *recordingJobs) DebateCreate(ctx context.Context, d debate.Debate) (debate.Debate, bool, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.Debate{}, false, err
	}
	return j.DebateCreateWith(ctx, d, j.inTx(tenant, d.ID))
}

func (j *recordingJobs) StepCommit(ctx context.Context, c debate.StepCommit) error {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil || !c.Enqueue {
		return j.Store.StepCommit(ctx, c)
	}
	return j.StepCommitWith(ctx, c, j.inTx(tenant, c.DebateID))
}

func (j *recordingJobs) InsertDebateJob(ctx context.Context, tx pgx.Tx, tenantID, debateID string) error {
	// The transaction sees the debate, with the tenant set for row-level
	// security; a connection of its own does not see it yet.
	var status string
	var lastSeq int64
	if err := tx.QueryRow(ctx, `SELECT status, last_seq FROM debates WHERE tenant_id = $1 AND debate_id = $2`,
		tenantID, debateID).Scan(&status, &lastSeq); err != nil {
		return fmt.Errorf("the job's transaction does not see the debate: %w", err)
	}
	owner, err := pgx.Connect(ctx, testDB.url)
	if err != nil {
		return err
	}
	defer owner.Close(ctx)
	var committedSeq int64
	err = owner.QueryRow(ctx, `SELECT last_seq FROM debates WHERE tenant_id = $1 AND debate_id = $2`, tenantID, debateID).Scan(&committedSeq)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // created in this transaction
	case err != nil:
		return err
	case committedSeq == lastSeq && lastSeq != 0:
		return fmt.Errorf("the step was committed before its job was inserted")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, fmt.Sprintf("%s/%s:%s", tenantID, debateID, status))
	return j.fail
}

func (j *recordingJobs) take() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.calls
	j.calls = nil
	return out
}

// ownStore is a store of its own on the package's database, so that the
// hooks a test sets on it see only that test's calls.
func ownStore(t *testing.T, maxConns int32) *Store {
	t.Helper()
	setup(t)
	s, err := New(context.Background(), Config{URL: testDB.url, MaxConns: maxConns})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// TestJobInserterInTransaction: DebateCreateWith, and StepCommitWith for
// a step that asks to be enqueued, insert the debate's job in their
// transaction; a failing inserter rolls everything back; nothing else
// calls it.
func TestJobInserterInTransaction(t *testing.T) {
	t.Parallel()
	jobs := &recordingJobs{Store: ownStore(t, 4)}
	s := jobs

	ctx, tenant, d := storetest.NewDebate(t, s)
	require.Equal(t, []string{tenant + "/" + d.ID + ":queued"}, jobs.take())

	// A failing inserter: the debate is not stored, the error comes back.
	boom := errors.New("queue is down")
	jobs.fail = boom
	failed := storetest.SampleDebate(d.DealID, d.CreatedAt)
	failed.IdempotencyKey = "key-1"
	_, _, err := s.DebateCreate(ctx, failed)
	require.ErrorIs(t, err, boom)
	_, err = s.DebateGet(ctx, failed.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	jobs.take()
	jobs.fail = nil
	// The key is free again: the failed create left nothing.
	_, created, err := s.DebateCreate(ctx, failed)
	require.NoError(t, err)
	require.True(t, created)
	require.Len(t, jobs.take(), 1)
	_, created, err = s.DebateCreate(ctx, failed)
	require.NoError(t, err)
	require.False(t, created)
	require.Empty(t, jobs.take(), "an idempotent replay inserts no job")

	// A step without Enqueue inserts none; with Enqueue, one, in its
	// transaction (after the step's writes).
	l := storetest.NewLedger(tenant, d, stepAt)
	c := l.Next(2)
	require.NoError(t, s.StepCommit(ctx, c))
	l.Commit(c)
	require.Empty(t, jobs.take())
	c = l.Next(1)
	c.Enqueue, c.Status = true, debate.DebateQueued
	require.NoError(t, s.StepCommit(ctx, c))
	l.Commit(c)
	require.Equal(t, []string{tenant + "/" + d.ID + ":queued"}, jobs.take())

	// A failing inserter rolls the step back.
	before, err := s.DebateGet(ctx, d.ID)
	require.NoError(t, err)
	jobs.fail = boom
	c = l.Next(3)
	c.Enqueue = true
	require.ErrorIs(t, s.StepCommit(ctx, c), boom)
	jobs.fail = nil
	after, err := s.DebateGet(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, before, after)
	events, err := s.EventList(ctx, d.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, events, 3)
	// A fenced step inserts no job.
	stale := l.Next(1)
	stale.ExpectSeq, stale.Enqueue = 0, true
	stale.Events, stale.Checkpoint = nil, nil
	require.ErrorIs(t, s.StepCommit(ctx, stale), debate.ErrConflict)
	jobs.take()
	require.NoError(t, s.StepCommit(ctx, c), "the step goes through once the queue is back")
	require.Len(t, jobs.take(), 1)

	jobs.off = true
	_, _, err = s.DebateCreate(ctx, storetest.SampleDebate(d.DealID, d.CreatedAt))
	require.NoError(t, err)
	require.Empty(t, jobs.take())
}

// TestListenReceivesCommits: a commit that wrote events notifies every
// listener with its tenant and debate, when it commits; one without events
// or that fails does not; the listener comes back after its connection is
// killed.
func TestListenReceivesCommits(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listenCtx, stop := context.WithCancel(ctx)
	type note struct{ tenant, debate string }

	// Other tests of this package commit in the same database, and
	// notifications are per database: the listener keeps only those of
	// this test's tenants, made before it starts (so it reads the set
	// without a race), and never blocks on the others'.
	tctx, tenant, quiet := storetest.NewDebate(t, s)
	loudCtx, loudTenantID, loud := storetest.NewDebate(t, s)
	mine := map[string]bool{tenant: true, loudTenantID: true}
	notes := make(chan note, 16)
	listening := make(chan struct{}, 4)
	errs := make(chan error, 16)
	// A store of its own (its own error handler), whose connections carry
	// an application name: the test kills its listener, not those of the
	// tests running beside it.
	app := "listen-test-" + fmt.Sprint(time.Now().UnixNano())
	u, err := url.Parse(testDB.url)
	require.NoError(t, err)
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	s2, err := New(context.Background(), Config{URL: u.String(), MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(s2.Close)
	s2.SetListenErrorHandler(func(err error) { errs <- err })
	done := make(chan error, 1)
	go func() {
		done <- s2.listen(listenCtx, func(tenant, debateID string) {
			if mine[tenant] {
				notes <- note{tenant, debateID}
			}
		}, func() { listening <- struct{}{} })
	}()
	wait := func() note {
		t.Helper()
		select {
		case n := <-notes:
			return n
		case <-ctx.Done():
			t.Fatal("no notification")
			return note{}
		}
	}
	select {
	case <-listening:
	case <-ctx.Done():
		t.Fatal("Listen never listened")
	}

	// A step without events, then a failed one, then one with events on
	// another debate: the first notification is the last one's, as
	// PostgreSQL delivers them in commit order.
	ql := storetest.NewLedger(tenant, quiet, stepAt)
	c := ql.Next(0)
	c.Status = debate.DebateAborted
	require.NoError(t, s.StepCommit(tctx, c))
	failed := ql.Next(1)
	failed.ExpectHash = "wrong"
	failed.Events[0].PrevHash = "wrong"
	require.ErrorIs(t, s.StepCommit(tctx, failed), debate.ErrConflict)

	ll := storetest.NewLedger(loudTenantID, loud, stepAt)
	c = ll.Next(3)
	require.NoError(t, s.StepCommit(loudCtx, c))
	ll.Commit(c)
	require.Equal(t, note{loudTenantID, loud.ID}, wait())

	// Kill the listener's connection: it reports the error, listens again
	// and delivers the next commit.
	owner := ownerConn(t)
	var killed int
	require.NoError(t, owner.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN debated_events' AND application_name = $1`, app).Scan(&killed))
	require.Equal(t, 1, killed, "the test's listener")
	select {
	case err := <-errs:
		require.ErrorContains(t, err, "listen debated_events")
	case <-ctx.Done():
		t.Fatal("the error was not reported")
	}
	select {
	case <-listening:
	case <-ctx.Done():
		t.Fatal("Listen did not reconnect")
	}
	c = ll.Next(1)
	require.NoError(t, s.StepCommit(loudCtx, c))
	require.Equal(t, note{loudTenantID, loud.ID}, wait())

	stop()
	select {
	case err := <-done:
		require.NoError(t, err, "Listen returns nil when its context ends")
	case <-ctx.Done():
		t.Fatal("Listen did not return")
	}
	require.Empty(t, notes)

	// With its context already over, Listen returns at once.
	ended, end := context.WithCancel(ctx)
	end()
	require.NoError(t, s2.Listen(ended, func(string, string) { t.Error("a notification after the end") }))
}

// TestListenSkipsOwnCommits: a Store's listener does not hear the commits
// of that Store (its committer publishes them to the local watchers) but
// hears those of another Store, and another Store's listener hears it.
func TestListenSkipsOwnCommits(t *testing.T) {
	t.Parallel()
	a, b := ownStore(t, 2), ownStore(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	aCtx, aTenant, aDebate := storetest.NewDebate(t, a)
	bCtx, bTenant, bDebate := storetest.NewDebate(t, b)
	mine := map[string]bool{aTenant: true, bTenant: true}
	type note struct{ tenant, debate string }
	listen := func(s *Store) chan note {
		notes := make(chan note, 16)
		startListening(ctx, t, s, func(tenant, debateID string) {
			if mine[tenant] {
				notes <- note{tenant, debateID}
			}
		})
		return notes
	}
	wait := func(notes chan note) note {
		t.Helper()
		select {
		case n := <-notes:
			return n
		case <-ctx.Done():
			t.Fatal("no notification")
			return note{}
		}
	}
	aNotes := listen(a)
	bNotes := listen(b)

	// A commits, then B: A's listener hears only B's commit (it would hear
	// A's first, notifications arriving in commit order); B's hears A's.
	al := storetest.NewLedger(aTenant, aDebate, stepAt)
	c := al.Next(2)
	require.NoError(t, a.StepCommit(aCtx, c))
	al.Commit(c)
	require.Equal(t, note{aTenant, aDebate.ID}, wait(bNotes))
	bl := storetest.NewLedger(bTenant, bDebate, stepAt)
	c = bl.Next(1)
	require.NoError(t, b.StepCommit(bCtx, c))
	require.Equal(t, note{bTenant, bDebate.ID}, wait(aNotes), "A's own commit was skipped")
	c = al.Next(1)
	require.NoError(t, a.StepCommit(aCtx, c))
	require.Equal(t, note{aTenant, aDebate.ID}, wait(bNotes), "B's own commit was skipped")
}

// TestDebatesIndexedLookups: the lists, the fence and the ledger reads use
// indexes, in key order, whatever the size of the tables.
func TestDebatesIndexedLookups(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	_, err = tx.Exec(ctx, `SET LOCAL enable_seqscan = off`)
	require.NoError(t, err)
	plan := func(sql string, args ...any) string {
		rows, err := tx.Query(ctx, "EXPLAIN "+sql, args...)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return fmt.Sprint(lines)
	}
	at := time.Now()
	for sql, index := range map[string]string{
		`SELECT debate_id FROM debates WHERE tenant_id = $1 AND created_at <= $2 AND (created_at < $2 OR debate_id > $3)
			ORDER BY created_at DESC, debate_id LIMIT 51`: "debates_list_idx",
		`SELECT debate_id FROM debates WHERE tenant_id = $1 AND status = $3 AND created_at <= $2
			ORDER BY created_at DESC, debate_id LIMIT 51`: "debates_status_idx",
		`SELECT debate_id FROM debates WHERE tenant_id = $1 AND deal_id = $3 AND created_at <= $2
			ORDER BY created_at DESC, debate_id LIMIT 51`: "debates_deal_idx",
	} {
		// With statistics of a busy shared database the planner may prefer
		// another of the debates indexes; what matters is an index in key
		// order and no scan of the table.
		p := plan(sql, "t", at, "x")
		require.Contains(t, p, "Index", sql)
		require.Contains(t, p, "debates_", sql)
		require.NotContains(t, p, "Seq Scan", sql)
		require.NotContains(t, p, "Sort", sql)
		_ = index
	}
	p := plan(`SELECT seq FROM debate_events WHERE tenant_id = $1 AND debate_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`, "t", "d", int64(0), 500)
	require.Contains(t, p, "debate_events_pkey")
	require.NotContains(t, p, "Sort")
	p = plan(`SELECT step FROM debate_checkpoints WHERE tenant_id = $1 AND debate_id = $2 ORDER BY step DESC LIMIT 1`, "t", "d")
	require.Contains(t, p, "debate_checkpoints_pkey")
	require.NotContains(t, p, "Sort")
	p = plan(`SELECT gate_id FROM human_gates WHERE tenant_id = $1 AND debate_id = $2 ORDER BY created_at, gate_id`, "t", "d")
	require.Contains(t, p, "human_gates_list_idx")
	require.NotContains(t, p, "Sort")
	require.Contains(t, plan(`SELECT 1 FROM debates WHERE tenant_id = $1 AND idempotency_key = $2`, "t", "k"), "debates_idempotency_key_idx")
}

func BenchmarkStepCommit(b *testing.B) {
	storetest.BenchStepCommit(b, setup(b))
}

func BenchmarkStepCommitParallel(b *testing.B) {
	storetest.BenchStepCommitParallel(b, benchStore(b, ""), 16)
}

// The same with synchronous_commit off for the benchmark's connections: a
// commit then returns before its WAL record is flushed to disk, so a crash
// of the server may lose the last commits (never corrupt or half-apply
// them). It measures the store without the disk's flush latency, which on
// a machine whose fdatasync takes milliseconds bounds every durable commit;
// the store itself never changes the setting.
func BenchmarkStepCommitAsyncCommit(b *testing.B) {
	storetest.BenchStepCommit(b, benchStore(b, "off"))
}

func BenchmarkStepCommitParallelAsyncCommit(b *testing.B) {
	storetest.BenchStepCommitParallel(b, benchStore(b, "off"), 16)
}

// benchStore opens a store on the package's database with a connection per
// benchmark goroutine (the test store has 8), and synchronous_commit set to
// syncCommit when not empty.
func benchStore(b *testing.B, syncCommit string) *Store {
	b.Helper()
	setup(b)
	u, err := url.Parse(testDB.url)
	require.NoError(b, err)
	if syncCommit != "" {
		q := u.Query()
		q.Set("synchronous_commit", syncCommit) // a run-time parameter of every connection
		u.RawQuery = q.Encode()
	}
	s, err := New(context.Background(), Config{URL: u.String(), MaxConns: 17})
	require.NoError(b, err)
	b.Cleanup(s.Close)
	return s
}

// startListening runs s's listener with fn until the test ends, and
// returns once it listens.
func startListening(ctx context.Context, t *testing.T, s *Store, fn func(tenant, debateID string)) {
	t.Helper()
	listening := make(chan struct{}, 1)
	lctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.listen(lctx, fn, func() { listening <- struct{}{} })
	}()
	t.Cleanup(func() { stop(); <-done })
	select {
	case <-listening:
	case <-ctx.Done():
		t.Fatal("Listen never listened")
	}
}

// TestRoundsCompletedMigration: migration 0014 counts the round.completed
// events of the debates already stored, every tenant's (row security is
// forced on the owner too), and leaves row security forced.
func TestRoundsCompletedMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	require.NoError(t, Migrate(ctx, dbURL))
	s, err := New(ctx, Config{URL: dbURL})
	require.NoError(t, err)
	type stored struct {
		ctx    context.Context //nolint:containedctx // the debate's tenant, for reading it back
		id     string
		rounds int
	}
	var debates []stored
	for _, rounds := range []int{2, 0, 3} { // each debate of its own tenant
		dctx, tenant, d := storetest.NewDebate(t, s)
		l := storetest.NewLedger(tenant, d, stepAt)
		c := l.Next(rounds + 2)
		for i := range rounds {
			c.Events[i+1].Type = debate.EventRoundCompleted
		}
		require.NoError(t, s.StepCommit(dctx, c))
		debates = append(debates, stored{dctx, d.ID, rounds})
	}
	s.Close()

	// The schema as it was before 0014, with the debates stored.
	owner, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer owner.Close(ctx)
	_, err = owner.Exec(ctx, `ALTER TABLE debates DROP COLUMN rounds_completed`)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `DELETE FROM schema_migrations WHERE version = 14`)
	require.NoError(t, err)

	require.NoError(t, Migrate(ctx, dbURL))
	for _, table := range []string{"debates", "debate_events"} {
		var forced bool
		require.NoError(t, owner.QueryRow(ctx, `SELECT relforcerowsecurity FROM pg_class WHERE oid = $1::regclass`, table).Scan(&forced))
		require.True(t, forced, "row security is forced on %s's owner again", table)
	}

	s, err = New(ctx, Config{URL: dbURL})
	require.NoError(t, err)
	defer s.Close()
	for _, d := range debates {
		got, err := s.DebateGet(d.ctx, d.id)
		require.NoError(t, err)
		require.Equal(t, d.rounds, got.RoundsCompleted, d.id)
	}
}

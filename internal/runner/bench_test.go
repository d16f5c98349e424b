package runner_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/synthetic"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/postgres"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/stream"
	"github.com/debated/debated/internal/testutil/pgtest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// timedStore measures the commit latency of every step.
type timedStore struct {
	*postgres.Store
	mu  sync.Mutex
	lat []time.Duration
}

func (s *timedStore) StepCommit(ctx context.Context, c debate.StepCommit) error {
	start := time.Now()
	err := s.Store.StepCommit(ctx, c)
	s.mu.Lock()
	s.lat = append(s.lat, time.Since(start))
	s.mu.Unlock()
	return err
}

type env struct {
	url    string
	store  *timedStore
	runner *runner.Runner
	hub    *stream.Hub
	ctx    context.Context
	tenant string
}

func setup(b *testing.B, publish bool) *env {
	b.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(b)
	require.NoError(b, postgres.Migrate(ctx, url))
	st, err := postgres.New(ctx, postgres.Config{URL: url, MaxConns: 40})
	require.NoError(b, err)
	b.Cleanup(st.Close)
	ts := &timedStore{Store: st}
	tctx, tenant := storetest.NewTenant(b, st)
	_, err = st.DealImport(tctx, storetest.SampleBundle("deal-bench"), "h", time.Now())
	require.NoError(b, err)
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("benchmark-signing-secret-of-32-bytes!!")}, "v1")
	require.NoError(b, err)
	reg, err := orchestrator.NewRegistry(synthetic.Protocol())
	require.NoError(b, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(b, err)
	e := &env{url: url, store: ts, ctx: tctx, tenant: tenant}
	cfg := runner.Config{Store: ts, Engine: eng}
	if publish {
		e.hub = stream.New(st, stream.Config{})
		cfg.Publisher = e.hub
	}
	e.runner, err = runner.New(cfg)
	require.NoError(b, err)
	return e
}

func (e *env) newDebate(b *testing.B, rounds int) string {
	b.Helper()
	id := uuid.NewString()
	opts := fmt.Sprintf(`{"gate_round":0,"max_rounds":%d,"message_bytes":300}`, rounds)
	_, _, err := e.store.DebateCreate(e.ctx, debate.Debate{ID: id, TenantID: e.tenant, DealID: "deal-bench", Protocol: synthetic.Name,
		Options: []byte(opts), Status: debate.DebateQueued, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	require.NoError(b, err)
	return id
}

func percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// nodeStepsPerDebate: 5 rounds of 8 node executions (the parallel group's
// two branches count as two) and the finish node.
const nodeStepsPerDebate = 5*8 + 1

// BenchmarkDebatePostgres runs whole synthetic debates (5 rounds, ~300-byte
// messages, durable commits on PostgreSQL), one at a time and 16 at once,
// and reports node steps per second, commits per second and the commit
// latency percentiles.
func BenchmarkDebatePostgres(b *testing.B) {
	// The collector's target of the service (cmd/debated's DefaultGCPercent)
	// unless GOGC says otherwise.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("concurrent=%d", conc), func(b *testing.B) {
			e := setup(b, false)
			ids := make([]string, b.N*conc)
			for i := range ids {
				ids[i] = e.newDebate(b, 5)
			}
			e.store.lat = nil
			analyze(b, e)
			wal0 := walLSN(b, e)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			work := make(chan string)
			for range conc {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for id := range work {
						if err := e.runner.Run(context.Background(), e.tenant, id); err != nil {
							b.Error(err)
						}
					}
				}()
			}
			for _, id := range ids {
				work <- id
			}
			close(work)
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			debates := float64(len(ids))
			b.ReportMetric(debates*nodeStepsPerDebate/elapsed.Seconds(), "node-steps/s")
			b.ReportMetric(float64(len(e.store.lat))/elapsed.Seconds(), "commits/s")
			if g := e.store.GroupCommitStats(); g.Transactions > 0 {
				b.ReportMetric(float64(g.Steps)/float64(g.Transactions), "steps/commit-tx")
			}
			b.ReportMetric(float64(percentile(e.store.lat, 0.50).Microseconds()), "commit-p50-µs")
			b.ReportMetric(float64(percentile(e.store.lat, 0.99).Microseconds()), "commit-p99-µs")
			b.ReportMetric(0, "ns/op")
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MiB")
			b.ReportMetric(float64(walSince(b, e, wal0))/debates, "wal-bytes/debate")
			reportStorage(b, e, len(ids))
		})
	}
}

// analyze updates the planner's statistics, as autovacuum does in a
// running database, after the setup created the debates.
func analyze(b *testing.B, e *env) {
	b.Helper()
	conn, err := pgx.Connect(context.Background(), e.url)
	require.NoError(b, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `ANALYZE`)
	require.NoError(b, err)
}

// walLSN reads the server's current WAL position. The WAL is the whole
// cluster's: measure on an otherwise idle server.
func walLSN(b *testing.B, e *env) string {
	b.Helper()
	conn, err := pgx.Connect(context.Background(), e.url)
	require.NoError(b, err)
	defer conn.Close(context.Background())
	var lsn string
	require.NoError(b, conn.QueryRow(context.Background(), `SELECT pg_current_wal_lsn()::text`).Scan(&lsn))
	return lsn
}

// walSince is how many WAL bytes the server wrote since lsn.
func walSince(b *testing.B, e *env, lsn string) int64 {
	b.Helper()
	conn, err := pgx.Connect(context.Background(), e.url)
	require.NoError(b, err)
	defer conn.Close(context.Background())
	var n int64
	require.NoError(b, conn.QueryRow(context.Background(), `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint`, lsn).Scan(&n))
	return n
}

// BenchmarkStorageByRounds runs debates of 5, 10 and 20 rounds one at a
// time and reports what each stores: linear growth shows as a constant
// per-round figure (the transcript is never copied into checkpoints).
func BenchmarkStorageByRounds(b *testing.B) {
	for _, rounds := range []int{5, 10, 20} {
		b.Run(fmt.Sprintf("rounds=%d", rounds), func(b *testing.B) {
			e := setup(b, false)
			ids := make([]string, b.N)
			for i := range ids {
				ids[i] = e.newDebate(b, rounds)
			}
			wal0 := walLSN(b, e)
			b.ResetTimer()
			for _, id := range ids {
				require.NoError(b, e.runner.Run(context.Background(), e.tenant, id))
			}
			b.StopTimer()
			debates := float64(len(ids))
			wal := float64(walSince(b, e, wal0)) / debates
			b.ReportMetric(wal, "wal-bytes/debate")
			b.ReportMetric(wal/float64(rounds), "wal-bytes/round")
			rel := reportStorage(b, e, len(ids))
			b.ReportMetric(rel/float64(rounds), "rel-bytes/round")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// reportStorage reports rows and bytes stored per debate: the ledger's
// events, the checkpoints and the debate rows with their indexes, against
// the bytes of the events themselves.
func reportStorage(b *testing.B, e *env, debates int) (relBytesPerDebate float64) {
	b.Helper()
	conn, err := pgx.Connect(context.Background(), e.url)
	require.NoError(b, err)
	defer conn.Close(context.Background())
	var rows, relBytes, eventBytes int64
	require.NoError(b, conn.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM debate_events) + (SELECT count(*) FROM debate_checkpoints) + (SELECT count(*) FROM debates),
		pg_total_relation_size('debate_events') + pg_total_relation_size('debate_checkpoints') + pg_total_relation_size('debates'),
		(SELECT sum(octet_length(payload::text) + octet_length(type) + octet_length(actor) + octet_length(node) + 64*2 + octet_length(key_id) + octet_length(signature) + 36*2 + 24) FROM debate_events)`).
		Scan(&rows, &relBytes, &eventBytes))
	b.ReportMetric(float64(rows)/float64(debates), "rows/debate")
	b.ReportMetric(float64(relBytes)/float64(debates), "rel-bytes/debate")
	b.ReportMetric(float64(eventBytes)/float64(debates), "event-bytes/debate")
	return float64(relBytes) / float64(debates)
}

// BenchmarkWatchers measures event delivery to 1,000 watchers of one
// debate: the time from a step's commit to each watcher receiving each of
// its events.
func BenchmarkWatchers(b *testing.B) {
	e := setup(b, true)
	const watchers = 1000
	var lat []time.Duration
	for range b.N {
		id := e.newDebate(b, 5)
		committed := sync.Map{} // seq → time
		var mu sync.Mutex
		var wg sync.WaitGroup
		started := make(chan struct{}, watchers)
		for range watchers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				first := true
				_ = e.hub.Watch(e.ctx, id, 0, func(bt stream.Batch) error {
					now := time.Now()
					for _, it := range bt.Entries {
						if t, ok := committed.Load(it.Event.Seq); ok {
							mu.Lock()
							lat = append(lat, now.Sub(t.(time.Time)))
							mu.Unlock()
						}
					}
					if first {
						first = false
					}
					return nil
				})
			}()
			started <- struct{}{}
		}
		// Give the watchers a moment to attach, then run the debate.
		time.Sleep(200 * time.Millisecond)
		pub := &recordingPublisher{hub: e.hub, committed: &committed}
		r, err := runner.New(runner.Config{Store: e.store, Engine: engineOf(b), Publisher: pub})
		require.NoError(b, err)
		require.NoError(b, r.Run(context.Background(), e.tenant, id))
		wg.Wait()
	}
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "delivery-p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "delivery-p99-µs")
	b.ReportMetric(float64(len(lat))/float64(b.N), "deliveries/debate")
	b.ReportMetric(0, "ns/op")
}

type recordingPublisher struct {
	hub       *stream.Hub
	committed *sync.Map
}

func (p *recordingPublisher) Publish(tenantID, debateID string, events []debate.Event) {
	now := time.Now()
	for _, ev := range events {
		p.committed.Store(ev.Seq, now)
	}
	p.hub.Publish(tenantID, debateID, events)
}

func engineOf(b *testing.B) *orchestrator.Engine {
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("benchmark-signing-secret-of-32-bytes!!")}, "v1")
	require.NoError(b, err)
	reg, err := orchestrator.NewRegistry(synthetic.Protocol())
	require.NoError(b, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(b, err)
	return eng
}

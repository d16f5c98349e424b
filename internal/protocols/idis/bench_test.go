package idis_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/postgres"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/pgtest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// parts adds up the time spent per part of the work.
type parts struct {
	mu sync.Mutex
	d  map[string]time.Duration
}

func (p *parts) add(part string, d time.Duration) {
	p.mu.Lock()
	p.d[part] += d
	p.mu.Unlock()
}

type timedCommits struct {
	*postgres.Store
	p *parts
}

func (s timedCommits) StepCommit(ctx context.Context, c debate.StepCommit) error {
	start := time.Now()
	defer func() { s.p.add("commit", time.Since(start)) }()
	return s.Store.StepCommit(ctx, c)
}

// BenchmarkIDISDebatePostgres runs complete IDIS debates (rules backend,
// 5 rounds at most) over the sample deal on PostgreSQL, one at a time and 16
// at once, and reports debates per second and the share of the debates'
// time spent loading the registry and transcript, in the roles, in tool
// calls, in the gates and in the step commits.
func BenchmarkIDISDebatePostgres(b *testing.B) {
	// The collector's target of the service (cmd/debated's DefaultGCPercent)
	// unless GOGC says otherwise.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("concurrent=%d", conc), func(b *testing.B) {
			ctx := context.Background()
			url := pgtest.NewDatabase(b)
			require.NoError(b, postgres.Migrate(ctx, url))
			st, err := postgres.New(ctx, postgres.Config{URL: url, MaxConns: 40})
			require.NoError(b, err)
			defer st.Close()
			tctx, tenant := storetest.NewTenant(b, st)
			_, err = st.DealImport(tctx, storetest.SampleBundle("deal-bench"), "h", time.Now())
			require.NoError(b, err)
			p := &parts{d: map[string]time.Duration{}}
			keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("idis-bench-signing-secret-32-bytes!")}, "v1")
			require.NoError(b, err)
			// Wired as the service is: the runner feeds the transcript cache.
			transcripts := idis.NewTranscripts()
			reg, err := orchestrator.NewRegistry(idis.Protocol(idis.Config{Registry: st, Ledger: st, Roles: rules.New(), Observe: p.add, Transcripts: transcripts}))
			require.NoError(b, err)
			eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
			require.NoError(b, err)
			r, err := runner.New(runner.Config{Store: timedCommits{st, p}, Engine: eng, Publisher: transcripts, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(b, err)
			ids := make([]string, b.N*conc)
			for i := range ids {
				ids[i] = uuid.NewString()
				_, _, err := st.DebateCreate(tctx, debate.Debate{ID: ids[i], TenantID: tenant, DealID: "deal-bench", Protocol: idis.Name,
					Options: []byte(`{"max_rounds":5,"pause_for_review":false}`), Status: debate.DebateQueued, CreatedAt: time.Now(), UpdatedAt: time.Now()})
				require.NoError(b, err)
			}
			b.ResetTimer()
			start := time.Now()
			work := make(chan string)
			var wg sync.WaitGroup
			for range conc {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for id := range work {
						if err := r.Run(ctx, tenant, id); err != nil {
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
			b.ReportMetric(float64(len(ids))/elapsed.Seconds(), "debates/s")
			var total time.Duration
			for _, d := range p.d {
				total += d
			}
			for _, part := range []string{"load", "role", "tools", "gate", "commit"} {
				b.ReportMetric(100*float64(p.d[part])/float64(total), part+"-%")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

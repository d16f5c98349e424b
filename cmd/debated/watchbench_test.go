package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/debated/debated/internal/watchload"
	"github.com/stretchr/testify/require"
)

// BenchmarkWatchDebate runs the real binary on PostgreSQL (a child
// process, as in production) and measures WatchDebate with 1 and 1,000
// watchers, each on its own connection, on one debate and spread over ten
// (internal/watchload): delivery latency of the live events, the live
// part's duration relative to one watcher, events delivered per second,
// the server's peak RSS. Every watcher must get every seq exactly once and
// in order, or the benchmark fails. The debates are short (10 rounds) to
// keep make bench quick; cmd/watchload runs the 50.
func BenchmarkWatchDebate(b *testing.B) {
	url := migratedDatabase(b)
	addr, metrics := freeAddr(b), freeAddr(b)
	env := []string{"DEBATED_DATABASE_URL=" + url, "DEBATED_MIGRATE_ON_START=false", "DEBATED_SIGNING_KEYS=" + testSigningKeys,
		"DEBATED_ADMIN_TOKEN=e2e-admin", "DEBATED_METRICS_ADDR=" + metrics}
	c := startChild(b, addr, env)
	defer c.kill()
	ctx := context.Background()
	var key string
	deadline := time.Now().Add(60 * time.Second)
	for {
		var err error
		if key, err = watchload.Setup(ctx, addr, "e2e-admin"); err == nil {
			break
		}
		require.True(b, time.Now().Before(deadline), "debated never answered: %v", err)
		time.Sleep(50 * time.Millisecond)
	}
	for _, debates := range []int{1, 10} {
		var base time.Duration
		for _, watchers := range []int{1, 1000} {
			b.Run(fmt.Sprintf("debates=%d/watchers=%d", debates, watchers), func(b *testing.B) {
				var res watchload.Result
				for range b.N {
					var err error
					res, err = watchload.Run(ctx, watchload.Config{Addr: addr, APIKey: key, DealID: watchload.DealID,
						Watchers: watchers, Debates: debates, Rounds: 10, MessageBytes: 300, MetricsURL: "http://" + metrics + "/metrics"})
					require.NoError(b, err)
				}
				if base == 0 {
					base = res.Live
				}
				b.ReportMetric(float64(res.P50.Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(res.P95.Microseconds())/1000, "p95-ms")
				b.ReportMetric(float64(res.P99.Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(res.Max.Microseconds())/1000, "max-ms")
				b.ReportMetric(res.Live.Seconds()/base.Seconds(), "live-vs-1")
				b.ReportMetric(res.PerSecond, "events/s")
				b.ReportMetric(res.RSSPeak/(1<<20), "rss-MiB")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

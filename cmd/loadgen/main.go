// Command loadgen drives a running debated: it creates synthetic debates at
// rising rates, watches each to its end, and reports per rate the
// throughput, the create and end-to-end latency percentiles, the errors and
// the server's memory, stopping when errors or latency climb. It only talks
// to the address it is given (make load starts a local server).
//
//	loadgen --addr localhost:50051 --admin-token T --metrics-url http://localhost:9090/metrics
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

type sample struct {
	create, total time.Duration
	err           error
}

func run() error {
	addr := flag.String("addr", "localhost:50051", "debated address")
	admin := flag.String("admin-token", os.Getenv("DEBATED_ADMIN_TOKEN"), "admin token")
	metricsURL := flag.String("metrics-url", "", "the server's /metrics, for its memory")
	rates := flag.String("rates", "5,10,20,40,80,160", "debates per second to try, in order")
	step := flag.Duration("step", 10*time.Second, "how long each rate runs")
	rounds := flag.Int("rounds", 3, "rounds of each synthetic debate")
	flag.Parse()

	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	bg := context.Background()
	actx := metadata.AppendToOutgoingContext(bg, "authorization", "Bearer "+*admin)
	tr, err := debatedv1.NewAdminServiceClient(conn).CreateTenant(actx, &debatedv1.CreateTenantRequest{Name: "load"})
	if err != nil {
		return fmt.Errorf("create tenant: %w", err)
	}
	kr, err := debatedv1.NewAdminServiceClient(conn).CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tr.GetTenant().GetTenantId()})
	if err != nil {
		return err
	}
	ctx := metadata.AppendToOutgoingContext(bg, "authorization", "Bearer "+kr.GetSecret())
	if _, err := debatedv1.NewRegistryServiceClient(conn).ImportDeal(ctx, &debatedv1.ImportDealRequest{Deal: &debatedv1.Deal{DealId: "load-deal", CompanyName: "Load Co"}}); err != nil {
		return err
	}
	dc := debatedv1.NewDebateServiceClient(conn)
	opts, _ := structpb.NewStruct(map[string]any{"max_rounds": *rounds, "message_bytes": 300})

	fmt.Printf("| debates/s offered | completed/s | create p50 | create p99 | end-to-end p50 | end-to-end p99 | errors | server RSS |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var baseline time.Duration
	for _, r := range strings.Split(*rates, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || rate <= 0 {
			return fmt.Errorf("rate %q", r)
		}
		samples := drive(ctx, dc, opts, rate, *step)
		var creates, totals []time.Duration
		errs := 0
		for _, s := range samples {
			if s.err != nil {
				errs++
				continue
			}
			creates = append(creates, s.create)
			totals = append(totals, s.total)
		}
		completed := float64(len(totals)) / step.Seconds()
		p99 := pct(totals, 0.99)
		fmt.Printf("| %.0f | %.1f | %s | %s | %s | %s | %d | %s |\n", rate, completed, ms(pct(creates, 0.5)), ms(pct(creates, 0.99)),
			ms(pct(totals, 0.5)), ms(p99), errs, rss(*metricsURL))
		if baseline == 0 {
			baseline = pct(totals, 0.5)
		}
		if errs > len(samples)/100 || (baseline > 0 && p99 > 20*baseline) {
			fmt.Printf("\nsaturated at %.0f debates/s offered (errors or p99 climbing)\n", rate)
			break
		}
	}
	return nil
}

// drive creates debates at rate for d, watches each to its end, and
// returns one sample per debate. Watching continues after d until the
// debates end (bounded by a minute).
func drive(ctx context.Context, dc debatedv1.DebateServiceClient, opts *structpb.Struct, rate float64, d time.Duration) []sample {
	var mu sync.Mutex
	var out []sample
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	stop := time.After(d)
	for {
		select {
		case <-stop:
			wg.Wait()
			return out
		case <-tick.C:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := one(ctx, dc, opts)
			mu.Lock()
			out = append(out, s)
			mu.Unlock()
		}()
	}
}

func one(ctx context.Context, dc debatedv1.DebateServiceClient, opts *structpb.Struct) sample {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	resp, err := dc.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: "load-deal", Protocol: "synthetic.v1", Options: opts})
	if err != nil {
		return sample{err: err}
	}
	created := time.Since(start)
	st, err := dc.WatchDebate(ctx, &debatedv1.WatchDebateRequest{DebateId: resp.GetDebate().GetDebateId()})
	if err != nil {
		return sample{err: err}
	}
	for {
		if _, err := st.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return sample{create: created, total: time.Since(start)}
			}
			return sample{err: err}
		}
	}
}

func pct(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// rss reads process_resident_memory_bytes from the server's metrics.
func rss(url string) string {
	if url == "" {
		return "-"
	}
	resp, err := http.Get(url) //nolint:gosec,noctx // the operator's own metrics URL
	if err != nil {
		return "?"
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return fmt.Sprintf("%.0f MiB", f/(1<<20))
		}
	}
	return "?"
}

// Command watchload measures WatchDebate at dashboard scale against a
// running debated: for each watcher count and each debate count it opens
// that many watchers (one gRPC connection each) on synthetic debates held
// at a human gate, approves the gates and reports the delivery latency of
// the live events, the live part's duration relative to one watcher, the
// events delivered per second and the server's peak memory, checking that
// every watcher got every seq exactly once and in order (internal/watchload).
// make watchload starts a local server and runs it.
//
//	watchload --addr localhost:50051 --admin-token T --metrics-url http://localhost:9090/metrics --watchers 1,1000 --debates 1,10
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/debated/debated/internal/watchload"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "watchload:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "localhost:50051", "debated address")
	admin := flag.String("admin-token", os.Getenv("DEBATED_ADMIN_TOKEN"), "admin token (a tenant, key and deal are made with it)")
	metricsURL := flag.String("metrics-url", "", "the server's /metrics, for its memory")
	watchers := flag.String("watchers", "1,100,1000", "watcher counts to run, in order")
	debates := flag.String("debates", "1,10", "debate counts to spread the watchers over")
	rounds := flag.Int("rounds", 50, "rounds of each synthetic debate (the gate holds it after the first)")
	msgBytes := flag.Int("message-bytes", 300, "size of each node's message")
	thinkMS := flag.Int("think-ms", 0, "how long each agent's message takes, in ms (0: the engine's pace; a model-backed debate's turns take seconds)")
	header := flag.Bool("header", true, "print the table's header")
	fullDecode := flag.Bool("full-decode", false, "decode every message in full, as a dashboard does (by default a watcher reads only each event's seq and time)")
	label := flag.String("label", "debated", "a first column naming the server (e.g. its commit)")
	serverProfile := flag.String("server-profile", "", "write a CPU profile of the server's live part (2 s, from /debug/pprof on the metrics address; the server needs DEBATED_PPROF=true) to this file")
	cpuProfile := flag.String("cpuprofile", "", "write the client's CPU profile to this file")
	floor := flag.Bool("floor", false, "after each run, push as many bytes over as many plain loopback TCP connections (no gRPC, no decoding) and print what that cost: the least CPU the run's delivery can take on this machine")
	ideal := flag.Bool("ideal", false, "replace the server's fan-out with the cheapest there is: one gRPC watcher per debate relays its messages to the others over plain loopback TCP, so the run measures what the debate and its watchers would cost with a fan-out that costs only the kernel's copies")
	idealPace := flag.Duration("ideal-pace", 0, "with --ideal: the least time between two writes to one TCP watcher (a write carries every message that came meanwhile)")
	compressor := flag.String("compressor", "", `the compressor the watchers ask for ("gzip"; default none): the server compresses what it sends them`)
	connect := flag.Bool("connect", false, "the watchers speak Connect (binary) over HTTP/1.1, as the dashboard does, instead of gRPC")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	ns, err := ints(*watchers)
	if err != nil {
		return err
	}
	ds, err := ints(*debates)
	if err != nil {
		return err
	}
	ctx := context.Background()
	key, err := watchload.Setup(ctx, *addr, *admin)
	if err != nil {
		return err
	}
	if *header {
		fmt.Println("| server | debates | watchers | live events/debate | delivery p50 / p95 / p99 / max | live part | vs 1 watcher | events/s delivered | messages | MiB received | server RSS peak | CPU server / client / machine |")
		fmt.Println("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	}
	for _, d := range ds {
		var base time.Duration
		for _, n := range ns {
			cfg := watchload.Config{Addr: *addr, APIKey: key, DealID: watchload.DealID, Watchers: n, Debates: d,
				Rounds: *rounds, MessageBytes: *msgBytes, ThinkMS: *thinkMS, MetricsURL: *metricsURL, FullDecode: *fullDecode, Ideal: *ideal, IdealPace: *idealPace, Compressor: *compressor, Connect: *connect}
			prof := newServerProfile(*metricsURL, *serverProfile)
			if prof != nil {
				cfg.OnLive, cfg.OnDone = prof.live, prof.done
			}
			res, err := watchload.Run(ctx, cfg)
			if prof != nil {
				prof.wait()
			}
			if err != nil {
				fmt.Printf("| %s | %d | %d | error: %v |\n", *label, d, n, err)
				continue
			}
			if base == 0 {
				base = res.Live
			}
			fmt.Printf("| %s | %d | %d | %d | %s / %s / %s / %s | %s | %.2f× | %.0f | %d | %.0f | %.0f MiB | %s / %s / %s |\n", *label, d, n, res.LiveEvents,
				ms(res.P50), ms(res.P95), ms(res.P99), ms(res.Max), secs(res.Live), float64(res.Live)/float64(base),
				res.PerSecond, res.Messages, float64(res.Bytes)/(1<<20), res.RSSPeak/(1<<20), secs(res.ServerCPU), secs(res.ClientCPU), secs(res.MachineCPU))
			if *floor {
				// Writes of the run's mean message size, as gRPC writes a
				// message at a time; once the server has settled (it closes
				// the run's streams and collects their garbage, on the same
				// cores).
				time.Sleep(3 * time.Second)
				write := int(max(1, res.Bytes/max(1, res.Messages)))
				fl, err := watchload.MedianFloor(ctx, 3, n, res.Bytes, write)
				if err != nil {
					return err
				}
				fmt.Printf("| floor | %d | %d | plain TCP, %d connections, %.0f MiB in %.0f KiB writes | | %s | | | | %.0f | | CPU %s |\n", d, n, fl.Conns,
					float64(fl.Bytes)/(1<<20), float64(write)/1024, secs(fl.Wall), float64(fl.Bytes)/(1<<20), secs(fl.CPU))
			}
		}
	}
	return nil
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("not a positive count: %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func ms(d time.Duration) string   { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) + " ms" }
func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// serverProfile saves the server's profiles of a run to file: its heap
// when the live part starts (file.heap0) and when the run ends
// (file.heap1), and a 2-second CPU profile from the start of the live
// part, which wait waits for (a short live part ends before it).
type serverProfile struct {
	base, file string
	cpu        sync.WaitGroup
}

// newServerProfile returns nil without a file or a metrics address.
func newServerProfile(metricsURL, file string) *serverProfile {
	if file == "" || metricsURL == "" {
		return nil
	}
	return &serverProfile{base: strings.TrimSuffix(metricsURL, "/metrics") + "/debug/pprof/", file: file}
}

func (p *serverProfile) live() {
	saveURL("server heap", p.base+"heap", p.file+".heap0")
	p.cpu.Go(func() { saveURL("server profile", p.base+"profile?seconds=2", p.file) })
}

func (p *serverProfile) done() { saveURL("server heap", p.base+"heap", p.file+".heap1") }

func (p *serverProfile) wait() { p.cpu.Wait() }

// saveURL writes what url answers to file; a failure is reported as what.
func saveURL(what, url, file string) {
	resp, err := http.Get(url) //nolint:gosec,noctx // the operator's own metrics address
	if err != nil {
		fmt.Fprintln(os.Stderr, what+":", err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	f, err := os.Create(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, what+":", err)
		return
	}
	defer func() { _ = f.Close() }()
	_, _ = io.Copy(f, resp.Body)
}

// Package watchload measures WatchDebate at dashboard scale: N watchers,
// each on a gRPC connection of its own, spread over one or more synthetic
// debates that a human gate holds until every watcher has caught up. It
// reports the delivery latency of the live events (the event's commit
// time to its arrival at the watcher), how long the live part of the
// debates took, the events delivered per second and the server's peak
// memory, and checks that every watcher got every seq exactly once and in
// order. cmd/watchload and cmd/debated's BenchmarkWatchDebate run it.
package watchload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // Config.Compressor "gzip"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// Config of one run.
type Config struct {
	// Addr is the server's gRPC address.
	Addr string
	// APIKey is a tenant's key; DealID a deal of that tenant.
	APIKey string
	DealID string
	// Watchers is how many watchers (and connections) to open; Debates
	// how many debates they are spread over, round robin.
	Watchers, Debates int
	// Rounds and MessageBytes shape each synthetic debate (the gate holds
	// it after round 1; the live part is the rest); ThinkMS, when > 0, is
	// how long each agent's message takes (synthetic.v1's think_ms), for a
	// debate at a model-backed debate's pace.
	Rounds, MessageBytes, ThinkMS int
	// MetricsURL, if set, is the server's /metrics: its
	// process_resident_memory_bytes is sampled during the run.
	MetricsURL string
	// Timeout bounds the run; default 5 minutes.
	Timeout time.Duration
	// FullDecode makes each watcher decode every message into a
	// WatchDebateResponse, as a dashboard does. By default a watcher reads
	// only what it checks (each event's seq and time) from the wire bytes:
	// the server, the client and PostgreSQL share this machine's cores, and
	// a thousand clients decoding every field would measure the client.
	FullDecode bool
	// Ideal replaces the server's fan-out with the cheapest there is: one
	// gRPC watcher per debate relays what it gets to the others over plain
	// loopback TCP (see fanout). What the run then costs is a floor for
	// any server on this machine.
	Ideal bool
	// Connect makes the watchers speak Connect (binary) over HTTP/1.1, as
	// the dashboard does, each on a connection of its own, instead of gRPC.
	Connect bool
	// Compressor, if set, is the compressor the watchers ask for
	// ("gzip"): the server then compresses what it sends them.
	Compressor string
	// IdealPace is the least time between two writes to one TCP watcher
	// of the ideal fan-out: the longer, the more messages a write carries.
	IdealPace time.Duration
	// OnLive, if set, is called as the live part starts (every watcher has
	// caught up; the gates are about to be approved), e.g. to start a
	// profile of the server.
	OnLive func()
	// OnDone, if set, is called when every watcher has seen the debates
	// end.
	OnDone func()
}

// Result of one run. Latencies are of live events only: those committed
// after the gate was approved, when every watcher was attached.
type Result struct {
	Watchers, Debates int
	// LiveEvents is the number of live events per debate (of the first).
	LiveEvents int
	// Delivered counts the live events received, over all watchers.
	Delivered          int64
	P50, P95, P99, Max time.Duration
	// Live is how long the live part took: from approving the gates to
	// the commit of the last debate's last event.
	Live time.Duration
	// PerSecond is Delivered / Live.
	PerSecond float64
	// Messages counts the messages received (a batch is one), Bytes their
	// encoded size; both include the replay before the live part.
	Messages, Bytes int64
	// RSSPeak is the server's peak resident memory in bytes (0 if not
	// sampled).
	RSSPeak float64
	// ServerCPU and ClientCPU are the CPU time the server (from its
	// metrics; 0 without them) and this process spent from approving the
	// gates until every watcher had the debates' last events: the debates'
	// own work plus delivering them.
	ServerCPU, ClientCPU time.Duration
	// MachineCPU is the busy time of all the machine's CPUs over the same
	// span (from /proc/stat; 0 where there is none): the server, the
	// client, PostgreSQL and anything else. Two cores over a live part of
	// L give 2L; what the debate with one watcher leaves of that is what
	// more watchers can use without slowing it.
	MachineCPU time.Duration
}

// Run runs one measurement. It returns an error if any watcher failed or
// got an event twice, out of order or not at all.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Watchers < 1 || cfg.Debates < 1 {
		return Result{}, errors.New("watchload: watchers and debates must be positive")
	}
	if cfg.Ideal && cfg.FullDecode {
		return Result{}, errors.New("watchload: the ideal fan-out relays wire bytes; it does not decode in full")
	}
	if cfg.Connect && (cfg.Ideal || cfg.FullDecode || cfg.Compressor != "") {
		return Result{}, errors.New("watchload: Connect watchers read wire bytes, uncompressed, from the server")
	}
	var httpClient *http.Client
	if cfg.Connect {
		httpClient = connectClient(cfg.Watchers)
		defer httpClient.CloseIdleConnections()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+cfg.APIKey)
	ctl, err := dial(cfg.Addr)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = ctl.Close() }()
	dc := debatedv1.NewDebateServiceClient(ctl)

	// The debates, each held at its gate.
	options := map[string]any{"max_rounds": cfg.Rounds, "message_bytes": cfg.MessageBytes, "gate_round": 1}
	if cfg.ThinkMS > 0 {
		options["think_ms"] = cfg.ThinkMS
	}
	opts, err := structpb.NewStruct(options)
	if err != nil {
		return Result{}, err
	}
	ids := make([]string, cfg.Debates)
	gates := make([]int64, cfg.Debates) // the seq of each gate event
	for i := range ids {
		resp, err := dc.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: cfg.DealID, Protocol: "synthetic.v1", Options: opts})
		if err != nil {
			return Result{}, fmt.Errorf("create debate: %w", err)
		}
		ids[i] = resp.GetDebate().GetDebateId()
		if gates[i], err = untilGate(ctx, dc, ids[i]); err != nil {
			return Result{}, err
		}
	}

	// The watchers, each on its own connection, from seq 0.
	ws := make([]*watcher, cfg.Watchers)
	var wg sync.WaitGroup
	ready := make(chan error, cfg.Watchers)
	var fanouts []*fanout // the relays are watchers 0 to Debates-1
	if cfg.Ideal {
		fanouts = make([]*fanout, cfg.Debates)
		for d := range fanouts {
			fanouts[d] = newFanout()
		}
	}
	var ln net.Listener
	if cfg.Ideal && cfg.Watchers > cfg.Debates {
		if ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0"); err != nil {
			return Result{}, err
		}
		defer func() { _ = ln.Close() }()
	}
	for i := range ws {
		d := i % cfg.Debates
		w := &watcher{debate: ids[d], gate: gates[d], compressor: cfg.Compressor}
		ws[i] = w
		if cfg.Ideal && i >= cfg.Debates {
			sender, receiver, err := tcpPair(ctx, ln)
			if err != nil {
				return Result{}, err
			}
			f := fanouts[d]
			wg.Go(func() { _ = f.write(sender, cfg.IdealPace) })
			wg.Go(func() { w.runTCP(receiver, ready) })
			continue
		}
		if cfg.Ideal {
			w.fan = fanouts[d]
		}
		if cfg.Connect {
			wg.Go(func() { w.runConnect(ctx, httpClient, cfg.Addr, cfg.APIKey, ready) })
			continue
		}
		conn, err := dial(cfg.Addr)
		if err != nil {
			return Result{}, err
		}
		defer func() { _ = conn.Close() }()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w.fan != nil {
				defer w.fan.close()
			}
			if cfg.FullDecode {
				w.run(ctx, debatedv1.NewDebateServiceClient(conn), ready)
				return
			}
			w.runLean(ctx, conn, ready)
		}()
	}
	for range ws {
		if err := <-ready; err != nil {
			cancel()
			wg.Wait()
			return Result{}, fmt.Errorf("watcher: %w", err)
		}
	}

	var rss rssSampler
	stopRSS := rss.start(cfg.MetricsURL)
	if cfg.OnLive != nil {
		cfg.OnLive()
	}
	serverCPU0, clientCPU0, machineCPU0 := serverCPU(cfg.MetricsURL), processCPU(), machineCPU()
	start := time.Now()
	for _, id := range ids {
		got, err := dc.GetDebate(ctx, &debatedv1.GetDebateRequest{DebateId: id})
		if err != nil {
			return Result{}, err
		}
		if _, err := dc.ResolveHumanGate(ctx, &debatedv1.ResolveHumanGateRequest{DebateId: id,
			GateId: got.GetGates()[0].GetGateId(), Approve: true, Reason: "watchload"}); err != nil {
			return Result{}, fmt.Errorf("approve gate: %w", err)
		}
	}
	wg.Wait()
	res := Result{Watchers: cfg.Watchers, Debates: cfg.Debates,
		ServerCPU: serverCPU(cfg.MetricsURL) - serverCPU0, ClientCPU: processCPU() - clientCPU0, MachineCPU: machineCPU() - machineCPU0}
	stopRSS()
	res.RSSPeak = rss.peak
	if cfg.OnDone != nil {
		cfg.OnDone()
	}

	var lat []time.Duration
	var lastCommit time.Time
	heads := map[string]int64{} // debate → its final head
	for i, w := range ws {
		if w.err != nil {
			return res, fmt.Errorf("watcher %d: %w", i, w.err)
		}
		head, ok := heads[w.debate]
		if !ok {
			final, err := dc.GetDebate(ctx, &debatedv1.GetDebateRequest{DebateId: w.debate})
			if err != nil {
				return res, err
			}
			head = final.GetDebate().GetLastSeq()
			heads[w.debate] = head
		}
		if w.last != head {
			return res, fmt.Errorf("watcher %d: stream ended at seq %d, the debate's head is %d", i, w.last, head)
		}
		lat = append(lat, w.lat...)
		res.Messages += w.msgs
		res.Bytes += w.bytes
		if w.lastTime.After(lastCommit) {
			lastCommit = w.lastTime
		}
		if i == 0 {
			res.LiveEvents = len(w.lat)
		}
	}
	res.Delivered = int64(len(lat))
	slices.Sort(lat)
	res.P50, res.P95, res.P99 = pct(lat, 0.50), pct(lat, 0.95), pct(lat, 0.99)
	if len(lat) > 0 {
		res.Max = lat[len(lat)-1]
	}
	res.Live = lastCommit.Sub(start)
	if res.Live > 0 {
		res.PerSecond = float64(res.Delivered) / res.Live.Seconds()
	}
	return res, nil
}

// DealID is the deal Setup imports.
const DealID = "watchload-deal"

// Setup makes a tenant with the admin token, an API key of it and a deal
// (DealID), and returns the key.
func Setup(ctx context.Context, addr, adminToken string) (string, error) {
	conn, err := dial(addr)
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close() }()
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+adminToken)
	ac := debatedv1.NewAdminServiceClient(conn)
	tr, err := ac.CreateTenant(actx, &debatedv1.CreateTenantRequest{Name: "watchload"})
	if err != nil {
		return "", fmt.Errorf("create tenant: %w", err)
	}
	kr, err := ac.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tr.GetTenant().GetTenantId()})
	if err != nil {
		return "", fmt.Errorf("create key: %w", err)
	}
	kctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+kr.GetSecret())
	if _, err := debatedv1.NewRegistryServiceClient(conn).ImportDeal(kctx, &debatedv1.ImportDealRequest{
		Deal: &debatedv1.Deal{DealId: DealID, CompanyName: "Watchload Co"}}); err != nil {
		return "", fmt.Errorf("import deal: %w", err)
	}
	return kr.GetSecret(), nil
}

// dial connects as a browser does: HTTP/2 flow-control windows of 1 MiB
// (Chromium's are larger), so a watcher acknowledges what it reads every
// 256 KiB rather than every 16 KiB of gRPC's default 64 KiB window.
func dial(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(1<<20), grpc.WithInitialConnWindowSize(1<<20))
}

// untilGate reads the debate's stream until its gate opens and returns the
// gate event's seq.
func untilGate(ctx context.Context, dc debatedv1.DebateServiceClient, id string) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := dc.WatchDebate(ctx, &debatedv1.WatchDebateRequest{DebateId: id})
	if err != nil {
		return 0, err
	}
	for {
		msg, err := st.Recv()
		if err != nil {
			return 0, fmt.Errorf("waiting for the gate of %s: %w", id, err)
		}
		for _, e := range apiconv.WatchEvents(msg) {
			if e.GetEventType() == "human_gate.created" {
				return e.GetSeq(), nil
			}
		}
	}
}

// watcher is one watch stream and what it saw.
type watcher struct {
	debate   string
	gate     int64
	last     int64
	msgs     int64
	bytes    int64           // of the messages received
	lat      []time.Duration // of the events after the gate
	lastTime time.Time       // commit time of the last event
	err      error
	fan      *fanout // a relay's TCP watchers (Config.Ideal)
	// compressor is the one the watcher asks for (Config.Compressor).
	compressor string
}

// saw records an event with the given seq and commit time t, received at
// now: it returns an error unless seq follows the last one seen, and
// counts the latency of the events after the gate.
func (w *watcher) saw(seq int64, t, now time.Time) error {
	if seq != w.last+1 {
		return fmt.Errorf("got seq %d after %d", seq, w.last)
	}
	w.last = seq
	if w.last > w.gate {
		w.lat = append(w.lat, now.Sub(t))
		w.lastTime = t
	}
	return nil
}

// callOptions are opts and the watcher's compressor, if it asks for one.
func (w *watcher) callOptions(opts ...grpc.CallOption) []grpc.CallOption {
	if w.compressor != "" {
		opts = append(opts, grpc.UseCompressor(w.compressor))
	}
	return opts
}

// run watches from seq 0, says ready once it has the gate, and checks
// that seqs come exactly once and in order.
func (w *watcher) run(ctx context.Context, dc debatedv1.DebateServiceClient, ready chan<- error) {
	st, err := dc.WatchDebate(ctx, &debatedv1.WatchDebateRequest{DebateId: w.debate}, w.callOptions()...)
	if err != nil {
		ready <- err
		return
	}
	var msg *debatedv1.WatchDebateResponse
	w.follow(ready, func() (int, error) {
		var err error
		if msg, err = st.Recv(); err != nil {
			return 0, err
		}
		return proto.Size(msg), nil
	}, func(saw func(seq int64, t time.Time) error) error {
		for _, e := range apiconv.WatchEvents(msg) {
			if err := saw(e.GetSeq(), e.GetTime().AsTime()); err != nil {
				return err
			}
		}
		return nil
	})
}

// runLean is run reading only each event's seq and time from the wire:
// the stream's messages are received as bytes (rawCodec) and scanned.
func (w *watcher) runLean(ctx context.Context, conn *grpc.ClientConn, ready chan<- error) {
	desc := &grpc.StreamDesc{StreamName: "WatchDebate", ServerStreams: true}
	st, err := conn.NewStream(ctx, desc, debatedv1.DebateService_WatchDebate_FullMethodName, w.callOptions(grpc.ForceCodecV2(rawCodec{}))...)
	if err == nil {
		err = st.SendMsg(&debatedv1.WatchDebateRequest{DebateId: w.debate})
	}
	if err == nil {
		err = st.CloseSend()
	}
	if err != nil {
		ready <- err
		return
	}
	var msg rawMsg
	w.follow(ready, func() (int, error) {
		if err := st.RecvMsg(&msg); err != nil {
			return 0, err
		}
		if w.fan != nil {
			w.fan.forward(msg.b)
		}
		return len(msg.b), nil
	}, func(saw func(seq int64, t time.Time) error) error {
		return scanEvents(msg.b, saw)
	})
}

// follow is the receive loop of run and runLean: recv receives the next
// message and returns its size in bytes (io.EOF at the stream's end);
// events hands each event of that message, in order, to saw. follow says
// ready once the gate has been seen, or else sends the error (nil at a
// clean end) that stopped it; it keeps that error in w.err.
func (w *watcher) follow(ready chan<- error, recv func() (int, error), events func(saw func(seq int64, t time.Time) error) error) {
	signalled := false
	defer func() {
		if !signalled {
			ready <- w.err
		}
	}()
	for {
		n, err := recv()
		now := time.Now()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			w.err = err
			return
		}
		w.msgs++
		w.bytes += int64(n)
		if err := events(func(seq int64, t time.Time) error {
			return w.saw(seq, t, now)
		}); err != nil {
			w.err = err
			return
		}
		if !signalled && w.last >= w.gate {
			signalled = true
			ready <- nil
		}
	}
}

// rawMsg is a received message's bytes.
type rawMsg struct{ b []byte }

// rawCodec sends requests as protobuf and hands responses over as their
// bytes (reusing the rawMsg's buffer).
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, err := proto.Marshal(v.(proto.Message))
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m := v.(*rawMsg)
	m.b = m.b[:0]
	for _, buf := range data {
		m.b = append(m.b, buf.ReadOnlyData()...)
	}
	return nil
}

func (rawCodec) Name() string { return "proto" }

// scanEvents calls fn with the seq and time of each event of a
// WatchDebateResponse's wire bytes (field 1, or the repeated field 3), in
// order.
func scanEvents(b []byte, fn func(seq int64, t time.Time) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if (num == 1 || num == 3) && typ == protowire.BytesType {
			ev, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			seq, t, err := eventSeqTime(ev)
			if err != nil {
				return err
			}
			if err := fn(seq, t); err != nil {
				return err
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	return nil
}

// eventSeqTime reads a LedgerEvent's seq (field 2) and time (field 8, a
// Timestamp: seconds 1, nanos 2).
func eventSeqTime(b []byte) (int64, time.Time, error) {
	var seq, sec, nsec int64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, time.Time{}, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == 2 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, time.Time{}, protowire.ParseError(n)
			}
			seq, b = int64(v), b[n:]
		case num == 8 && typ == protowire.BytesType:
			ts, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, time.Time{}, protowire.ParseError(n)
			}
			b = b[n:]
			for len(ts) > 0 {
				tn, tt, k := protowire.ConsumeTag(ts)
				if k < 0 || tt != protowire.VarintType {
					return 0, time.Time{}, errors.New("watchload: bad timestamp")
				}
				v, m := protowire.ConsumeVarint(ts[k:])
				if m < 0 {
					return 0, time.Time{}, protowire.ParseError(m)
				}
				ts = ts[k+m:]
				switch tn {
				case 1:
					sec = int64(v)
				case 2:
					nsec = int64(v)
				}
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return 0, time.Time{}, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return seq, time.Unix(sec, nsec), nil
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// rssSampler polls the server's resident memory every 50 ms.
type rssSampler struct {
	mu   sync.Mutex
	peak float64
}

func (r *rssSampler) start(url string) (stop func()) {
	if url == "" {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		// Every 200ms: a scrape costs the server a gather of its registry,
		// which is CPU the measurement would take from the debate. (RSS
		// hardly falls: a Go heap is returned to the system lazily.)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, err := RSS(url); err == nil {
				r.mu.Lock()
				r.peak = max(r.peak, v)
				r.mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// RSS reads process_resident_memory_bytes from a Prometheus endpoint.
func RSS(url string) (float64, error) { return metric(url, "process_resident_memory_bytes") }

// serverCPU reads the server's process_cpu_seconds_total (0 without a
// metrics URL or on an error: the run then reports no server CPU).
func serverCPU(url string) time.Duration {
	if url == "" {
		return 0
	}
	v, err := metric(url, "process_cpu_seconds_total")
	if err != nil {
		return 0
	}
	return time.Duration(v * float64(time.Second))
}

// processCPU is this process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineCPU is how long the machine's CPUs have been busy (not idle or
// waiting for I/O) since boot, from /proc/stat; 0 where it cannot be read.
func machineCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0
		}
		// user nice system idle iowait irq softirq steal guest guest_nice:
		// guest time is already in user and nice.
		if i != 3 && i != 4 && i < 8 {
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/stat: 100 on every Linux
// architecture Go runs on.
const clockTicks = 100

// metric reads a gauge or counter without labels from a Prometheus
// endpoint.
func metric(url, name string) (float64, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil) //nolint:noctx // the operator's own metrics URL
	if err != nil {
		return 0, err
	}
	// Uncompressed: gzip would cost the server more CPU than the bytes do.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req) //nolint:gosec // the operator's own metrics URL
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no %s", name)
}

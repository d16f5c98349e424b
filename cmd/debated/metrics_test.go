package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/metrics"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// scrape returns the value of the first sample of /metrics matching re
// (0 when absent).
func scrape(t *testing.T, addr, re string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^` + re + ` ([0-9.e+-]+)$`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	return v
}

// TestMetricsMoveAsADebateRuns scrapes /metrics before and after a debate.
func TestMetricsMoveAsADebateRuns(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	s := startStack(t, "sqlite", map[string]string{"DEBATED_METRICS_ADDR": addr})
	steps := `debated_node_steps_total\{node="open",protocol="synthetic.v1"\}`
	done := `debated_debates_finished_total\{protocol="synthetic.v1",status="completed",stop_reason="MAX_ROUNDS"\}`
	require.Zero(t, scrape(t, addr, steps))
	require.Zero(t, scrape(t, addr, done))

	d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 2})
	s.watch(t, s.a, d.GetDebateId(), 0, nil)
	require.Equal(t, 2.0, scrape(t, addr, steps), "one open node per round")
	require.Equal(t, 1.0, scrape(t, addr, done))
	require.Positive(t, scrape(t, addr, `debated_node_step_seconds_count\{node="check",protocol="synthetic.v1"\}`))
	require.Positive(t, scrape(t, addr, `debated_ledger_events_total\{type="agent.message"\}`))
	require.Positive(t, scrape(t, addr, `grpc_server_handled_total\{grpc_code="OK",grpc_method="CreateDebate",grpc_service="debated.v1.DebateService",grpc_type="unary"\}`))
	require.Equal(t, 1.0, scrape(t, addr, `debated_debate_rounds_count\{protocol="synthetic.v1"\}`))

	// An IDIS debate moves the tool and gate metrics.
	_, err := s.debate.CreateDebate(s.a, idisRequest("deal-a"))
	require.NoError(t, err)
	list, err := s.debate.ListDebates(s.a, listAll())
	require.NoError(t, err)
	for _, x := range list.GetDebates() {
		s.watch(t, s.a, x.GetDebateId(), 0, nil)
	}
	require.Positive(t, scrape(t, addr, `debated_tool_calls_total\{result="SUCCESS",tool="lookup_claim"\}`))
}

// TestMaxRunningDebates: a tenant at its limit of running debates gets
// ResourceExhausted with a retry hint; another tenant does not.
func TestMaxRunningDebates(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", map[string]string{"DEBATED_MAX_RUNNING_DEBATES": "1"})
	long := map[string]any{"max_rounds": 50, "message_bytes": 16384}
	s.create(t, s.a, "deal-a", long)
	_, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "synthetic.v1", Options: mustStruct(t, long)})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	s.create(t, s.b, "deal-b", map[string]any{"max_rounds": 1})
}

// TestHealthPort: a plaintext health-only port answers for the probes, and
// serves nothing else.
func TestHealthPort(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	startStack(t, "sqlite", map[string]string{"DEBATED_HEALTH_ADDR": addr})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	waitServing(t, conn)
	_, err = debatedv1.NewDebateServiceClient(conn).ListProtocols(context.Background(), &debatedv1.ListProtocolsRequest{})
	require.Equal(t, codes.Unimplemented, status.Code(err), "the health port serves health only")
}

// TestPprofOnlyWhenAsked: the metrics address serves Go's profiles with
// --pprof (DEBATED_PPROF) and not without.
func TestPprofOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		lis := freeAddr(t)
		run, err := newMetricsServer(lis, on, metrics.New(), slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- run(ctx) }()
		resp, err := http.Get("http://" + lis + "/debug/pprof/")
		require.NoError(t, err)
		_ = resp.Body.Close()
		stop()
		require.NoError(t, <-done)
		if on {
			require.Equal(t, http.StatusOK, resp.StatusCode)
		} else {
			require.Equal(t, http.StatusNotFound, resp.StatusCode)
		}
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// childEnv makes the test binary act as debated (see TestMain).
const childEnv = "DEBATED_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// child is a debated process run from the test binary.
type child struct {
	cmd  *exec.Cmd
	addr string
}

func startChild(t testing.TB, addr string, env []string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--listen", addr)
	cmd.Env = append(append(os.Environ(), childEnv+"=1", "DEBATED_LOG_LEVEL=error"), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	c := &child{cmd: cmd, addr: addr}
	t.Cleanup(func() { c.kill() })
	return c
}

func (c *child) kill() {
	if c.cmd.Process != nil && c.cmd.ProcessState == nil {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		_ = c.cmd.Wait()
	}
}

// waitServing waits until the child answers its health check.
func waitServing(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := healthpb.NewHealthClient(conn)
	for {
		r, err := h.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
		if err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
		require.NoError(t, ctx.Err(), "child never became healthy")
		time.Sleep(20 * time.Millisecond)
	}
}

// crashHarness runs debates in a child debated, SIGKILLs it at random moments
// kills times, restarting it each time, then lets every debate finish and
// checks every ledger.
func crashHarness(t *testing.T, env []string, kills int) {
	addr := freeAddr(t)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()

	c := startChild(t, addr, env)
	waitServing(t, conn)
	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer crash-admin")
	admin := debatedv1.NewAdminServiceClient(conn)
	tr, err := admin.CreateTenant(actx, &debatedv1.CreateTenantRequest{Name: "crash"})
	require.NoError(t, err)
	kr, err := admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tr.GetTenant().GetTenantId()})
	require.NoError(t, err)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+kr.GetSecret())
	req, err := apiconv.BundleToProto(storetest.SampleBundle("deal-crash"))
	require.NoError(t, err)
	_, err = debatedv1.NewRegistryServiceClient(conn).ImportDeal(ctx, req)
	require.NoError(t, err)
	dc := debatedv1.NewDebateServiceClient(conn)
	opts := mustStruct(t, map[string]any{"max_rounds": 5, "message_bytes": 300})

	rng := rand.New(rand.NewPCG(1, 2))
	var ids []string
	for i := range kills {
		// Two new debates per life, created with idempotency keys so a
		// create interrupted by the kill can be retried safely.
		for j := range 2 {
			key := fmt.Sprintf("crash-%d-%d", i, j)
			resp, err := dc.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: "deal-crash", Protocol: "synthetic.v1", Options: opts, IdempotencyKey: key})
			require.NoError(t, err)
			ids = append(ids, resp.GetDebate().GetDebateId())
		}
		time.Sleep(time.Duration(20+rng.IntN(200)) * time.Millisecond)
		c.kill()
		c = startChild(t, addr, env)
		waitServing(t, conn)
	}

	// Let everything finish, then check every ledger.
	for _, id := range ids {
		s := &stack{debate: dc}
		msgs := s.watch(t, ctx, id, 0, nil)
		requireChain(t, msgs, 1)
		require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus(), "debate %s", id)
		seen := map[string]bool{}
		completed := 0
		for _, m := range msgs {
			e := m.GetEvent()
			if e.GetEventType() != "node.completed" {
				continue
			}
			k := fmt.Sprintf("%s@%d", e.GetNode(), e.GetRound())
			require.False(t, seen[k], "debate %s: node %s committed twice", id, k)
			seen[k] = true
			completed++
		}
		require.Equal(t, 5*7+1, completed, "debate %s: every node of 5 rounds and the finish, once each", id)
		v, err := dc.VerifyDebate(ctx, &debatedv1.VerifyDebateRequest{DebateId: id})
		require.NoError(t, err)
		require.True(t, v.GetOk(), "debate %s: %v", id, v.GetProblems())
	}
	t.Logf("%d kills, %d debates completed and verified", kills, len(ids))
}

func TestCrashRecoveryPostgres(t *testing.T) {
	t.Parallel()
	url := migratedDatabase(t)
	metrics := freeAddr(t)
	crashHarness(t, []string{
		"DEBATED_DATABASE_URL=" + url, "DEBATED_MIGRATE_ON_START=false", "DEBATED_SIGNING_KEYS=" + testSigningKeys, "DEBATED_CHECKPOINT_KEYS=" + testCheckpointKeys,
		"DEBATED_ADMIN_TOKEN=crash-admin", "DEBATED_JOB_SLICE=300ms", "DEBATED_RESCUE_AFTER=700ms",
		"DEBATED_METRICS_ADDR=" + metrics,
	}, 50)
	requireQueueDrained(t, url, metrics)
}

// requireQueueDrained waits until no debate job of the database at url is
// waiting or running, as River's tables and the last replica's
// debated_queue_depth both say. Every SIGKILL left its jobs running: the
// sweeper cancels them when it takes their debates over, River's rescuer
// (which runs every 30 seconds on the leader, once the jobs' timeout has
// passed) finalises them.
func requireQueueDrained(t *testing.T, url, metricsAddr string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var running, waiting int
	deadline := time.Now().Add(2 * time.Minute)
	for {
		require.NoError(t, conn.QueryRow(context.Background(), `SELECT
			count(*) FILTER (WHERE state = 'running'),
			count(*) FILTER (WHERE state IN ('available', 'scheduled', 'retryable', 'pending'))
			FROM river_job WHERE kind = 'debated.debate'`).Scan(&running, &waiting))
		if running == 0 && waiting == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d debate jobs still running and %d waiting", running, waiting)
		time.Sleep(500 * time.Millisecond)
	}
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Regexp(t, `(?m)^debated_queue_depth 0$`, string(body))
}

func TestCrashRecoveryEmbedded(t *testing.T) {
	t.Parallel()
	crashHarness(t, []string{"DEBATED_DATA_DIR=" + t.TempDir(), "DEBATED_ADMIN_TOKEN=crash-admin"}, 25)
}

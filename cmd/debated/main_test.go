package main

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/testutil/pgtest"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// syncBuffer is a bytes.Buffer safe for the server's log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the real binary's entry point with env, waits until it
// listens, and returns a client connection and a stop function that sends
// the equivalent of SIGTERM and returns run's error.
func start(t *testing.T, args []string, env map[string]string) (*grpc.ClientConn, func() error, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	logs := &syncBuffer{}
	go func() {
		errc <- run(ctx, args, func(k string) string { return env[k] }, logs, logs, func(a net.Addr) { addrc <- a })
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-errc:
		cancel()
		t.Fatalf("debated exited before listening: %v\n%s", err, logs)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("debated did not listen within 60s\n%s", logs)
	}
	conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-errc:
			return err
		case <-time.After(30 * time.Second):
			t.Fatalf("debated did not stop within 30s")
			return nil
		}
	}
	t.Cleanup(func() {
		_ = conn.Close()
		_ = stop()
	})
	return conn, stop, logs
}

func exercise(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	ctx := context.Background()
	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, h.GetStatus())

	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer e2e-admin")
	admin := debatedv1.NewAdminServiceClient(conn)
	tr, err := admin.CreateTenant(actx, &debatedv1.CreateTenantRequest{Name: "e2e"})
	require.NoError(t, err)
	kr, err := admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tr.GetTenant().GetTenantId()})
	require.NoError(t, err)
	tctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+kr.GetSecret())
	reg := debatedv1.NewRegistryServiceClient(conn)
	resp, err := reg.ImportDeal(tctx, &debatedv1.ImportDealRequest{Deal: &debatedv1.Deal{DealId: "e2e-deal", CompanyName: "E2E Co"}})
	require.NoError(t, err)
	require.True(t, resp.GetCreated())
	got, err := reg.GetDeal(tctx, &debatedv1.GetDealRequest{DealId: "e2e-deal"})
	require.NoError(t, err)
	require.Equal(t, "E2E Co", got.GetDeal().GetDeal().GetCompanyName())
}

func TestServeEmbedded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"DEBATED_ADMIN_TOKEN": "e2e-admin"}
	conn, stop, logs := start(t, []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir}, env)
	exercise(t, conn)
	require.NoError(t, stop())
	require.Contains(t, logs.String(), "embedded store")
	require.Contains(t, logs.String(), "stopped")

	// The data survives a restart.
	conn, stop, _ = start(t, []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir}, env)
	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer e2e-admin")
	lt, err := debatedv1.NewAdminServiceClient(conn).ListTenants(actx, &debatedv1.ListTenantsRequest{})
	require.NoError(t, err)
	require.Len(t, lt.GetTenants(), 1)
	require.NoError(t, stop())
}

// migratedDatabase gives the test a fresh PostgreSQL database, migrated
// by "debated migrate", and returns its URL.
func migratedDatabase(t testing.TB) string {
	t.Helper()
	url := pgtest.NewDatabase(t)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"migrate"}, func(k string) string {
		return map[string]string{"DEBATED_DATABASE_URL": url}[k]
	}, &out, &out, nil), out.String())
	return url
}

func TestServePostgres(t *testing.T) {
	t.Parallel()
	url := migratedDatabase(t)
	env := map[string]string{"DEBATED_ADMIN_TOKEN": "e2e-admin", "DEBATED_DATABASE_URL": url, "DEBATED_MIGRATE_ON_START": "false",
		"DEBATED_SIGNING_KEYS": testSigningKeys, "DEBATED_CHECKPOINT_KEYS": testCheckpointKeys}
	conn, stop, _ := start(t, []string{"serve", "--listen", "127.0.0.1:0"}, env)
	exercise(t, conn)
	require.NoError(t, stop())
}

func TestBadCommandLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	env := func(string) string { return "" }
	require.Error(t, run(context.Background(), nil, env, &out, &out, nil))
	require.Error(t, run(context.Background(), []string{"frobnicate"}, env, &out, &out, nil))
	require.Error(t, run(context.Background(), []string{"migrate"}, env, &out, &out, nil), "migrate without a URL")
	require.Error(t, run(context.Background(), []string{"serve", "--log-level", "loud"}, env, &out, &out, nil))
	require.Error(t, run(context.Background(), []string{"serve", "extra"}, env, &out, &out, nil))
	bad := func(k string) string { return map[string]string{"DEBATED_SHUTDOWN_TIMEOUT": "soon"}[k] }
	require.Error(t, run(context.Background(), []string{"serve"}, bad, &out, &out, nil))
}

// testSigningKeys is a fixed ledger signing secret for tests.
const testSigningKeys = "v1:c2lnbmluZy1zZWNyZXQtZm9yLXRlc3RzLW9ubHktMzItYnl0ZXMh"

// testCheckpointKeys signs the tests' checkpoints (32 bytes, base64).
const testCheckpointKeys = "v1:Y2hlY2twb2ludC1zZWNyZXQtZm9yLXRlc3RzLW9ubHktMzJi"

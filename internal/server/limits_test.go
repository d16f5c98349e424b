package server_test

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

// TestTenantRateLimit: a tenant over its rate gets ResourceExhausted with a
// retry hint, while another tenant is unaffected.
func TestTenantRateLimit(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	srv, err := server.New(server.Stores{Tenants: st, Registry: st, Grading: st},
		server.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler), TenantRPS: 0.001, TenantBurst: 5})
	require.NoError(t, err)
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	b := &bundle{conn: conn, admin: debatedv1.NewAdminServiceClient(conn), registry: debatedv1.NewRegistryServiceClient(conn)}
	_, actx := b.tenant(t, "a")
	_, bctx := b.tenant(t, "b")

	for range 5 {
		_, err := b.registry.ListDeals(actx, &debatedv1.ListDealsRequest{})
		require.NoError(t, err)
	}
	_, err = b.registry.ListDeals(actx, &debatedv1.ListDealsRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	var retry *errdetails.RetryInfo
	for _, d := range status.Convert(err).Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	require.NotNil(t, retry, "the refusal says when to retry")
	require.Positive(t, retry.GetRetryDelay().AsDuration())

	_, err = b.registry.ListDeals(bctx, &debatedv1.ListDealsRequest{})
	require.NoError(t, err, "another tenant is unaffected")
	// The admin API is not a tenant's call.
	_, err = b.admin.ListTenants(bearer(context.Background(), adminToken), &debatedv1.ListTenantsRequest{})
	require.NoError(t, err)
}

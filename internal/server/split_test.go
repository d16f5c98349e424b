package server_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// serveTCP runs a server on a loopback TCP port, natively (Serve) or split
// with the HTTP handler (ServeAll), and returns its address.
func serveTCP(t testing.TB, split bool) (*server.Server, string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "debated.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	srv, err := server.New(server.Stores{Tenants: st, Registry: st, Grading: st}, server.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	errc := make(chan error, 1)
	if split {
		h, err := srv.HTTPHandler(server.HTTPConfig{})
		require.NoError(t, err)
		go func() { errc <- srv.ServeAll(lis, h) }()
	} else {
		go func() { errc <- srv.Serve(lis) }()
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		require.NoError(t, <-errc)
	})
	return srv, lis.Addr().String()
}

func dialTCP(t testing.TB, addr string) *bundle {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return &bundle{conn: conn, admin: debatedv1.NewAdminServiceClient(conn), registry: debatedv1.NewRegistryServiceClient(conn)}
}

// TestSplitListener serves native gRPC (HTTP/2 with prior knowledge) and
// HTTP/1.1 on one port, including a request shorter than the HTTP/2
// preface, and shuts down cleanly with both kinds of connection open.
func TestSplitListener(t *testing.T) {
	t.Parallel()
	_, addr := serveTCP(t, true)
	b := dialTCP(t, addr)
	_, err := healthpb.NewHealthClient(b.conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	_, ctx := b.tenant(t, "split")
	_, err = b.registry.ImportDeal(ctx, importRequest(t, "deal-1"))
	require.NoError(t, err)

	// A bare HTTP/1.0 request is 18 bytes: the split must not wait for 24.
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "no dashboard configured: 404, but answered")

	// REST on the same port as the gRPC call above.
	req, err := http.NewRequestWithContext(context.Background(), "GET", "http://"+addr+"/v1/deals", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer nope")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"))
}

// BenchmarkGRPCPath measures a native gRPC unary call (GetClaim) over
// loopback TCP when the port serves gRPC only (Serve) and when it is split
// with the browser protocols (ServeAll): the split must cost nothing per
// call. Run both interleaved: -bench GRPCPath -count 6.
func BenchmarkGRPCPath(b *testing.B) {
	for _, mode := range []string{"grpc-only", "split"} {
		b.Run(mode, func(b *testing.B) {
			_, addr := serveTCP(b, mode == "split")
			env := dialTCP(b, addr)
			_, ctx := env.tenant(b, "bench")
			req := importRequest(b, "deal-1")
			_, err := env.registry.ImportDeal(ctx, req)
			require.NoError(b, err)
			get := &debatedv1.GetClaimRequest{ClaimId: req.Claims[0].GetClaimId()}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := env.registry.GetClaim(ctx, get); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGRPCPathHealth is BenchmarkGRPCPath with the cheapest call
// (a health check: no authentication, no store), so that the transport is
// most of what it measures.
func BenchmarkGRPCPathHealth(b *testing.B) {
	for _, mode := range []string{"grpc-only", "split"} {
		b.Run(mode, func(b *testing.B) {
			_, addr := serveTCP(b, mode == "split")
			hc := healthpb.NewHealthClient(dialTCP(b, addr).conn)
			req := &healthpb.HealthCheckRequest{}
			_, err := hc.Check(context.Background(), req)
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := hc.Check(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

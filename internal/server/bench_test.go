package server_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// BenchmarkImportDeal measures ImportDeal of the 7-claim sample deal through
// the whole gRPC stack (bufconn, interceptors, validation, store), one new
// deal per iteration.
func BenchmarkImportDeal(b *testing.B) {
	for _, kind := range storeKinds {
		b.Run(kind, func(b *testing.B) {
			env := setup(b, kind, adminToken)
			_, ctx := env.tenant(b, "bench")
			reqs := make([]*debatedv1.ImportDealRequest, b.N)
			for i := range reqs {
				reqs[i] = importRequest(b, fmt.Sprintf("deal-%d", i))
				for _, c := range reqs[i].Claims {
					c.ClaimId = fmt.Sprintf("%s-%d", c.ClaimId, i)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := env.registry.ImportDeal(ctx, reqs[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetClaim measures GetClaim through the whole gRPC stack.
func BenchmarkGetClaim(b *testing.B) {
	for _, kind := range storeKinds {
		b.Run(kind, func(b *testing.B) {
			env := setup(b, kind, adminToken)
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

// BenchmarkGradeDealLarge measures GradeDeal of a deal of
// DEBATED_BENCH_CLAIMS claims (default 2000) through the whole gRPC stack:
// time, allocations, and the size of the answer (resp-bytes), which must
// not grow with the deal. The first iteration records every change; later
// ones record none.
func BenchmarkGradeDealLarge(b *testing.B) {
	claims := 2000
	if v, err := strconv.Atoi(os.Getenv("DEBATED_BENCH_CLAIMS")); err == nil && v > 0 {
		claims = v
	}
	for _, kind := range storeKinds {
		b.Run(kind, func(b *testing.B) {
			env := setup(b, kind, adminToken, func(c *server.Config) { c.MaxRecvMsgSize = 64 << 20 })
			_, ctx := env.tenant(b, "bench")
			req, err := apiconv.BundleToProto(storetest.LargeBundle("deal-large", claims))
			require.NoError(b, err)
			_, err = env.registry.ImportDeal(ctx, req)
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			size := 0
			for range b.N {
				resp, err := env.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: "deal-large"})
				if err != nil {
					b.Fatal(err)
				}
				size = proto.Size(resp)
			}
			b.ReportMetric(float64(size), "resp-bytes")
		})
	}
}

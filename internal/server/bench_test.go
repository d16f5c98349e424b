package server_test

import (
	"fmt"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/stretchr/testify/require"
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

package storetest

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/debated/debated/internal/debate"
)

// BenchDealImport measures DealImport of SampleBundle (7 claims), a fresh
// deal id per iteration, in a tenant of its own.
func BenchDealImport(b *testing.B, s Store) {
	benchImport(b, s, func(dealID string) *debate.DealBundle { return SampleBundle(dealID) })
}

// BenchDealImportLarge measures DealImport of LargeBundle with the given
// number of claims, a fresh deal id per iteration.
func BenchDealImportLarge(b *testing.B, s Store, claims int) {
	benchImport(b, s, func(dealID string) *debate.DealBundle { return LargeBundle(dealID, claims) })
}

func benchImport(b *testing.B, s Store, bundle func(dealID string) *debate.DealBundle) {
	ctx, _ := NewTenant(b, s)
	prefix := "bench-" + uuid.NewString()[:8]
	// Bundles and hashes are made outside the timer: the store is measured.
	type job struct {
		b    *debate.DealBundle
		hash string
	}
	next := func(i int) job {
		bd := bundle(fmt.Sprintf("%s-%d", prefix, i))
		return job{bd, contentHash(b, bd)}
	}
	i := 0
	j := next(i)
	b.ResetTimer()
	for b.Loop() {
		res, err := s.DealImport(ctx, j.b, j.hash, importedAt)
		if err != nil || !res.Created {
			b.Fatalf("import: created %v, %v", res.Created, err)
		}
		b.StopTimer()
		i++
		j = next(i)
		b.StartTimer()
	}
}

// BenchClaimGet measures ClaimGet of one claim of an imported SampleBundle.
func BenchClaimGet(b *testing.B, s Store) {
	ctx, _ := NewTenant(b, s)
	bd := SampleBundle("bench-" + uuid.NewString())
	if _, err := s.DealImport(ctx, bd, contentHash(b, bd), importedAt); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, len(bd.Claims))
	for i, c := range bd.Claims {
		ids[i] = c.ID
	}
	n := 0
	for b.Loop() {
		if _, err := s.ClaimGet(ctx, ids[n%len(ids)]); err != nil {
			b.Fatal(err)
		}
		n++
	}
}

package storetest

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// EnrichmentLister is implemented by stores that serve a deal's enrichment
// records; both stores of debated do.
type EnrichmentLister interface {
	EnrichmentList(ctx context.Context, dealID string) ([]debate.EnrichmentRecord, error)
}

var enrichmentCases = []struct {
	name string
	fn   func(t *testing.T, s Store)
}{
	{"EnrichmentRoundTrip", testEnrichmentRoundTrip},
	{"EnrichmentTenantsAreIsolated", testEnrichmentTenantsAreIsolated},
	{"EnrichmentRejectsInvalid", testEnrichmentRejectsInvalid},
}

// SampleEnrichment returns enrichment records for SampleBundle(dealID), in
// no particular order; ids are unique to the deal.
func SampleEnrichment(dealID string) []debate.EnrichmentRecord {
	id := func(n int) string { return sampleID(dealID, "enrichment", n) }
	return []debate.EnrichmentRecord{
		{ID: id(1), EntityType: debate.EntityCompany, EntityName: "AutoScale Commerce", DataPoint: "ARR", Value: "11500000", Unit: "USD", Source: "Crunchbase", AsOf: "2025-12-31", SourceGrade: debate.GradeC},
		{ID: id(2), EntityType: debate.EntityPerson, EntityName: "Dana Whitfield", DataPoint: "prior exits", Value: "2", Source: "LinkedIn", SourceGrade: debate.GradeD},
		{ID: id(3), EntityType: debate.EntityMarket, EntityName: "B2B marketplaces", DataPoint: "TAM", Value: "Ünicode 40B €", Unit: "USD"},
		{ID: id(4), EntityType: debate.EntityCompany, EntityName: "AutoScale Commerce", DataPoint: "headcount", Value: "140", Source: "PitchBook", AsOf: "2025-11-01", SourceGrade: debate.GradeC},
	}
}

func enrichmentLister(t *testing.T, s Store) EnrichmentLister {
	t.Helper()
	l, ok := s.(EnrichmentLister)
	require.True(t, ok, "the store does not implement EnrichmentList")
	return l
}

func wantEnrichment(rs []debate.EnrichmentRecord) []debate.EnrichmentRecord {
	return sortedClone(rs, func(x debate.EnrichmentRecord) string { return x.ID })
}

func testEnrichmentRoundTrip(t *testing.T, s Store) {
	l := enrichmentLister(t, s)
	ctx, _ := NewTenant(t, s)
	b := SampleBundle("deal-" + uuid.NewString())
	b.Enrichment = SampleEnrichment(b.Deal.ID)
	require.True(t, importBundle(t, ctx, s, b).Created)

	want := wantEnrichment(b.Enrichment)
	got, err := s.DealBundleGet(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, want, got.Enrichment)
	c := Canonical(b)
	c.Enrichment = want
	require.Equal(t, c, got)
	h, err := got.ContentHash()
	require.NoError(t, err)
	require.Equal(t, contentHash(t, b), h, "the stored bundle hashes as the imported one")

	list, err := l.EnrichmentList(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, want, list)

	// The same content again is a no-op; other enrichment conflicts.
	require.False(t, importBundle(t, ctx, s, b).Created)
	changed := SampleBundle(b.Deal.ID)
	changed.Enrichment = SampleEnrichment(b.Deal.ID)
	changed.Enrichment[2].Value = "41B"
	_, err = s.DealImport(ctx, changed, contentHash(t, changed), importedAt)
	require.ErrorIs(t, err, debate.ErrAlreadyExists)
	list, err = l.EnrichmentList(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, want, list)

	// A deal without enrichment has none; an unknown deal is not found.
	plain := SampleBundle("deal-" + uuid.NewString())
	importBundle(t, ctx, s, plain)
	list, err = l.EnrichmentList(ctx, plain.Deal.ID)
	require.NoError(t, err)
	require.Empty(t, list)
	gotPlain, err := s.DealBundleGet(ctx, plain.Deal.ID)
	require.NoError(t, err)
	require.Nil(t, gotPlain.Enrichment)
	_, err = l.EnrichmentList(ctx, "deal-"+uuid.NewString())
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = l.EnrichmentList(context.Background(), b.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNoTenant)
}

func testEnrichmentTenantsAreIsolated(t *testing.T, s Store) {
	l := enrichmentLister(t, s)
	ctxA, _ := NewTenant(t, s)
	ctxB, _ := NewTenant(t, s)
	ctxC, _ := NewTenant(t, s)

	// A and B import the same deal with the same record ids, different
	// values: each keeps its own.
	a := SampleBundle("deal-" + uuid.NewString())
	a.Enrichment = SampleEnrichment(a.Deal.ID)
	b := SampleBundle(a.Deal.ID)
	b.Enrichment = SampleEnrichment(a.Deal.ID)
	b.Enrichment[0].Value = "99"
	importBundle(t, ctxA, s, a)
	importBundle(t, ctxB, s, b)

	gotA, err := l.EnrichmentList(ctxA, a.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, wantEnrichment(a.Enrichment), gotA)
	gotB, err := l.EnrichmentList(ctxB, a.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, wantEnrichment(b.Enrichment), gotB)

	// C has no such deal.
	_, err = l.EnrichmentList(ctxC, a.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)

	// A deal only B has is not found for A.
	onlyB := SampleBundle("deal-" + uuid.NewString())
	onlyB.Enrichment = SampleEnrichment(onlyB.Deal.ID)
	importBundle(t, ctxB, s, onlyB)
	_, err = l.EnrichmentList(ctxA, onlyB.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
}

func testEnrichmentRejectsInvalid(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := SampleBundle("deal-" + uuid.NewString())
	b.Enrichment = SampleEnrichment(b.Deal.ID)
	b.Enrichment[1].ID = b.Enrichment[0].ID
	b.Enrichment[2].EntityType = "ROBOT"
	_, err := s.DealImport(ctx, b, contentHash(t, b), importedAt)
	require.ErrorIs(t, err, debate.ErrInvalid)
	require.ErrorContains(t, err, "enrichment_records[1].record_id")
	require.ErrorContains(t, err, "enrichment_records[2].entity_type")
	_, err = s.DealGet(ctx, b.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
}

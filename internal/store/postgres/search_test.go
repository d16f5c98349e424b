package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestEvidenceSearch: full-text search ranks the deal's evidence by its span
// texts, filters by grade, and never crosses tenants.
func TestEvidenceSearch(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx, _ := storetest.NewTenant(t, s)
	b := storetest.SampleBundle("deal-search")
	_, err := s.DealImport(ctx, b, "h", time.Now())
	require.NoError(t, err)

	hits, total, err := s.EvidenceSearch(ctx, "deal-search", "gross margin", "", 10)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	require.Equal(t, total, len(hits))
	for i, h := range hits {
		require.Contains(t, h.TextExcerpt, "argin")
		require.GreaterOrEqual(t, h.Relevance, 0.0)
		require.Less(t, h.Relevance, 1.0)
		if i > 0 {
			require.GreaterOrEqual(t, hits[i-1].Relevance, h.Relevance)
		}
	}
	all, _, err := s.EvidenceSearch(ctx, "deal-search", "ARR OR revenue OR margin OR burn OR runway", "", 50)
	require.NoError(t, err)
	onlyA, _, err := s.EvidenceSearch(ctx, "deal-search", "ARR OR revenue OR margin OR burn OR runway", debate.GradeA, 50)
	require.NoError(t, err)
	require.LessOrEqual(t, len(onlyA), len(all))
	for _, h := range onlyA {
		require.Equal(t, debate.GradeA, h.SourceGrade)
	}

	other, _ := storetest.NewTenant(t, s)
	none, total, err := s.EvidenceSearch(other, "deal-search", "gross margin", "", 10)
	require.NoError(t, err)
	require.Empty(t, none)
	require.Zero(t, total)
	_, _, err = s.EvidenceSearch(context.Background(), "deal-search", "x", "", 10)
	require.ErrorIs(t, err, debate.ErrNoTenant)
}

package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

// CountGradingRows gives the conformance suite a direct count of a
// tenant's rows in the grading tables.
func (c counted) CountGradingRows(ctx context.Context, tenantID string) (map[string]int, error) {
	out := map[string]int{}
	for _, table := range []string{"deal_gradings", "defects", "deal_events"} {
		var n int
		if err := c.read.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE tenant_id = ?`, tenantID).Scan(&n); err != nil {
			return nil, err
		}
		out[table] = n
	}
	return out, nil
}

// TestDealEventsAppendOnly: the triggers refuse every UPDATE and DELETE of
// deal_events, also on the writer connection, and a grading stamps its time
// on the deal row.
func TestDealEventsAppendOnly(t *testing.T) {
	t.Parallel()
	s := openFile(t)
	ctx, tenant := storetest.NewTenant(t, s)
	b := storetest.SampleBundle("deal-append-only")
	h, err := b.ContentHash()
	require.NoError(t, err)
	_, err = s.DealImport(ctx, b, h, b.Deal.CreatedAt)
	require.NoError(t, err)
	at := time.Date(2026, 4, 1, 8, 0, 0, 123456789, time.UTC)
	_, events, err := s.DealGrade(ctx, b.Deal.ID, at, func(*debate.DealBundle, []debate.Defect, *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
		return &debate.DealGrading{}, nil, []debate.DealEvent{{Type: debate.EventDefectCreated, Actor: debate.ActorGrader}}, nil
	})
	require.NoError(t, err)
	require.Len(t, events, 1)

	bg := context.Background()
	_, err = s.write.ExecContext(bg, `UPDATE deal_events SET actor = 'forger' WHERE tenant_id = ?`, tenant)
	require.ErrorContains(t, err, "deal_events is append-only: UPDATE refused")
	_, err = s.write.ExecContext(bg, `DELETE FROM deal_events WHERE tenant_id = ?`, tenant)
	require.ErrorContains(t, err, "deal_events is append-only: DELETE refused")
	got, err := s.DealEventList(ctx, b.Deal.ID, 0, 0)
	require.NoError(t, err)
	require.Equal(t, events, got)

	var gradedAt string
	require.NoError(t, s.read.QueryRowContext(bg, `SELECT graded_at FROM deals WHERE tenant_id = ? AND deal_id = ?`, tenant, b.Deal.ID).Scan(&gradedAt))
	require.Equal(t, "2026-04-01T08:00:00.123456Z", gradedAt)
}

func BenchmarkDealGrade(b *testing.B) {
	storetest.BenchDealGrade(b, openFile(b))
}

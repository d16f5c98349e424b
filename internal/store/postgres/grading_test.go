package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

var gradingTables = []string{"deal_gradings", "defects", "deal_events"}

// CountGradingRows gives the conformance suite a count of a tenant's rows
// in the grading tables, read through row-level security as the tenant.
func (c counted) CountGradingRows(ctx context.Context, tenantID string) (map[string]int, error) {
	out := map[string]int{}
	err := tenantBatch(ctx, c.pool, tenantID, func(b *pgx.Batch) {
		for _, table := range gradingTables {
			b.Queue(`SELECT count(*) FROM `+table+` WHERE tenant_id = $1`, tenantID).QueryRow(func(row pgx.Row) error {
				var n int
				err := row.Scan(&n)
				out[table] = n
				return err
			})
		}
	})
	return out, err
}

// gradeSample imports a sample deal into a new tenant and grades it once:
// a grading, one defect record and two events.
func gradeSample(t *testing.T, s *Store) (string, *debate.DealBundle) {
	t.Helper()
	tenant, b := importSample(t, s)
	ctx := storetest.TenantContext(context.Background(), tenant)
	_, events, err := s.DealGrade(ctx, b.Deal.ID, time.Now(), func(*debate.DealBundle, []debate.Defect, *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
		return &debate.DealGrading{GradeDCount: 1},
			[]debate.Defect{{ID: "defect-1", ClaimID: b.Claims[0].ID, Status: debate.DefectOpen}},
			[]debate.DealEvent{{Type: debate.EventDefectCreated, Actor: debate.ActorGrader}, {Type: debate.EventClaimGradeChanged, Actor: debate.ActorGrader}},
			nil
	})
	require.NoError(t, err)
	require.Len(t, events, 2)
	return tenant, b
}

// ownerConn connects to the package's database as the owner of the tables
// (the administrative user of TEST_DATABASE_URL), without SET ROLE.
func ownerConn(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testDB.url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// TestDealEventsAppendOnly: no UPDATE, DELETE or TRUNCATE of deal_events
// goes through, not even the owner's, and not even one that would touch no
// row; the service's role lacks the privileges in the first place.
func TestDealEventsAppendOnly(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tenant, b := gradeSample(t, s)

	owner := ownerConn(t)
	var isOwner bool
	require.NoError(t, owner.QueryRow(ctx, `SELECT tableowner = current_user FROM pg_tables WHERE tablename = 'deal_events'`).Scan(&isOwner))
	require.True(t, isOwner, "the test connects as the table owner")
	for _, sql := range []string{
		`UPDATE deal_events SET actor = 'forger' WHERE tenant_id = $1 AND deal_id = $2`,
		`UPDATE deal_events SET actor = 'forger' WHERE tenant_id = $1 AND deal_id = $2 AND false`,
		`DELETE FROM deal_events WHERE tenant_id = $1 AND deal_id = $2`,
		`DELETE FROM deal_events WHERE tenant_id = $1 AND deal_id = $2 AND seq > 1000`,
		`TRUNCATE deal_events`,
	} {
		args := []any{tenant, b.Deal.ID}
		if sql == `TRUNCATE deal_events` {
			args = nil
		}
		_, err := owner.Exec(ctx, sql, args...)
		requireSQLState(t, err, "23001")
		require.ErrorContains(t, err, "deal_events is append-only", sql)
	}

	for _, sql := range []string{
		`UPDATE deal_events SET actor = 'forger' WHERE deal_id = $1`,
		`DELETE FROM deal_events WHERE deal_id = $1`,
	} {
		inTenantTx(t, s, tenant, func(tx pgx.Tx) {
			_, err := tx.Exec(ctx, sql, b.Deal.ID)
			requireSQLState(t, err, "42501")
		})
	}

	events, err := s.DealEventList(storetest.TenantContext(ctx, tenant), b.Deal.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, events, 2)
	require.Equal(t, debate.ActorGrader, events[0].Actor)
}

// TestGradingRLSWrongTenant: as the service's role with another tenant (or
// none) set, no row of tenant A's grading tables is visible, even when the
// query names A, none can be changed, and none can be written for A.
func TestGradingRLSWrongTenant(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tenantA, b := gradeSample(t, s)
	_, tenantB := storetest.NewTenant(t, s)

	inTenantTx(t, s, tenantA, func(tx pgx.Tx) {
		for _, table := range gradingTables {
			var n int
			require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n))
			require.NotZero(t, n, "A sees its own %s", table)
		}
	})
	for _, other := range []string{tenantB, ""} {
		inTenantTx(t, s, other, func(tx pgx.Tx) {
			for _, table := range gradingTables {
				var all, named int
				require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&all))
				require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE tenant_id = $1`, tenantA).Scan(&named))
				require.Zero(t, all, table)
				require.Zero(t, named, table)
			}
			for _, sql := range []string{
				`UPDATE deal_gradings SET grading = '{}' WHERE tenant_id = $1`,
				`UPDATE defects SET status = 'WAIVED' WHERE tenant_id = $1`,
			} {
				ct, err := tx.Exec(ctx, sql, tenantA)
				require.NoError(t, err)
				require.Zero(t, ct.RowsAffected(), "%s touches no row of A", sql)
			}
		})
		for _, sql := range []string{
			`INSERT INTO deal_gradings (tenant_id, deal_id, graded_at, grading) VALUES ($1, $2, now(), '{}')`,
			`INSERT INTO defects (tenant_id, deal_id, defect_id, claim_id, status, record, created_at, updated_at)
				VALUES ($1, $2, 'smuggled', 'c', 'OPEN', '{}', now(), now())`,
			`INSERT INTO deal_events (tenant_id, deal_id, seq, event_type, actor, payload, created_at)
				VALUES ($1, $2, 1000, 'forged', 'x', '{}', now())`,
		} {
			inTenantTx(t, s, other, func(tx pgx.Tx) {
				_, err := tx.Exec(ctx, sql, tenantA, b.Deal.ID)
				requireSQLState(t, err, "42501")
				require.ErrorContains(t, err, "row-level security")
			})
		}
	}

	n, err := counted{s}.CountGradingRows(ctx, tenantA)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"deal_gradings": 1, "defects": 1, "deal_events": 2}, n)
}

// TestServiceRoleGradingPrivileges: the service's role deletes nothing from
// the grading tables and, of deals, may update only graded_at (which the
// row lock of DealGrade needs).
func TestServiceRoleGradingPrivileges(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tenant, b := gradeSample(t, s)
	for _, sql := range []string{
		`DELETE FROM deal_gradings WHERE deal_id = $1`,
		`DELETE FROM defects WHERE deal_id = $1`,
		`UPDATE deals SET status = 'CLOSED' WHERE deal_id = $1`,
		`DELETE FROM deals WHERE deal_id = $1`,
	} {
		inTenantTx(t, s, tenant, func(tx pgx.Tx) {
			_, err := tx.Exec(ctx, sql, b.Deal.ID)
			requireSQLState(t, err, "42501")
		})
	}
}

// TestDealGradeStampsDeal: a grading records its time on the deal row.
func TestDealGradeStampsDeal(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tenant, b := importSample(t, s)
	owner := ownerConn(t)
	var gradedAt *time.Time
	require.NoError(t, owner.QueryRow(ctx, `SELECT graded_at FROM deals WHERE tenant_id = $1 AND deal_id = $2`, tenant, b.Deal.ID).Scan(&gradedAt))
	require.Nil(t, gradedAt, "never graded")

	at := time.Date(2026, 4, 1, 8, 0, 0, 123456789, time.UTC)
	_, _, err := s.DealGrade(storetest.TenantContext(ctx, tenant), b.Deal.ID, at,
		func(*debate.DealBundle, []debate.Defect, *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
			return &debate.DealGrading{}, nil, nil, nil
		})
	require.NoError(t, err)
	require.NoError(t, owner.QueryRow(ctx, `SELECT graded_at FROM deals WHERE tenant_id = $1 AND deal_id = $2`, tenant, b.Deal.ID).Scan(&gradedAt))
	require.NotNil(t, gradedAt)
	require.Equal(t, at.Truncate(time.Microsecond), gradedAt.UTC())
}

// TestGradingIndexedLookups: the reads of DealGrade and the lists are index
// scans of the primary keys, in key order.
func TestGradingIndexedLookups(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	_, err = tx.Exec(ctx, `SET LOCAL enable_seqscan = off`)
	require.NoError(t, err)
	plan := func(sql string, args ...any) string {
		rows, err := tx.Query(ctx, "EXPLAIN "+sql, args...)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return fmt.Sprint(lines)
	}
	p := plan(`SELECT seq, event_type, actor, payload, created_at FROM deal_events
		WHERE tenant_id = $1 AND deal_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`, "t", "d", int64(0), 100)
	require.Contains(t, p, "deal_events_pkey")
	require.NotContains(t, p, "Sort")
	require.Contains(t, plan(`SELECT coalesce(max(seq), 0) FROM deal_events WHERE tenant_id = $1 AND deal_id = $2`, "t", "d"), "deal_events_pkey")
	p = plan(`SELECT record FROM defects WHERE tenant_id = $1 AND deal_id = $2 ORDER BY defect_id`, "t", "d")
	require.Contains(t, p, "defects_pkey")
	require.NotContains(t, p, "Sort")
}

func BenchmarkDealGrade(b *testing.B) {
	storetest.BenchDealGrade(b, setup(b))
}

package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

// counted gives the conformance suite a direct count of a tenant's rows.
type counted struct{ *Store }

func (c counted) CountRows(ctx context.Context, tenantID string) (map[string]int, error) {
	out := map[string]int{}
	for _, table := range []string{"deals", "claims", "evidence_items", "spans", "sanads", "documents", "calcs"} {
		var n int
		if err := c.read.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE tenant_id = ?`, tenantID).Scan(&n); err != nil {
			return nil, err
		}
		out[table] = n
	}
	return out, nil
}

// openFile opens a store on a new file in a temporary directory, closed
// when tb ends.
func openFile(tb testing.TB) *Store {
	tb.Helper()
	s, err := Open(context.Background(), filepath.Join(tb.TempDir(), "debated.db"))
	require.NoError(tb, err)
	tb.Cleanup(s.Close)
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	// One file for every case, as a running service has: the cases run
	// in parallel against it.
	s := openFile(t)
	storetest.Run(t, func(*testing.T) storetest.Store { return counted{s} })
}

func TestConformanceInMemory(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), Memory)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	storetest.Run(t, func(*testing.T) storetest.Store { return counted{s} })
}

func TestOpenSetsPragmas(t *testing.T) {
	t.Parallel()
	s := openFile(t)
	ctx := context.Background()
	var mode string
	var fk, busy int
	require.NoError(t, s.write.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode))
	require.Equal(t, "wal", mode)
	require.NoError(t, s.write.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk))
	require.Equal(t, 1, fk)
	require.NoError(t, s.write.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy))
	require.Equal(t, 10000, busy)
	require.Equal(t, 1, s.write.Stats().MaxOpenConnections, "one writer connection")

	_, err := s.read.ExecContext(ctx, `INSERT INTO tenants (id, name, created_at) VALUES ('x', 'x', 'x')`)
	require.Error(t, err, "the reader pool is read-only")
}

func TestOpenRejectsBadPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := Open(ctx, "")
	require.Error(t, err)
	_, err = Open(ctx, filepath.Join(t.TempDir(), "a?mode=ro"))
	require.Error(t, err)
	_, err = Open(ctx, filepath.Join(t.TempDir(), "missing-dir", "sub", "d.db"))
	require.Error(t, err)
}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "debated.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	tctx, _ := storetest.NewTenant(t, s)
	b := storetest.SampleBundle("deal-reopen")
	h, err := b.ContentHash()
	require.NoError(t, err)
	_, err = s.DealImport(tctx, b, h, b.Deal.CreatedAt)
	require.NoError(t, err)
	s.Close()

	s, err = Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.DealBundleGet(tctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, storetest.Canonical(b), got)
	var versions []int64
	rows, err := s.read.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	require.NoError(t, err)
	for rows.Next() {
		var v int64
		require.NoError(t, rows.Scan(&v))
		versions = append(versions, v)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, versions)
}

// TestMigrateAppliesInOrder runs the migration runner on migrations of its
// own: they apply in version order whatever the file order, each is
// recorded once, and a failing one leaves nothing of itself behind.
func TestMigrateAppliesInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openFile(t)
	// Versions far above the store's own migrations, which Open applied.
	fsys := fstest.MapFS{
		"0910_third.sql":  {Data: []byte(`INSERT INTO steps (n) VALUES (3);`)},
		"0902_first.sql":  {Data: []byte(`CREATE TABLE steps (n INTEGER NOT NULL); INSERT INTO steps (n) VALUES (1);`)},
		"0903_second.sql": {Data: []byte(`INSERT INTO steps (n) VALUES (2);`)},
		"README.md":       {Data: []byte(`not a migration`)},
	}
	require.NoError(t, migrate(ctx, s.write, fsys))
	require.NoError(t, migrate(ctx, s.write, fsys), "a second run finds nothing to do")
	var got []int
	rows, err := s.write.QueryContext(ctx, `SELECT n FROM steps ORDER BY rowid`)
	require.NoError(t, err)
	for rows.Next() {
		var n int
		require.NoError(t, rows.Scan(&n))
		got = append(got, n)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []int{1, 2, 3}, got)

	fsys["0911_broken.sql"] = &fstest.MapFile{Data: []byte(`INSERT INTO steps (n) VALUES (4); INSERT INTO nowhere VALUES (5);`)}
	require.ErrorContains(t, migrate(ctx, s.write, fsys), "0911_broken.sql")
	var n, recorded int
	require.NoError(t, s.write.QueryRowContext(ctx, `SELECT count(*) FROM steps`).Scan(&n))
	require.Equal(t, 3, n, "the failed migration's first statement was rolled back")
	require.NoError(t, s.write.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = 911`).Scan(&recorded))
	require.Zero(t, recorded)
}

// TestConcurrentWritersAndReaders imports many deals at once, through two
// stores on one file (as two processes would), while others read: nothing
// fails with SQLITE_BUSY.
func TestConcurrentWritersAndReaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "debated.db")
	s1, err := Open(ctx, path)
	require.NoError(t, err)
	defer s1.Close()
	s2, err := Open(ctx, path)
	require.NoError(t, err)
	defer s2.Close()

	tctx, _ := storetest.NewTenant(t, s1)
	const n = 16
	errs := make([]error, 2*n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			st := s1
			if i%2 == 1 {
				st = s2
			}
			b := storetest.SampleBundle(fmt.Sprintf("deal-%02d-%s", i, uuid.NewString()))
			h, err := b.ContentHash()
			if err == nil {
				_, err = st.DealImport(tctx, b, h, b.Deal.CreatedAt)
			}
			errs[i] = err
		})
		wg.Go(func() {
			_, _, errs[n+i] = s2.DealList(tctx, debate.Page{})
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "goroutine %d", i)
	}
	deals, _, err := s1.DealList(tctx, debate.Page{})
	require.NoError(t, err)
	require.Len(t, deals, n)
}

func BenchmarkDealImport(b *testing.B) {
	storetest.BenchDealImport(b, openFile(b))
}

func BenchmarkDealImport10kClaims(b *testing.B) {
	storetest.BenchDealImportLarge(b, openFile(b), 10000)
}

func BenchmarkClaimGet(b *testing.B) {
	storetest.BenchClaimGet(b, openFile(b))
}

// TestIndexedLookups: authentication's key lookup and the claim list use
// indexes.
func TestIndexedLookups(t *testing.T) {
	t.Parallel()
	s := openFile(t)
	ctx := context.Background()
	plan := func(q string, args ...any) string {
		rows, err := s.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		require.NoError(t, err)
		defer rows.Close()
		var out string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
			out += detail + "\n"
		}
		require.NoError(t, rows.Err())
		return out
	}
	require.Contains(t, plan(`SELECT id FROM api_keys WHERE hash = ? AND revoked_at IS NULL`, []byte{1}), "USING INDEX sqlite_autoindex_api_keys_2")
	p := plan(`SELECT record FROM claims WHERE tenant_id = ? AND deal_id = ? AND (claim_key, claim_id) > (?, ?)
		ORDER BY claim_key, claim_id LIMIT 51`, "t", "d", "C1", "x")
	require.Contains(t, p, "claims_list_idx")
	require.NotContains(t, p, "TEMP B-TREE", "no sort: the index gives the order")
}

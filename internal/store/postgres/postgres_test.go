package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/pgtest"
)

// The tests of this package share one fresh database, created and migrated
// by TestMain and dropped when the package's tests end, so that parallel
// packages and reruns never collide. Cases isolate themselves with tenants
// of random ids.

var testDB struct {
	baseURL     string // the administrative URL, TEST_DATABASE_URL
	url         string // the package's database
	store       *Store
	unreachable error // PostgreSQL cannot be reached: skip, or fail on CI
	err         error // anything else: fail
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	testDB.baseURL = pgtest.BaseURL()
	dbURL, drop, err := pgtest.Create(ctx, testDB.baseURL)
	if err != nil && !errors.As(err, new(pgtest.UnreachableError)) {
		testDB.err = err
		return m.Run()
	}
	if err != nil {
		testDB.unreachable = err
		fmt.Fprintf(os.Stderr, "\n!!! PostgreSQL at %s is unreachable: its tests will %s: %v\n\n",
			testDB.baseURL, map[bool]string{true: "FAIL (CI is set)", false: "be SKIPPED"}[os.Getenv("CI") != ""], err)
		return m.Run()
	}
	defer func() {
		if err := drop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	testDB.url = dbURL
	if err := Migrate(ctx, dbURL); err != nil {
		testDB.err = fmt.Errorf("migrate: %w", err)
		return m.Run()
	}
	s, err := New(ctx, Config{URL: dbURL, MaxConns: 8})
	if err != nil {
		testDB.err = fmt.Errorf("new: %w", err)
		return m.Run()
	}
	testDB.store = s
	defer s.Close()
	return m.Run()
}

// setup returns the package's store. It fails the test if PostgreSQL is
// unreachable and CI is set, and skips it, saying so, otherwise.
func setup(tb testing.TB) *Store {
	tb.Helper()
	if err := testDB.unreachable; err != nil {
		pgtest.Unreachable(tb, testDB.baseURL, err)
	}
	if testDB.err != nil {
		tb.Fatal(testDB.err)
	}
	return testDB.store
}

// newDatabase gives one test an empty database of its own.
func newDatabase(t *testing.T) string {
	t.Helper()
	setup(t)
	return pgtest.NewDatabase(t)
}

// counted gives the conformance suite a count of a tenant's rows, read
// through row-level security as the tenant.
type counted struct{ *Store }

func (c counted) CountRows(ctx context.Context, tenantID string) (map[string]int, error) {
	out := map[string]int{}
	err := tenantBatch(ctx, c.pool, tenantID, func(b *pgx.Batch) {
		for _, table := range registryTables {
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

var registryTables = []string{"deals", "claims", "evidence_items", "spans", "sanads", "documents", "calcs"}

func TestConformance(t *testing.T) {
	t.Parallel()
	s := setup(t)
	storetest.Run(t, func(*testing.T) storetest.Store { return counted{s} })
}

// importSample imports a sample deal into a new tenant and returns the
// tenant and the bundle.
func importSample(t *testing.T, s *Store) (string, *debate.DealBundle) {
	t.Helper()
	ctx, tenant := storetest.NewTenant(t, s)
	b := storetest.SampleBundle("deal-" + uuid.NewString())
	h, err := b.ContentHash()
	require.NoError(t, err)
	res, err := s.DealImport(ctx, b, h, time.Now())
	require.NoError(t, err)
	require.True(t, res.Created)
	return tenant, b
}

func requireSQLState(t *testing.T, err error, code string) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "want SQLSTATE %s, got %v", code, err)
	require.Equal(t, code, pgErr.Code, pgErr.Message)
}

// inTenantTx runs fn on one connection of the service's pool, in a
// transaction bound to tenant ("" sets none), and rolls it back.
func inTenantTx(t *testing.T, s *Store, tenant string, fn func(tx pgx.Tx)) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	if tenant != "" {
		_, err = tx.Exec(ctx, setTenantSQL, tenant)
		require.NoError(t, err)
	}
	fn(tx)
}

// TestRLSWrongTenant: as the service's role with another tenant set, no
// row of tenant A is visible, even when the query names A, and no row of A
// can be written.
func TestRLSWrongTenant(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tenantA, b := importSample(t, s)
	_, tenantB := storetest.NewTenant(t, s)

	inTenantTx(t, s, tenantA, func(tx pgx.Tx) {
		var n int
		require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM claims`).Scan(&n))
		require.Equal(t, len(b.Claims), n, "A sees its own claims")
	})
	inTenantTx(t, s, tenantB, func(tx pgx.Tx) {
		for _, table := range registryTables {
			var all, named int
			require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&all))
			require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE tenant_id = $1`, tenantA).Scan(&named))
			require.Zero(t, all, table)
			require.Zero(t, named, table)
		}
	})
	inTenantTx(t, s, tenantB, func(tx pgx.Tx) {
		_, err := tx.Exec(ctx, `INSERT INTO claims (tenant_id, deal_id, claim_id, claim_key, claim_class, materiality, ic_bound, record)
			VALUES ($1, $2, 'smuggled', 'C9', 'FINANCIAL', 'LOW', false, '{}')`, tenantA, b.Deal.ID)
		requireSQLState(t, err, "42501")
		require.ErrorContains(t, err, "row-level security")
	})
	inTenantTx(t, s, tenantB, func(tx pgx.Tx) {
		_, err := tx.Exec(ctx, `INSERT INTO deals (tenant_id, deal_id, external_ref, company_name, stage, sector, status,
				materiality_threshold, created_at, updated_at, content_hash, imported_at,
				claim_count, evidence_count, span_count, sanad_count, document_count, calc_count, record)
			VALUES ($1, 'smuggled', '', '', '', '', '', 0, now(), now(), 'h', now(), 0, 0, 0, 0, 0, 0, '{}')`, tenantA)
		requireSQLState(t, err, "42501")
	})
}

// TestRLSNoTenant: as the service's role with no tenant set, nothing is
// visible and nothing can be written.
func TestRLSNoTenant(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tenantA, b := importSample(t, s)

	inTenantTx(t, s, "", func(tx pgx.Tx) {
		for _, table := range registryTables {
			var n int
			require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n))
			require.Zero(t, n, table)
		}
	})
	// Outside any explicit transaction, on a pooled connection.
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM claims WHERE tenant_id = $1`, tenantA).Scan(&n))
	require.Zero(t, n)
	inTenantTx(t, s, "", func(tx pgx.Tx) {
		_, err := tx.Exec(ctx, `INSERT INTO evidence_items (tenant_id, deal_id, evidence_id, record) VALUES ($1, $2, 'e', '{}')`,
			tenantA, b.Deal.ID)
		requireSQLState(t, err, "42501")
	})
}

// TestServiceRoleIsBound: the pool runs as debated_app, which owns no
// table, does not bypass row-level security and may not delete or rewrite
// registry rows.
func TestServiceRoleIsBound(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tenantA, b := importSample(t, s)

	var role string
	var owned int
	var bypass bool
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT current_user,
			(SELECT count(*) FROM pg_tables WHERE tableowner = current_user),
			(SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user)`).Scan(&role, &owned, &bypass))
	require.Equal(t, AppRole, role)
	require.Zero(t, owned)
	require.False(t, bypass)

	inTenantTx(t, s, tenantA, func(tx pgx.Tx) {
		_, err := tx.Exec(ctx, `DELETE FROM claims WHERE deal_id = $1`, b.Deal.ID)
		requireSQLState(t, err, "42501")
	})
	inTenantTx(t, s, tenantA, func(tx pgx.Tx) {
		_, err := tx.Exec(ctx, `UPDATE claims SET claim_key = 'X' WHERE deal_id = $1`, b.Deal.ID)
		requireSQLState(t, err, "42501")
	})
	inTenantTx(t, s, tenantA, func(tx pgx.Tx) {
		_, err := tx.Exec(ctx, `SELECT count(*) FROM schema_migrations`)
		requireSQLState(t, err, "42501")
	})
}

// TestTenantSettingEndsWithTheBatch: a read sets the tenant for its own
// batch only; the connection goes back to the pool with no tenant.
func TestTenantSettingEndsWithTheBatch(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	tenantA, b := importSample(t, s)

	conn, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	c, err := claimGet(ctx, conn, tenantA, b.Claims[0].ID)
	require.NoError(t, err)
	require.Equal(t, b.Claims[0], c)

	var setting string
	require.NoError(t, conn.QueryRow(ctx, `SELECT coalesce(current_setting('debated.tenant_id', true), '')`).Scan(&setting))
	require.Empty(t, setting)
	var n int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM claims`).Scan(&n))
	require.Zero(t, n)
	require.Equal(t, byte('I'), conn.Conn().PgConn().TxStatus(), "no transaction is left open")
}

// TestMigrateConcurrently: replicas starting together all succeed, and each
// migration is applied once.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	dbURL := newDatabase(t)
	ctx := context.Background()
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = Migrate(ctx, dbURL) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, Migrate(ctx, dbURL), "a later run finds nothing to do")

	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	require.NoError(t, err)
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, versions)

	s, err := New(ctx, Config{URL: dbURL})
	require.NoError(t, err)
	defer s.Close()
	storetest.NewTenant(t, s)
}

// TestMigrateAppliesInOrder runs the runner on migrations of its own: they
// apply in version order, each once, and a failing one leaves nothing of
// itself behind.
func TestMigrateAppliesInOrder(t *testing.T) {
	t.Parallel()
	dbURL := newDatabase(t)
	ctx := context.Background()
	fsys := fstest.MapFS{
		"0010_third.sql":  {Data: []byte(`INSERT INTO steps (n) VALUES (3);`)},
		"0002_first.sql":  {Data: []byte(`CREATE TABLE steps (id serial PRIMARY KEY, n int NOT NULL); INSERT INTO steps (n) VALUES (1);`)},
		"0003_second.sql": {Data: []byte(`INSERT INTO steps (n) VALUES (2);`)},
	}
	require.NoError(t, migrate(ctx, dbURL, fsys))
	require.NoError(t, migrate(ctx, dbURL, fsys))
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT n FROM steps ORDER BY id`)
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(t, err)
	require.Equal(t, []int32{1, 2, 3}, got)

	fsys["0011_broken.sql"] = &fstest.MapFile{Data: []byte(`INSERT INTO steps (n) VALUES (4); INSERT INTO nowhere VALUES (5);`)}
	require.ErrorContains(t, migrate(ctx, dbURL, fsys), "0011_broken.sql")
	var n, recorded int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM steps`).Scan(&n))
	require.Equal(t, 3, n, "the failed migration's first statement was rolled back")
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = 11`).Scan(&recorded))
	require.Zero(t, recorded)
}

// TestNewRefusesUnboundLogin: a login role that may not become debated_app
// cannot open the store.
func TestNewRefusesUnboundLogin(t *testing.T) {
	t.Parallel()
	setup(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, testDB.url)
	require.NoError(t, err)
	defer admin.Close(ctx)
	buf := make([]byte, 6)
	_, _ = rand.Read(buf)
	role := "debated_test_login_" + hex.EncodeToString(buf)
	_, err = admin.Exec(ctx, "CREATE ROLE "+role+" LOGIN")
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, testDB.url)
		if err != nil {
			t.Logf("drop role %s: %v", role, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP ROLE IF EXISTS "+role); err != nil {
			t.Logf("drop role %s: %v", role, err)
		}
	})
	u, err := url.Parse(testDB.url)
	require.NoError(t, err)
	u.User = url.User(role)
	_, err = New(ctx, Config{URL: u.String()})
	require.ErrorContains(t, err, "set role debated_app")

	_, err = New(ctx, Config{})
	require.Error(t, err)
}

func BenchmarkDealImport(b *testing.B) {
	storetest.BenchDealImport(b, setup(b))
}

func BenchmarkDealImport10kClaims(b *testing.B) {
	storetest.BenchDealImportLarge(b, setup(b), 10000)
}

func BenchmarkClaimGet(b *testing.B) {
	storetest.BenchClaimGet(b, setup(b))
}

// TestIndexedLookups: authentication's key lookup and the claim list are
// index scans, whatever the size of the tables.
func TestIndexedLookups(t *testing.T) {
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
	require.Contains(t, plan(`SELECT id FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`, []byte{1}), "api_keys_hash_key")
	require.Contains(t, plan(`SELECT record FROM claims WHERE tenant_id = $1 AND deal_id = $2 AND (claim_key, claim_id) > ($3, $4)
		ORDER BY claim_key, claim_id LIMIT 51`, "t", "d", "C1", "x"), "claims_list_idx")
}

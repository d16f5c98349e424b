// Package postgres is the production store of debated: tenants, API keys
// and the claim registries of deals in PostgreSQL, through a pgx v5 pool.
// Its Store implements debate.TenantStore and debate.RegistryStore.
//
// Tenant isolation is enforced twice (DESIGN §3.3). Every tenant-scoped
// query is scoped by the tenant of the context (debate.TenantFrom), and runs
// in a transaction that first sets debated.tenant_id with
// set_config(..., true), which the row-level security policies of every
// tenant-owned table (see migrations/postgres) compare each row with. The
// pool runs as the role debated_app, which owns no table, so the policies
// bind it even though FORCE ROW LEVEL SECURITY would bind the owner too.
//
// The schema is created by Migrate, run as the owner of the tables, before
// New.
package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

// AppRole is the role the service's queries run as. The migrations create
// it (NOLOGIN) and grant it SELECT and INSERT on the tables it needs, the
// few UPDATEs a debate's progress needs, all of tenant_models (under
// row-level security), only INSERT on api_keys (read and revoked through
// SECURITY DEFINER functions, migration 0012); never ownership.
const AppRole = "debated_app"

// Config configures New.
type Config struct {
	// URL is a pgx connection string (URL or key=value form). Required.
	// Its user must be AppRole or a member of it.
	URL string
	// MaxConns caps the pool. Zero keeps pgxpool's default: the larger of
	// 4 and the number of CPUs.
	MaxConns int32
	// CommitGroups is how many transactions of step commits may be in
	// flight at once, at most one per tenant (see group.go): steps of one
	// tenant's debates that wait to commit together share a transaction.
	// Zero means 8; a negative value commits every step in a transaction
	// of its own.
	CommitGroups int
	// DealSealer chains and signs deal audit events as they are appended.
	// Without it (tests, tools) they are stored unchained, as legacy
	// events; debated always sets it.
	DealSealer debate.DealSealer
}

// Store is the PostgreSQL store. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	hooks  debateHooks // see SetListenError (listen.go)
	notify *notifier
	group  *committer // nil: no group commit
	sealer debate.DealSealer
	// logDirty: tenants whose logs have leaves this replica queued (tlog.go).
	logDirty rows.Dirty
}

// Compile-time checks that Store is what the domain asks of a store.
var (
	_ debate.TenantStore   = (*Store)(nil)
	_ debate.RegistryStore = (*Store)(nil)
)

// New connects a pool to cfg.URL and checks that its queries run as
// a role that row-level security binds. Every connection of the pool whose
// login user is not AppRole runs SET ROLE debated_app: a developer can then
// connect with the owner's URL (as the tests do) while RLS still binds every
// query; in production connect as a LOGIN role that is a member of
// debated_app. Returns an error if the database is unreachable, if the
// migrations have not created AppRole, if the login user may not SET ROLE
// to it, or if the role bypasses row-level security (a superuser or
// BYPASSRLS role).
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URL == "" {
		return nil, errors.New("postgres: Config.URL is required")
	}
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse database URL: %w", err)
	}
	if cfg.MaxConns > 0 {
		pcfg.MaxConns = cfg.MaxConns
	}
	pcfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		m := conn.TypeMap()
		m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryPresized}, m.TryWrapEncodePlanFuncs...)
		if conn.Config().User == AppRole {
			return nil
		}
		if _, err := conn.Exec(ctx, "SET ROLE "+AppRole); err != nil {
			return fmt.Errorf("set role %s (run the migrations first, and make the login user a member of it): %w", AppRole, err)
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: create pool: %w", err)
	}
	var role string
	var bypasses bool
	err = pool.QueryRow(ctx,
		`SELECT current_user, rolsuper OR rolbypassrls FROM pg_catalog.pg_roles WHERE rolname = current_user`,
	).Scan(&role, &bypasses)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if bypasses {
		pool.Close()
		return nil, fmt.Errorf("postgres: role %q bypasses row-level security; the service must run as %s", role, AppRole)
	}
	s := &Store{pool: pool, notify: newNotifier(pool), sealer: cfg.DealSealer}
	if cfg.CommitGroups >= 0 {
		s.group = newCommitter(s, cmp.Or(cfg.CommitGroups, 8))
	}
	return s, nil
}

// Close closes the pool, waiting for the connections in use to be
// released.
func (s *Store) Close() {
	s.notify.close()
	s.pool.Close()
}

// setTenantSQL binds the row-level security policies to tenant $1 until the
// end of the current transaction.
const setTenantSQL = `SELECT set_config('debated.tenant_id', $1, true)`

// batcher is what tenant-scoped reads send their batch to: the pool, or one
// connection.
type batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// tenantBatch runs the queries queue adds, after setting the tenant, in one
// round trip. A pgx batch runs in one implicit transaction (one Sync), so
// the transaction-local tenant setting covers exactly these queries, and is
// gone when the connection goes back to the pool. Returns the first error of
// a query or of a callback.
func tenantBatch(ctx context.Context, db batcher, tenant string, queue func(b *pgx.Batch)) error {
	b := &pgx.Batch{}
	b.Queue(setTenantSQL, tenant)
	queue(b)
	return db.SendBatch(ctx, b).Close()
}

// Error translation at the boundary: callers branch on debate's sentinels.
const (
	sqlstateUniqueViolation     = "23505"
	sqlstateForeignKeyViolation = "23503"
)

// wrap translates err into debate's sentinels where one applies and adds
// op as context. The driver's error stays in the chain for logs.
func wrap(op string, err error) error {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("postgres: %s: %w", op, debate.ErrNotFound)
	case errors.As(err, &pgErr) && pgErr.Code == sqlstateUniqueViolation:
		return fmt.Errorf("postgres: %s: %w (constraint %s)", op, debate.ErrAlreadyExists, pgErr.ConstraintName)
	case errors.As(err, &pgErr) && pgErr.Code == sqlstateForeignKeyViolation:
		return fmt.Errorf("postgres: %s: %w (constraint %s)", op, debate.ErrNotFound, pgErr.ConstraintName)
	default:
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
}

// Package sqlite is the embedded store of debated: tenants, API keys and the
// claim registries of deals in one SQLite file, through the pure-Go driver
// modernc.org/sqlite (no cgo), so that the service runs on a fresh machine
// with nothing to set up (DESIGN §3.4). Its Store implements
// debate.TenantStore and debate.RegistryStore exactly as the PostgreSQL
// store does; one conformance suite (internal/store/storetest) holds both to
// it.
//
// There is no row-level security here: one process owns the file, and
// tenant isolation is the tenant_id every query is scoped by.
//
// Concurrency: the file is in WAL mode, so readers never wait for the
// writer. All writes go through one connection (SQLite allows one writer at
// a time), so concurrent imports queue in the process instead of failing
// with SQLITE_BUSY; write transactions begin IMMEDIATE and busy_timeout
// covers a second process writing the same file.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
	"github.com/debated/debated/migrations"
)

// Store is the SQLite store. It is safe for concurrent use.
type Store struct {
	write *sql.DB     // one connection: the only writer
	read  *sql.DB     // readers; the same pool as write for an in-memory database
	hooks debateHooks // see SetOnEvents (debates.go)
	// sealer chains and signs deal audit events; nil stores them unchained.
	sealer debate.DealSealer
	// logDirty: tenants whose logs have queued leaves (tlog.go).
	logDirty rows.Dirty
}

// Config configures OpenConfig.
type Config struct {
	// Path is the database file, or Memory. Required.
	Path string
	// DealSealer chains and signs deal audit events as they are appended.
	// Without it (tests, tools) they are stored unchained, as legacy
	// events; debated always sets it.
	DealSealer debate.DealSealer
}

// Compile-time checks that Store is what the domain asks of a store.
var (
	_ debate.TenantStore   = (*Store)(nil)
	_ debate.RegistryStore = (*Store)(nil)
)

// Memory is the path of a private in-memory database, gone when the store
// is closed. It has one connection, shared by readers and the writer.
const Memory = ":memory:"

// busyTimeoutMillis is how long a statement waits for another process's
// lock on the file before failing with SQLITE_BUSY.
const busyTimeoutMillis = "10000"

// Open opens (creating it if needed) the database file at path, or a
// private in-memory database for Memory, and applies the migrations it
// lacks before returning. Returns an error if path is empty or contains
// '?', if the file cannot be opened, or if a migration fails.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenConfig(ctx, Config{Path: path})
}

// OpenConfig is Open with the options of cfg.
func OpenConfig(ctx context.Context, cfg Config) (*Store, error) {
	path := cfg.Path
	if path == "" {
		return nil, errors.New("sqlite: open: path is required")
	}
	if strings.Contains(path, "?") {
		return nil, fmt.Errorf("sqlite: open %q: the path must not contain '?'", path)
	}
	write, err := sql.Open("sqlite", path+"?_pragma=busy_timeout("+busyTimeoutMillis+")"+
		"&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	// One writer connection, never recycled: writes queue in database/sql
	// rather than in SQLite's busy handler, and an in-memory database lives
	// as long as its connection.
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	if err := migrate(ctx, write, migrations.SQLite); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	s := &Store{write: write, read: write, sealer: cfg.DealSealer}
	if path == Memory {
		return s, nil
	}
	read, err := sql.Open("sqlite", path+"?_pragma=busy_timeout("+busyTimeoutMillis+")&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %q for reading: %w", path, err)
	}
	read.SetMaxOpenConns(max(4, runtime.NumCPU()))
	read.SetMaxIdleConns(max(4, runtime.NumCPU()))
	if err := read.PingContext(ctx); err != nil {
		read.Close()
		write.Close()
		return nil, fmt.Errorf("sqlite: open %q for reading: %w", path, err)
	}
	s.read = read
	return s, nil
}

// Close closes the database, waiting for the queries in progress. Call it
// once, when nothing else will use the store. Closing a SQLite connection
// fails only on a misuse that leaves statements open, which this package
// never does, so Close reports nothing, like the PostgreSQL store's.
func (s *Store) Close() {
	if s.read != s.write {
		_ = s.read.Close()
	}
	_ = s.write.Close()
}

// migrate applies the migrations of fsys that db lacks, in
// version order, each in one IMMEDIATE transaction that also records it in
// schema_migrations: a second process migrating the same file waits for
// the lock and then finds the migration applied.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS) error {
	ms, err := migrations.Load(fsys)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	_, err = db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
	) STRICT`)
	if err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		if err := inTx(ctx, db, func(tx *sql.Tx) error {
			var applied bool
			err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?)`, m.Version).Scan(&applied)
			if err != nil || applied {
				return err
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, m.Version, m.Name)
			return err
		}); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
	}
	return nil
}

// inTx runs fn in a transaction of db and commits it if fn returns nil.
func inTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// readTx runs fn in a read-only transaction: one snapshot of the database.
func (s *Store) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	return fn(tx)
}

// wrap translates err into debate's sentinels where one applies and adds op
// as context. The driver's error stays in the chain for logs.
func wrap(op string, err error) error {
	var se *sqlite.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlite: %s: %w", op, debate.ErrNotFound)
	case errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY):
		return fmt.Errorf("sqlite: %s: %w (%s)", op, debate.ErrAlreadyExists, se.Error())
	case errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fmt.Errorf("sqlite: %s: %w (foreign key)", op, debate.ErrNotFound)
	default:
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
}

func isForeignKeyViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

package postgres

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"

	"github.com/debated/debated/migrations"
)

// migrationLock is the key of the session-level advisory lock Migrate holds,
// so that replicas starting together apply each migration once. Advisory
// locks are per database, so migrating two databases never waits.
const migrationLock int64 = 0x6465626174656400 // "debated\x00"

// Migrate applies the migrations of migrations.Postgres that databaseURL's
// database lacks, in version order, each in its own transaction together with
// its row in schema_migrations. It connects as the URL's user, which must own
// the tables (or be able to create them) and be able to create the role
// debated_app; it does not SET ROLE. Concurrent calls wait for each other on
// an advisory lock; a second call finds nothing to do. Versions recorded in
// schema_migrations that this binary does not know (a newer binary migrated
// the database) are left alone. Returns the first error; the migrations
// before it stay applied.
func Migrate(ctx context.Context, databaseURL string) error {
	return migrate(ctx, databaseURL, migrations.Postgres)
}

func migrate(ctx context.Context, databaseURL string, fsys fs.FS) error {
	ms, err := migrations.Load(fsys)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("postgres: migrate: connect: %w", err)
	}
	cleanup := context.WithoutCancel(ctx)
	defer conn.Close(cleanup) //nolint:errcheck // closing also releases the lock

	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("postgres: migrate: take advisory lock: %w", err)
	}
	defer conn.Exec(cleanup, `SELECT pg_advisory_unlock($1)`, migrationLock) //nolint:errcheck // Close releases it anyway

	_, err = conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    bigint PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`)
	if err != nil {
		return fmt.Errorf("postgres: migrate: create schema_migrations: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("postgres: migrate: read schema_migrations: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("postgres: migrate: read schema_migrations: %w", err)
	}
	applied := make(map[int64]bool, len(versions))
	for _, v := range versions {
		applied[v] = true
	}

	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// Without arguments pgx uses the simple protocol, which runs
			// a script of several statements.
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
		if err != nil {
			return fmt.Errorf("postgres: migrate: apply %s: %w", m.Name, err)
		}
	}
	return nil
}

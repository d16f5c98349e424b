package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// asAppRole connects to the database at url as the service role, the way
// the store's pool does (SET ROLE debated_app), with no tenant set.
func asAppRole(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, `SET ROLE debated_app`)
	require.NoError(t, err)
	return conn
}

func requireSQLState(t *testing.T, err error, code string) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "want SQLSTATE %s, got %v", code, err)
	require.Equal(t, code, pgErr.Code, pgErr.Message)
}

// TestAppRoleAuthority probes, as debated_app with no tenant set, what
// issue 13 §6 found it could do to every tenant (migration 0012 and the
// river_job policies of runner.MigrateRiver).
func TestAppRoleAuthority(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := migratedDatabase(t)
	owner, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer owner.Close(ctx)
	hash := sha256.Sum256([]byte("dbk_probe"))
	_, err = owner.Exec(ctx, `INSERT INTO tenants (id, name, created_at) VALUES ('t-victim', 'victim', now())`)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO api_keys (id, tenant_id, name, prefix, hash, scopes, created_at)
		VALUES ('key-victim', 't-victim', 'ci', 'dbk_prob', $1, '{}', now())`, hash[:])
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO tenant_models (tenant_id, base_url, model, updated_at)
		VALUES ('t-victim', 'https://models.example', 'm', now())`)
	require.NoError(t, err)
	var jobID int64
	require.NoError(t, owner.QueryRow(ctx, `INSERT INTO river_job (kind, args, max_attempts)
		VALUES ('debated.debate', '{"tenant_id":"t-victim","debate_id":"d"}', 5) RETURNING id`).Scan(&jobID))

	app := asAppRole(t, url)

	t.Run("api_keys hashes are not readable", func(t *testing.T) {
		_, err := app.Exec(ctx, `SELECT hash FROM api_keys`)
		requireSQLState(t, err, "42501")
	})
	t.Run("no key can be inserted for a tenant not set", func(t *testing.T) {
		_, err := app.Exec(ctx, `INSERT INTO api_keys (id, tenant_id, name, prefix, hash, scopes, created_at)
			VALUES ('key-smuggled', 't-victim', 'x', 'x', '\x00', '{admin}', now())`)
		requireSQLState(t, err, "42501")
	})
	t.Run("keys are looked up through the definer function only", func(t *testing.T) {
		var id, tenant string
		require.NoError(t, app.QueryRow(ctx, `SELECT id, tenant_id FROM debated_api_key_lookup($1)`, hash[:]).Scan(&id, &tenant))
		require.Equal(t, "key-victim", id)
		require.Equal(t, "t-victim", tenant)
		_, err := app.Exec(ctx, `SELECT hash FROM debated_api_key_lookup($1)`, hash[:])
		requireSQLState(t, err, "42703") // the function returns no hash
	})
	t.Run("tenant_models rows cannot be read or rewritten", func(t *testing.T) {
		var n int
		require.NoError(t, app.QueryRow(ctx, `SELECT count(*) FROM tenant_models`).Scan(&n))
		require.Zero(t, n)
		tag, err := app.Exec(ctx, `UPDATE tenant_models SET base_url = 'http://169.254.169.254/' WHERE tenant_id = 't-victim'`)
		require.NoError(t, err)
		require.Zero(t, tag.RowsAffected())
		tag, err = app.Exec(ctx, `DELETE FROM tenant_models`)
		require.NoError(t, err)
		require.Zero(t, tag.RowsAffected())
		var url string
		require.NoError(t, owner.QueryRow(ctx, `SELECT base_url FROM tenant_models WHERE tenant_id = 't-victim'`).Scan(&url))
		require.Equal(t, "https://models.example", url)
	})
	t.Run("unfinished river jobs cannot be deleted", func(t *testing.T) {
		tag, err := app.Exec(ctx, `DELETE FROM river_job`)
		require.NoError(t, err)
		require.Zero(t, tag.RowsAffected())
		var state string
		require.NoError(t, owner.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, jobID).Scan(&state))
		require.Equal(t, "available", state)
	})
	t.Run("River's migrations are not the service's to change", func(t *testing.T) {
		_, err := app.Exec(ctx, `DELETE FROM river_migration`)
		requireSQLState(t, err, "42501")
	})
	t.Run("no row has the empty tenant id", func(t *testing.T) {
		_, err := owner.Exec(ctx, `INSERT INTO tenants (id, name, created_at) VALUES ('', 'nobody', now())`)
		requireSQLState(t, err, "23514")
		// model_responses has no foreign key to tenants: only the CHECK stops
		// a row that a connection whose tenant setting was reset to '' sees.
		_, err = owner.Exec(ctx, `INSERT INTO model_responses (tenant_id, cache_key, response) VALUES ('', 'k', '\x00')`)
		requireSQLState(t, err, "23514")
	})
	t.Run("every tenant-owned table is under row-level security", func(t *testing.T) {
		rows, err := owner.Query(ctx, `SELECT c.relname FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind = 'r' AND NOT c.relrowsecurity
			AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
			ORDER BY 1`)
		require.NoError(t, err)
		open, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Empty(t, open)
	})
}

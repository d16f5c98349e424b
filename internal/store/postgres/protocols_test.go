package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestProtocolDocumentsAuthority probes protocol_documents as the service
// role: row-level security hides and guards other tenants' documents,
// documents cannot be changed or deleted, and no row has the empty tenant.
func TestProtocolDocumentsAuthority(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := newDatabase(t)
	require.NoError(t, Migrate(ctx, url))
	owner, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer owner.Close(ctx)
	_, err = owner.Exec(ctx, `INSERT INTO tenants (id, name, created_at) VALUES ('t-victim', 'victim', now()), ('t-app', 'app', now())`)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO protocol_documents (tenant_id, name, version, document, sha256, created_at)
		VALUES ('t-victim', 'p', 1, '{}', 'x', now())`)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO protocol_documents (tenant_id, name, version, document, sha256, created_at)
		VALUES ('', 'p', 1, '{}', 'x', now())`)
	requireCode(t, err, "23514")

	app, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer app.Close(ctx)
	_, err = app.Exec(ctx, `SET ROLE debated_app`)
	require.NoError(t, err)
	_, err = app.Exec(ctx, `SELECT set_config('debated.tenant_id', 't-app', false)`)
	require.NoError(t, err)

	var n int
	require.NoError(t, app.QueryRow(ctx, `SELECT count(*) FROM protocol_documents`).Scan(&n))
	require.Zero(t, n, "another tenant's documents are invisible")
	_, err = app.Exec(ctx, `INSERT INTO protocol_documents (tenant_id, name, version, document, sha256, created_at)
		VALUES ('t-victim', 'p', 2, '{}', 'x', now())`)
	requireCode(t, err, "42501") // the row-level security policy
	_, err = app.Exec(ctx, `UPDATE protocol_documents SET document = '{"evil":1}'`)
	requireCode(t, err, "42501")
	_, err = app.Exec(ctx, `DELETE FROM protocol_documents`)
	requireCode(t, err, "42501")
	var doc string
	require.NoError(t, owner.QueryRow(ctx, `SELECT document FROM protocol_documents WHERE tenant_id = 't-victim'`).Scan(&doc))
	require.Equal(t, "{}", doc)
}

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "want SQLSTATE %s, got %v", code, err)
	require.Equal(t, code, pgErr.Code, pgErr.Message)
}

package sqlite

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmptyTenantIDRefused: no row of any tenant-owned table, nor a tenant,
// may carry the empty tenant id (migration 0012), even written directly on
// the writer connection.
func TestEmptyTenantIDRefused(t *testing.T) {
	t.Parallel()
	s := openFile(t)
	ctx := context.Background()
	_, err := s.write.ExecContext(ctx, `INSERT INTO tenants (id, name, created_at) VALUES ('', 'nobody', '2026-01-01T00:00:00Z')`)
	require.ErrorContains(t, err, "tenants: the tenant id may not be empty")
	// model_responses has no foreign key to tenants: only the trigger
	// refuses it.
	_, err = s.write.ExecContext(ctx, `INSERT INTO model_responses (tenant_id, cache_key, response, created_at) VALUES ('', 'k', x'00', '2026-01-01T00:00:00Z')`)
	require.ErrorContains(t, err, "model_responses: the tenant id may not be empty")

	var missing []string
	rows, err := s.write.QueryContext(ctx, `SELECT m.name FROM sqlite_master m
		WHERE m.type = 'table' AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'tenant_id')
		AND NOT EXISTS (SELECT 1 FROM sqlite_master tr WHERE tr.type = 'trigger' AND tr.tbl_name = m.name
			AND tr.name = m.name || '_tenant_id_not_empty')`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		missing = append(missing, name)
	}
	require.NoError(t, rows.Err())
	require.Empty(t, missing, "tenant-owned tables without the empty-tenant trigger")
}

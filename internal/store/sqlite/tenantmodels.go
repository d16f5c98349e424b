package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

// TenantModelSet stores the tenant's model override, or deletes it when
// m.BaseURL is empty. Returns debate.ErrNotFound if the tenant is unknown.
func (s *Store) TenantModelSet(ctx context.Context, m debate.TenantModel) error {
	op := fmt.Sprintf("tenant %q model", m.TenantID)
	if _, err := s.TenantGet(ctx, m.TenantID); err != nil {
		return err
	}
	err := inTx(ctx, s.write, func(tx *sql.Tx) error {
		if m.BaseURL == "" {
			_, err := tx.ExecContext(ctx, `DELETE FROM tenant_models WHERE tenant_id = ?`, m.TenantID)
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO tenant_models (tenant_id, base_url, model, api_key_ciphertext, updated_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (tenant_id) DO UPDATE SET base_url = excluded.base_url, model = excluded.model,
				api_key_ciphertext = excluded.api_key_ciphertext, updated_at = excluded.updated_at`,
			m.TenantID, m.BaseURL, m.Model, m.APIKeyCiphertext, rows.TimeText(m.UpdatedAt))
		return err
	})
	return wrap(op, err)
}

// TenantModelGet returns the tenant's model override. Returns
// debate.ErrNotFound if it has none.
func (s *Store) TenantModelGet(ctx context.Context, tenantID string) (debate.TenantModel, error) {
	m := debate.TenantModel{TenantID: tenantID}
	var at string
	err := s.read.QueryRowContext(ctx, `SELECT base_url, model, api_key_ciphertext, updated_at FROM tenant_models WHERE tenant_id = ?`,
		tenantID).Scan(&m.BaseURL, &m.Model, &m.APIKeyCiphertext, &at)
	if err != nil {
		return debate.TenantModel{}, wrap(fmt.Sprintf("tenant %q model", tenantID), err)
	}
	m.UpdatedAt, err = rows.ParseTimeText(at)
	return m, err
}

package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

// tenantTx runs f in a transaction bound to tenant (row-level security),
// for the tenant-owned tables that the admin API reaches by an explicit
// tenant id rather than the caller's principal.
func (s *Store) tenantTx(ctx context.Context, tenant string, f func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, setTenantSQL, tenant); err != nil {
			return err
		}
		return f(tx)
	})
}

// TenantModelSet stores the tenant's model override, or deletes it when
// m.BaseURL is empty. Returns debate.ErrNotFound if the tenant is unknown.
func (s *Store) TenantModelSet(ctx context.Context, m debate.TenantModel) error {
	op := fmt.Sprintf("tenant %q model", m.TenantID)
	if _, err := s.TenantGet(ctx, m.TenantID); err != nil {
		return err
	}
	return wrap(op, s.tenantTx(ctx, m.TenantID, func(tx pgx.Tx) error {
		if m.BaseURL == "" {
			_, err := tx.Exec(ctx, `DELETE FROM tenant_models WHERE tenant_id = $1`, m.TenantID)
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO tenant_models (tenant_id, base_url, model, api_key_ciphertext, updated_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tenant_id) DO UPDATE SET base_url = EXCLUDED.base_url, model = EXCLUDED.model,
			api_key_ciphertext = EXCLUDED.api_key_ciphertext, updated_at = EXCLUDED.updated_at`,
			m.TenantID, m.BaseURL, m.Model, m.APIKeyCiphertext, rows.Time(m.UpdatedAt))
		return err
	}))
}

// TenantModelGet returns the tenant's model override. Returns
// debate.ErrNotFound if it has none.
func (s *Store) TenantModelGet(ctx context.Context, tenantID string) (debate.TenantModel, error) {
	m := debate.TenantModel{TenantID: tenantID}
	err := s.tenantTx(ctx, tenantID, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT base_url, model, api_key_ciphertext, updated_at FROM tenant_models WHERE tenant_id = $1`,
			tenantID).Scan(&m.BaseURL, &m.Model, &m.APIKeyCiphertext, &m.UpdatedAt)
	})
	if err != nil {
		return debate.TenantModel{}, wrap(fmt.Sprintf("tenant %q model", tenantID), err)
	}
	m.UpdatedAt = m.UpdatedAt.UTC()
	return m, nil
}

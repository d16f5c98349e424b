package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/debated/debated/internal/debate"
	"github.com/jackc/pgx/v5"
)

// ModelResponseGet returns the persisted model response under key for the
// tenant of ctx, and whether there is one. Returns debate.ErrNoTenant
// without a tenant in ctx.
func (s *Store) ModelResponseGet(ctx context.Context, key string) ([]byte, bool, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, false, err
	}
	var resp []byte
	found := false
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT response FROM model_responses WHERE tenant_id = $1 AND cache_key = $2`, tenant, key).
			QueryRow(func(row pgx.Row) error {
				err := row.Scan(&resp)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				found = err == nil
				return err
			})
	})
	if err != nil {
		return nil, false, wrap(fmt.Sprintf("model response %q", key), err)
	}
	return resp, found, nil
}

// ModelResponsePut persists a model response under key; the first response
// stored under a key wins. Returns debate.ErrNoTenant without a tenant in
// ctx.
func (s *Store) ModelResponsePut(ctx context.Context, key string, resp []byte) error {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return err
	}
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`INSERT INTO model_responses (tenant_id, cache_key, response) VALUES ($1, $2, $3)
			ON CONFLICT (tenant_id, cache_key) DO NOTHING`, tenant, key, resp)
	})
	if err != nil {
		return wrap(fmt.Sprintf("model response %q", key), err)
	}
	return nil
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/debated/debated/internal/debate"
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
	err = s.read.QueryRowContext(ctx, `SELECT response FROM model_responses WHERE tenant_id = ? AND cache_key = ?`, tenant, key).Scan(&resp)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, wrap(fmt.Sprintf("model response %q", key), err)
	}
	return resp, true, nil
}

// ModelResponsePut persists a model response under key; the first response
// stored under a key wins. Returns debate.ErrNoTenant without a tenant in
// ctx.
func (s *Store) ModelResponsePut(ctx context.Context, key string, resp []byte) error {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return err
	}
	err = inTx(ctx, s.write, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO model_responses (tenant_id, cache_key, response) VALUES (?, ?, ?)
			ON CONFLICT (tenant_id, cache_key) DO NOTHING`, tenant, key, resp)
		return err
	})
	return wrap(fmt.Sprintf("model response %q", key), err)
}

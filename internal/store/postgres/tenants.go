package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

// Tenants are service metadata: no row-level security, and no tenant in the
// context. API keys are tenant-owned rows under row-level security
// (migration 0012): a key is inserted with its own tenant set, and since a
// key is looked up before its tenant is known, lookup and revocation go
// through the SECURITY DEFINER functions debated_api_key_lookup and
// debated_api_key_revoke; debated_app cannot read the table itself.

// TenantCreate stores t, its CreatedAt in UTC to the microsecond. Returns
// a *debate.ValidationError if its id is not a valid id, and
// debate.ErrAlreadyExists if the id is taken.
func (s *Store) TenantCreate(ctx context.Context, t debate.Tenant) error {
	if err := rows.CheckTenant(t); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, $3)`,
		t.ID, t.Name, rows.Time(t.CreatedAt))
	return wrap("tenant create", err)
}

// TenantGet returns the tenant. Returns debate.ErrNotFound if unknown.
func (s *Store) TenantGet(ctx context.Context, id string) (debate.Tenant, error) {
	var t debate.Tenant
	err := s.pool.QueryRow(ctx, `SELECT id, name, created_at FROM tenants WHERE id = $1`, id).
		Scan(&t.ID, &t.Name, &t.CreatedAt)
	if err != nil {
		return debate.Tenant{}, wrap(fmt.Sprintf("tenant %q", id), err)
	}
	t.CreatedAt = t.CreatedAt.UTC()
	return t, nil
}

// TenantList returns up to rows.Limit(page.Limit) tenants ordered by id
// after page.After, and the cursor of the next page ("" on the last).
// Returns a *debate.ValidationError on field page_token if page.After is not
// a cursor this method returned.
func (s *Store) TenantList(ctx context.Context, page debate.Page) ([]debate.Tenant, string, error) {
	after, err := rows.DecodeCursor(page.After, 1)
	if err != nil {
		return nil, "", err
	}
	limit := rows.Limit(page.Limit)
	sql := `SELECT id, name, created_at FROM tenants ORDER BY id LIMIT $1`
	args := []any{limit + 1}
	if after != nil {
		sql = `SELECT id, name, created_at FROM tenants WHERE id > $2 ORDER BY id LIMIT $1`
		args = append(args, after[0])
	}
	rs, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, "", wrap("tenant list", err)
	}
	list, err := pgx.CollectRows(rs, func(r pgx.CollectableRow) (debate.Tenant, error) {
		var t debate.Tenant
		err := r.Scan(&t.ID, &t.Name, &t.CreatedAt)
		t.CreatedAt = t.CreatedAt.UTC()
		return t, err
	})
	if err != nil {
		return nil, "", wrap("tenant list", err)
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		next = rows.EncodeCursor(list[limit-1].ID)
	}
	return list, next, nil
}

// APIKeyCreate stores k, its times in UTC to the microsecond. Returns a
// *debate.ValidationError if k is malformed, debate.ErrNotFound if its
// tenant is unknown, and debate.ErrAlreadyExists if its id or hash is taken.
func (s *Store) APIKeyCreate(ctx context.Context, k debate.APIKey) error {
	if err := rows.CheckAPIKey(k); err != nil {
		return err
	}
	var revoked *time.Time
	if k.RevokedAt != nil {
		t := rows.Time(*k.RevokedAt)
		revoked = &t
	}
	err := s.tenantTx(ctx, k.TenantID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, tenant_id, name, prefix, hash, scopes, created_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			k.ID, k.TenantID, k.Name, k.Prefix, k.Hash, rows.Scopes(k.Scopes), rows.Time(k.CreatedAt), revoked)
		return err
	})
	return wrap("api key create", err)
}

// scanAPIKey reads a row of debated_api_key_lookup (revoked false) or of
// debated_api_key_revoke (revoked true, with the revocation time).
func scanAPIKey(row pgx.Row, withRevoked bool) (debate.APIKey, error) {
	var k debate.APIKey
	var scopes []string
	dest := []any{&k.ID, &k.TenantID, &k.Name, &k.Prefix, &scopes, &k.CreatedAt}
	if withRevoked {
		dest = append(dest, &k.Hash, &k.RevokedAt)
	}
	if err := row.Scan(dest...); err != nil {
		return debate.APIKey{}, err
	}
	k.Scopes = rows.ScopesOf(scopes)
	k.CreatedAt = k.CreatedAt.UTC()
	if k.RevokedAt != nil {
		t := k.RevokedAt.UTC()
		k.RevokedAt = &t
	}
	return k, nil
}

// APIKeyLookup returns the unrevoked key whose hash is hash, by an index
// lookup in debated_api_key_lookup, which runs as the table's owner and
// returns no hash (the caller has it). Returns debate.ErrNotFound if there
// is none.
func (s *Store) APIKeyLookup(ctx context.Context, hash []byte) (debate.APIKey, error) {
	k, err := scanAPIKey(s.pool.QueryRow(ctx,
		`SELECT id, tenant_id, name, prefix, scopes, created_at FROM debated_api_key_lookup($1)`, hash), false)
	if err != nil {
		return debate.APIKey{}, wrap("api key lookup", err)
	}
	k.Hash = slices.Clone(hash)
	return k, nil
}

// APIKeyRevoke marks the key revoked at at (UTC, to the microsecond) and
// returns it. Revoking a revoked key keeps its first revocation time. The
// admin API names a key by id alone, so it goes through the SECURITY
// DEFINER function debated_api_key_revoke, which can do nothing else.
// Returns debate.ErrNotFound if the key is unknown.
func (s *Store) APIKeyRevoke(ctx context.Context, keyID string, at time.Time) (debate.APIKey, error) {
	k, err := scanAPIKey(s.pool.QueryRow(ctx,
		`SELECT id, tenant_id, name, prefix, scopes, created_at, hash, revoked_at FROM debated_api_key_revoke($1, $2)`,
		keyID, rows.Time(at)), true)
	if err != nil {
		return debate.APIKey{}, wrap(fmt.Sprintf("api key %q revoke", keyID), err)
	}
	return k, nil
}

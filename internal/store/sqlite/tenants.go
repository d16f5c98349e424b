package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

// TenantCreate stores t, its CreatedAt in UTC to the microsecond. Returns
// a *debate.ValidationError if its id is not a valid id, and
// debate.ErrAlreadyExists if the id is taken.
func (s *Store) TenantCreate(ctx context.Context, t debate.Tenant) error {
	if err := rows.CheckTenant(t); err != nil {
		return err
	}
	_, err := s.write.ExecContext(ctx, `INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)`,
		t.ID, t.Name, rows.TimeText(t.CreatedAt))
	return wrap("tenant create", err)
}

type scanner interface{ Scan(dest ...any) error }

func scanTenant(row scanner) (debate.Tenant, error) {
	var t debate.Tenant
	var created string
	if err := row.Scan(&t.ID, &t.Name, &created); err != nil {
		return debate.Tenant{}, err
	}
	var err error
	t.CreatedAt, err = rows.ParseTimeText(created)
	return t, err
}

// TenantGet returns the tenant. Returns debate.ErrNotFound if unknown.
func (s *Store) TenantGet(ctx context.Context, id string) (debate.Tenant, error) {
	t, err := scanTenant(s.read.QueryRowContext(ctx, `SELECT id, name, created_at FROM tenants WHERE id = ?`, id))
	if err != nil {
		return debate.Tenant{}, wrap(fmt.Sprintf("tenant %q", id), err)
	}
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
	q := `SELECT id, name, created_at FROM tenants ORDER BY id LIMIT ?`
	args := []any{limit + 1}
	if after != nil {
		q = `SELECT id, name, created_at FROM tenants WHERE id > ? ORDER BY id LIMIT ?`
		args = []any{after[0], limit + 1}
	}
	list, err := queryList(ctx, s.read, q, args, scanTenant)
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

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryList runs q and returns its rows decoded by scan.
func queryList[T any](ctx context.Context, db querier, q string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rs, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []T
	for rs.Next() {
		x, err := scan(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rs.Err()
}

// APIKeyCreate stores k, its times in UTC to the microsecond. Returns a
// *debate.ValidationError if k is malformed, debate.ErrNotFound if its
// tenant is unknown, and debate.ErrAlreadyExists if its id or hash is taken.
func (s *Store) APIKeyCreate(ctx context.Context, k debate.APIKey) error {
	if err := rows.CheckAPIKey(k); err != nil {
		return err
	}
	scopes, _ := json.Marshal(rows.Scopes(k.Scopes)) // a []string always marshals
	var revoked *string
	if k.RevokedAt != nil {
		t := rows.TimeText(*k.RevokedAt)
		revoked = &t
	}
	_, err := s.write.ExecContext(ctx, `INSERT INTO api_keys (id, tenant_id, name, prefix, hash, scopes, created_at, revoked_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.TenantID, k.Name, k.Prefix, k.Hash, string(scopes), rows.TimeText(k.CreatedAt), revoked)
	return wrap("api key create", err)
}

const apiKeyColumns = `id, tenant_id, name, prefix, hash, scopes, created_at, revoked_at`

func scanAPIKey(row scanner) (debate.APIKey, error) {
	var k debate.APIKey
	var scopes, created string
	var revoked sql.NullString
	if err := row.Scan(&k.ID, &k.TenantID, &k.Name, &k.Prefix, &k.Hash, &scopes, &created, &revoked); err != nil {
		return debate.APIKey{}, err
	}
	var ss []string
	if err := json.Unmarshal([]byte(scopes), &ss); err != nil {
		return debate.APIKey{}, fmt.Errorf("decode stored scopes: %w", err)
	}
	k.Scopes = rows.ScopesOf(ss)
	var err error
	if k.CreatedAt, err = rows.ParseTimeText(created); err != nil {
		return debate.APIKey{}, err
	}
	if revoked.Valid {
		t, err := rows.ParseTimeText(revoked.String)
		if err != nil {
			return debate.APIKey{}, err
		}
		k.RevokedAt = &t
	}
	return k, nil
}

// APIKeyLookup returns the unrevoked key whose hash is hash, by an index
// lookup. Returns debate.ErrNotFound if there is none.
func (s *Store) APIKeyLookup(ctx context.Context, hash []byte) (debate.APIKey, error) {
	k, err := scanAPIKey(s.read.QueryRowContext(ctx,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = ? AND revoked_at IS NULL`, hash))
	if err != nil {
		return debate.APIKey{}, wrap("api key lookup", err)
	}
	return k, nil
}

// APIKeyRevoke marks the key revoked at at (UTC, to the microsecond) and
// returns it. Revoking a revoked key keeps its first revocation time.
// Returns debate.ErrNotFound if the key is unknown.
func (s *Store) APIKeyRevoke(ctx context.Context, keyID string, at time.Time) (debate.APIKey, error) {
	k, err := scanAPIKey(s.write.QueryRowContext(ctx,
		`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING `+apiKeyColumns,
		rows.TimeText(at), keyID))
	if err != nil {
		return debate.APIKey{}, wrap(fmt.Sprintf("api key %q revoke", keyID), err)
	}
	return k, nil
}

package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

// ProtocolPut stores a tenant's protocol document (see
// debate.ProtocolStore). Returns debate.ErrNoTenant without a tenant in
// ctx and debate.ErrAlreadyExists if another document holds the name and
// version.
func (s *Store) ProtocolPut(ctx context.Context, p debate.ProtocolDocument) (debate.ProtocolDocument, bool, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.ProtocolDocument{}, false, err
	}
	p.TenantID = tenant
	p.CreatedAt = rows.Time(p.CreatedAt)
	op := fmt.Sprintf("protocol %q version %d", p.Name, p.Version)
	var (
		stored  debate.ProtocolDocument
		created bool
	)
	err = inTx(ctx, s.write, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO protocol_documents (tenant_id, name, version, document, sha256, created_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, name, version) DO NOTHING`,
			tenant, p.Name, p.Version, string(p.Document), p.SHA256, rows.TimeText(p.CreatedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 1 {
			stored, created = p, true
			return nil
		}
		stored, err = protocolGet(ctx, tx, tenant, p.Name, p.Version)
		return err
	})
	if err != nil {
		return debate.ProtocolDocument{}, false, wrap(op, err)
	}
	if !created && stored.SHA256 != p.SHA256 {
		return debate.ProtocolDocument{}, false, fmt.Errorf("sqlite: %s: a different document holds this version; register a new version: %w", op, debate.ErrAlreadyExists)
	}
	return stored, created, nil
}

// ProtocolGet returns a tenant's protocol document (version 0: the
// highest). Returns debate.ErrNoTenant without a tenant in ctx and
// debate.ErrNotFound if the tenant has none.
func (s *Store) ProtocolGet(ctx context.Context, name string, version int) (debate.ProtocolDocument, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.ProtocolDocument{}, err
	}
	p, err := protocolGet(ctx, s.read, tenant, name, version)
	if err != nil {
		return debate.ProtocolDocument{}, wrap(fmt.Sprintf("protocol %q version %d", name, version), err)
	}
	return p, nil
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func protocolGet(ctx context.Context, q queryRower, tenant, name string, version int) (debate.ProtocolDocument, error) {
	p := debate.ProtocolDocument{TenantID: tenant, Name: name}
	var doc, at string
	err := q.QueryRowContext(ctx, `SELECT version, document, sha256, created_at FROM protocol_documents
		WHERE tenant_id = ? AND name = ? AND (? = 0 OR version = ?) ORDER BY version DESC LIMIT 1`,
		tenant, name, version, version).Scan(&p.Version, &doc, &p.SHA256, &at)
	if err != nil {
		return p, err
	}
	p.Document = []byte(doc)
	p.CreatedAt, err = rows.ParseTimeText(at)
	return p, err
}

// ProtocolList returns every protocol document of the tenant of ctx,
// ordered by name and version. Returns debate.ErrNoTenant without a tenant.
func (s *Store) ProtocolList(ctx context.Context) ([]debate.ProtocolDocument, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := s.read.QueryContext(ctx, `SELECT name, version, document, sha256, created_at FROM protocol_documents
		WHERE tenant_id = ? ORDER BY name, version`, tenant)
	if err != nil {
		return nil, wrap("protocols", err)
	}
	defer rs.Close()
	var out []debate.ProtocolDocument
	for rs.Next() {
		p := debate.ProtocolDocument{TenantID: tenant}
		var doc, at string
		if err := rs.Scan(&p.Name, &p.Version, &doc, &p.SHA256, &at); err != nil {
			return nil, wrap("protocols", err)
		}
		p.Document = []byte(doc)
		if p.CreatedAt, err = rows.ParseTimeText(at); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, wrap("protocols", rs.Err())
}

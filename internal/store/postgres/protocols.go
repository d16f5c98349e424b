package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

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
	err = s.tenantTx(ctx, tenant, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO protocol_documents (tenant_id, name, version, document, sha256, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant_id, name, version) DO NOTHING`,
			tenant, p.Name, p.Version, string(p.Document), p.SHA256, p.CreatedAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
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
		return debate.ProtocolDocument{}, false, fmt.Errorf("postgres: %s: a different document holds this version; register a new version: %w", op, debate.ErrAlreadyExists)
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
	var p debate.ProtocolDocument
	err = s.tenantTx(ctx, tenant, func(tx pgx.Tx) error {
		p, err = protocolGet(ctx, tx, tenant, name, version)
		return err
	})
	if err != nil {
		return debate.ProtocolDocument{}, wrap(fmt.Sprintf("protocol %q version %d", name, version), err)
	}
	return p, nil
}

func protocolGet(ctx context.Context, tx pgx.Tx, tenant, name string, version int) (debate.ProtocolDocument, error) {
	p := debate.ProtocolDocument{TenantID: tenant, Name: name}
	var doc string
	err := tx.QueryRow(ctx, `SELECT version, document, sha256, created_at FROM protocol_documents
		WHERE tenant_id = $1 AND name = $2 AND ($3 = 0 OR version = $3) ORDER BY version DESC LIMIT 1`,
		tenant, name, version).Scan(&p.Version, &doc, &p.SHA256, &p.CreatedAt)
	p.Document = []byte(doc)
	p.CreatedAt = p.CreatedAt.UTC()
	return p, err
}

// ProtocolList returns every protocol document of the tenant of ctx,
// ordered by name and version. Returns debate.ErrNoTenant without a tenant.
func (s *Store) ProtocolList(ctx context.Context) ([]debate.ProtocolDocument, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var out []debate.ProtocolDocument
	err = s.tenantTx(ctx, tenant, func(tx pgx.Tx) error {
		rs, err := tx.Query(ctx, `SELECT name, version, document, sha256, created_at FROM protocol_documents
			WHERE tenant_id = $1 ORDER BY name, version`, tenant)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			p := debate.ProtocolDocument{TenantID: tenant}
			var doc string
			if err := rs.Scan(&p.Name, &p.Version, &doc, &p.SHA256, &p.CreatedAt); err != nil {
				return err
			}
			p.Document, p.CreatedAt = []byte(doc), p.CreatedAt.UTC()
			out = append(out, p)
		}
		return rs.Err()
	})
	if err != nil {
		return nil, wrap("protocols", err)
	}
	return out, nil
}

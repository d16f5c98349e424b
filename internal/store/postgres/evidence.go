package postgres

import (
	"context"
	"fmt"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
	"github.com/jackc/pgx/v5"
)

// EvidenceList returns up to rows.Limit(page.Limit) evidence items of
// dealID ordered by id, after page.After, and the next cursor ("" on the
// last page). Returns debate.ErrNoTenant without a tenant in ctx; a
// *debate.ValidationError for an empty dealID or a cursor this method did
// not return; and debate.ErrNotFound if the tenant has no such deal.
func (s *Store) EvidenceList(ctx context.Context, dealID string, page debate.Page) ([]debate.EvidenceItem, string, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, "", err
	}
	if dealID == "" {
		return nil, "", &debate.ValidationError{Violations: []debate.FieldViolation{{Field: "deal_id", Description: "is required"}}}
	}
	after, err := rows.DecodeCursor(page.After, 1)
	if err != nil {
		return nil, "", err
	}
	limit := rows.Limit(page.Limit)
	q := `SELECT record FROM evidence_items WHERE tenant_id = $1 AND deal_id = $2`
	args := []any{tenant, dealID}
	if after != nil {
		q += ` AND evidence_id > $3 ORDER BY evidence_id LIMIT $4`
		args = append(args, after[0], limit+1)
	} else {
		q += ` ORDER BY evidence_id LIMIT $3`
		args = append(args, limit+1)
	}
	var list []debate.EvidenceItem
	var dealExists bool
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT EXISTS (SELECT FROM deals WHERE tenant_id = $1 AND deal_id = $2)`, tenant, dealID).
			QueryRow(func(row pgx.Row) error { return row.Scan(&dealExists) })
		b.Queue(q, args...).Query(collectRecords(&list, rows.DecodeEvidence))
	})
	if err != nil {
		return nil, "", wrap("evidence list", err)
	}
	if !dealExists {
		return nil, "", fmt.Errorf("deal %q: %w", dealID, debate.ErrNotFound)
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		next = rows.EncodeCursor(list[limit-1].ID)
	}
	return list, next, nil
}

// EvidenceGet returns the tenant's evidence item evidenceID and its deal
// id, in dealID or, with dealID empty, in whichever deal has it. Returns
// debate.ErrNoTenant without a tenant in ctx; a *debate.ValidationError on
// field deal_id when several deals have the id; and debate.ErrNotFound if
// none has it.
func (s *Store) EvidenceGet(ctx context.Context, dealID, evidenceID string) (debate.EvidenceItem, string, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.EvidenceItem{}, "", err
	}
	var deals []string
	var records [][]byte
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT deal_id, record FROM evidence_items WHERE tenant_id = $1 AND evidence_id = $2
			AND ($3 = '' OR deal_id = $3) ORDER BY deal_id LIMIT 2`, tenant, evidenceID, dealID).
			Query(func(rs pgx.Rows) error {
				defer rs.Close()
				for rs.Next() {
					var d string
					var data []byte
					if err := rs.Scan(&d, &data); err != nil {
						return err
					}
					deals, records = append(deals, d), append(records, data)
				}
				return rs.Err()
			})
	})
	if err != nil {
		return debate.EvidenceItem{}, "", wrap(fmt.Sprintf("evidence %q", evidenceID), err)
	}
	switch len(deals) {
	case 0:
		return debate.EvidenceItem{}, "", fmt.Errorf("evidence %q: %w", evidenceID, debate.ErrNotFound)
	case 2:
		return debate.EvidenceItem{}, "", &debate.ValidationError{Violations: []debate.FieldViolation{{
			Field: "deal_id", Description: fmt.Sprintf("evidence %q is in several deals (%s, %s, …): name the deal", evidenceID, deals[0], deals[1])}}}
	}
	e, err := rows.DecodeEvidence(records[0])
	if err != nil {
		return debate.EvidenceItem{}, "", wrap(fmt.Sprintf("evidence %q", evidenceID), err)
	}
	return e, deals[0], nil
}

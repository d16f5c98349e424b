package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
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
	q := `SELECT record FROM evidence_items WHERE tenant_id = ? AND deal_id = ?`
	args := []any{tenant, dealID}
	if after != nil {
		q += ` AND evidence_id > ?`
		args = append(args, after[0])
	}
	q += ` ORDER BY evidence_id LIMIT ?`
	args = append(args, limit+1)
	var list []debate.EvidenceItem
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM deals WHERE tenant_id = ? AND deal_id = ?)`,
			tenant, dealID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("deal %q: %w", dealID, debate.ErrNotFound)
		}
		var err error
		list, err = queryList(ctx, tx, q, args, recordScanner(rows.DecodeEvidence))
		return err
	})
	if err != nil {
		return nil, "", wrap("evidence list", err)
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
	q := `SELECT deal_id, record FROM evidence_items WHERE tenant_id = ? AND evidence_id = ?`
	args := []any{tenant, evidenceID}
	if dealID != "" {
		q += ` AND deal_id = ?`
		args = append(args, dealID)
	}
	q += ` ORDER BY deal_id LIMIT 2`
	type found struct {
		deal string
		data []byte
	}
	list, err := queryList(ctx, s.read, q, args, func(row scanner) (found, error) {
		var f found
		return f, row.Scan(&f.deal, &f.data)
	})
	if err != nil {
		return debate.EvidenceItem{}, "", wrap(fmt.Sprintf("evidence %q", evidenceID), err)
	}
	switch len(list) {
	case 0:
		return debate.EvidenceItem{}, "", fmt.Errorf("evidence %q: %w", evidenceID, debate.ErrNotFound)
	case 2:
		return debate.EvidenceItem{}, "", &debate.ValidationError{Violations: []debate.FieldViolation{{
			Field: "deal_id", Description: fmt.Sprintf("evidence %q is in several deals (%s, %s, …): name the deal", evidenceID, list[0].deal, list[1].deal)}}}
	}
	e, err := rows.DecodeEvidence(list[0].data)
	if err != nil {
		return debate.EvidenceItem{}, "", wrap(fmt.Sprintf("evidence %q", evidenceID), err)
	}
	return e, list[0].deal, nil
}

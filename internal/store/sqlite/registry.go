package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

const dealSummaryColumns = `record, content_hash, imported_at,
	claim_count, evidence_count, span_count, sanad_count, document_count, calc_count`

func scanDealSummary(row scanner) (debate.DealSummary, error) {
	var record []byte
	var hash, importedAt string
	var counts [6]int
	if err := row.Scan(&record, &hash, &importedAt, &counts[0], &counts[1], &counts[2], &counts[3], &counts[4], &counts[5]); err != nil {
		return debate.DealSummary{}, err
	}
	at, err := rows.ParseTimeText(importedAt)
	if err != nil {
		return debate.DealSummary{}, err
	}
	return rows.Summary(record, hash, at, counts)
}

// DealImport stores the whole bundle in one transaction: all its rows or
// none. If the tenant already has the deal with the same contentHash it
// writes nothing and returns the stored summary with Created false; with
// another hash it returns debate.ErrAlreadyExists and writes nothing.
// Concurrent imports run one after the other on the single writer
// connection. ImportedAt is at in UTC to the microsecond.
//
// Returns debate.ErrNoTenant without a tenant in ctx; a
// *debate.ValidationError if b is nil, if b.Validate rejects it, if
// contentHash is empty, or if a text holds a NUL character;
// debate.ErrAlreadyExists naming the claim if a claim id is already used by
// another deal of the tenant; debate.ErrNotFound if the tenant is unknown.
func (s *Store) DealImport(ctx context.Context, b *debate.DealBundle, contentHash string, at time.Time) (debate.DealImportResult, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.DealImportResult{}, err
	}
	rb, err := rows.EncodeBundle(b, contentHash, at)
	if err != nil {
		return debate.DealImportResult{}, err
	}
	dealID := rb.Deal.Deal.ID
	op := fmt.Sprintf("deal %q import", dealID)

	var res debate.DealImportResult
	err = inTx(ctx, s.write, func(tx *sql.Tx) error {
		d := rb.Deal
		r, err := tx.ExecContext(ctx, `INSERT INTO deals (tenant_id, deal_id, external_ref, company_name, stage, sector, status,
				materiality_threshold, created_at, updated_at, content_hash, imported_at,
				claim_count, evidence_count, span_count, sanad_count, document_count, calc_count, record)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`,
			tenant, dealID, d.Deal.ExternalRef, d.Deal.CompanyName, d.Deal.Stage, d.Deal.Sector, d.Deal.Status,
			// The column is a float for SQL readers; the record keeps the exact decimal.
			d.Deal.MaterialityThreshold.Float64(), rows.TimeText(d.Deal.CreatedAt), rows.TimeText(d.Deal.UpdatedAt),
			d.ContentHash, rows.TimeText(d.ImportedAt),
			d.Counts[0], d.Counts[1], d.Counts[2], d.Counts[3], d.Counts[4], d.Counts[5], d.Record)
		if isForeignKeyViolation(err) {
			return fmt.Errorf("tenant %q: %w", tenant, debate.ErrNotFound)
		}
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return err
		}
		res.Summary, err = scanDealSummary(tx.QueryRowContext(ctx,
			`SELECT `+dealSummaryColumns+` FROM deals WHERE tenant_id = ? AND deal_id = ?`, tenant, dealID))
		if err != nil {
			return err
		}
		if n == 0 {
			if res.Summary.ContentHash != contentHash {
				return fmt.Errorf("the deal was imported with other content: %w", debate.ErrAlreadyExists)
			}
			return nil // the same import again: write nothing
		}
		res.Created = true

		// Claim ids are unique per tenant: a claim id another deal uses is
		// skipped by ON CONFLICT and shows as a short count.
		c := rb.Claims
		inserted, err := insertRows(ctx, tx,
			`INSERT INTO claims (tenant_id, deal_id, claim_id, claim_key, claim_class, materiality, ic_bound, record) VALUES `,
			` ON CONFLICT DO NOTHING`, 8, len(c.IDs), func(i int, args []any) []any {
				return append(args, tenant, dealID, c.IDs[i], c.Keys[i], c.Classes[i], c.Materialities[i], c.ICBound[i], c.Records[i])
			})
		if err != nil {
			return err
		}
		if inserted < int64(len(c.IDs)) {
			return claimConflict(ctx, tx, tenant, dealID, c.IDs)
		}
		if err := insertRecords(ctx, tx, "evidence_items", "evidence_id", tenant, dealID, rb.Evidence); err != nil {
			return err
		}
		sp := rb.Spans
		if _, err := insertRows(ctx, tx, `INSERT INTO spans (tenant_id, deal_id, span_id, document_id, text_excerpt, record) VALUES `,
			``, 6, len(sp.IDs), func(i int, args []any) []any {
				return append(args, tenant, dealID, sp.IDs[i], sp.DocumentIDs[i], sp.TextExcerpts[i], sp.Records[i])
			}); err != nil {
			return err
		}
		sa := rb.Sanads
		if _, err := insertRows(ctx, tx, `INSERT INTO sanads (tenant_id, deal_id, sanad_id, claim_id, record) VALUES `,
			``, 5, len(sa.IDs), func(i int, args []any) []any {
				return append(args, tenant, dealID, sa.IDs[i], sa.ClaimIDs[i], sa.Records[i])
			}); err != nil {
			return err
		}
		if err := insertRecords(ctx, tx, "documents", "document_id", tenant, dealID, rb.Documents); err != nil {
			return err
		}
		if err := insertRecords(ctx, tx, "calcs", "calc_id", tenant, dealID, rb.Calcs); err != nil {
			return err
		}
		return insertRecords(ctx, tx, "enrichment_records", "record_id", tenant, dealID, rb.Enrichment)
	})
	if err != nil {
		return debate.DealImportResult{}, wrap(op, err)
	}
	return res, nil
}

// maxRowsPerInsert bounds the rows of one multi-row INSERT, well below
// SQLite's limit of 32766 bound variables.
const maxRowsPerInsert = 500

// insertRows inserts n rows of ncols values each with multi-row INSERT
// statements of head, placeholders and tail; values appends row i's values
// to args. It returns the number of rows inserted.
func insertRows(ctx context.Context, tx *sql.Tx, head, tail string, ncols, n int, values func(i int, args []any) []any) (int64, error) {
	var total int64
	var full *sql.Stmt // the statement of a whole chunk, prepared once
	defer func() {
		if full != nil {
			_ = full.Close()
		}
	}()
	for start := 0; start < n; start += maxRowsPerInsert {
		m := min(maxRowsPerInsert, n-start)
		args := make([]any, 0, m*ncols)
		for i := start; i < start+m; i++ {
			args = values(i, args)
		}
		var r sql.Result
		var err error
		if m == maxRowsPerInsert {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, insertSQL(head, tail, ncols, m)); err != nil {
					return total, err
				}
			}
			r, err = full.ExecContext(ctx, args...)
		} else {
			r, err = tx.ExecContext(ctx, insertSQL(head, tail, ncols, m), args...)
		}
		if err != nil {
			return total, err
		}
		k, err := r.RowsAffected()
		if err != nil {
			return total, err
		}
		total += k
	}
	return total, nil
}

func insertSQL(head, tail string, ncols, nrows int) string {
	row := "(" + strings.Repeat("?, ", ncols-1) + "?)"
	var b strings.Builder
	b.Grow(len(head) + nrows*(len(row)+2) + len(tail))
	b.WriteString(head)
	for i := range nrows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	b.WriteString(tail)
	return b.String()
}

// insertRecords inserts the rows of a table that has only an id and a
// record beside the tenant and deal.
func insertRecords(ctx context.Context, tx *sql.Tx, table, idColumn, tenant, dealID string, r rows.IDRows) error {
	_, err := insertRows(ctx, tx, `INSERT INTO `+table+` (tenant_id, deal_id, `+idColumn+`, record) VALUES `, ``,
		4, len(r.IDs), func(i int, args []any) []any {
			return append(args, tenant, dealID, r.IDs[i], r.Records[i])
		})
	return err
}

// claimConflict names the claim of ids that another deal of the tenant
// already holds.
func claimConflict(ctx context.Context, tx *sql.Tx, tenant, dealID string, ids []string) error {
	// A temporary list of ids would do too; the claims of one import are
	// few enough to check in chunks.
	for start := 0; start < len(ids); start += maxRowsPerInsert {
		chunk := ids[start:min(start+maxRowsPerInsert, len(ids))]
		args := []any{tenant, dealID}
		for _, id := range chunk {
			args = append(args, id)
		}
		var claimID, otherDeal string
		err := tx.QueryRowContext(ctx, `SELECT claim_id, deal_id FROM claims
			WHERE tenant_id = ? AND deal_id <> ? AND claim_id IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)
			ORDER BY claim_id LIMIT 1`, args...).Scan(&claimID, &otherDeal)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("find the claim id in use: %w", err)
		}
		return fmt.Errorf("claim id %q is already used by deal %q: %w", claimID, otherDeal, debate.ErrAlreadyExists)
	}
	return fmt.Errorf("a claim id is already in use: %w", debate.ErrAlreadyExists)
}

// DealGet returns the deal's summary. Returns debate.ErrNoTenant without a
// tenant in ctx, and debate.ErrNotFound if the tenant has no such deal.
func (s *Store) DealGet(ctx context.Context, dealID string) (debate.DealSummary, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.DealSummary{}, err
	}
	sum, err := scanDealSummary(s.read.QueryRowContext(ctx,
		`SELECT `+dealSummaryColumns+` FROM deals WHERE tenant_id = ? AND deal_id = ?`, tenant, dealID))
	if err != nil {
		return debate.DealSummary{}, wrap(fmt.Sprintf("deal %q", dealID), err)
	}
	return sum, nil
}

// DealList returns up to rows.Limit(page.Limit) of the tenant's deals
// ordered by id after page.After, and the next cursor ("" on the last
// page). Returns debate.ErrNoTenant without a tenant in ctx, and a
// *debate.ValidationError on field page_token for a cursor this method did
// not return.
func (s *Store) DealList(ctx context.Context, page debate.Page) ([]debate.DealSummary, string, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, "", err
	}
	after, err := rows.DecodeCursor(page.After, 1)
	if err != nil {
		return nil, "", err
	}
	limit := rows.Limit(page.Limit)
	q := `SELECT ` + dealSummaryColumns + ` FROM deals WHERE tenant_id = ? ORDER BY deal_id LIMIT ?`
	args := []any{tenant, limit + 1}
	if after != nil {
		q = `SELECT ` + dealSummaryColumns + ` FROM deals WHERE tenant_id = ? AND deal_id > ? ORDER BY deal_id LIMIT ?`
		args = []any{tenant, after[0], limit + 1}
	}
	list, err := queryList(ctx, s.read, q, args, scanDealSummary)
	if err != nil {
		return nil, "", wrap("deal list", err)
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		next = rows.EncodeCursor(list[limit-1].Deal.ID)
	}
	return list, next, nil
}

// recordScanner returns a scan function that decodes a row's one record
// column with decode.
func recordScanner[T any](decode func([]byte) (T, error)) func(scanner) (T, error) {
	return func(row scanner) (T, error) {
		var data []byte
		if err := row.Scan(&data); err != nil {
			var zero T
			return zero, err
		}
		return decode(data)
	}
}

// DealBundleGet returns the deal's whole registry, every list ordered by
// id, every time in UTC, every claim's DealID set to the deal (also where
// the import left it empty); empty lists are nil. It reads one snapshot.
// Returns debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound
// if the tenant has no such deal.
func (s *Store) DealBundleGet(ctx context.Context, dealID string) (*debate.DealBundle, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var out *debate.DealBundle
	err = s.readTx(ctx, func(tx *sql.Tx) (err error) {
		out, err = bundleGet(ctx, tx, tenant, dealID)
		return err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("deal %q bundle", dealID), err)
	}
	return out, nil
}

// bundleGet reads the deal's whole registry in tx, as DealBundleGet returns
// it; DealGrade reads it in its write transaction. Returns sql.ErrNoRows if
// the tenant has no such deal.
func bundleGet(ctx context.Context, tx *sql.Tx, tenant, dealID string) (*debate.DealBundle, error) {
	var data []byte
	if err := tx.QueryRowContext(ctx, `SELECT record FROM deals WHERE tenant_id = ? AND deal_id = ?`, tenant, dealID).Scan(&data); err != nil {
		return nil, err
	}
	out := &debate.DealBundle{}
	var err error
	if out.Deal, err = rows.DecodeDeal(data); err != nil {
		return nil, err
	}
	q := func(table, idColumn string) string {
		return `SELECT record FROM ` + table + ` WHERE tenant_id = ? AND deal_id = ? ORDER BY ` + idColumn
	}
	args := []any{tenant, dealID}
	if out.Claims, err = queryList(ctx, tx, q("claims", "claim_id"), args, recordScanner(
		func(data []byte) (debate.Claim, error) { return rows.DecodeClaim(dealID, data) })); err != nil {
		return nil, err
	}
	if out.Evidence, err = queryList(ctx, tx, q("evidence_items", "evidence_id"), args, recordScanner(rows.DecodeEvidence)); err != nil {
		return nil, err
	}
	if out.Spans, err = queryList(ctx, tx, q("spans", "span_id"), args, recordScanner(rows.DecodeSpan)); err != nil {
		return nil, err
	}
	if out.Sanads, err = queryList(ctx, tx, q("sanads", "sanad_id"), args, recordScanner(rows.DecodeSanad)); err != nil {
		return nil, err
	}
	if out.Documents, err = queryList(ctx, tx, q("documents", "document_id"), args, recordScanner(rows.DecodeDocument)); err != nil {
		return nil, err
	}
	if out.Calcs, err = queryList(ctx, tx, q("calcs", "calc_id"), args, recordScanner(rows.DecodeCalc)); err != nil {
		return nil, err
	}
	if out.Enrichment, err = queryList(ctx, tx, q("enrichment_records", "record_id"), args, recordScanner(rows.DecodeEnrichment)); err != nil {
		return nil, err
	}
	return out, nil
}

// EnrichmentList returns the enrichment records imported with the deal,
// ordered by record id; nil if it has none. It reads one snapshot. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such deal.
func (s *Store) EnrichmentList(ctx context.Context, dealID string) ([]debate.EnrichmentRecord, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var out []debate.EnrichmentRecord
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM deals WHERE tenant_id = ? AND deal_id = ?`, tenant, dealID).Scan(&one); err != nil {
			return err
		}
		var err error
		out, err = queryList(ctx, tx, `SELECT record FROM enrichment_records WHERE tenant_id = ? AND deal_id = ? ORDER BY record_id`,
			[]any{tenant, dealID}, recordScanner(rows.DecodeEnrichment))
		return err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("deal %q enrichment", dealID), err)
	}
	return out, nil
}

// ClaimGet returns the tenant's claim claimID, its DealID set. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such claim.
func (s *Store) ClaimGet(ctx context.Context, claimID string) (debate.Claim, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.Claim{}, err
	}
	var dealID string
	var data []byte
	err = s.read.QueryRowContext(ctx, `SELECT deal_id, record FROM claims WHERE tenant_id = ? AND claim_id = ?`, tenant, claimID).
		Scan(&dealID, &data)
	if err != nil {
		return debate.Claim{}, wrap(fmt.Sprintf("claim %q", claimID), err)
	}
	c, err := rows.DecodeClaim(dealID, data)
	if err != nil {
		return debate.Claim{}, wrap(fmt.Sprintf("claim %q", claimID), err)
	}
	return c, nil
}

// ClaimList returns up to rows.Limit(page.Limit) claims of filter.DealID
// ordered by claim key then id, after page.After, narrowed by filter.Class
// and filter.Materiality when set, and the next cursor ("" on the last
// page). Returns debate.ErrNoTenant without a tenant in ctx; a
// *debate.ValidationError on field deal_id if filter.DealID is empty, or on
// field page_token for a cursor this method did not return; and
// debate.ErrNotFound if the tenant has no such deal.
func (s *Store) ClaimList(ctx context.Context, filter debate.ClaimFilter, page debate.Page) ([]debate.Claim, string, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, "", err
	}
	if filter.DealID == "" {
		return nil, "", &debate.ValidationError{Violations: []debate.FieldViolation{{Field: "deal_id", Description: "is required"}}}
	}
	after, err := rows.DecodeCursor(page.After, 2)
	if err != nil {
		return nil, "", err
	}
	limit := rows.Limit(page.Limit)

	var q strings.Builder
	args := []any{tenant, filter.DealID}
	q.WriteString(`SELECT record FROM claims WHERE tenant_id = ? AND deal_id = ?`)
	if filter.Class != "" {
		q.WriteString(` AND claim_class = ?`)
		args = append(args, string(filter.Class))
	}
	if filter.Materiality != "" {
		q.WriteString(` AND materiality = ?`)
		args = append(args, string(filter.Materiality))
	}
	if after != nil {
		q.WriteString(` AND (claim_key, claim_id) > (?, ?)`)
		args = append(args, after[0], after[1])
	}
	q.WriteString(` ORDER BY claim_key, claim_id LIMIT ?`)
	args = append(args, limit+1)

	var list []debate.Claim
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM deals WHERE tenant_id = ? AND deal_id = ?)`,
			tenant, filter.DealID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("deal %q: %w", filter.DealID, debate.ErrNotFound)
		}
		var err error
		list, err = queryList(ctx, tx, q.String(), args, recordScanner(
			func(data []byte) (debate.Claim, error) { return rows.DecodeClaim(filter.DealID, data) }))
		return err
	})
	if err != nil {
		return nil, "", wrap("claim list", err)
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		last := list[limit-1]
		next = rows.EncodeCursor(last.Key, last.ID)
	}
	return list, next, nil
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

const dealSummaryColumns = `record, content_hash, imported_at,
	claim_count, evidence_count, span_count, sanad_count, document_count, calc_count`

func scanDealSummary(row pgx.Row) (debate.DealSummary, error) {
	var record []byte
	var hash string
	var importedAt time.Time
	var counts [6]int
	if err := row.Scan(&record, &hash, &importedAt, &counts[0], &counts[1], &counts[2], &counts[3], &counts[4], &counts[5]); err != nil {
		return debate.DealSummary{}, err
	}
	return rows.Summary(record, hash, importedAt, counts)
}

// DealImport stores the whole bundle in one transaction: all its rows or
// none. If the tenant already has the deal with the same contentHash it
// writes nothing and returns the stored summary with Created false; with
// another hash it returns debate.ErrAlreadyExists and writes nothing.
// Concurrent imports of one deal wait for each other on the deal's primary
// key and then answer as if they had run one after the other. ImportedAt is
// at in UTC to the microsecond.
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

	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return debate.DealImportResult{}, wrap(op, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit

	// Round trip 1: claim the deal id. ON CONFLICT DO NOTHING waits for a
	// concurrent import of the same deal to end; the SELECT after it is a
	// new statement, so under READ COMMITTED it sees that import's row.
	var created bool
	var stored debate.DealSummary
	d := rb.Deal
	batch := &pgx.Batch{}
	batch.Queue(setTenantSQL, tenant)
	batch.Queue(`INSERT INTO deals (tenant_id, deal_id, external_ref, company_name, stage, sector, status,
			materiality_threshold, created_at, updated_at, content_hash, imported_at,
			claim_count, evidence_count, span_count, sanad_count, document_count, calc_count, record)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
		ON CONFLICT DO NOTHING`,
		tenant, dealID, d.Deal.ExternalRef, d.Deal.CompanyName, d.Deal.Stage, d.Deal.Sector, d.Deal.Status,
		// The column is a float for SQL readers; the record keeps the exact decimal.
		d.Deal.MaterialityThreshold.Float64(), rows.Time(d.Deal.CreatedAt), rows.Time(d.Deal.UpdatedAt), d.ContentHash, d.ImportedAt,
		d.Counts[0], d.Counts[1], d.Counts[2], d.Counts[3], d.Counts[4], d.Counts[5], d.Record,
	).Exec(func(ct pgconn.CommandTag) error {
		created = ct.RowsAffected() == 1
		return nil
	})
	batch.Queue(`SELECT `+dealSummaryColumns+` FROM deals WHERE tenant_id = $1 AND deal_id = $2`, tenant, dealID).
		QueryRow(func(row pgx.Row) (err error) {
			stored, err = scanDealSummary(row)
			return err
		})
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == sqlstateForeignKeyViolation {
			return debate.DealImportResult{}, fmt.Errorf("postgres: %s: tenant %q: %w", op, tenant, debate.ErrNotFound)
		}
		return debate.DealImportResult{}, wrap(op, err)
	}
	if !created {
		if stored.ContentHash != contentHash {
			return debate.DealImportResult{}, fmt.Errorf("postgres: %s: the deal was imported with other content: %w", op, debate.ErrAlreadyExists)
		}
		return debate.DealImportResult{Summary: stored}, nil
	}

	// Round trip 2: every child row, one statement per table. Claim ids
	// are unique per tenant: a claim id another deal uses is skipped by ON
	// CONFLICT and shows as a short count.
	var claimsInserted int
	batch = &pgx.Batch{}
	c := rb.Claims
	if len(c.IDs) > 0 {
		batch.Queue(`WITH ins AS (
				INSERT INTO claims (tenant_id, deal_id, claim_id, claim_key, claim_class, materiality, ic_bound, record)
				SELECT $1, $2, u.id, u.key, u.class, u.materiality, u.ic_bound, u.record::jsonb
				FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::bool[], $8::text[])
					AS u (id, key, class, materiality, ic_bound, record)
				ON CONFLICT DO NOTHING
				RETURNING 1)
			SELECT count(*) FROM ins`,
			tenant, dealID, c.IDs, c.Keys, c.Classes, c.Materialities, c.ICBound, c.Records,
		).QueryRow(func(row pgx.Row) error { return row.Scan(&claimsInserted) })
	}
	queueRecords(batch, "evidence_items", "evidence_id", tenant, dealID, rb.Evidence)
	if sp := rb.Spans; len(sp.IDs) > 0 {
		batch.Queue(`INSERT INTO spans (tenant_id, deal_id, span_id, document_id, text_excerpt, record)
			SELECT $1, $2, u.id, u.document_id, u.text_excerpt, u.record::jsonb
			FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS u (id, document_id, text_excerpt, record)`,
			tenant, dealID, sp.IDs, sp.DocumentIDs, sp.TextExcerpts, sp.Records)
	}
	if sa := rb.Sanads; len(sa.IDs) > 0 {
		batch.Queue(`INSERT INTO sanads (tenant_id, deal_id, sanad_id, claim_id, record)
			SELECT $1, $2, u.id, u.claim_id, u.record::jsonb
			FROM unnest($3::text[], $4::text[], $5::text[]) AS u (id, claim_id, record)`,
			tenant, dealID, sa.IDs, sa.ClaimIDs, sa.Records)
	}
	queueRecords(batch, "documents", "document_id", tenant, dealID, rb.Documents)
	queueRecords(batch, "calcs", "calc_id", tenant, dealID, rb.Calcs)
	queueRecords(batch, "enrichment_records", "record_id", tenant, dealID, rb.Enrichment)
	if batch.Len() > 0 {
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return debate.DealImportResult{}, wrap(op, err)
		}
	}
	if claimsInserted < len(c.IDs) {
		return debate.DealImportResult{}, s.claimConflict(ctx, tx, op, tenant, dealID, c.IDs)
	}
	if err := tx.Commit(ctx); err != nil {
		return debate.DealImportResult{}, wrap(op, err)
	}
	return debate.DealImportResult{Summary: stored, Created: true}, nil
}

// queueRecords queues the insert of rows of a table that has only an id and
// a record beside the tenant and deal.
func queueRecords(b *pgx.Batch, table, idColumn, tenant, dealID string, r rows.IDRows) {
	if len(r.IDs) == 0 {
		return
	}
	b.Queue(`INSERT INTO `+table+` (tenant_id, deal_id, `+idColumn+`, record)
		SELECT $1, $2, u.id, u.record::jsonb FROM unnest($3::text[], $4::text[]) AS u (id, record)`,
		tenant, dealID, r.IDs, r.Records)
}

// claimConflict names the claim of ids that another deal of the tenant
// already holds.
func (s *Store) claimConflict(ctx context.Context, tx pgx.Tx, op, tenant, dealID string, ids []string) error {
	var claimID, otherDeal string
	err := tx.QueryRow(ctx, `SELECT claim_id, deal_id FROM claims
		WHERE tenant_id = $1 AND claim_id = ANY($2) AND deal_id <> $3 ORDER BY claim_id LIMIT 1`,
		tenant, ids, dealID).Scan(&claimID, &otherDeal)
	if err != nil {
		return wrap(op+": find the claim id in use", err)
	}
	return fmt.Errorf("postgres: %s: claim id %q is already used by deal %q: %w", op, claimID, otherDeal, debate.ErrAlreadyExists)
}

// DealGet returns the deal's summary. Returns debate.ErrNoTenant without a
// tenant in ctx, and debate.ErrNotFound if the tenant has no such deal.
func (s *Store) DealGet(ctx context.Context, dealID string) (debate.DealSummary, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.DealSummary{}, err
	}
	var sum debate.DealSummary
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT `+dealSummaryColumns+` FROM deals WHERE tenant_id = $1 AND deal_id = $2`, tenant, dealID).
			QueryRow(func(row pgx.Row) (err error) {
				sum, err = scanDealSummary(row)
				return err
			})
	})
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
	sql := `SELECT ` + dealSummaryColumns + ` FROM deals WHERE tenant_id = $1 ORDER BY deal_id LIMIT $2`
	args := []any{tenant, limit + 1}
	if after != nil {
		sql = `SELECT ` + dealSummaryColumns + ` FROM deals WHERE tenant_id = $1 AND deal_id > $3 ORDER BY deal_id LIMIT $2`
		args = append(args, after[0])
	}
	var list []debate.DealSummary
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(sql, args...).Query(func(rs pgx.Rows) (err error) {
			list, err = pgx.CollectRows(rs, func(r pgx.CollectableRow) (debate.DealSummary, error) { return scanDealSummary(r) })
			return err
		})
	})
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

// collectRecords returns a query callback that decodes each row's record
// (the only column) with decode and appends it to *out.
func collectRecords[T any](out *[]T, decode func([]byte) (T, error)) func(pgx.Rows) error {
	return func(rs pgx.Rows) error {
		defer rs.Close()
		for rs.Next() {
			var data []byte
			if err := rs.Scan(&data); err != nil {
				return err
			}
			x, err := decode(data)
			if err != nil {
				return err
			}
			*out = append(*out, x)
		}
		return rs.Err()
	}
}

// DealBundleGet returns the deal's whole registry, every list ordered by
// id, every time in UTC, every claim's DealID set to the deal (also where
// the import left it empty); empty lists are nil. It reads in one round
// trip. Returns debate.ErrNoTenant without a tenant in ctx, and
// debate.ErrNotFound if the tenant has no such deal.
func (s *Store) DealBundleGet(ctx context.Context, dealID string) (*debate.DealBundle, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	out := &debate.DealBundle{}
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) { queueBundle(b, tenant, dealID, out) })
	if err != nil {
		return nil, wrap(fmt.Sprintf("deal %q bundle", dealID), err)
	}
	return out, nil
}

// queueBundle queues the reads of the deal's whole registry into out, as
// DealBundleGet returns it; DealGrade queues them in its transaction. The
// first read fails with pgx.ErrNoRows if the tenant has no such deal.
func queueBundle(b *pgx.Batch, tenant, dealID string, out *debate.DealBundle) {
	b.Queue(`SELECT record FROM deals WHERE tenant_id = $1 AND deal_id = $2`, tenant, dealID).
		QueryRow(func(row pgx.Row) error {
			var data []byte
			if err := row.Scan(&data); err != nil {
				return err
			}
			d, err := rows.DecodeDeal(data)
			out.Deal = d
			return err
		})
	q := func(table, idColumn string) string {
		return `SELECT record FROM ` + table + ` WHERE tenant_id = $1 AND deal_id = $2 ORDER BY ` + idColumn
	}
	b.Queue(q("claims", "claim_id"), tenant, dealID).Query(collectRecords(&out.Claims,
		func(data []byte) (debate.Claim, error) { return rows.DecodeClaim(dealID, data) }))
	b.Queue(q("evidence_items", "evidence_id"), tenant, dealID).Query(collectRecords(&out.Evidence, rows.DecodeEvidence))
	b.Queue(q("spans", "span_id"), tenant, dealID).Query(collectRecords(&out.Spans, rows.DecodeSpan))
	b.Queue(q("sanads", "sanad_id"), tenant, dealID).Query(collectRecords(&out.Sanads, rows.DecodeSanad))
	b.Queue(q("documents", "document_id"), tenant, dealID).Query(collectRecords(&out.Documents, rows.DecodeDocument))
	b.Queue(q("calcs", "calc_id"), tenant, dealID).Query(collectRecords(&out.Calcs, rows.DecodeCalc))
	b.Queue(q("enrichment_records", "record_id"), tenant, dealID).Query(collectRecords(&out.Enrichment, rows.DecodeEnrichment))
}

// EnrichmentList returns the enrichment records imported with the deal,
// ordered by record id; nil if it has none. Returns debate.ErrNoTenant
// without a tenant in ctx, and debate.ErrNotFound if the tenant has no such
// deal.
func (s *Store) EnrichmentList(ctx context.Context, dealID string) ([]debate.EnrichmentRecord, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var out []debate.EnrichmentRecord
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT 1 FROM deals WHERE tenant_id = $1 AND deal_id = $2`, tenant, dealID).
			QueryRow(func(row pgx.Row) error {
				var one int
				return row.Scan(&one)
			})
		b.Queue(`SELECT record FROM enrichment_records WHERE tenant_id = $1 AND deal_id = $2 ORDER BY record_id`,
			tenant, dealID).Query(collectRecords(&out, rows.DecodeEnrichment))
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
	return claimGet(ctx, s.pool, tenant, claimID)
}

func claimGet(ctx context.Context, db batcher, tenant, claimID string) (debate.Claim, error) {
	var c debate.Claim
	err := tenantBatch(ctx, db, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT deal_id, record FROM claims WHERE tenant_id = $1 AND claim_id = $2`, tenant, claimID).
			QueryRow(func(row pgx.Row) error {
				var dealID string
				var data []byte
				if err := row.Scan(&dealID, &data); err != nil {
					return err
				}
				var err error
				c, err = rows.DecodeClaim(dealID, data)
				return err
			})
	})
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

	var sql strings.Builder
	args := []any{tenant, filter.DealID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	sql.WriteString(`SELECT record FROM claims WHERE tenant_id = $1 AND deal_id = $2`)
	if filter.Class != "" {
		sql.WriteString(` AND claim_class = ` + arg(string(filter.Class)))
	}
	if filter.Materiality != "" {
		sql.WriteString(` AND materiality = ` + arg(string(filter.Materiality)))
	}
	if after != nil {
		sql.WriteString(` AND (claim_key, claim_id) > (` + arg(after[0]) + `, ` + arg(after[1]) + `)`)
	}
	sql.WriteString(` ORDER BY claim_key, claim_id LIMIT ` + arg(limit+1))

	var list []debate.Claim
	var dealExists bool
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT EXISTS (SELECT FROM deals WHERE tenant_id = $1 AND deal_id = $2)`, tenant, filter.DealID).
			QueryRow(func(row pgx.Row) error { return row.Scan(&dealExists) })
		b.Queue(sql.String(), args...).Query(collectRecords(&list,
			func(data []byte) (debate.Claim, error) { return rows.DecodeClaim(filter.DealID, data) }))
	})
	if err != nil {
		return nil, "", wrap("claim list", err)
	}
	if !dealExists {
		return nil, "", fmt.Errorf("postgres: claim list: deal %q: %w", filter.DealID, debate.ErrNotFound)
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		last := list[limit-1]
		next = rows.EncodeCursor(last.Key, last.ID)
	}
	return list, next, nil
}

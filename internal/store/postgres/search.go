package postgres

import (
	"context"
	"fmt"

	"github.com/debated/debated/internal/debate"
	"github.com/jackc/pgx/v5"
)

// EvidenceSearch ranks the deal's evidence items by PostgreSQL full-text
// search of their spans' texts (English configuration, ts_rank_cd
// normalised to [0, 1)), best first, ties by evidence id, keeping items of
// grade minGrade or better ("" keeps all), at most limit (1–50, default 10).
// It returns the hits and how many matched in all. The claim class filter
// is the caller's (it depends on the sanads citing each item). Returns
// debate.ErrNoTenant without a tenant in ctx; an unknown deal has no hits.
func (s *Store) EvidenceSearch(ctx context.Context, dealID, query string, minGrade debate.SourceGrade, limit int) ([]debate.EvidenceHit, int, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, 0, err
	}
	if limit <= 0 || limit > 50 {
		limit = 10
	}
	grades := []string{"A", "B", "C", "D"}
	for i, g := range grades {
		if g == string(minGrade) {
			grades = grades[:i+1]
		}
	}
	var hits []debate.EvidenceHit
	total := 0
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`WITH q AS (SELECT websearch_to_tsquery('english', $3) AS q),
			matched AS (
				SELECT e.evidence_id, s.span_id, e.record->>'source_grade' AS grade, s.text_excerpt,
				       ts_rank_cd(to_tsvector('english', s.text_excerpt), q.q, 32) AS rank
				FROM spans s
				JOIN evidence_items e ON e.tenant_id = s.tenant_id AND e.deal_id = s.deal_id
				     AND e.record->>'source_span_id' = s.span_id
				CROSS JOIN q
				WHERE s.tenant_id = $1 AND s.deal_id = $2
				  AND to_tsvector('english', s.text_excerpt) @@ q.q
				  AND e.record->>'source_grade' = ANY($4))
			SELECT evidence_id, span_id, grade, text_excerpt, rank, count(*) OVER ()
			FROM matched ORDER BY rank DESC, evidence_id LIMIT $5`,
			tenant, dealID, query, grades, limit).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var h debate.EvidenceHit
				var grade string
				if err := rows.Scan(&h.EvidenceID, &h.SpanID, &grade, &h.TextExcerpt, &h.Relevance, &total); err != nil {
					return err
				}
				h.SourceGrade = debate.SourceGrade(grade)
				hits = append(hits, h)
			}
			return rows.Err()
		})
	})
	if err != nil {
		return nil, 0, wrap(fmt.Sprintf("search evidence of deal %q", dealID), err)
	}
	return hits, total, nil
}

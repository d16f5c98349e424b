package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

// Store keeps gradings, defect records and deal events too.
var _ debate.GradingStore = (*Store)(nil)

// DealGrade grades the deal in one transaction, in four round trips
// whatever the size of the deal: BEGIN; one batch that sets the tenant,
// locks the deal row (SELECT ... FOR UPDATE, so concurrent gradings of the
// deal run one after the other, each seeing the previous one's writes) and
// reads the registry (as DealBundleGet returns it), the defect records
// ordered by id, the previous grading (nil before the first) and the last
// event seq; then grade, called with the lock held; one batch that upserts
// the records, replaces the grading, stamps deals.graded_at and appends the
// events; COMMIT.
//
// The grading is stored with DealID dealID and graded at at (UTC, to the
// microsecond). Each upserted record gets UpdatedAt at and, when its
// CreatedAt is zero, the stored record's or at. Events get seq last+1,
// last+2, ... in order, DealID dealID, and CreatedAt at when zero (kept to
// the microsecond). It returns the grading and the events as the read
// methods return them (see package rows for what JSON normalises).
//
// grade must not use the store: the transaction holds a connection and the
// deal's lock while it runs.
//
// Returns debate.ErrNoTenant without a tenant in ctx; debate.ErrNotFound
// if the tenant has no such deal (grade is not called); grade's error
// unchanged, writing nothing; a *debate.ValidationError, writing nothing, if
// what grade returned cannot be stored (see rows.EncodeGrading).
func (s *Store) DealGrade(ctx context.Context, dealID string, at time.Time, grade debate.GradeFunc) (*debate.DealGrading, []debate.DealEvent, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	op := fmt.Sprintf("deal %q grade", dealID)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, nil, wrap(op, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit

	// Round trip 2: lock, then read. Under READ COMMITTED every statement
	// after the lock sees what the previous holder committed.
	bundle := &debate.DealBundle{}
	var records []debate.Defect
	var prev *debate.DealGrading
	var lastSeq int64
	batch := &pgx.Batch{}
	batch.Queue(setTenantSQL, tenant)
	batch.Queue(`SELECT 1 FROM deals WHERE tenant_id = $1 AND deal_id = $2 FOR UPDATE`, tenant, dealID).
		QueryRow(func(row pgx.Row) error {
			var one int
			return row.Scan(&one)
		})
	queueBundle(batch, tenant, dealID, bundle)
	queueDefects(batch, tenant, dealID, &records)
	batch.Queue(`SELECT grading FROM deal_gradings WHERE tenant_id = $1 AND deal_id = $2`, tenant, dealID).
		QueryRow(func(row pgx.Row) error {
			var data []byte
			err := row.Scan(&data)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // never graded
			}
			if err != nil {
				return err
			}
			prev, err = rows.DecodeGrading(data)
			return err
		})
	var lastHash string
	batch.Queue(`SELECT coalesce(max(seq), 0),
			coalesce((SELECT hash FROM deal_events WHERE tenant_id = $1 AND deal_id = $2 AND hash IS NOT NULL ORDER BY seq DESC LIMIT 1), '')
		FROM deal_events WHERE tenant_id = $1 AND deal_id = $2`, tenant, dealID).
		QueryRow(func(row pgx.Row) error { return row.Scan(&lastSeq, &lastHash) })
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return nil, nil, wrap(op, err)
	}

	next, upsert, events, err := grade(bundle, records, prev)
	if err != nil {
		return nil, nil, err
	}
	w, err := rows.EncodeGrading(dealID, at, next, upsert, records, events, lastSeq)
	if err != nil {
		return nil, nil, err
	}
	if err := rows.SealEvents(w, s.sealer, tenant, lastHash); err != nil {
		return nil, nil, err
	}

	// Round trip 3: every write, one statement per table.
	batch = &pgx.Batch{}
	if d := w.Defects; len(d.IDs) > 0 {
		batch.Queue(`INSERT INTO defects (tenant_id, deal_id, defect_id, claim_id, status, record, created_at, updated_at)
			SELECT $1, $2, u.id, u.claim_id, u.status, u.record::jsonb, u.created_at, u.updated_at
			FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[])
				AS u (id, claim_id, status, record, created_at, updated_at)
			ON CONFLICT (tenant_id, deal_id, defect_id) DO UPDATE SET
				claim_id = excluded.claim_id, status = excluded.status, record = excluded.record,
				created_at = excluded.created_at, updated_at = excluded.updated_at`,
			tenant, dealID, d.IDs, d.ClaimIDs, d.Statuses, d.Records, d.CreatedAts, d.UpdatedAts)
	}
	batch.Queue(`INSERT INTO deal_gradings (tenant_id, deal_id, graded_at, grading) VALUES ($1, $2, $3, $4::jsonb)
		ON CONFLICT (tenant_id, deal_id) DO UPDATE SET graded_at = excluded.graded_at, grading = excluded.grading`,
		tenant, dealID, w.GradedAt, w.GradingJSON)
	batch.Queue(`UPDATE deals SET graded_at = $3 WHERE tenant_id = $1 AND deal_id = $2`, tenant, dealID, w.GradedAt)
	if e := w.Events; len(e.Seqs) > 0 {
		// The one statement that appends deal events (chained by
		// rows.SealEvents above).
		batch.Queue(`INSERT INTO deal_events (tenant_id, deal_id, seq, event_type, actor, payload, created_at,
				prev_hash, hash, key_id, signature)
			SELECT $1, $2, u.seq, u.event_type, u.actor, u.payload::jsonb, u.created_at,
				nullif(u.prev_hash, ''), nullif(u.hash, ''), nullif(u.key_id, ''), nullif(u.signature, '')
			FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
					$8::text[], $9::text[], $10::text[], $11::text[])
				AS u (seq, event_type, actor, payload, created_at, prev_hash, hash, key_id, signature)`,
			tenant, dealID, e.Seqs, e.Types, e.Actors, e.Payloads, e.CreatedAts,
			e.PrevHashes, e.Hashes, e.KeyIDs, e.Signatures)
	}
	// The deal log's new head is a leaf of the tenant's transparency log,
	// in the same transaction (docs/transparency.md).
	leaf, logged := rows.DealLeaf(dealID, w)
	if logged {
		batch.Queue(queueLeafSQL, tenant, leaf.Kind, leaf.Subject, leaf.Seq, leaf.Hash)
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return nil, nil, wrap(op, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, nil, wrap(op, err)
	}
	if logged {
		s.logDirty.Mark(tenant)
	}
	return w.Grading, w.Appended, nil
}

// queueDefects queues the read of the deal's defect records, ordered by id,
// into out.
func queueDefects(b *pgx.Batch, tenant, dealID string, out *[]debate.Defect) {
	b.Queue(`SELECT record FROM defects WHERE tenant_id = $1 AND deal_id = $2 ORDER BY defect_id`, tenant, dealID).
		Query(collectRecords(out, rows.DecodeDefect))
}

// queueDealExists queues the check that the tenant has the deal.
func queueDealExists(b *pgx.Batch, tenant, dealID string, exists *bool) {
	b.Queue(`SELECT EXISTS (SELECT FROM deals WHERE tenant_id = $1 AND deal_id = $2)`, tenant, dealID).
		QueryRow(func(row pgx.Row) error { return row.Scan(exists) })
}

// GradingGet returns the deal's last stored grading, every time in UTC, and
// when it was made (UTC, to the microsecond), in one round trip. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such deal or the deal was never graded.
func (s *Store) GradingGet(ctx context.Context, dealID string) (*debate.DealGrading, time.Time, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	var g *debate.DealGrading
	var at time.Time
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT graded_at, grading FROM deal_gradings WHERE tenant_id = $1 AND deal_id = $2`, tenant, dealID).
			QueryRow(func(row pgx.Row) error {
				var data []byte
				if err := row.Scan(&at, &data); err != nil {
					return err
				}
				var err error
				g, err = rows.DecodeGrading(data)
				return err
			})
	})
	if err != nil {
		return nil, time.Time{}, wrap(fmt.Sprintf("deal %q grading", dealID), err)
	}
	return g, at.UTC(), nil
}

// DefectList returns the deal's defect records ordered by id, every time in
// UTC; nil when the deal has none. Returns debate.ErrNoTenant without a
// tenant in ctx, and debate.ErrNotFound if the tenant has no such deal.
func (s *Store) DefectList(ctx context.Context, dealID string) ([]debate.Defect, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var list []debate.Defect
	var exists bool
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		queueDealExists(b, tenant, dealID, &exists)
		queueDefects(b, tenant, dealID, &list)
	})
	if err != nil {
		return nil, wrap("defect list", err)
	}
	if !exists {
		return nil, fmt.Errorf("postgres: defect list: deal %q: %w", dealID, debate.ErrNotFound)
	}
	return list, nil
}

// DealEventList returns the deal's events with seq above afterSeq in seq
// order, at most rows.EventLimit(limit) of them (100 for limit ≤ 0, capped
// at 1000); nil when there are none. Payloads come back as encoding/json
// decodes them (numbers as float64). Returns debate.ErrNoTenant without a
// tenant in ctx, and debate.ErrNotFound if the tenant has no such deal.
func (s *Store) DealEventList(ctx context.Context, dealID string, afterSeq int64, limit int) ([]debate.DealEvent, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var list []debate.DealEvent
	var exists bool
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		queueDealExists(b, tenant, dealID, &exists)
		b.Queue(`SELECT seq, event_type, actor, payload, created_at,
				coalesce(prev_hash, ''), coalesce(hash, ''), coalesce(key_id, ''), coalesce(signature, '') FROM deal_events
			WHERE tenant_id = $1 AND deal_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
			tenant, dealID, afterSeq, rows.EventLimit(limit)).
			Query(func(rs pgx.Rows) error {
				defer rs.Close()
				for rs.Next() {
					var seq int64
					var eventType, actor string
					var payload []byte
					var created time.Time
					var prevHash, hash, keyID, sig string
					if err := rs.Scan(&seq, &eventType, &actor, &payload, &created, &prevHash, &hash, &keyID, &sig); err != nil {
						return err
					}
					e, err := rows.DecodeEvent(dealID, seq, eventType, actor, payload, created)
					if err != nil {
						return err
					}
					e.PrevHash, e.Hash, e.KeyID, e.Signature = prevHash, hash, keyID, sig
					list = append(list, e)
				}
				return rs.Err()
			})
	})
	if err != nil {
		return nil, wrap("deal event list", err)
	}
	if !exists {
		return nil, fmt.Errorf("postgres: deal event list: deal %q: %w", dealID, debate.ErrNotFound)
	}
	return list, nil
}

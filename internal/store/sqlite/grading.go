package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

// Store keeps gradings, defect records and deal events too.
var _ debate.GradingStore = (*Store)(nil)

// DealGrade grades the deal in one IMMEDIATE transaction on the single
// writer connection, so concurrent gradings (and every other write) run one
// after the other, each seeing the previous one's writes; a second process
// on the same file waits on the file's write lock. In the transaction it
// checks the deal, reads the registry (as DealBundleGet returns it), the
// defect records ordered by id, the previous grading (nil before the first)
// and the last event seq, calls grade, then upserts the records, replaces
// the grading, stamps deals.graded_at and appends the events.
//
// The grading is stored with DealID dealID and graded at at (UTC, to the
// microsecond). Each upserted record gets UpdatedAt at and, when its
// CreatedAt is zero, the stored record's or at. Events get seq last+1,
// last+2, ... in order, DealID dealID, and CreatedAt at when zero (kept to
// the microsecond). It returns the grading and the events as the read
// methods return them (see package rows for what JSON normalises).
//
// grade must not use the store: it runs holding the only writer connection
// (and, for Memory, the only connection).
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
	// gradeErr carries grade's error out of inTx untouched by wrap.
	var gradeErr error
	var w *rows.GradingWrite
	logged := false // a leaf was queued: the log has work
	err = inTx(ctx, s.write, func(tx *sql.Tx) error {
		bundle, err := bundleGet(ctx, tx, tenant, dealID)
		if err != nil {
			return err
		}
		records, err := defectList(ctx, tx, tenant, dealID)
		if err != nil {
			return err
		}
		var prev *debate.DealGrading
		var data []byte
		err = tx.QueryRowContext(ctx, `SELECT grading FROM deal_gradings WHERE tenant_id = ? AND deal_id = ?`, tenant, dealID).Scan(&data)
		switch {
		case errors.Is(err, sql.ErrNoRows): // never graded
		case err != nil:
			return err
		default:
			if prev, err = rows.DecodeGrading(data); err != nil {
				return err
			}
		}
		var lastSeq int64
		var lastHash string
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0),
				coalesce((SELECT hash FROM deal_events WHERE tenant_id = ?1 AND deal_id = ?2 AND hash IS NOT NULL ORDER BY seq DESC LIMIT 1), '')
			FROM deal_events WHERE tenant_id = ?1 AND deal_id = ?2`,
			tenant, dealID).Scan(&lastSeq, &lastHash); err != nil {
			return err
		}

		next, upsert, events, err := grade(bundle, records, prev)
		if err != nil {
			gradeErr = err
			return err
		}
		if w, err = rows.EncodeGrading(dealID, at, next, upsert, records, events, lastSeq); err != nil {
			gradeErr = err // a *debate.ValidationError, as it is
			return err
		}
		if err := rows.SealEvents(w, s.sealer, tenant, lastHash); err != nil {
			gradeErr = err
			return err
		}

		d := w.Defects
		if _, err := insertRows(ctx, tx,
			`INSERT INTO defects (tenant_id, deal_id, defect_id, claim_id, status, record, created_at, updated_at) VALUES `,
			` ON CONFLICT (tenant_id, deal_id, defect_id) DO UPDATE SET
				claim_id = excluded.claim_id, status = excluded.status, record = excluded.record,
				created_at = excluded.created_at, updated_at = excluded.updated_at`,
			8, len(d.IDs), func(i int, args []any) []any {
				return append(args, tenant, dealID, d.IDs[i], d.ClaimIDs[i], d.Statuses[i], d.Records[i],
					rows.TimeText(d.CreatedAts[i]), rows.TimeText(d.UpdatedAts[i]))
			}); err != nil {
			return err
		}
		gradedAt := rows.TimeText(w.GradedAt)
		if _, err := tx.ExecContext(ctx, `INSERT INTO deal_gradings (tenant_id, deal_id, graded_at, grading) VALUES (?, ?, ?, ?)
			ON CONFLICT (tenant_id, deal_id) DO UPDATE SET graded_at = excluded.graded_at, grading = excluded.grading`,
			tenant, dealID, gradedAt, w.GradingJSON); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE deals SET graded_at = ? WHERE tenant_id = ? AND deal_id = ?`,
			gradedAt, tenant, dealID); err != nil {
			return err
		}
		// The one statement that appends deal events (chained by
		// rows.SealEvents above).
		e := w.Events
		_, err = insertRows(ctx, tx,
			`INSERT INTO deal_events (tenant_id, deal_id, seq, event_type, actor, payload, created_at,
				prev_hash, hash, key_id, signature) VALUES `, ``,
			11, len(e.Seqs), func(i int, args []any) []any {
				return append(args, tenant, dealID, e.Seqs[i], e.Types[i], e.Actors[i], e.Payloads[i], rows.TimeText(e.CreatedAts[i]),
					nullText(e.PrevHashes[i]), nullText(e.Hashes[i]), nullText(e.KeyIDs[i]), nullText(e.Signatures[i]))
			})
		if err != nil {
			return err
		}
		// The deal log's new head is a leaf of the tenant's transparency
		// log, in the same transaction (docs/transparency.md).
		if leaf, ok := rows.DealLeaf(dealID, w); ok {
			if err := QueueLogLeaf(ctx, tx, tenant, leaf); err != nil {
				return err
			}
			logged = true
		}
		return nil
	})
	if gradeErr != nil {
		return nil, nil, gradeErr
	}
	if err != nil {
		return nil, nil, wrap(fmt.Sprintf("deal %q grade", dealID), err)
	}
	if logged {
		s.logDirty.Mark(tenant)
	}
	return w.Grading, w.Appended, nil
}

// defectList reads the deal's defect records in tx, ordered by id.
func defectList(ctx context.Context, tx *sql.Tx, tenant, dealID string) ([]debate.Defect, error) {
	return queryList(ctx, tx, `SELECT record FROM defects WHERE tenant_id = ? AND deal_id = ? ORDER BY defect_id`,
		[]any{tenant, dealID}, recordScanner(rows.DecodeDefect))
}

// dealExists returns debate.ErrNotFound if the tenant has no deal dealID.
func dealExists(ctx context.Context, tx *sql.Tx, tenant, dealID string) error {
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM deals WHERE tenant_id = ? AND deal_id = ?)`,
		tenant, dealID).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("deal %q: %w", dealID, debate.ErrNotFound)
	}
	return nil
}

// GradingGet returns the deal's last stored grading, every time in UTC, and
// when it was made (UTC, to the microsecond). Returns debate.ErrNoTenant
// without a tenant in ctx, and debate.ErrNotFound if the tenant has no such
// deal or the deal was never graded.
func (s *Store) GradingGet(ctx context.Context, dealID string) (*debate.DealGrading, time.Time, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	var gradedAt string
	var data []byte
	err = s.read.QueryRowContext(ctx, `SELECT graded_at, grading FROM deal_gradings WHERE tenant_id = ? AND deal_id = ?`,
		tenant, dealID).Scan(&gradedAt, &data)
	op := fmt.Sprintf("deal %q grading", dealID)
	if err != nil {
		return nil, time.Time{}, wrap(op, err)
	}
	at, err := rows.ParseTimeText(gradedAt)
	if err != nil {
		return nil, time.Time{}, wrap(op, err)
	}
	g, err := rows.DecodeGrading(data)
	if err != nil {
		return nil, time.Time{}, wrap(op, err)
	}
	return g, at, nil
}

// DefectList returns the deal's defect records ordered by id, every time in
// UTC; nil when the deal has none. It reads one snapshot. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such deal.
func (s *Store) DefectList(ctx context.Context, dealID string) ([]debate.Defect, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var list []debate.Defect
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		if err := dealExists(ctx, tx, tenant, dealID); err != nil {
			return err
		}
		var err error
		list, err = defectList(ctx, tx, tenant, dealID)
		return err
	})
	if err != nil {
		return nil, wrap("defect list", err)
	}
	return list, nil
}

// DealEventList returns the deal's events with seq above afterSeq in seq
// order, at most rows.EventLimit(limit) of them (100 for limit ≤ 0, capped
// at 1000); nil when there are none. Payloads come back as encoding/json
// decodes them (numbers as float64). It reads one snapshot. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such deal.
func (s *Store) DealEventList(ctx context.Context, dealID string, afterSeq int64, limit int) ([]debate.DealEvent, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var list []debate.DealEvent
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		if err := dealExists(ctx, tx, tenant, dealID); err != nil {
			return err
		}
		var err error
		list, err = queryList(ctx, tx, `SELECT seq, event_type, actor, payload, created_at,
				coalesce(prev_hash, ''), coalesce(hash, ''), coalesce(key_id, ''), coalesce(signature, '') FROM deal_events
			WHERE tenant_id = ? AND deal_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
			[]any{tenant, dealID, afterSeq, rows.EventLimit(limit)},
			func(row scanner) (debate.DealEvent, error) {
				var seq int64
				var eventType, actor, created string
				var payload []byte
				var prevHash, hash, keyID, sig string
				if err := row.Scan(&seq, &eventType, &actor, &payload, &created, &prevHash, &hash, &keyID, &sig); err != nil {
					return debate.DealEvent{}, err
				}
				at, err := rows.ParseTimeText(created)
				if err != nil {
					return debate.DealEvent{}, err
				}
				e, err := rows.DecodeEvent(dealID, seq, eventType, actor, payload, at)
				e.PrevHash, e.Hash, e.KeyID, e.Signature = prevHash, hash, keyID, sig
				return e, err
			})
		return err
	})
	if err != nil {
		return nil, wrap("deal event list", err)
	}
	return list, nil
}

// nullText stores "" as NULL (an unchained deal event's chain columns).
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

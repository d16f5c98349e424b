package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
)

// Store keeps debates, their ledgers, checkpoints and human gates too.
var _ debate.DebateStore = (*Store)(nil)

// debateHooks are what the debate methods call beyond the database; they
// may be set while the store is in use.
type debateHooks struct {
	listenError atomic.Pointer[func(error)]
}

// notifyChannel is the channel StepCommit notifies and Listen listens on.
const notifyChannel = "debated_events"

const debateColumns = `debate_id, deal_id, protocol, options, coalesce(idempotency_key, ''), request_hash,
	status, stop_reason, error, round, rounds_completed, next_node, attempt, last_seq, head_hash, created_at, updated_at`

func scanDebate(tenant string, row pgx.Row) (debate.Debate, error) {
	d := debate.Debate{TenantID: tenant}
	var options []byte
	var status string
	if err := row.Scan(&d.ID, &d.DealID, &d.Protocol, &options, &d.IdempotencyKey, &d.RequestHash,
		&status, &d.StopReason, &d.Error, &d.Round, &d.RoundsCompleted, &d.NextNode, &d.Attempt, &d.LastSeq, &d.HeadHash,
		&d.CreatedAt, &d.UpdatedAt); err != nil {
		return debate.Debate{}, err
	}
	if len(options) > 0 {
		d.Options = options
	}
	d.Status = debate.DebateStatus(status)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

// optJSON is the parameter of a nullable json column: nil for none, so
// that pgx sends NULL, else the text exactly as given.
func optJSON(data []byte) any {
	if data == nil {
		return nil
	}
	return string(data)
}

func optText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// DebateCreate stores d as a new queued debate of the tenant (see
// rows.NewDebate for what it keeps and stamps) as one pipelined statement
// batch (one round trip, one implicit transaction). It returns the debate
// as DebateGet returns it, and whether it was created.
//
// With an IdempotencyKey the tenant already used, it writes nothing and
// returns the stored debate with created false if its RequestHash is
// d.RequestHash, and debate.ErrAlreadyExists otherwise. Concurrent creates
// with the same key meet on its unique index: exactly one creates, the
// others wait for it to commit and then return its debate.
//
// Returns debate.ErrNoTenant without a tenant in ctx; a
// *debate.ValidationError if d cannot be stored; debate.ErrNotFound if the
// tenant has no deal d.DealID; debate.ErrAlreadyExists if the id is taken
// (and no stored debate holds the key).
func (s *Store) DebateCreate(ctx context.Context, d debate.Debate) (debate.Debate, bool, error) {
	return s.DebateCreateWith(ctx, d, nil)
}

// DebateCreateWith is DebateCreate that, when it creates the debate, runs
// inTx in the same transaction after the debate's row is written (the
// transaction has the tenant set for row-level security), so that what
// inTx writes (the application inserts the debate's job with River's
// InsertTx) commits with the debate or not at all. inTx's error, wrapped,
// rolls everything back. A nil inTx is DebateCreate.
func (s *Store) DebateCreateWith(ctx context.Context, d debate.Debate, inTx func(ctx context.Context, tx pgx.Tx) error) (debate.Debate, bool, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.Debate{}, false, err
	}
	if d, err = rows.NewDebate(tenant, d); err != nil {
		return debate.Debate{}, false, err
	}
	op := fmt.Sprintf("debate %q create", d.ID)

	var inserted, existing *debate.Debate
	scanInto := func(out **debate.Debate) func(pgx.Row) error {
		return func(row pgx.Row) error {
			x, err := scanDebate(tenant, row)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			*out = &x
			return nil
		}
	}
	b := &pgx.Batch{}
	b.Queue(setTenantSQL, tenant)
	// ON CONFLICT DO NOTHING covers the primary key and the idempotency
	// key; with a conflict the next statement, which reads a new snapshot,
	// finds the debate that holds the key.
	b.Queue(`INSERT INTO debates (tenant_id, debate_id, deal_id, protocol, options, idempotency_key, request_hash,
			status, stop_reason, error, round, next_node, attempt, last_seq, head_hash, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5::json, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		ON CONFLICT DO NOTHING
		RETURNING `+debateColumns,
		tenant, d.ID, d.DealID, d.Protocol, optJSON(d.Options), optText(d.IdempotencyKey), d.RequestHash,
		string(d.Status), d.StopReason, d.Error, d.Round, d.NextNode, d.Attempt, d.LastSeq, d.HeadHash,
		d.CreatedAt, d.UpdatedAt).QueryRow(scanInto(&inserted))
	if d.IdempotencyKey != "" {
		b.Queue(`SELECT `+debateColumns+` FROM debates WHERE tenant_id = $1 AND idempotency_key = $2`,
			tenant, d.IdempotencyKey).QueryRow(scanInto(&existing))
	}

	if inTx != nil {
		err = s.inTx(ctx, op, func(tx pgx.Tx) error {
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return wrap(op, err)
			}
			if inserted == nil {
				return nil // nothing written
			}
			if err := inTx(ctx, tx); err != nil {
				return fmt.Errorf("postgres: %s: %w", op, err)
			}
			return nil
		})
	} else if err = s.pool.SendBatch(ctx, b).Close(); err != nil {
		err = wrap(op, err)
	}
	if err != nil {
		return debate.Debate{}, false, err
	}
	switch {
	case inserted != nil:
		return *inserted, true, nil
	case existing != nil && existing.RequestHash == d.RequestHash:
		return *existing, false, nil
	case existing != nil:
		return debate.Debate{}, false, fmt.Errorf("postgres: %s: idempotency key %q was used for another request: %w",
			op, d.IdempotencyKey, debate.ErrAlreadyExists)
	default:
		return debate.Debate{}, false, fmt.Errorf("postgres: %s: the id is taken: %w", op, debate.ErrAlreadyExists)
	}
}

// DebateGet returns the tenant's debate id, its times in UTC. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such debate.
func (s *Store) DebateGet(ctx context.Context, id string) (debate.Debate, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.Debate{}, err
	}
	var d debate.Debate
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT `+debateColumns+` FROM debates WHERE tenant_id = $1 AND debate_id = $2`, tenant, id).
			QueryRow(func(row pgx.Row) (err error) {
				d, err = scanDebate(tenant, row)
				return err
			})
	})
	if err != nil {
		return debate.Debate{}, wrap(fmt.Sprintf("debate %q", id), err)
	}
	return d, nil
}

// DebateList returns up to rows.Limit(page.Limit) of the tenant's debates,
// newest first then by id, narrowed by filter.Status and filter.DealID when
// set, after page.After, and the next cursor ("" on the last page). Returns
// debate.ErrNoTenant without a tenant in ctx, and a *debate.ValidationError
// on field page_token for a cursor this method did not return.
func (s *Store) DebateList(ctx context.Context, filter debate.DebateFilter, page debate.Page) ([]debate.Debate, string, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, "", err
	}
	afterAt, afterID, after, err := rows.DecodeDebateCursor(page.After)
	if err != nil {
		return nil, "", err
	}
	limit := rows.Limit(page.Limit)

	var sql strings.Builder
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	sql.WriteString(`SELECT ` + debateColumns + ` FROM debates WHERE tenant_id = $1`)
	if filter.Status != "" {
		sql.WriteString(` AND status = ` + arg(string(filter.Status)))
	}
	if filter.DealID != "" {
		sql.WriteString(` AND deal_id = ` + arg(filter.DealID))
	}
	if after {
		at := arg(afterAt)
		sql.WriteString(` AND created_at <= ` + at + ` AND (created_at < ` + at + ` OR debate_id > ` + arg(afterID) + `)`)
	}
	sql.WriteString(` ORDER BY created_at DESC, debate_id LIMIT ` + arg(limit+1))

	var list []debate.Debate
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(sql.String(), args...).Query(func(rs pgx.Rows) (err error) {
			list, err = pgx.CollectRows(rs, func(r pgx.CollectableRow) (debate.Debate, error) { return scanDebate(tenant, r) })
			if len(list) == 0 {
				list = nil
			}
			return err
		})
	})
	if err != nil {
		return nil, "", wrap("debate list", err)
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		next = rows.EncodeDebateCursor(list[limit-1])
	}
	return list, next, nil
}

// StepCommit applies c atomically: it locks the debate row and checks its
// ledger head is (c.ExpectSeq, c.ExpectHash) (the fence), appends the
// events in one multi-row insert, stores the checkpoint, opens or resolves
// a gate, moves the debate (status, stop reason, error, round, next node,
// attempt, head = the last event's seq and hash, unchanged without events,
// updated_at = c.At) and, after the commit when it wrote events, notifies
// channel debated_events with "<tenant_id>/<debate_id>"
// (rows.NotifyPayload, to Listen on every replica; see notifier).
//
// The common step, which neither opens or resolves a gate nor schedules a
// job, goes through the group committer (group.go): alone, it is one
// pipelined batch, one round trip, one implicit transaction that the first
// failing statement aborts whole; when steps of other debates of the
// tenant are waiting to commit at the same time, they share one
// transaction, each fenced by its own head. A step that opens a gate is a
// batch of its own; one that resolves a gate runs in an explicit
// transaction (three round trips) so that Go can check the gate.
// c.Enqueue is the caller's business (see StepCommitWith).
//
// Returns debate.ErrNoTenant without a tenant in ctx; a
// *debate.ValidationError, writing nothing, if c is malformed (see
// rows.NewStep: seqs not contiguous from c.ExpectSeq+1, events that do not
// chain or belong to another tenant or debate, ...); debate.ErrNotFound if
// the tenant has no such debate, or no gate c.ResolveGate.ID;
// debate.ErrConflict, writing nothing, if the debate's head is no longer
// (c.ExpectSeq, c.ExpectHash) or a seq is already in the ledger;
// debate.ErrFailedPrecondition if the gate to resolve is not open;
// debate.ErrAlreadyExists if the gate to open or the checkpoint's step
// exists.
func (s *Store) StepCommit(ctx context.Context, c debate.StepCommit) error {
	return s.StepCommitWith(ctx, c, nil)
}

// StepCommitWith is StepCommit that runs inTx, when it is not nil, in the
// step's transaction after the step's writes (the transaction has the
// tenant set for row-level security): the application inserts the job of
// a debate the step makes runnable again (a resolved gate) with River's
// InsertTx, so the job commits with the step or not at all. A fenced step
// does not run inTx; inTx's error, wrapped, rolls the step back.
func (s *Store) StepCommitWith(ctx context.Context, c debate.StepCommit, inTx func(ctx context.Context, tx pgx.Tx) error) (err error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return err
	}
	st, err := rows.NewStep(tenant, c)
	if err != nil {
		return err
	}
	if s.group != nil && inTx == nil && groupable(st) {
		return s.group.commit(ctx, tenant, st)
	}
	if inTx == nil && st.ResolveGate == nil {
		return s.commitOne(ctx, tenant, st)
	}
	op := fmt.Sprintf("debate %q step commit", st.DebateID)
	b := &pgx.Batch{}
	queueStep(b, tenant, st)
	defer func() {
		if err == nil && st.Events.Len() > 0 {
			s.notify.notify(tenant, st.DebateID)
			s.logDirty.Mark(tenant)
		}
	}()
	defer func() { err = s.headError(ctx, op, tenant, st.DebateID, err) }()
	err = s.inTx(ctx, op, func(tx pgx.Tx) error {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return stepError(op, err)
		}
		if inTx != nil {
			if err := inTx(ctx, tx); err != nil {
				return fmt.Errorf("postgres: %s: %w", op, err)
			}
		}
		return nil
	})
	return err
}

// inTx runs fn in a transaction of the pool and commits it if fn returns
// nil. fn's error comes back as it is; a failure to begin or commit is
// wrapped with op.
func (s *Store) inTx(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return wrap(op, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	return wrap(op, tx.Commit(ctx))
}

// errNotAtHead is queueStep's verdict when the debate's head is not the
// one the step expects (or the debate is not the tenant's): nothing was
// written.
var errNotAtHead = errors.New("debate not at the expected head")

// queueStep queues a step commit: bind the tenant, check the gate to
// resolve, then every write as one statement of data-modifying CTEs. The
// first CTE is the fence: it moves the debate's row only if its head is
// still (ExpectSeq, ExpectHash), which locks the row until the commit, and
// every other write happens only if it did; a step that lost the race (or
// a debate the tenant does not have) writes nothing and the statement
// answers errNotAtHead. A concurrent commit of the same step blocks on the
// row lock and then finds the head moved (READ COMMITTED re-checks the
// condition on the new row version); the ledger's primary key is the
// second fence. One statement is less work per step for the server than a
// fence function and the writes: each costs an executor start and end, and
// a separate SELECT ... FOR UPDATE logs a lock record the UPDATE makes
// anyway.
func queueStep(b *pgx.Batch, tenant string, st *rows.Step) {
	b.Queue(setTenantSQL, tenant)
	if g := st.ResolveGate; g != nil {
		// Only in an explicit transaction: the callback's error rolls it
		// back.
		b.Queue(`SELECT status FROM human_gates WHERE tenant_id = $1 AND debate_id = $2 AND gate_id = $3 FOR UPDATE`,
			tenant, st.DebateID, g.ID).QueryRow(func(row pgx.Row) error {
			var status string
			err := row.Scan(&status)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("gate %q: %w", g.ID, debate.ErrNotFound)
			case err != nil:
				return err
			case status != string(debate.GateOpen):
				return fmt.Errorf("gate %q is %s, not open: %w", g.ID, status, debate.ErrFailedPrecondition)
			}
			return nil
		})
	}

	args := []any{tenant, st.DebateID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	const moved = ` WHERE EXISTS (SELECT FROM debate)`
	lastSeq, headHash := arg(st.LastSeq), arg(st.HeadHash)
	ctes := []string{`debate AS (UPDATE debates SET status = ` + arg(string(st.Status)) + `,
			stop_reason = ` + arg(st.StopReason) + `, error = ` + arg(st.Error) + `, round = ` + arg(st.Round) + `,
			rounds_completed = rounds_completed + ` + arg(st.CompletesRounds) + `,
			next_node = ` + arg(st.NextNode) + `, attempt = ` + arg(st.Attempt) + `, last_seq = ` + lastSeq + `,
			head_hash = ` + headHash + `, updated_at = ` + arg(st.At) + `
		WHERE tenant_id = $1 AND debate_id = $2 AND last_seq = ` + arg(st.ExpectSeq) + `::bigint
			AND head_hash = ` + arg(st.ExpectHash) + `::text
		RETURNING 1)`}
	if e := &st.Events; e.Len() > 0 {
		ctes = append(ctes, `events AS (INSERT INTO debate_events (tenant_id, debate_id, seq, type, actor, node, round,
				payload, time, prev_hash, hash, key_id, signature)
			SELECT $1, $2, u.seq, u.type, u.actor, u.node, u.round, u.payload::json, u.time,
				u.prev_hash, u.hash, u.key_id, u.signature
			FROM unnest(`+arg(e.Seqs)+`::bigint[], `+arg(e.Types)+`::text[], `+arg(e.Actors)+`::text[], `+
			arg(e.Nodes)+`::text[], `+arg(e.Rounds)+`::integer[], `+arg(e.Payloads)+`::text[], `+
			arg(e.Times)+`::timestamptz[], `+arg(e.PrevHashes)+`::text[], `+arg(e.Hashes)+`::text[], `+
			arg(e.KeyIDs)+`::text[], `+arg(e.Signatures)+`::text[])
				AS u (seq, type, actor, node, round, payload, time, prev_hash, hash, key_id, signature)`+moved+`)`)
		// The step's new head is a leaf of the tenant's transparency log,
		// queued in this statement (see tlog.go).
		ctes = append(ctes, `tlog AS (INSERT INTO tlog_queue (tenant_id, kind, subject, seq, hash)
			SELECT $1, 'step', $2, `+lastSeq+`::bigint, `+headHash+`::text`+moved+`)`)
	}
	if cp := st.Checkpoint; cp != nil {
		ctes = append(ctes, `checkpoint AS (INSERT INTO debate_checkpoints (tenant_id, debate_id, step, seq, node, next_node,
				round, state, input_hash, output_hash, created_at)
			SELECT $1, $2, `+arg(cp.Step)+`::bigint, `+arg(cp.Seq)+`::bigint, `+arg(cp.Node)+`::text, `+arg(cp.NextNode)+`::text, `+
			arg(cp.Round)+`::integer, `+arg(optJSON(cp.State))+`::json, `+arg(cp.InputHash)+`::text, `+arg(cp.OutputHash)+`::text, `+
			arg(cp.CreatedAt)+`::timestamptz`+moved+`)`)
	}
	if g := st.OpenGate; g != nil {
		ctes = append(ctes, `open_gate AS (INSERT INTO human_gates (tenant_id, debate_id, gate_id, node, reason, claim_ids,
				status, resolution, resolved_by, created_at, resolved_at)
			SELECT $1, $2, `+arg(g.ID)+`::text, `+arg(g.Node)+`::text, `+arg(g.Reason)+`::text, `+arg(rows.ClaimIDs(g.ClaimIDs))+`::text[], `+
			arg(string(g.Status))+`::text, '', '', `+arg(g.CreatedAt)+`::timestamptz, NULL`+moved+`)`)
	}
	if g := st.ResolveGate; g != nil {
		ctes = append(ctes, `resolve_gate AS (UPDATE human_gates SET status = `+arg(string(g.Status))+`,
				resolution = `+arg(g.Resolution)+`, resolved_by = `+arg(g.ResolvedBy)+`, resolved_at = `+arg(*g.ResolvedAt)+`
			WHERE tenant_id = $1 AND debate_id = $2 AND gate_id = `+arg(g.ID)+` AND EXISTS (SELECT FROM debate))`)
	}
	// The notification is sent after the commit (see notifier).
	b.Queue("WITH "+strings.Join(ctes, ",\n")+"\nSELECT EXISTS (SELECT FROM debate)", args...).QueryRow(func(row pgx.Row) error {
		var ok bool
		if err := row.Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return errNotAtHead
		}
		return nil
	})
}

// headError turns errNotAtHead into debate.ErrNotFound when the tenant
// has no such debate and debate.ErrConflict when its head moved; other
// errors pass unchanged.
func (s *Store) headError(ctx context.Context, op, tenant, debateID string, err error) error {
	if !errors.Is(err, errNotAtHead) {
		return err
	}
	var exists bool
	b := &pgx.Batch{}
	b.Queue(setTenantSQL, tenant)
	queueDebateExists(b, tenant, debateID, &exists)
	if qerr := s.pool.SendBatch(ctx, b).Close(); qerr != nil {
		return wrap(op, qerr)
	}
	if !exists {
		return fmt.Errorf("postgres: %s: %w", op, debate.ErrNotFound)
	}
	return fmt.Errorf("postgres: %s: %w (its ledger head is no longer the one the step expects)", op, debate.ErrConflict)
}

// stepError translates the errors of a step commit: a seq already in the
// ledger (the primary key is the second fence) into debate.ErrConflict;
// errNotAtHead (for headError) and the gate check's sentinels as they are;
// anything else as wrap does.
func stepError(op string, err error) error {
	if errors.Is(err, errNotAtHead) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if pgErr.Code == sqlstateUniqueViolation && pgErr.ConstraintName == "debate_events_pkey" {
			return fmt.Errorf("postgres: %s: %w (%s)", op, debate.ErrConflict, pgErr.Message)
		}
	}
	return wrap(op, err)
}

// queueDebateExists queues the check that the tenant has the debate.
func queueDebateExists(b *pgx.Batch, tenant, debateID string, exists *bool) {
	b.Queue(`SELECT EXISTS (SELECT FROM debates WHERE tenant_id = $1 AND debate_id = $2)`, tenant, debateID).
		QueryRow(func(row pgx.Row) error { return row.Scan(exists) })
}

// CheckpointLatest returns the debate's checkpoint with the highest step,
// its State byte for byte as committed, CreatedAt in UTC. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such debate or it has no checkpoint.
func (s *Store) CheckpointLatest(ctx context.Context, debateID string) (debate.Checkpoint, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.Checkpoint{}, err
	}
	cp := debate.Checkpoint{DebateID: debateID}
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT step, seq, node, next_node, round, state, input_hash, output_hash, created_at
			FROM debate_checkpoints WHERE tenant_id = $1 AND debate_id = $2 ORDER BY step DESC LIMIT 1`,
			tenant, debateID).QueryRow(func(row pgx.Row) error {
			var state []byte
			if err := row.Scan(&cp.Step, &cp.Seq, &cp.Node, &cp.NextNode, &cp.Round, &state,
				&cp.InputHash, &cp.OutputHash, &cp.CreatedAt); err != nil {
				return err
			}
			if len(state) > 0 {
				cp.State = state
			}
			cp.CreatedAt = cp.CreatedAt.UTC()
			return nil
		})
	})
	if err != nil {
		return debate.Checkpoint{}, wrap(fmt.Sprintf("debate %q latest checkpoint", debateID), err)
	}
	return cp, nil
}

// EventList returns the debate's events with seq above afterSeq in seq
// order, at most rows.DebateEventLimit(limit) of them (500 for limit ≤ 0,
// capped at 5000), exactly as committed: payloads byte for byte, times in
// UTC; nil when there are none. Returns debate.ErrNoTenant without a
// tenant in ctx, and debate.ErrNotFound if the tenant has no such debate.
func (s *Store) EventList(ctx context.Context, debateID string, afterSeq int64, limit int) ([]debate.Event, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var list []debate.Event
	var exists bool
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		queueDebateExists(b, tenant, debateID, &exists)
		b.Queue(`SELECT seq, type, actor, node, round, payload, time, prev_hash, hash, key_id, signature
			FROM debate_events WHERE tenant_id = $1 AND debate_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
			tenant, debateID, afterSeq, rows.DebateEventLimit(limit)).Query(func(rs pgx.Rows) error {
			defer rs.Close()
			for rs.Next() {
				e := debate.Event{TenantID: tenant, DebateID: debateID}
				var payload []byte
				if err := rs.Scan(&e.Seq, &e.Type, &e.Actor, &e.Node, &e.Round, &payload, &e.Time,
					&e.PrevHash, &e.Hash, &e.KeyID, &e.Signature); err != nil {
					return err
				}
				e.Payload, e.Time = payload, e.Time.UTC()
				list = append(list, e)
			}
			return rs.Err()
		})
	})
	if err != nil {
		return nil, wrap("debate event list", err)
	}
	if !exists {
		return nil, fmt.Errorf("postgres: debate event list: debate %q: %w", debateID, debate.ErrNotFound)
	}
	return list, nil
}

const gateColumns = `gate_id, node, reason, claim_ids, status, resolution, resolved_by, created_at, resolved_at`

func scanGate(debateID string, row pgx.Row) (debate.HumanGate, error) {
	g := debate.HumanGate{DebateID: debateID}
	var claimIDs []string
	var status string
	if err := row.Scan(&g.ID, &g.Node, &g.Reason, &claimIDs, &status, &g.Resolution, &g.ResolvedBy,
		&g.CreatedAt, &g.ResolvedAt); err != nil {
		return debate.HumanGate{}, err
	}
	g.ClaimIDs, g.Status = rows.ClaimIDsOf(claimIDs), debate.GateStatus(status)
	g.CreatedAt = g.CreatedAt.UTC()
	if g.ResolvedAt != nil {
		t := g.ResolvedAt.UTC()
		g.ResolvedAt = &t
	}
	return g, nil
}

// GateGet returns the debate's human gate gateID, its times in UTC.
// Returns debate.ErrNoTenant without a tenant in ctx, and
// debate.ErrNotFound if the tenant has no such debate or gate.
func (s *Store) GateGet(ctx context.Context, debateID, gateID string) (debate.HumanGate, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.HumanGate{}, err
	}
	var g debate.HumanGate
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT `+gateColumns+` FROM human_gates WHERE tenant_id = $1 AND debate_id = $2 AND gate_id = $3`,
			tenant, debateID, gateID).QueryRow(func(row pgx.Row) (err error) {
			g, err = scanGate(debateID, row)
			return err
		})
	})
	if err != nil {
		return debate.HumanGate{}, wrap(fmt.Sprintf("debate %q gate %q", debateID, gateID), err)
	}
	return g, nil
}

// GateList returns the debate's human gates ordered by creation then id,
// their times in UTC; nil when it has none. Returns debate.ErrNoTenant
// without a tenant in ctx, and debate.ErrNotFound if the tenant has no
// such debate.
func (s *Store) GateList(ctx context.Context, debateID string) ([]debate.HumanGate, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var list []debate.HumanGate
	var exists bool
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		queueDebateExists(b, tenant, debateID, &exists)
		b.Queue(`SELECT `+gateColumns+` FROM human_gates WHERE tenant_id = $1 AND debate_id = $2
			ORDER BY created_at, gate_id`, tenant, debateID).Query(func(rs pgx.Rows) (err error) {
			list, err = pgx.CollectRows(rs, func(r pgx.CollectableRow) (debate.HumanGate, error) { return scanGate(debateID, r) })
			if len(list) == 0 {
				list = nil
			}
			return err
		})
	})
	if err != nil {
		return nil, wrap("gate list", err)
	}
	if !exists {
		return nil, fmt.Errorf("postgres: gate list: debate %q: %w", debateID, debate.ErrNotFound)
	}
	return list, nil
}

// EventPayloads returns the seq and payload of the debate's events of type
// eventType with seq > afterSeq, in seq order, at most limit (≤0 means 500,
// capped at 5000): a protocol reading its transcript back reads only what it
// needs. An unknown debate has no events. Returns debate.ErrNoTenant without
// a tenant in ctx.
func (s *Store) EventPayloads(ctx context.Context, debateID string, afterSeq int64, eventType string, limit int) ([]debate.Event, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var list []debate.Event
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT seq, payload FROM debate_events
			WHERE tenant_id = $1 AND debate_id = $2 AND seq > $3 AND type = $4 ORDER BY seq LIMIT $5`,
			tenant, debateID, afterSeq, eventType, rows.DebateEventLimit(limit)).Query(func(rs pgx.Rows) error {
			defer rs.Close()
			for rs.Next() {
				e := debate.Event{TenantID: tenant, DebateID: debateID, Type: eventType}
				var payload []byte
				if err := rs.Scan(&e.Seq, &payload); err != nil {
					return err
				}
				e.Payload = payload
				list = append(list, e)
			}
			return rs.Err()
		})
	})
	if err != nil {
		return nil, wrap("debate event payloads", err)
	}
	return list, nil
}

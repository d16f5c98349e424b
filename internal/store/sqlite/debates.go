package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
	"github.com/debated/debated/internal/tlog"
)

// Store keeps debates, their ledgers, checkpoints and human gates too.
var _ debate.DebateStore = (*Store)(nil)

// debateHooks are the in-process callback that stands in, on the embedded
// store, for LISTEN/NOTIFY of PostgreSQL (it may be set while the store is
// in use), and the prepared statements of StepCommit.
type debateHooks struct {
	onEvents atomic.Pointer[func(tenantID, debateID string)]
	stmts    preparedStmts
}

func setHook(p *atomic.Pointer[func(tenantID, debateID string)], fn func(tenantID, debateID string)) {
	if fn == nil {
		p.Store(nil)
		return
	}
	p.Store(&fn)
}

func callHook(p *atomic.Pointer[func(tenantID, debateID string)], tenantID, debateID string) {
	if fn := p.Load(); fn != nil {
		(*fn)(tenantID, debateID)
	}
}

// SetOnEvents sets the function that StepCommit calls after each commit
// that wrote events, to wake the debate's watchers: the embedded store's
// stand-in for LISTEN/NOTIFY. nil, the default, calls nothing. fn runs on
// the committing goroutine and must return quickly; it may use the store.
func (s *Store) SetOnEvents(fn func(tenantID, debateID string)) { setHook(&s.hooks.onEvents, fn) }

const debateColumns = `tenant_id, debate_id, deal_id, protocol, options, coalesce(idempotency_key, ''), request_hash,
	status, stop_reason, error, round, rounds_completed, next_node, attempt, last_seq, head_hash, created_at, updated_at`

func scanDebate(row scanner) (debate.Debate, error) {
	var d debate.Debate
	var options []byte
	var status, created, updated string
	if err := row.Scan(&d.TenantID, &d.ID, &d.DealID, &d.Protocol, &options, &d.IdempotencyKey, &d.RequestHash,
		&status, &d.StopReason, &d.Error, &d.Round, &d.RoundsCompleted, &d.NextNode, &d.Attempt, &d.LastSeq, &d.HeadHash,
		&created, &updated); err != nil {
		return debate.Debate{}, err
	}
	if len(options) > 0 {
		d.Options = options
	}
	d.Status = debate.DebateStatus(status)
	var err error
	if d.CreatedAt, err = rows.ParseTimeText(created); err != nil {
		return debate.Debate{}, err
	}
	if d.UpdatedAt, err = rows.ParseTimeText(updated); err != nil {
		return debate.Debate{}, err
	}
	return d, nil
}

// optText is the value of a nullable TEXT column: nil (NULL) for none.
func optText[T ~string | ~[]byte](s T) any {
	if len(s) == 0 {
		return nil
	}
	return string(s)
}

// DebateCreate stores d as a new queued debate of the tenant (see
// rows.NewDebate for what it keeps and stamps) in one IMMEDIATE
// transaction on the single writer connection. It returns the debate as
// DebateGet returns it, and whether it was created.
//
// With an IdempotencyKey the tenant already used, it writes nothing and
// returns the stored debate with created false if its RequestHash is
// d.RequestHash, and debate.ErrAlreadyExists otherwise; concurrent creates
// run one after the other, so exactly one creates.
//
// Returns debate.ErrNoTenant without a tenant in ctx; a
// *debate.ValidationError if d cannot be stored; debate.ErrNotFound if the
// tenant has no deal d.DealID; debate.ErrAlreadyExists if the id is taken
// (and no stored debate holds the key).
func (s *Store) DebateCreate(ctx context.Context, d debate.Debate) (debate.Debate, bool, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.Debate{}, false, err
	}
	if d, err = rows.NewDebate(tenant, d); err != nil {
		return debate.Debate{}, false, err
	}
	op := fmt.Sprintf("debate %q create", d.ID)
	var out debate.Debate
	created := false
	err = inTx(ctx, s.write, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `INSERT INTO debates (tenant_id, debate_id, deal_id, protocol, options, idempotency_key,
				request_hash, status, stop_reason, error, round, next_node, attempt, last_seq, head_hash, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`,
			tenant, d.ID, d.DealID, d.Protocol, optText(d.Options), optText(d.IdempotencyKey), d.RequestHash,
			string(d.Status), d.StopReason, d.Error, d.Round, d.NextNode, d.Attempt, d.LastSeq, d.HeadHash,
			rows.TimeText(d.CreatedAt), rows.TimeText(d.UpdatedAt))
		if isForeignKeyViolation(err) {
			return fmt.Errorf("deal %q: %w", d.DealID, debate.ErrNotFound)
		}
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return err
		}
		if n == 1 {
			created, out = true, d
			return nil
		}
		if d.IdempotencyKey == "" {
			return fmt.Errorf("the id is taken: %w", debate.ErrAlreadyExists)
		}
		out, err = scanDebate(tx.QueryRowContext(ctx, `SELECT `+debateColumns+` FROM debates
			WHERE tenant_id = ? AND idempotency_key = ?`, tenant, d.IdempotencyKey))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("the id is taken: %w", debate.ErrAlreadyExists)
		case err != nil:
			return err
		case out.RequestHash != d.RequestHash:
			return fmt.Errorf("idempotency key %q was used for another request: %w", d.IdempotencyKey, debate.ErrAlreadyExists)
		}
		return nil
	})
	if err != nil {
		return debate.Debate{}, false, wrap(op, err)
	}
	return out, created, nil
}

// DebateGet returns the tenant's debate id, its times in UTC. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such debate.
func (s *Store) DebateGet(ctx context.Context, id string) (debate.Debate, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.Debate{}, err
	}
	d, err := scanDebate(s.read.QueryRowContext(ctx,
		`SELECT `+debateColumns+` FROM debates WHERE tenant_id = ? AND debate_id = ?`, tenant, id))
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
	var q strings.Builder
	args := []any{tenant}
	q.WriteString(`SELECT ` + debateColumns + ` FROM debates WHERE tenant_id = ?`)
	if filter.Status != "" {
		q.WriteString(` AND status = ?`)
		args = append(args, string(filter.Status))
	}
	if filter.DealID != "" {
		q.WriteString(` AND deal_id = ?`)
		args = append(args, filter.DealID)
	}
	if after {
		at := rows.TimeText(afterAt)
		q.WriteString(` AND created_at <= ? AND (created_at < ? OR debate_id > ?)`)
		args = append(args, at, at, afterID)
	}
	q.WriteString(` ORDER BY created_at DESC, debate_id LIMIT ?`)
	args = append(args, limit+1)
	list, err := queryList(ctx, s.read, q.String(), args, scanDebate)
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

// The statements of StepCommit. Parsing them is a fifth of a step's CPU
// time, so the common ones are prepared once on the writer connection (see
// preparedStmts).
const (
	stepFenceSQL     = `SELECT last_seq, head_hash FROM debates WHERE tenant_id = ? AND debate_id = ?`
	stepEventsSQL    = `INSERT INTO debate_events (tenant_id, debate_id, seq, type, actor, node, round, payload, time, prev_hash, hash, key_id, signature) VALUES `
	stepEventColumns = 13
	// stepCachedEvents is the largest number of events whose insert is
	// prepared once; larger steps are rare, and prepared each time.
	stepCachedEvents  = 8
	stepCheckpointSQL = `INSERT INTO debate_checkpoints (tenant_id, debate_id, step, seq, node, next_node, round, state,
		input_hash, output_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	stepDebateSQL = `UPDATE debates SET status = ?, stop_reason = ?, error = ?, round = ?, rounds_completed = rounds_completed + ?, next_node = ?,
		attempt = ?, last_seq = ?, head_hash = ?, updated_at = ? WHERE tenant_id = ? AND debate_id = ?`
)

// preparedStmts are statements prepared on the writer database. With one
// connection, a statement prepared on the database is prepared on that
// connection, and Tx.StmtContext reuses it in a transaction. They are
// prepared outside any transaction (the transaction holds the only
// connection), and closed by database/sql when the database closes its
// connection.
type preparedStmts struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// prepared returns query prepared on the writer database, preparing it
// the first time.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	p := &s.hooks.stmts
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.m[query]; ok {
		return st, nil
	}
	st, err := s.write.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if p.m == nil {
		p.m = map[string]*sql.Stmt{}
	}
	p.m[query] = st
	return st, nil
}

// StepCommit applies c in one IMMEDIATE transaction on the single writer
// connection: it reads the debate's ledger head and returns
// debate.ErrConflict, writing nothing, unless it is (c.ExpectSeq,
// c.ExpectHash); then it appends the events (multi-row inserts), stores the
// checkpoint, opens or resolves a gate and moves the debate (status, stop
// reason, error, round, next node, attempt, head = the last event's seq and
// hash, unchanged without events, updated_at = c.At). The write lock of the
// transaction is the debate's lock, also against another process on the
// same file. After the commit it calls the OnEvents function if it wrote
// events. c.Enqueue is the caller's business (the in-process scheduler
// runs the debate once the commit returns).
//
// Returns debate.ErrNoTenant without a tenant in ctx; a
// *debate.ValidationError, writing nothing, if c is malformed (see
// rows.NewStep); debate.ErrNotFound if the tenant has no such debate, or
// no gate c.ResolveGate.ID; debate.ErrConflict, writing nothing, if the
// debate's head is no longer (c.ExpectSeq, c.ExpectHash);
// debate.ErrFailedPrecondition if the gate to resolve is not open;
// debate.ErrAlreadyExists if the gate to open or the checkpoint's step
// exists.
func (s *Store) StepCommit(ctx context.Context, c debate.StepCommit) error {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return err
	}
	st, err := rows.NewStep(tenant, c)
	if err != nil {
		return err
	}
	op := fmt.Sprintf("debate %q step commit", st.DebateID)
	e := &st.Events
	queries := []string{stepFenceSQL, stepDebateSQL}
	if st.Checkpoint != nil {
		queries = append(queries, stepCheckpointSQL)
	}
	eventsSQL := ""
	if n := e.Len(); n > 0 && n <= stepCachedEvents {
		eventsSQL = insertSQL(stepEventsSQL, "", stepEventColumns, n)
		queries = append(queries, eventsSQL)
	}
	if e.Len() > 0 {
		queries = append(queries, queueLeafSQL)
	}
	stmts := make(map[string]*sql.Stmt, len(queries))
	for _, q := range queries {
		if stmts[q], err = s.prepared(ctx, q); err != nil {
			return wrap(op, err)
		}
	}
	exec := func(tx *sql.Tx, query string, args ...any) error {
		_, err := tx.StmtContext(ctx, stmts[query]).ExecContext(ctx, args...)
		return err
	}

	err = inTx(ctx, s.write, func(tx *sql.Tx) error {
		var seq int64
		var hash string
		err := tx.StmtContext(ctx, stmts[stepFenceSQL]).QueryRowContext(ctx, tenant, st.DebateID).Scan(&seq, &hash)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return debate.ErrNotFound
		case err != nil:
			return err
		case seq != st.ExpectSeq || hash != st.ExpectHash:
			return fmt.Errorf("the debate has moved: its head is seq %d, not %d: %w", seq, st.ExpectSeq, debate.ErrConflict)
		}

		eventValues := func(i int, args []any) []any {
			return append(args, tenant, st.DebateID, e.Seqs[i], e.Types[i], e.Actors[i], e.Nodes[i], e.Rounds[i],
				e.Payloads[i], rows.TimeText(e.Times[i]), e.PrevHashes[i], e.Hashes[i], e.KeyIDs[i], e.Signatures[i])
		}
		if eventsSQL != "" {
			args := make([]any, 0, e.Len()*stepEventColumns)
			for i := range e.Len() {
				args = eventValues(i, args)
			}
			if err := exec(tx, eventsSQL, args...); err != nil {
				return err
			}
		} else if _, err := insertRows(ctx, tx, stepEventsSQL, ``, stepEventColumns, e.Len(), eventValues); err != nil {
			return err
		}
		if e.Len() > 0 {
			// The step's new head is a leaf of the tenant's transparency
			// log, queued in the step's transaction (see tlog.go).
			if err := exec(tx, queueLeafSQL, tenant, tlog.KindStep, st.DebateID, st.LastSeq, st.HeadHash); err != nil {
				return err
			}
		}
		if cp := st.Checkpoint; cp != nil {
			if err := exec(tx, stepCheckpointSQL, tenant, st.DebateID, cp.Step, cp.Seq, cp.Node, cp.NextNode, cp.Round,
				optText(cp.State), cp.InputHash, cp.OutputHash, rows.TimeText(cp.CreatedAt)); err != nil {
				return err
			}
		}
		if g := st.OpenGate; g != nil {
			if _, err := tx.ExecContext(ctx, `INSERT INTO human_gates (tenant_id, debate_id, gate_id, node, reason, claim_ids,
					status, resolution, resolved_by, created_at, resolved_at) VALUES (?, ?, ?, ?, ?, ?, ?, '', '', ?, NULL)`,
				tenant, st.DebateID, g.ID, g.Node, g.Reason, rows.ClaimIDsText(g.ClaimIDs), string(g.Status),
				rows.TimeText(g.CreatedAt)); err != nil {
				return err
			}
		}
		if g := st.ResolveGate; g != nil {
			var status string
			err := tx.QueryRowContext(ctx, `SELECT status FROM human_gates WHERE tenant_id = ? AND debate_id = ? AND gate_id = ?`,
				tenant, st.DebateID, g.ID).Scan(&status)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("gate %q: %w", g.ID, debate.ErrNotFound)
			case err != nil:
				return err
			case status != string(debate.GateOpen):
				return fmt.Errorf("gate %q is %s, not open: %w", g.ID, status, debate.ErrFailedPrecondition)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE human_gates SET status = ?, resolution = ?, resolved_by = ?, resolved_at = ?
				WHERE tenant_id = ? AND debate_id = ? AND gate_id = ?`,
				string(g.Status), g.Resolution, g.ResolvedBy, rows.TimeText(*g.ResolvedAt), tenant, st.DebateID, g.ID); err != nil {
				return err
			}
		}
		return exec(tx, stepDebateSQL, string(st.Status), st.StopReason, st.Error, st.Round, st.CompletesRounds, st.NextNode, st.Attempt,
			st.LastSeq, st.HeadHash, rows.TimeText(st.At), tenant, st.DebateID)
	})
	if err != nil {
		return wrap(op, err)
	}
	if e.Len() > 0 {
		s.logDirty.Mark(tenant)
		callHook(&s.hooks.onEvents, tenant, st.DebateID)
	}
	return nil
}

// debateExists returns debate.ErrNotFound if the tenant has no debate
// debateID.
func debateExists(ctx context.Context, tx *sql.Tx, tenant, debateID string) error {
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM debates WHERE tenant_id = ? AND debate_id = ?)`,
		tenant, debateID).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("debate %q: %w", debateID, debate.ErrNotFound)
	}
	return nil
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
	var state []byte
	var created string
	err = s.read.QueryRowContext(ctx, `SELECT step, seq, node, next_node, round, state, input_hash, output_hash, created_at
		FROM debate_checkpoints WHERE tenant_id = ? AND debate_id = ? ORDER BY step DESC LIMIT 1`, tenant, debateID).
		Scan(&cp.Step, &cp.Seq, &cp.Node, &cp.NextNode, &cp.Round, &state, &cp.InputHash, &cp.OutputHash, &created)
	if err == nil {
		cp.CreatedAt, err = rows.ParseTimeText(created)
	}
	if err != nil {
		return debate.Checkpoint{}, wrap(fmt.Sprintf("debate %q latest checkpoint", debateID), err)
	}
	if len(state) > 0 {
		cp.State = state
	}
	return cp, nil
}

// EventList returns the debate's events with seq above afterSeq in seq
// order, at most rows.DebateEventLimit(limit) of them (500 for limit ≤ 0,
// capped at 5000), exactly as committed: payloads byte for byte, times in
// UTC; nil when there are none. It reads one snapshot. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such debate.
func (s *Store) EventList(ctx context.Context, debateID string, afterSeq int64, limit int) ([]debate.Event, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var list []debate.Event
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		if err := debateExists(ctx, tx, tenant, debateID); err != nil {
			return err
		}
		var err error
		list, err = queryList(ctx, tx, `SELECT seq, type, actor, node, round, payload, time, prev_hash, hash, key_id, signature
			FROM debate_events WHERE tenant_id = ? AND debate_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
			[]any{tenant, debateID, afterSeq, rows.DebateEventLimit(limit)},
			func(row scanner) (debate.Event, error) {
				e := debate.Event{TenantID: tenant, DebateID: debateID}
				var payload []byte
				var at string
				if err := row.Scan(&e.Seq, &e.Type, &e.Actor, &e.Node, &e.Round, &payload, &at,
					&e.PrevHash, &e.Hash, &e.KeyID, &e.Signature); err != nil {
					return debate.Event{}, err
				}
				e.Payload = payload
				var err error
				e.Time, err = rows.ParseTimeText(at)
				return e, err
			})
		return err
	})
	if err != nil {
		return nil, wrap("debate event list", err)
	}
	return list, nil
}

const gateColumns = `gate_id, node, reason, claim_ids, status, resolution, resolved_by, created_at, resolved_at`

func gateScanner(debateID string) func(scanner) (debate.HumanGate, error) {
	return func(row scanner) (debate.HumanGate, error) {
		g := debate.HumanGate{DebateID: debateID}
		var claimIDs, status, created string
		var resolved sql.NullString
		if err := row.Scan(&g.ID, &g.Node, &g.Reason, &claimIDs, &status, &g.Resolution, &g.ResolvedBy,
			&created, &resolved); err != nil {
			return debate.HumanGate{}, err
		}
		g.Status = debate.GateStatus(status)
		var err error
		if g.ClaimIDs, err = rows.ClaimIDsOfText(claimIDs); err != nil {
			return debate.HumanGate{}, err
		}
		if g.CreatedAt, err = rows.ParseTimeText(created); err != nil {
			return debate.HumanGate{}, err
		}
		if resolved.Valid {
			t, err := rows.ParseTimeText(resolved.String)
			if err != nil {
				return debate.HumanGate{}, err
			}
			g.ResolvedAt = &t
		}
		return g, nil
	}
}

// GateGet returns the debate's human gate gateID, its times in UTC.
// Returns debate.ErrNoTenant without a tenant in ctx, and
// debate.ErrNotFound if the tenant has no such debate or gate.
func (s *Store) GateGet(ctx context.Context, debateID, gateID string) (debate.HumanGate, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.HumanGate{}, err
	}
	g, err := gateScanner(debateID)(s.read.QueryRowContext(ctx, `SELECT `+gateColumns+` FROM human_gates
		WHERE tenant_id = ? AND debate_id = ? AND gate_id = ?`, tenant, debateID, gateID))
	if err != nil {
		return debate.HumanGate{}, wrap(fmt.Sprintf("debate %q gate %q", debateID, gateID), err)
	}
	return g, nil
}

// GateList returns the debate's human gates ordered by creation then id,
// their times in UTC; nil when it has none. It reads one snapshot. Returns
// debate.ErrNoTenant without a tenant in ctx, and debate.ErrNotFound if the
// tenant has no such debate.
func (s *Store) GateList(ctx context.Context, debateID string) ([]debate.HumanGate, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var list []debate.HumanGate
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		if err := debateExists(ctx, tx, tenant, debateID); err != nil {
			return err
		}
		var err error
		list, err = queryList(ctx, tx, `SELECT `+gateColumns+` FROM human_gates WHERE tenant_id = ? AND debate_id = ?
			ORDER BY created_at, gate_id`, []any{tenant, debateID}, gateScanner(debateID))
		return err
	})
	if err != nil {
		return nil, wrap("gate list", err)
	}
	return list, nil
}

// RunnableDebate names a debate a runner should carry on.
type RunnableDebate struct {
	TenantID string
	DebateID string
}

// RunnableDebates returns every debate, of every tenant, whose status is
// queued or running, oldest first: the in-process runner resumes them when
// the service starts (a debate whose process died mid-step, or between a
// commit and the scheduling of its run). It is the one method of the store that
// reads across tenants, so it takes no tenant from ctx: only the runner,
// which then acts in each debate's tenant, may call it.
func (s *Store) RunnableDebates(ctx context.Context) ([]RunnableDebate, error) {
	list, err := queryList(ctx, s.read, `SELECT tenant_id, debate_id FROM debates WHERE status IN (?, ?)
		ORDER BY created_at, tenant_id, debate_id`, []any{string(debate.DebateQueued), string(debate.DebateRunning)},
		func(row scanner) (RunnableDebate, error) {
			var r RunnableDebate
			err := row.Scan(&r.TenantID, &r.DebateID)
			return r, err
		})
	if err != nil {
		return nil, wrap("runnable debates", err)
	}
	return list, nil
}

// EventPayloads returns the seq and payload of the debate's events of type
// eventType with seq > afterSeq, in seq order, at most limit (≤0 means 500,
// capped at 5000). An unknown debate has no events. Returns
// debate.ErrNoTenant without a tenant in ctx.
func (s *Store) EventPayloads(ctx context.Context, debateID string, afterSeq int64, eventType string, limit int) ([]debate.Event, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	list, err := queryList(ctx, s.read, `SELECT seq, payload FROM debate_events
		WHERE tenant_id = ? AND debate_id = ? AND seq > ? AND type = ? ORDER BY seq LIMIT ?`,
		[]any{tenant, debateID, afterSeq, eventType, rows.DebateEventLimit(limit)},
		func(row scanner) (debate.Event, error) {
			e := debate.Event{TenantID: tenant, DebateID: debateID, Type: eventType}
			var payload []byte
			err := row.Scan(&e.Seq, &payload)
			e.Payload = payload
			return e, err
		})
	if err != nil {
		return nil, wrap("debate event payloads", err)
	}
	return list, nil
}

package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/debated/debated/internal/store/internal/rows"
)

// Group commit. Each step commit is a transaction of its own on the
// server: a snapshot, a statement, a commit record and a wait for the WAL
// flush, and their cost, not the rows, is most of what the server spends
// on a step. When steps of several debates of one tenant are waiting to
// commit at the same moment, the committer writes them in one transaction
// with one statement: every step is still atomic (its events, checkpoint
// and head move together, or nothing of it is written), durable before
// StepCommit returns, and fenced by its own expected head; only the
// transaction is shared. A step that lost its fence in a group answers as
// it would alone; a group whose statement fails is committed again step by
// step, so one bad step cannot fail the others.
//
// There is no timer: a group is whatever queued while the tenant's
// previous transaction was in flight, as in the server's own group commit
// of WAL flushes. A tenant has at most one transaction in flight (the
// larger its groups, the less the server spends per step), and the
// replica at most Config.CommitGroups; when they are all taken, tenants
// take turns, group by group, oldest waiting first. A step that finds its
// tenant idle and a slot free commits at once, in the caller's goroutine,
// so a single debate pays nothing for grouping.

// maxGroup caps the steps of one group transaction.
const maxGroup = 64

// pendingStep is a step waiting in the committer's queue.
type pendingStep struct {
	tenant   string
	st       *rows.Step
	deadline time.Time  // the caller's, if its context has one
	done     chan error // buffered: the result is never blocked on
}

// committer queues grouped step commits per tenant.
type committer struct {
	s     *Store
	slots int // group transactions allowed in flight, at most one per tenant
	// transactions and steps count what the committer has sent (see
	// GroupCommitStats).
	transactions, steps atomic.Int64

	mu       sync.Mutex
	inflight int
	busy     map[string]bool // tenants with a group in flight
	tenants  []string        // tenants with queued steps, oldest first
	queues   map[string][]*pendingStep
}

func newCommitter(s *Store, slots int) *committer {
	return &committer{s: s, slots: slots, busy: map[string]bool{}, queues: map[string][]*pendingStep{}}
}

// GroupCommitStats are the totals of the group committer.
type GroupCommitStats struct {
	// Transactions is how many transactions it sent (each held one step
	// or a group), Steps how many steps they held: Steps/Transactions is
	// the mean group size.
	Transactions, Steps int64
}

// GroupCommitStats returns the group committer's totals (zero when
// Config.CommitGroups turned it off).
func (s *Store) GroupCommitStats() GroupCommitStats {
	if s.group == nil {
		return GroupCommitStats{}
	}
	return GroupCommitStats{Transactions: s.group.transactions.Load(), Steps: s.group.steps.Load()}
}

// groupable reports whether st can share a transaction: a plain step, with
// no gate to open or resolve (those check or write more than the group
// statement does).
func groupable(st *rows.Step) bool {
	return st.ResolveGate == nil && st.OpenGate == nil
}

// commit queues st and returns its result once its group has committed.
func (c *committer) commit(ctx context.Context, tenant string, st *rows.Step) error {
	p := &pendingStep{tenant: tenant, st: st, done: make(chan error, 1)}
	p.deadline, _ = ctx.Deadline()
	c.mu.Lock()
	if len(c.queues[tenant]) == 0 {
		c.tenants = append(c.tenants, tenant)
	}
	c.queues[tenant] = append(c.queues[tenant], p)
	lead := !c.busy[tenant] && c.inflight < c.slots
	if lead {
		c.busy[tenant] = true
		c.inflight++
	}
	c.mu.Unlock()
	if lead {
		c.lead(tenant, p)
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		// The group may still commit the step: the caller must treat the
		// outcome as unknown and read the head again.
		return fmt.Errorf("postgres: debate %q step commit: outcome unknown: %w", st.DebateID, ctx.Err())
	}
}

// lead holds a slot for tenant: it commits the tenant's groups one after
// the other while steps keep queueing, then passes the slot to a tenant
// whose steps wait for one, or frees it. A caller that leads (own) hands
// the work on to a new goroutine as soon as its own step has committed,
// so it is never held up by other debates' commits after its own.
func (c *committer) lead(tenant string, own *pendingStep) {
	for {
		c.mu.Lock()
		group := c.take(tenant)
		if len(group) == 0 {
			c.free(tenant)
			return
		}
		c.mu.Unlock()
		c.s.commitGroup(group)
		c.mu.Lock()
		if next := c.waiting(); next != "" && len(c.queues[tenant]) > 0 {
			// Other tenants wait for a slot: the one that waited longest
			// gets this one, and this tenant's steps queue behind it.
			delete(c.busy, tenant)
			c.busy[next] = true
			c.tenants = append(slices.DeleteFunc(c.tenants, func(t string) bool { return t == tenant }), tenant)
			c.mu.Unlock()
			go c.lead(next, nil)
			return
		}
		if own != nil && len(own.done) > 0 {
			if len(c.queues[tenant]) == 0 {
				c.free(tenant) // one debate at a time starts no goroutine per step
				return
			}
			c.mu.Unlock()
			go c.lead(tenant, nil)
			return
		}
		c.mu.Unlock()
	}
}

// free ends tenant's turn: its slot goes to the tenant that has waited
// longest for one, or is released. Called with c.mu held; unlocks it.
func (c *committer) free(tenant string) {
	delete(c.busy, tenant)
	next := c.waiting()
	if next == "" {
		c.inflight--
		c.mu.Unlock()
		return
	}
	c.busy[next] = true
	c.mu.Unlock()
	go c.lead(next, nil)
}

// waiting returns the tenant that has waited longest for a slot ("" if
// none). Called with c.mu held.
func (c *committer) waiting() string {
	for _, t := range c.tenants {
		if !c.busy[t] {
			return t
		}
	}
	return ""
}

// take removes the tenant's next group from the queue: up to maxGroup of
// its steps, at most one per debate (a second step of one debate, from a
// worker that lost the debate, waits for the next group). Called with
// c.mu held.
func (c *committer) take(tenant string) []*pendingStep {
	queue := c.queues[tenant]
	if len(queue) == 0 {
		return nil
	}
	group := make([]*pendingStep, 0, min(len(queue), maxGroup))
	var rest []*pendingStep
	for _, p := range queue {
		if len(group) == maxGroup || slices.ContainsFunc(group, func(q *pendingStep) bool { return q.st.DebateID == p.st.DebateID }) {
			rest = append(rest, p)
			continue
		}
		group = append(group, p)
	}
	if len(rest) == 0 {
		delete(c.queues, tenant)
		c.tenants = slices.DeleteFunc(c.tenants, func(t string) bool { return t == tenant })
	} else {
		c.queues[tenant] = rest
	}
	return group
}

// groupTimeout bounds one group transaction whose callers set no deadline.
const groupTimeout = 30 * time.Second

// commitGroup commits the steps of one tenant and sends each its result.
// The transaction has the earliest deadline of its callers' contexts (a
// commit timeout), or groupTimeout; a caller that gives up earlier is
// answered at once (see commit) while the others wait for the outcome.
func (s *Store) commitGroup(group []*pendingStep) {
	deadline := time.Now().Add(groupTimeout)
	for _, p := range group {
		if !p.deadline.IsZero() && p.deadline.Before(deadline) {
			deadline = p.deadline
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	tenant := group[0].tenant
	s.group.transactions.Add(1)
	s.group.steps.Add(int64(len(group)))
	if len(group) == 1 {
		group[0].done <- s.commitOne(ctx, tenant, group[0].st)
		return
	}
	steps := make([]*rows.Step, len(group))
	for i, p := range group {
		steps[i] = p.st
	}
	moved, err := s.stepGroup(ctx, tenant, steps)
	if err != nil {
		// Something in the group failed the statement (a seq already in a
		// ledger, say): each step alone gets its own answer.
		s.group.transactions.Add(int64(len(group)))
		for _, p := range group {
			p.done <- s.commitOne(ctx, tenant, p.st)
		}
		return
	}
	for _, p := range group {
		if !moved[p.st.DebateID] {
			op := fmt.Sprintf("debate %q step commit", p.st.DebateID)
			p.done <- s.headError(ctx, op, tenant, p.st.DebateID, errNotAtHead)
			continue
		}
		if p.st.Events.Len() > 0 {
			s.notify.notify(tenant, p.st.DebateID)
			s.logDirty.Mark(tenant)
		}
		p.done <- nil
	}
}

// commitOne commits a plain step in a transaction of its own (the batch
// runs as one implicit transaction).
func (s *Store) commitOne(ctx context.Context, tenant string, st *rows.Step) error {
	op := fmt.Sprintf("debate %q step commit", st.DebateID)
	b := &pgx.Batch{}
	queueStep(b, tenant, st)
	err := s.headError(ctx, op, tenant, st.DebateID, stepError(op, s.pool.SendBatch(ctx, b).Close()))
	if err == nil && st.Events.Len() > 0 {
		s.notify.notify(tenant, st.DebateID)
		s.logDirty.Mark(tenant)
	}
	return err
}

// stepGroupSQL writes the steps of several debates of the tenant $1 in
// one statement, each fenced as queueStep fences one: the first CTE moves
// the head of every debate still at its step's expected head, and the
// events and checkpoints of only those debates are inserted, with a leaf
// of the tenant's transparency log for each head that moved. It returns
// the ids of the debates it moved. Two groups hold a debate in common only
// when two workers run it (one of them has lost it); with primary-key
// lookups the rows are locked in the arrays' order, debate id order, so
// such groups do not wait for each other in a cycle, and if a scan plan
// locks them in another order the server's deadlock check fails one group
// and its steps are committed again one by one (commitGroup).
//
// The planner may join the arrays to all the tenant's debates (scanned by
// the row-level security policy's tenant condition) rather than look each
// one up by its primary key: groupSettingsSQL makes lookups the cheaper
// plan once the statistics know the tenant's debates. A PL/pgSQL loop of
// single-row updates, or an UPDATE per step, which force the lookups,
// measured slower (docs/decisions.md).
const stepGroupSQL = `WITH h AS (
	SELECT * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::integer[],
		$9::text[], $10::integer[], $11::bigint[], $12::text[], $13::timestamptz[], $36::integer[])
		AS h (debate_id, expect_seq, expect_hash, status, stop_reason, error, round, next_node, attempt, last_seq, head_hash, updated_at,
			completes)
), debate AS (
	UPDATE debates d SET status = h.status, stop_reason = h.stop_reason, error = h.error, round = h.round,
		rounds_completed = d.rounds_completed + h.completes,
		next_node = h.next_node, attempt = h.attempt, last_seq = h.last_seq, head_hash = h.head_hash, updated_at = h.updated_at
	FROM h
	WHERE d.tenant_id = $1 AND d.debate_id = h.debate_id AND d.last_seq = h.expect_seq AND d.head_hash = h.expect_hash
	RETURNING d.debate_id, d.last_seq, d.head_hash, h.expect_seq
), tlog AS (
	INSERT INTO tlog_queue (tenant_id, kind, subject, seq, hash)
	SELECT $1, 'step', debate_id, last_seq, head_hash FROM debate WHERE last_seq <> expect_seq
), events AS (
	INSERT INTO debate_events (tenant_id, debate_id, seq, type, actor, node, round, payload, time, prev_hash, hash, key_id, signature)
	SELECT $1, u.debate_id, u.seq, u.type, u.actor, u.node, u.round, u.payload::json, u.time, u.prev_hash, u.hash, u.key_id, u.signature
	FROM unnest($14::text[], $15::bigint[], $16::text[], $17::text[], $18::text[], $19::integer[], $20::text[],
		$21::timestamptz[], $22::text[], $23::text[], $24::text[], $25::text[])
		AS u (debate_id, seq, type, actor, node, round, payload, time, prev_hash, hash, key_id, signature)
	WHERE u.debate_id IN (SELECT debate_id FROM debate)
), checkpoint AS (
	INSERT INTO debate_checkpoints (tenant_id, debate_id, step, seq, node, next_node, round, state, input_hash, output_hash, created_at)
	SELECT $1, c.debate_id, c.step, c.seq, c.node, c.next_node, c.round, c.state::json, c.input_hash, c.output_hash, c.created_at
	FROM unnest($26::text[], $27::bigint[], $28::bigint[], $29::text[], $30::text[], $31::integer[], $32::text[],
		$33::text[], $34::text[], $35::timestamptz[])
		AS c (debate_id, step, seq, node, next_node, round, state, input_hash, output_hash, created_at)
	WHERE c.debate_id IN (SELECT debate_id FROM debate)
)
SELECT debate_id FROM debate`

// groupSettingsSQL binds a group's transaction to the tenant $1, as
// setTenantSQL does, and prices a random page read as on a cached or
// solid-state database (1.1, PostgreSQL's default assumes a spinning disk:
// 4). With the default the planner prefers scanning all the tenant's
// debates to looking a group's debates up by primary key until the tenant
// has thousands of them; with 1.1 it looks them up once the statistics
// show more debates than the group has. The setting ends with the
// transaction, and stepGroupSQL runs nowhere else, so its cached plans
// are all made under it.
const groupSettingsSQL = `SELECT set_config('debated.tenant_id', $1, true), set_config('random_page_cost', '1.1', true)`

// stepGroup writes steps (of distinct debates) in one transaction and
// returns the debates whose heads it moved; the others wrote nothing.
func (s *Store) stepGroup(ctx context.Context, tenant string, steps []*rows.Step) (map[string]bool, error) {
	steps = slices.Clone(steps)
	slices.SortFunc(steps, func(a, b *rows.Step) int { return cmp.Compare(a.DebateID, b.DebateID) })
	n := len(steps)
	var (
		ids, expectHashes, statuses, stopReasons, errs, nextNodes, heads = make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		expectSeqs, lastSeqs = make([]int64, n), make([]int64, n)
		roundsH, attempts    = make([]int32, n), make([]int32, n)
		completes            = make([]int32, n)
		at                   = make([]time.Time, n)
		ev                   rows.EventColumns
		evIDs                []string
		cpIDs                []string
		cpSteps, cpSeqs      []int64 // cpSteps: Checkpoint.Step (an int)
		cpNodes, cpNext      []string
		cpRounds             []int32
		cpStates             []*string
		cpIn, cpOut          []string
		cpAt                 []time.Time
	)
	for i, st := range steps {
		ids[i], expectSeqs[i], expectHashes[i] = st.DebateID, st.ExpectSeq, st.ExpectHash
		statuses[i], stopReasons[i], errs[i] = string(st.Status), st.StopReason, st.Error
		roundsH[i], nextNodes[i], attempts[i], completes[i] = st.Round, st.NextNode, st.Attempt, st.CompletesRounds
		lastSeqs[i], heads[i], at[i] = st.LastSeq, st.HeadHash, st.At
		for range st.Events.Len() {
			evIDs = append(evIDs, st.DebateID)
		}
		ev.Append(&st.Events)
		if cp := st.Checkpoint; cp != nil {
			cpIDs = append(cpIDs, st.DebateID)
			cpSteps, cpSeqs = append(cpSteps, int64(cp.Step)), append(cpSeqs, cp.Seq)
			cpNodes, cpNext = append(cpNodes, cp.Node), append(cpNext, cp.NextNode)
			cpRounds = append(cpRounds, int32(cp.Round)) //nolint:gosec // rounds are small and checked by NewStep
			var state *string
			if cp.State != nil {
				s := string(cp.State)
				state = &s
			}
			cpStates = append(cpStates, state)
			cpIn, cpOut = append(cpIn, cp.InputHash), append(cpOut, cp.OutputHash)
			cpAt = append(cpAt, cp.CreatedAt)
		}
	}
	b := &pgx.Batch{}
	b.Queue(groupSettingsSQL, tenant)
	moved := make(map[string]bool, n)
	size := 384 * n // the arguments' bytes, about
	for i, p := range ev.Payloads {
		size += 96 + len(p) + len(evIDs[i]) + len(ev.Types[i]) + len(ev.Actors[i]) + len(ev.Nodes[i]) +
			len(ev.PrevHashes[i]) + len(ev.Hashes[i]) + len(ev.KeyIDs[i]) + len(ev.Signatures[i])
	}
	for _, st := range cpStates {
		size += 384
		if st != nil {
			size += len(*st)
		}
	}
	b.Queue(stepGroupSQL, tenant,
		presized{ids, size}, expectSeqs, expectHashes, statuses, stopReasons, errs, roundsH, nextNodes, attempts, lastSeqs, heads, at,
		evIDs, ev.Seqs, ev.Types, ev.Actors, ev.Nodes, ev.Rounds, ev.Payloads, ev.Times, ev.PrevHashes, ev.Hashes, ev.KeyIDs, ev.Signatures,
		cpIDs, cpSteps, cpSeqs, cpNodes, cpNext, cpRounds, cpStates, cpIn, cpOut, cpAt, completes,
	).Query(func(rs pgx.Rows) error {
		var id string
		_, err := pgx.ForEachRow(rs, []any{&id}, func() error {
			moved[id] = true
			return nil
		})
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, wrap(fmt.Sprintf("step commit of %d debates", n), err)
	}
	return moved, nil
}

// presized is a query argument that reserves room for the arguments after
// it (size bytes) before it is encoded: pgx encodes a query's arguments into
// one buffer, which it shrinks after every query, so that a group commit's
// arguments (about 100 KB) would otherwise grow it again by a quarter at a
// time, each time a new copy (tryPresized encodes it).
type presized struct {
	v    []string
	size int
}

// tryPresized is the encode plan of presized in the connections' type maps.
func tryPresized(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if p, ok := value.(presized); ok {
		return &presizedPlan{}, p.v, true
	}
	return nil, nil, false
}

type presizedPlan struct{ next pgtype.EncodePlan }

func (p *presizedPlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *presizedPlan) Encode(value any, buf []byte) ([]byte, error) {
	v, _ := value.(presized)
	return p.next.Encode(v.v, slices.Grow(buf, v.size))
}

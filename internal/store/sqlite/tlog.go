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
	"github.com/debated/debated/internal/tlog"
)

// The tenants' transparency logs (migrations/sqlite/0010_tlog.sql,
// docs/transparency.md), as on PostgreSQL: a step's transaction queues its
// leaf; integration, in a write transaction of the single writer (which
// serialises it), turns queued leaves into the tree.

// integrateBatch caps the leaves one integration transaction takes.
const integrateBatch = 4096

// queueLeafSQL queues a leaf of tenant ?1.
const queueLeafSQL = `INSERT INTO tlog_queue (tenant_id, kind, subject, seq, hash) VALUES (?, ?, ?, ?, ?)`

// QueueLogLeaf queues l in the tenant's log inside tx, a write transaction
// of the store: the leaf is integrated once tx commits, and lost with it if
// tx rolls back. Returns an error wrapping tlog.ErrInvalidLeaf for a
// malformed leaf.
func QueueLogLeaf(ctx context.Context, tx *sql.Tx, tenant string, l tlog.Leaf) error {
	if err := l.Validate(); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, queueLeafSQL, tenant, l.Kind, l.Subject, l.Seq, l.Hash)
	return wrap("queue log leaf", err)
}

// LogIntegrate integrates every leaf queued in the tenant's log and returns
// its head (size 0 and the empty root for an empty log). Returns
// debate.ErrNoTenant without a tenant in ctx.
func (s *Store) LogIntegrate(ctx context.Context) (tlog.Head, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return tlog.Head{}, err
	}
	return s.logIntegrate(ctx, tenant)
}

// LogIntegrateDirty integrates the logs of the tenants whose steps were
// committed since the last call, and returns their heads.
func (s *Store) LogIntegrateDirty(ctx context.Context) (map[string]tlog.Head, error) {
	return rows.Integrate(&s.logDirty, func(tenant string) (tlog.Head, error) { return s.logIntegrate(ctx, tenant) })
}

func (s *Store) logIntegrate(ctx context.Context, tenant string) (tlog.Head, error) {
	for {
		var head tlog.Head
		var more bool
		err := inTx(ctx, s.write, func(tx *sql.Tx) error {
			var err error
			head, more, err = integrateOnce(ctx, tx, tenant)
			return err
		})
		if err != nil {
			return tlog.Head{}, wrap("integrate the transparency log", err)
		}
		if !more {
			return head, nil
		}
	}
}

func logHead(ctx context.Context, q rowQuerier, tenant string) (tlog.Head, error) {
	head := tlog.Head{Root: tlog.EmptyRoot()}
	err := q.QueryRowContext(ctx, `SELECT tree_size, root_hash FROM tlog_heads WHERE tenant_id = ? ORDER BY tree_size DESC LIMIT 1`,
		tenant).Scan(&head.Size, &head.Root)
	if errors.Is(err, sql.ErrNoRows) {
		return head, nil
	}
	return head, err
}

// rowQuerier is a transaction or a database.
type rowQuerier interface {
	querier
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func integrateOnce(ctx context.Context, tx *sql.Tx, tenant string) (tlog.Head, bool, error) {
	head, err := logHead(ctx, tx, tenant)
	if err != nil {
		return tlog.Head{}, false, err
	}
	rs, err := tx.QueryContext(ctx, `SELECT queue_id, kind, subject, seq, hash FROM tlog_queue WHERE tenant_id = ?
		ORDER BY queue_id LIMIT ?`, tenant, integrateBatch)
	if err != nil {
		return tlog.Head{}, false, err
	}
	var (
		ids    []int64
		leaves []tlog.Leaf
	)
	for rs.Next() {
		var id int64
		var l tlog.Leaf
		if err := rs.Scan(&id, &l.Kind, &l.Subject, &l.Seq, &l.Hash); err != nil {
			rs.Close()
			return tlog.Head{}, false, err
		}
		ids, leaves = append(ids, id), append(leaves, l)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return tlog.Head{}, false, err
	}
	if len(leaves) == 0 {
		return head, false, nil
	}
	border, err := nodeHashes(ctx, tx, tenant, tlog.BorderIDs(head.Size))
	if err != nil {
		return tlog.Head{}, false, err
	}
	hashes := make([][]byte, len(leaves))
	for i, l := range leaves {
		if hashes[i], err = l.LeafHash(); err != nil {
			return tlog.Head{}, false, fmt.Errorf("queued leaf %d: %w", ids[i], err)
		}
	}
	nodes, newHead, err := tlog.Append(head.Size, border, hashes)
	if err != nil {
		return tlog.Head{}, false, err
	}
	for i, l := range leaves {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tlog_leaves (tenant_id, leaf_index, kind, subject, seq, hash) VALUES (?, ?, ?, ?, ?, ?)`,
			tenant, head.Size+uint64(i), l.Kind, l.Subject, l.Seq, l.Hash); err != nil {
			return tlog.Head{}, false, err
		}
	}
	for _, n := range nodes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tlog_nodes (tenant_id, level, node_index, hash) VALUES (?, ?, ?, ?)`,
			tenant, n.ID.Level, n.ID.Index, n.Hash); err != nil {
			return tlog.Head{}, false, err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO tlog_heads (tenant_id, tree_size, root_hash, created_at) VALUES (?, ?, ?, ?)`,
		tenant, newHead.Size, newHead.Root, rows.TimeText(time.Now())); err != nil {
		return tlog.Head{}, false, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tlog_queue WHERE tenant_id = ? AND queue_id BETWEEN ? AND ?`,
		tenant, ids[0], ids[len(ids)-1]); err != nil {
		return tlog.Head{}, false, err
	}
	return newHead, len(leaves) == integrateBatch, nil
}

// nodeHashes reads the hashes of ids. Returns an error wrapping
// debate.ErrDataLoss if one is missing.
func nodeHashes(ctx context.Context, q querier, tenant string, ids []tlog.NodeID) ([][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var cond strings.Builder
	args := []any{tenant}
	for i, id := range ids {
		if i > 0 {
			cond.WriteString(" OR ")
		}
		cond.WriteString("(level = ? AND node_index = ?)")
		args = append(args, id.Level, id.Index)
	}
	rs, err := q.QueryContext(ctx, `SELECT level, node_index, hash FROM tlog_nodes WHERE tenant_id = ? AND (`+cond.String()+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	got := make(map[tlog.NodeID][]byte, len(ids))
	for rs.Next() {
		var id tlog.NodeID
		var h []byte
		if err := rs.Scan(&id.Level, &id.Index, &h); err != nil {
			return nil, err
		}
		got[id] = h
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	out := make([][]byte, len(ids))
	for i, id := range ids {
		h, ok := got[id]
		if !ok {
			return nil, fmt.Errorf("log node (%d, %d) is missing: %w", id.Level, id.Index, debate.ErrDataLoss)
		}
		out[i] = h
	}
	return out, nil
}

// LogHead returns the tenant's latest integrated tree head, without
// integrating.
func (s *Store) LogHead(ctx context.Context) (tlog.Head, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return tlog.Head{}, err
	}
	head, err := logHead(ctx, s.read, tenant)
	return head, wrap("read log head", err)
}

// LogHeadAt returns the tenant's tree head of size leaves. Returns
// debate.ErrNotFound if the log never had that size.
func (s *Store) LogHeadAt(ctx context.Context, size uint64) (tlog.Head, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return tlog.Head{}, err
	}
	if size == 0 {
		return tlog.Head{Root: tlog.EmptyRoot()}, nil
	}
	head := tlog.Head{Size: size}
	err = s.read.QueryRowContext(ctx, `SELECT root_hash FROM tlog_heads WHERE tenant_id = ? AND tree_size = ?`, tenant, size).Scan(&head.Root)
	return head, wrap(fmt.Sprintf("read log head %d", size), err)
}

// LogNodes returns the hashes of ids (perfect-subtree nodes). Returns
// debate.ErrDataLoss if one is missing.
func (s *Store) LogNodes(ctx context.Context, ids []tlog.NodeID) ([][]byte, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	out, err := nodeHashes(ctx, s.read, tenant, ids)
	if err != nil && !errors.Is(err, debate.ErrDataLoss) {
		return nil, wrap("read log nodes", err)
	}
	return out, err
}

// LogLeaves returns the integrated leaves of kind about subject (a debate
// or deal id), in seq order.
func (s *Store) LogLeaves(ctx context.Context, kind, subject string) ([]tlog.IndexedLeaf, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := s.read.QueryContext(ctx, `SELECT leaf_index, seq, hash FROM tlog_leaves WHERE tenant_id = ? AND kind = ? AND subject = ?
		ORDER BY seq`, tenant, kind, subject)
	if err != nil {
		return nil, wrap("read log leaves", err)
	}
	defer rs.Close()
	var out []tlog.IndexedLeaf
	for rs.Next() {
		il := tlog.IndexedLeaf{Leaf: tlog.Leaf{Kind: kind, Subject: subject}}
		if err := rs.Scan(&il.Index, &il.Leaf.Seq, &il.Leaf.Hash); err != nil {
			return nil, wrap("read log leaves", err)
		}
		out = append(out, il)
	}
	return out, wrap("read log leaves", rs.Err())
}

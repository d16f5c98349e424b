package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/internal/rows"
	"github.com/debated/debated/internal/tlog"
)

// The tenants' transparency logs (migrations/postgres/0010_tlog.sql,
// docs/transparency.md). A step's transaction queues its leaf (queueStep,
// stepGroupSQL, or QueueLogLeaf from any other transaction); integration
// turns queued leaves into the tree, batched and serialised per tenant by
// a transaction-scoped advisory lock, so replicas integrate in turn and
// never both give out the same index.

// integrateBatch caps the leaves one integration transaction takes.
const integrateBatch = 4096

// logLockSQL serialises integration per tenant until the transaction ends.
const logLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended('debated/tlog/' || $1, 0))`

// queueLeafSQL queues a leaf of tenant $1.
const queueLeafSQL = `INSERT INTO tlog_queue (tenant_id, kind, subject, seq, hash) VALUES ($1, $2, $3, $4, $5)`

// QueueLogLeaf queues l in the tenant's log inside tx, a transaction whose
// tenant is already set: the leaf is integrated once tx commits, and lost
// with it if tx rolls back. Returns an error wrapping tlog.ErrInvalidLeaf
// for a malformed leaf.
func QueueLogLeaf(ctx context.Context, tx pgx.Tx, tenant string, l tlog.Leaf) error {
	if err := l.Validate(); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, queueLeafSQL, tenant, l.Kind, l.Subject, l.Seq, l.Hash)
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

// LogIntegrateDirty integrates the logs of the tenants this replica
// committed steps for since the last call, and returns their heads. A
// tenant whose integration fails is tried again at the next call.
func (s *Store) LogIntegrateDirty(ctx context.Context) (map[string]tlog.Head, error) {
	return rows.Integrate(&s.logDirty, func(tenant string) (tlog.Head, error) { return s.logIntegrate(ctx, tenant) })
}

func (s *Store) logIntegrate(ctx context.Context, tenant string) (tlog.Head, error) {
	for {
		head, more, err := s.integrateOnce(ctx, tenant)
		if err != nil || !more {
			return head, err
		}
	}
}

// integrateOnce integrates up to integrateBatch queued leaves in one
// transaction; more reports that the batch was full.
func (s *Store) integrateOnce(ctx context.Context, tenant string) (head tlog.Head, more bool, err error) {
	const op = "integrate the transparency log"
	err = s.inTx(ctx, op, func(tx pgx.Tx) error {
		head = tlog.Head{Root: tlog.EmptyRoot()}
		var (
			queueIDs []int64
			leaves   []tlog.Leaf
		)
		b := &pgx.Batch{}
		b.Queue(setTenantSQL, tenant)
		b.Queue(logLockSQL, tenant)
		queueLogHead(b, tenant, &head)
		b.Queue(`SELECT queue_id, kind, subject, seq, hash FROM tlog_queue WHERE tenant_id = $1 ORDER BY queue_id LIMIT $2`,
			tenant, integrateBatch).Query(func(rs pgx.Rows) error {
			var id int64
			var l tlog.Leaf
			_, err := pgx.ForEachRow(rs, []any{&id, &l.Kind, &l.Subject, &l.Seq, &l.Hash}, func() error {
				queueIDs, leaves = append(queueIDs, id), append(leaves, l)
				return nil
			})
			return err
		})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return wrap(op, err)
		}
		if len(leaves) == 0 {
			return nil
		}
		more = len(leaves) == integrateBatch
		border, err := nodeHashes(ctx, tx, tenant, tlog.BorderIDs(head.Size))
		if err != nil {
			return err
		}
		hashes := make([][]byte, len(leaves))
		for i, l := range leaves {
			if hashes[i], err = l.LeafHash(); err != nil {
				return fmt.Errorf("postgres: %s: queued leaf %d: %w", op, queueIDs[i], err)
			}
		}
		nodes, newHead, err := tlog.Append(head.Size, border, hashes)
		if err != nil {
			return fmt.Errorf("postgres: %s: %w", op, err)
		}
		n := len(leaves)
		idx, kinds, subjects, seqs, lhashes := make([]int64, n), make([]string, n), make([]string, n), make([]int64, n), make([]string, n)
		for i, l := range leaves {
			idx[i] = int64(head.Size) + int64(i) //nolint:gosec // a log never reaches 2^63 leaves
			kinds[i], subjects[i], seqs[i], lhashes[i] = l.Kind, l.Subject, l.Seq, l.Hash
		}
		levels, nodeIdx, nodeHash := make([]int16, len(nodes)), make([]int64, len(nodes)), make([][]byte, len(nodes))
		for i, nd := range nodes {
			levels[i], nodeIdx[i], nodeHash[i] = int16(nd.ID.Level), int64(nd.ID.Index), nd.Hash //nolint:gosec // levels < 64, indexes < 2^63
		}
		b = &pgx.Batch{}
		b.Queue(`INSERT INTO tlog_leaves (tenant_id, leaf_index, kind, subject, seq, hash)
			SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[])`,
			tenant, idx, kinds, subjects, seqs, lhashes)
		b.Queue(`INSERT INTO tlog_nodes (tenant_id, level, node_index, hash)
			SELECT $1, * FROM unnest($2::smallint[], $3::bigint[], $4::bytea[])`, tenant, levels, nodeIdx, nodeHash)
		b.Queue(`INSERT INTO tlog_heads (tenant_id, tree_size, root_hash, created_at) VALUES ($1, $2, $3, $4)`,
			tenant, int64(newHead.Size), newHead.Root, time.Now().UTC()) //nolint:gosec // see above
		b.Queue(`DELETE FROM tlog_queue WHERE tenant_id = $1 AND queue_id = ANY($2)`, tenant, queueIDs)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return wrap(op, err)
		}
		head = newHead
		return nil
	})
	return head, more, err
}

// queueLogHead queues the read of the tenant's latest tree head into head
// (left as it is for an empty log).
func queueLogHead(b *pgx.Batch, tenant string, head *tlog.Head) {
	b.Queue(`SELECT tree_size, root_hash FROM tlog_heads WHERE tenant_id = $1 ORDER BY tree_size DESC LIMIT 1`, tenant).
		Query(func(rs pgx.Rows) error {
			var size int64
			var root []byte
			_, err := pgx.ForEachRow(rs, []any{&size, &root}, func() error {
				head.Size, head.Root = uint64(size), root //nolint:gosec // sizes are > 0 (CHECK)
				return nil
			})
			return err
		})
}

// nodeHashes reads the hashes of ids. Returns an error wrapping
// debate.ErrDataLoss if one is missing.
func nodeHashes(ctx context.Context, db batcher, tenant string, ids []tlog.NodeID) ([][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	levels, idx := make([]int16, len(ids)), make([]int64, len(ids))
	for i, id := range ids {
		levels[i], idx[i] = int16(id.Level), int64(id.Index) //nolint:gosec // levels < 64, indexes < 2^63
	}
	got := make(map[tlog.NodeID][]byte, len(ids))
	err := tenantBatch(ctx, db, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT n.level, n.node_index, n.hash FROM unnest($2::smallint[], $3::bigint[]) AS w (level, node_index)
			JOIN tlog_nodes n ON n.tenant_id = $1 AND n.level = w.level AND n.node_index = w.node_index`, tenant, levels, idx).
			Query(func(rs pgx.Rows) error {
				var level int16
				var index int64
				var hash []byte
				_, err := pgx.ForEachRow(rs, []any{&level, &index, &hash}, func() error {
					got[tlog.NodeID{Level: uint(level), Index: uint64(index)}] = hash //nolint:gosec // stored non-negative (CHECK)
					return nil
				})
				return err
			})
	})
	if err != nil {
		return nil, wrap("read log nodes", err)
	}
	out := make([][]byte, len(ids))
	for i, id := range ids {
		h, ok := got[id]
		if !ok {
			return nil, fmt.Errorf("postgres: log node (%d, %d) is missing: %w", id.Level, id.Index, debate.ErrDataLoss)
		}
		out[i] = h
	}
	return out, nil
}

// LogHead returns the tenant's latest integrated tree head, without
// integrating (size 0 and the empty root for an empty log).
func (s *Store) LogHead(ctx context.Context) (tlog.Head, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return tlog.Head{}, err
	}
	head := tlog.Head{Root: tlog.EmptyRoot()}
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) { queueLogHead(b, tenant, &head) })
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
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT root_hash FROM tlog_heads WHERE tenant_id = $1 AND tree_size = $2`, tenant, int64(size)). //nolint:gosec // compared, not stored
																QueryRow(func(row pgx.Row) error { return row.Scan(&head.Root) })
	})
	return head, wrap(fmt.Sprintf("read log head %d", size), err)
}

// LogNodes returns the hashes of ids (perfect-subtree nodes). Returns
// debate.ErrDataLoss if one is missing.
func (s *Store) LogNodes(ctx context.Context, ids []tlog.NodeID) ([][]byte, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	return nodeHashes(ctx, s.pool, tenant, ids)
}

// LogLeaves returns the integrated leaves of kind about subject (a debate
// or deal id), in seq order.
func (s *Store) LogLeaves(ctx context.Context, kind, subject string) ([]tlog.IndexedLeaf, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, err
	}
	var out []tlog.IndexedLeaf
	err = tenantBatch(ctx, s.pool, tenant, func(b *pgx.Batch) {
		b.Queue(`SELECT leaf_index, seq, hash FROM tlog_leaves WHERE tenant_id = $1 AND kind = $2 AND subject = $3 ORDER BY seq`,
			tenant, kind, subject).Query(func(rs pgx.Rows) error {
			var idx int64
			l := tlog.Leaf{Kind: kind, Subject: subject}
			_, err := pgx.ForEachRow(rs, []any{&idx, &l.Seq, &l.Hash}, func() error {
				out = append(out, tlog.IndexedLeaf{Index: uint64(idx), Leaf: l}) //nolint:gosec // stored non-negative (CHECK)
				return nil
			})
			return err
		})
	})
	return out, wrap("read log leaves", err)
}

-- 0010_tlog: each tenant's transparency log, for the embedded store. The
-- same tables as PostgreSQL's 0010_tlog, without roles or row-level
-- security; hashes as BLOB, times as TEXT in UTC.

CREATE TABLE tlog_queue (
    queue_id  INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('step', 'deal')),
    subject   TEXT NOT NULL,
    seq       INTEGER NOT NULL CHECK (seq > 0),
    hash      TEXT NOT NULL
) STRICT;

CREATE INDEX tlog_queue_tenant_idx ON tlog_queue (tenant_id, queue_id);

CREATE TABLE tlog_leaves (
    tenant_id  TEXT NOT NULL,
    leaf_index INTEGER NOT NULL CHECK (leaf_index >= 0),
    kind       TEXT NOT NULL CHECK (kind IN ('step', 'deal')),
    subject    TEXT NOT NULL,
    seq        INTEGER NOT NULL CHECK (seq > 0),
    hash       TEXT NOT NULL,
    PRIMARY KEY (tenant_id, leaf_index)
) STRICT;

CREATE UNIQUE INDEX tlog_leaves_subject_idx ON tlog_leaves (tenant_id, kind, subject, seq);

CREATE TABLE tlog_nodes (
    tenant_id  TEXT NOT NULL,
    level      INTEGER NOT NULL CHECK (level >= 0 AND level < 64),
    node_index INTEGER NOT NULL CHECK (node_index >= 0),
    hash       BLOB NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (tenant_id, level, node_index)
) STRICT;

CREATE TABLE tlog_heads (
    tenant_id  TEXT NOT NULL,
    tree_size  INTEGER NOT NULL CHECK (tree_size > 0),
    root_hash  BLOB NOT NULL CHECK (length(root_hash) = 32),
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, tree_size)
) STRICT;

-- Debates committed before the log existed: their current heads are its
-- first leaves.
INSERT INTO tlog_queue (tenant_id, kind, subject, seq, hash)
    SELECT tenant_id, 'step', debate_id, last_seq, head_hash FROM debates
    WHERE last_seq > 0 ORDER BY tenant_id, created_at, debate_id;

CREATE TRIGGER tlog_leaves_no_update BEFORE UPDATE ON tlog_leaves
BEGIN
    SELECT RAISE(ABORT, 'tlog_leaves is append-only: UPDATE refused');
END;
CREATE TRIGGER tlog_leaves_no_delete BEFORE DELETE ON tlog_leaves
BEGIN
    SELECT RAISE(ABORT, 'tlog_leaves is append-only: DELETE refused');
END;
CREATE TRIGGER tlog_nodes_no_update BEFORE UPDATE ON tlog_nodes
BEGIN
    SELECT RAISE(ABORT, 'tlog_nodes is append-only: UPDATE refused');
END;
CREATE TRIGGER tlog_nodes_no_delete BEFORE DELETE ON tlog_nodes
BEGIN
    SELECT RAISE(ABORT, 'tlog_nodes is append-only: DELETE refused');
END;
CREATE TRIGGER tlog_heads_no_update BEFORE UPDATE ON tlog_heads
BEGIN
    SELECT RAISE(ABORT, 'tlog_heads is append-only: UPDATE refused');
END;
CREATE TRIGGER tlog_heads_no_delete BEFORE DELETE ON tlog_heads
BEGIN
    SELECT RAISE(ABORT, 'tlog_heads is append-only: DELETE refused');
END;
CREATE TRIGGER tlog_queue_no_update BEFORE UPDATE ON tlog_queue
BEGIN
    SELECT RAISE(ABORT, 'tlog_queue is append-only: UPDATE refused');
END;

-- 0010_tlog: each tenant's transparency log (docs/transparency.md).
--
-- A committed step (and, later, a deal audit event) queues one leaf in
-- tlog_queue in the step's own transaction: an insert into a table that no
-- two steps contend on (no counter row, no extra round trip). Integration,
-- serialised per tenant by an advisory lock, gives the queued leaves dense
-- indexes in queue order, stores them in tlog_leaves, the hashes of the
-- perfect subtrees they complete in tlog_nodes and the new tree head in
-- tlog_heads, and removes them from the queue. Leaves, nodes and heads are
-- append-only; the queue only ever has rows inserted and deleted.

CREATE TABLE tlog_queue (
    tenant_id text COLLATE "C" NOT NULL,
    queue_id  bigint GENERATED ALWAYS AS IDENTITY,
    kind      text NOT NULL CHECK (kind IN ('step', 'deal')),
    subject   text COLLATE "C" NOT NULL,
    seq       bigint NOT NULL CHECK (seq > 0),
    hash      text NOT NULL,
    PRIMARY KEY (tenant_id, queue_id)
);

CREATE TABLE tlog_leaves (
    tenant_id  text COLLATE "C" NOT NULL,
    leaf_index bigint NOT NULL CHECK (leaf_index >= 0),
    kind       text NOT NULL CHECK (kind IN ('step', 'deal')),
    subject    text COLLATE "C" NOT NULL,
    seq        bigint NOT NULL CHECK (seq > 0),
    hash       text NOT NULL,
    PRIMARY KEY (tenant_id, leaf_index)
);

-- A debate's (or deal's) leaves in seq order: VerifyDebate and inclusion
-- proofs look them up by subject. A head is logged once.
CREATE UNIQUE INDEX tlog_leaves_subject_idx ON tlog_leaves (tenant_id, kind, subject, seq);

-- The hashes of the perfect subtrees: level 0 are the leaf hashes.
CREATE TABLE tlog_nodes (
    tenant_id  text COLLATE "C" NOT NULL,
    level      smallint NOT NULL CHECK (level >= 0 AND level < 64),
    node_index bigint NOT NULL CHECK (node_index >= 0),
    hash       bytea NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (tenant_id, level, node_index)
);

-- Every tree head the log had, so that a checkpoint of any earlier size
-- can be served again and proved consistent with the latest.
CREATE TABLE tlog_heads (
    tenant_id  text COLLATE "C" NOT NULL,
    tree_size  bigint NOT NULL CHECK (tree_size > 0),
    root_hash  bytea NOT NULL CHECK (length(root_hash) = 32),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, tree_size)
);

CREATE FUNCTION tlog_refuse_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation',
              HINT = 'the transparency log only grows';
END
$$;

CREATE TRIGGER tlog_leaves_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON tlog_leaves
    FOR EACH STATEMENT EXECUTE FUNCTION tlog_refuse_change();
CREATE TRIGGER tlog_nodes_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON tlog_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION tlog_refuse_change();
CREATE TRIGGER tlog_heads_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON tlog_heads
    FOR EACH STATEMENT EXECUTE FUNCTION tlog_refuse_change();
-- Queued leaves are deleted by integration, never changed.
CREATE TRIGGER tlog_queue_no_update
    BEFORE UPDATE OR TRUNCATE ON tlog_queue
    FOR EACH STATEMENT EXECUTE FUNCTION tlog_refuse_change();

-- Debates committed before the log existed: their current heads are its
-- first leaves, so that VerifyDebate and proofs cover them from now on.
-- The owner lifts FORCE on debates for this one read (it is restored in
-- the same transaction), since no tenant is set here.
ALTER TABLE debates NO FORCE ROW LEVEL SECURITY;
INSERT INTO tlog_queue (tenant_id, kind, subject, seq, hash)
    SELECT tenant_id, 'step', debate_id, last_seq, head_hash FROM debates
    WHERE last_seq > 0 ORDER BY tenant_id, created_at, debate_id;
ALTER TABLE debates FORCE ROW LEVEL SECURITY;

ALTER TABLE tlog_queue ENABLE ROW LEVEL SECURITY;
ALTER TABLE tlog_queue FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tlog_queue
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE tlog_leaves ENABLE ROW LEVEL SECURITY;
ALTER TABLE tlog_leaves FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tlog_leaves
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE tlog_nodes ENABLE ROW LEVEL SECURITY;
ALTER TABLE tlog_nodes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tlog_nodes
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE tlog_heads ENABLE ROW LEVEL SECURITY;
ALTER TABLE tlog_heads FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tlog_heads
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

-- Steps queue leaves; integration reads and deletes them and appends the
-- rest. Nothing updates.
GRANT SELECT, INSERT, DELETE ON tlog_queue TO debated_app;
GRANT USAGE ON SEQUENCE tlog_queue_queue_id_seq TO debated_app;
GRANT SELECT, INSERT ON tlog_leaves, tlog_nodes, tlog_heads TO debated_app;

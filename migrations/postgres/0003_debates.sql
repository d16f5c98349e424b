-- 0003_debates: debates, their ledgers, checkpoints and human gates.
--
-- The four tables are tenant-owned like the registry's (0001_init): every
-- row carries its tenant, and FORCE ROW LEVEL SECURITY binds them to the
-- transaction-local setting debated.tenant_id.
--
-- JSON that is hashed or must come back as it went in (a debate's options,
-- an event's payload, a checkpoint's state) is kept as json, not jsonb: json
-- stores the text exactly as given (after checking that it parses), while
-- jsonb reorders keys and drops whitespace, and the ledger's hashes cover
-- the payload's bytes as the service sealed them.

-- A debate moves: every step commit updates its status and its ledger head
-- (last_seq, head_hash), the fence the next commit checks. Free space on
-- each page lets those updates stay HOT (no index changes).
CREATE TABLE debates (
    tenant_id       text COLLATE "C" NOT NULL,
    debate_id       text COLLATE "C" NOT NULL,
    deal_id         text COLLATE "C" NOT NULL,
    protocol        text NOT NULL,
    options         json,
    idempotency_key text COLLATE "C",
    request_hash    text NOT NULL,
    status          text NOT NULL,
    stop_reason     text NOT NULL,
    error           text NOT NULL,
    round           integer NOT NULL CHECK (round >= 0),
    next_node       text NOT NULL,
    attempt         integer NOT NULL CHECK (attempt >= 0),
    last_seq        bigint NOT NULL CHECK (last_seq >= 0),
    head_hash       text NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, debate_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) WITH (fillfactor = 80);

-- One debate per idempotency key and tenant; concurrent creates with the
-- same key meet here.
CREATE UNIQUE INDEX debates_idempotency_key_idx ON debates (tenant_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- DebateList: newest first, then id, optionally narrowed by status or deal.
CREATE INDEX debates_list_idx ON debates (tenant_id, created_at DESC, debate_id);
CREATE INDEX debates_status_idx ON debates (tenant_id, status, created_at DESC, debate_id);
CREATE INDEX debates_deal_idx ON debates (tenant_id, deal_id, created_at DESC, debate_id);

-- The ledger: seq is 1, 2, 3, ... per debate, appended under the debate's
-- row lock and fenced by the primary key. Nothing updates or deletes it,
-- not even the owner (the trigger below).
CREATE TABLE debate_events (
    tenant_id text COLLATE "C" NOT NULL,
    debate_id text COLLATE "C" NOT NULL,
    seq       bigint NOT NULL CHECK (seq > 0),
    type      text NOT NULL,
    actor     text NOT NULL,
    node      text NOT NULL,
    round     integer NOT NULL,
    payload   json NOT NULL,
    time      timestamptz NOT NULL,
    prev_hash text NOT NULL,
    hash      text NOT NULL,
    key_id    text NOT NULL,
    signature text NOT NULL,
    PRIMARY KEY (tenant_id, debate_id, seq),
    FOREIGN KEY (tenant_id, debate_id) REFERENCES debates (tenant_id, debate_id)
);

-- One checkpoint per committed step; resume reads the highest step.
CREATE TABLE debate_checkpoints (
    tenant_id   text COLLATE "C" NOT NULL,
    debate_id   text COLLATE "C" NOT NULL,
    step        integer NOT NULL CHECK (step > 0),
    seq         bigint NOT NULL CHECK (seq >= 0),
    node        text NOT NULL,
    next_node   text NOT NULL,
    round       integer NOT NULL,
    state       json,
    input_hash  text NOT NULL,
    output_hash text NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, debate_id, step),
    FOREIGN KEY (tenant_id, debate_id) REFERENCES debates (tenant_id, debate_id)
);

-- Pauses a person resolves; a step opens one, a later step resolves it.
CREATE TABLE human_gates (
    tenant_id   text COLLATE "C" NOT NULL,
    debate_id   text COLLATE "C" NOT NULL,
    gate_id     text COLLATE "C" NOT NULL,
    node        text NOT NULL,
    reason      text NOT NULL,
    claim_ids   text[] NOT NULL DEFAULT '{}',
    status      text NOT NULL,
    resolution  text NOT NULL,
    resolved_by text NOT NULL,
    created_at  timestamptz NOT NULL,
    resolved_at timestamptz,
    PRIMARY KEY (tenant_id, debate_id, gate_id),
    FOREIGN KEY (tenant_id, debate_id) REFERENCES debates (tenant_id, debate_id)
);

CREATE INDEX human_gates_list_idx ON human_gates (tenant_id, debate_id, created_at, gate_id);

-- Statement-level triggers refuse every UPDATE, DELETE and TRUNCATE of the
-- ledger and of the checkpoints, whoever runs it and however many rows it
-- would touch, as on deal_events (0002_grading).
CREATE FUNCTION debate_history_refuse_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation',
              HINT = 'append a new row instead';
END
$$;

CREATE TRIGGER debate_events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON debate_events
    FOR EACH STATEMENT EXECUTE FUNCTION debate_history_refuse_change();

CREATE TRIGGER debate_checkpoints_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON debate_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION debate_history_refuse_change();

-- The fence of a step commit, as one statement that fails instead of
-- returning a flag, so that a pipelined commit (one implicit transaction,
-- see the PostgreSQL store's StepCommit) stops at it and writes nothing:
-- it locks the debate row until the end of the transaction and raises
-- SQLSTATE DB404 if the debate is not visible (unknown, or another
-- tenant's: it runs as the caller, under row-level security), and DB409 if
-- its ledger head is not (p_seq, p_hash).
CREATE FUNCTION debate_fence(p_tenant text, p_debate text, p_seq bigint, p_hash text) RETURNS void
    LANGUAGE plpgsql AS $$
DECLARE
    cur_seq  bigint;
    cur_hash text;
BEGIN
    SELECT last_seq, head_hash INTO cur_seq, cur_hash
        FROM debates WHERE tenant_id = p_tenant AND debate_id = p_debate
        FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'debate % not found', p_debate USING ERRCODE = 'DB404';
    END IF;
    IF cur_seq <> p_seq OR cur_hash <> p_hash THEN
        RAISE EXCEPTION 'debate % has moved: its head is seq %, not %', p_debate, cur_seq, p_seq
            USING ERRCODE = 'DB409';
    END IF;
END
$$;

-- Row-level security, as on every tenant-owned table.
ALTER TABLE debates ENABLE ROW LEVEL SECURITY;
ALTER TABLE debates FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON debates
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE debate_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE debate_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON debate_events
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE debate_checkpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE debate_checkpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON debate_checkpoints
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE human_gates ENABLE ROW LEVEL SECURITY;
ALTER TABLE human_gates FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON human_gates
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

-- The service creates debates and moves them (the columns a step commit
-- sets; the row lock of the fence needs UPDATE too), appends events and
-- checkpoints, opens and resolves gates, and deletes nothing.
GRANT SELECT, INSERT ON debates, debate_events, debate_checkpoints, human_gates TO debated_app;
GRANT UPDATE (status, stop_reason, error, round, next_node, attempt, last_seq, head_hash, updated_at)
    ON debates TO debated_app;
GRANT UPDATE (status, resolution, resolved_by, resolved_at) ON human_gates TO debated_app;

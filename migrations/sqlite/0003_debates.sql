-- 0003_debates: debates, their ledgers, checkpoints and human gates, for
-- the embedded store. The same tables as PostgreSQL's 0003_debates, without
-- roles or row-level security; STRICT, times as TEXT in UTC to the
-- microsecond, as in 0001_init. JSON is TEXT holding exactly the bytes the
-- service gave (an event's hash covers its payload).

CREATE TABLE debates (
    tenant_id       TEXT NOT NULL,
    debate_id       TEXT NOT NULL,
    deal_id         TEXT NOT NULL,
    protocol        TEXT NOT NULL,
    options         TEXT, -- JSON, NULL for none
    idempotency_key TEXT,
    request_hash    TEXT NOT NULL,
    status          TEXT NOT NULL,
    stop_reason     TEXT NOT NULL,
    error           TEXT NOT NULL,
    round           INTEGER NOT NULL CHECK (round >= 0),
    next_node       TEXT NOT NULL,
    attempt         INTEGER NOT NULL CHECK (attempt >= 0),
    last_seq        INTEGER NOT NULL CHECK (last_seq >= 0),
    head_hash       TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, debate_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

CREATE UNIQUE INDEX debates_idempotency_key_idx ON debates (tenant_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

CREATE INDEX debates_list_idx ON debates (tenant_id, created_at DESC, debate_id);
CREATE INDEX debates_status_idx ON debates (tenant_id, status, created_at DESC, debate_id);
CREATE INDEX debates_deal_idx ON debates (tenant_id, deal_id, created_at DESC, debate_id);

CREATE TABLE debate_events (
    tenant_id TEXT NOT NULL,
    debate_id TEXT NOT NULL,
    seq       INTEGER NOT NULL CHECK (seq > 0),
    type      TEXT NOT NULL,
    actor     TEXT NOT NULL,
    node      TEXT NOT NULL,
    round     INTEGER NOT NULL,
    payload   TEXT NOT NULL, -- JSON
    time      TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL,
    key_id    TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (tenant_id, debate_id, seq),
    FOREIGN KEY (tenant_id, debate_id) REFERENCES debates (tenant_id, debate_id)
) STRICT;

CREATE TABLE debate_checkpoints (
    tenant_id   TEXT NOT NULL,
    debate_id   TEXT NOT NULL,
    step        INTEGER NOT NULL CHECK (step > 0),
    seq         INTEGER NOT NULL CHECK (seq >= 0),
    node        TEXT NOT NULL,
    next_node   TEXT NOT NULL,
    round       INTEGER NOT NULL,
    state       TEXT, -- JSON, NULL for none
    input_hash  TEXT NOT NULL,
    output_hash TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (tenant_id, debate_id, step),
    FOREIGN KEY (tenant_id, debate_id) REFERENCES debates (tenant_id, debate_id)
) STRICT;

CREATE TABLE human_gates (
    tenant_id   TEXT NOT NULL,
    debate_id   TEXT NOT NULL,
    gate_id     TEXT NOT NULL,
    node        TEXT NOT NULL,
    reason      TEXT NOT NULL,
    claim_ids   TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    status      TEXT NOT NULL,
    resolution  TEXT NOT NULL,
    resolved_by TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    resolved_at TEXT,
    PRIMARY KEY (tenant_id, debate_id, gate_id),
    FOREIGN KEY (tenant_id, debate_id) REFERENCES debates (tenant_id, debate_id)
) STRICT;

CREATE INDEX human_gates_list_idx ON human_gates (tenant_id, debate_id, created_at, gate_id);

-- The ledger and the checkpoints are append-only.
CREATE TRIGGER debate_events_no_update BEFORE UPDATE ON debate_events
BEGIN
    SELECT RAISE(ABORT, 'debate_events is append-only: UPDATE refused');
END;

CREATE TRIGGER debate_events_no_delete BEFORE DELETE ON debate_events
BEGIN
    SELECT RAISE(ABORT, 'debate_events is append-only: DELETE refused');
END;

CREATE TRIGGER debate_checkpoints_no_update BEFORE UPDATE ON debate_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'debate_checkpoints is append-only: UPDATE refused');
END;

CREATE TRIGGER debate_checkpoints_no_delete BEFORE DELETE ON debate_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'debate_checkpoints is append-only: DELETE refused');
END;

-- 0002_grading: gradings, defect records and the append-only audit log of
-- deals, for the embedded store. The same tables as PostgreSQL's
-- 0002_grading, without roles or row-level security; STRICT, times as TEXT
-- in UTC to the microsecond, JSON as TEXT, as in 0001_init.

-- When the deal was last graded, NULL before its first grading.
ALTER TABLE deals ADD COLUMN graded_at TEXT;

CREATE TABLE deal_gradings (
    tenant_id TEXT NOT NULL,
    deal_id   TEXT NOT NULL,
    graded_at TEXT NOT NULL,
    grading   TEXT NOT NULL, -- JSON
    PRIMARY KEY (tenant_id, deal_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

CREATE TABLE defects (
    tenant_id  TEXT NOT NULL,
    deal_id    TEXT NOT NULL,
    defect_id  TEXT NOT NULL,
    claim_id   TEXT NOT NULL,
    status     TEXT NOT NULL,
    record     TEXT NOT NULL, -- JSON
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, defect_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

CREATE TABLE deal_events (
    tenant_id  TEXT NOT NULL,
    deal_id    TEXT NOT NULL,
    seq        INTEGER NOT NULL CHECK (seq > 0),
    event_type TEXT NOT NULL,
    actor      TEXT NOT NULL,
    payload    TEXT NOT NULL, -- JSON
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, seq),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

-- The audit log is append-only.
CREATE TRIGGER deal_events_no_update BEFORE UPDATE ON deal_events
BEGIN
    SELECT RAISE(ABORT, 'deal_events is append-only: UPDATE refused');
END;

CREATE TRIGGER deal_events_no_delete BEFORE DELETE ON deal_events
BEGIN
    SELECT RAISE(ABORT, 'deal_events is append-only: DELETE refused');
END;

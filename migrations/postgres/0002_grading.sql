-- 0002_grading: gradings, defect records and the append-only audit log of
-- deals.
--
-- The three tables are tenant-owned like the registry's (0001_init): every
-- row carries its tenant, and FORCE ROW LEVEL SECURITY binds them to the
-- transaction-local setting debated.tenant_id. A grading and a defect record
-- are kept whole as JSON (grading, record); the columns beside them are the
-- ones queries filter or order on.

-- When the deal was last graded, NULL before its first grading. It is also
-- the one column of deals the service may update: DealGrade holds the deal
-- with SELECT ... FOR UPDATE against concurrent gradings, and PostgreSQL
-- allows row locks only to a role with UPDATE on a column of the table.
ALTER TABLE deals ADD COLUMN graded_at timestamptz;

-- The last grading of each deal; DealGrade replaces it.
CREATE TABLE deal_gradings (
    tenant_id text COLLATE "C" NOT NULL,
    deal_id   text COLLATE "C" NOT NULL,
    graded_at timestamptz NOT NULL,
    grading   jsonb NOT NULL,
    PRIMARY KEY (tenant_id, deal_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

-- Defect records, detected or flagged, in any status; DealGrade upserts
-- them by id. created_at and updated_at repeat the record's times.
CREATE TABLE defects (
    tenant_id  text COLLATE "C" NOT NULL,
    deal_id    text COLLATE "C" NOT NULL,
    defect_id  text COLLATE "C" NOT NULL,
    claim_id   text COLLATE "C" NOT NULL,
    status     text NOT NULL,
    record     jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, defect_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

-- The audit log: seq is 1, 2, 3, ... per deal, assigned under the deal's
-- row lock. Nothing updates or deletes it, not even the owner (the trigger
-- below).
CREATE TABLE deal_events (
    tenant_id  text COLLATE "C" NOT NULL,
    deal_id    text COLLATE "C" NOT NULL,
    seq        bigint NOT NULL CHECK (seq > 0),
    event_type text NOT NULL,
    actor      text NOT NULL,
    payload    jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, seq),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

-- A statement-level trigger refuses every UPDATE, DELETE and TRUNCATE of
-- deal_events, whoever runs it and however many rows it would touch:
-- privileges keep debated_app out, the trigger keeps the owner out too.
CREATE FUNCTION deal_events_refuse_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'deal_events is append-only: % refused', TG_OP
        USING ERRCODE = 'restrict_violation',
              HINT = 'append a new event instead';
END
$$;

CREATE TRIGGER deal_events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON deal_events
    FOR EACH STATEMENT EXECUTE FUNCTION deal_events_refuse_change();

-- Row-level security, as on every tenant-owned table.
ALTER TABLE deal_gradings ENABLE ROW LEVEL SECURITY;
ALTER TABLE deal_gradings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON deal_gradings
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE defects ENABLE ROW LEVEL SECURITY;
ALTER TABLE defects FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON defects
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE deal_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE deal_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON deal_events
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

-- The service replaces gradings and upserts defect records (INSERT ... ON
-- CONFLICT DO UPDATE needs SELECT, INSERT and UPDATE), appends events, and
-- deletes nothing.
GRANT UPDATE (graded_at) ON deals TO debated_app;
GRANT SELECT, INSERT, UPDATE ON deal_gradings, defects TO debated_app;
GRANT SELECT, INSERT ON deal_events TO debated_app;

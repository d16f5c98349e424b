-- 0006_model_responses: model responses persisted as soon as they arrive,
-- keyed by debate, round, role and call, so a node re-run after a crash or a
-- handover reuses them instead of paying twice.
CREATE TABLE model_responses (
    tenant_id  text COLLATE "C" NOT NULL,
    cache_key  text COLLATE "C" NOT NULL,
    response   bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, cache_key)
);

ALTER TABLE model_responses ENABLE ROW LEVEL SECURITY;
ALTER TABLE model_responses FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON model_responses
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

GRANT SELECT, INSERT ON model_responses TO debated_app;

-- 0005_enrichment: tenant-supplied enrichment records of a deal, imported
-- with the deal (seed 000 §4.6 query_enrichment). One row per record, the
-- record as JSON like the other registry tables; the same tenant isolation
-- as 0001_init.

CREATE TABLE enrichment_records (
    tenant_id text COLLATE "C" NOT NULL,
    deal_id   text COLLATE "C" NOT NULL,
    record_id text COLLATE "C" NOT NULL,
    record    jsonb NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, record_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

ALTER TABLE enrichment_records ENABLE ROW LEVEL SECURITY;
ALTER TABLE enrichment_records FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON enrichment_records
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

GRANT SELECT, INSERT ON enrichment_records TO debated_app;

-- 0005_enrichment: tenant-supplied enrichment records of a deal, for the
-- embedded store. The same table as PostgreSQL's 0005_enrichment, without
-- row-level security; the record is JSON as TEXT.

CREATE TABLE enrichment_records (
    tenant_id TEXT NOT NULL,
    deal_id   TEXT NOT NULL,
    record_id TEXT NOT NULL,
    record    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, record_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

-- 0013_protocols: protocol documents that tenants register (protocols as
-- data). A document is identified by (tenant, name, version) and is never
-- updated or deleted: a new version is a new row. The application role may
-- only read and insert, under the same row-level security as every other
-- tenant-owned table.
CREATE TABLE protocol_documents (
    tenant_id  text COLLATE "C" NOT NULL REFERENCES tenants (id) CHECK (tenant_id <> ''),
    name       text COLLATE "C" NOT NULL,
    version    integer NOT NULL CHECK (version > 0),
    document   text NOT NULL, -- the canonical JSON (RFC 8785) the sha256 covers
    sha256     text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, name, version)
);

ALTER TABLE protocol_documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE protocol_documents FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON protocol_documents
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

GRANT SELECT, INSERT ON protocol_documents TO debated_app;

-- 0013_protocols: protocol documents that tenants register (see
-- PostgreSQL). Documents are immutable: triggers refuse updates and
-- deletes, and a BEFORE INSERT trigger refuses the empty tenant id as 0012
-- does for the other tables.
CREATE TABLE protocol_documents (
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    name       TEXT NOT NULL,
    version    INTEGER NOT NULL CHECK (version > 0),
    document   TEXT NOT NULL,
    sha256     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, name, version)
);

CREATE TRIGGER protocol_documents_tenant_id_not_empty BEFORE INSERT ON protocol_documents
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'protocol_documents: the tenant id may not be empty');
END;

CREATE TRIGGER protocol_documents_no_update BEFORE UPDATE ON protocol_documents
BEGIN
    SELECT RAISE(ABORT, 'protocol_documents: a registered protocol document is immutable');
END;

CREATE TRIGGER protocol_documents_no_delete BEFORE DELETE ON protocol_documents
BEGIN
    SELECT RAISE(ABORT, 'protocol_documents: a registered protocol document is immutable');
END;

-- 0001_init: tenants, API keys and the claim registry of deals, for the
-- embedded store. The same tables as PostgreSQL's 0001_init, without roles
-- or row-level security (one process, one file): tenant isolation is the
-- tenant_id every query is scoped by.
--
-- Tables are STRICT so a value of the wrong type is an error, as on
-- PostgreSQL. Times are TEXT in UTC, RFC 3339 with microseconds
-- ("2026-01-05T14:00:00.000000Z"): fixed width, so they sort as they read.
-- Text compares bytewise (BINARY), as PostgreSQL's COLLATE "C" columns do.

CREATE TABLE tenants (
    id         TEXT NOT NULL PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
    id         TEXT NOT NULL PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    name       TEXT NOT NULL,
    prefix     TEXT NOT NULL,
    hash       BLOB NOT NULL UNIQUE,
    scopes     TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    created_at TEXT NOT NULL,
    revoked_at TEXT
) STRICT;

CREATE INDEX api_keys_tenant_id_idx ON api_keys (tenant_id);

CREATE TABLE deals (
    tenant_id             TEXT NOT NULL REFERENCES tenants (id),
    deal_id               TEXT NOT NULL,
    external_ref          TEXT NOT NULL,
    company_name          TEXT NOT NULL,
    stage                 TEXT NOT NULL,
    sector                TEXT NOT NULL,
    status                TEXT NOT NULL,
    materiality_threshold REAL NOT NULL,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    content_hash          TEXT NOT NULL,
    imported_at           TEXT NOT NULL,
    claim_count           INTEGER NOT NULL,
    evidence_count        INTEGER NOT NULL,
    span_count            INTEGER NOT NULL,
    sanad_count           INTEGER NOT NULL,
    document_count        INTEGER NOT NULL,
    calc_count            INTEGER NOT NULL,
    record                TEXT NOT NULL, -- JSON
    PRIMARY KEY (tenant_id, deal_id)
) STRICT;

CREATE TABLE claims (
    tenant_id   TEXT NOT NULL,
    deal_id     TEXT NOT NULL,
    claim_id    TEXT NOT NULL,
    claim_key   TEXT NOT NULL,
    claim_class TEXT NOT NULL,
    materiality TEXT NOT NULL,
    ic_bound    INTEGER NOT NULL,
    record      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, claim_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

CREATE INDEX claims_list_idx ON claims (tenant_id, deal_id, claim_key, claim_id);

CREATE TABLE evidence_items (
    tenant_id   TEXT NOT NULL,
    deal_id     TEXT NOT NULL,
    evidence_id TEXT NOT NULL,
    record      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, evidence_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

CREATE TABLE spans (
    tenant_id    TEXT NOT NULL,
    deal_id      TEXT NOT NULL,
    span_id      TEXT NOT NULL,
    document_id  TEXT NOT NULL,
    text_excerpt TEXT NOT NULL,
    record       TEXT NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, span_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

CREATE TABLE sanads (
    tenant_id TEXT NOT NULL,
    deal_id   TEXT NOT NULL,
    sanad_id  TEXT NOT NULL,
    claim_id  TEXT NOT NULL,
    record    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, sanad_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

CREATE TABLE documents (
    tenant_id   TEXT NOT NULL,
    deal_id     TEXT NOT NULL,
    document_id TEXT NOT NULL,
    record      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, document_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

CREATE TABLE calcs (
    tenant_id TEXT NOT NULL,
    deal_id   TEXT NOT NULL,
    calc_id   TEXT NOT NULL,
    record    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, calc_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
) STRICT;

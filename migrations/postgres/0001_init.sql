-- 0001_init: tenants, API keys and the claim registry of deals.
--
-- Tenant isolation is enforced twice (DESIGN §3.3): every query of the
-- service is scoped by tenant_id, and every tenant-owned table has FORCE ROW
-- LEVEL SECURITY with a policy bound to the transaction-local setting
-- debated.tenant_id. The service runs as debated_app, a role that owns no
-- table, so the policies bind it; migrations run as the owner.
--
-- Identifiers and keys are COLLATE "C" so that keyset pagination orders
-- them bytewise, whatever the database's collation, exactly as the embedded
-- SQLite store and Go's string comparison do.

-- Roles are cluster-wide: two databases migrating at once (two test
-- packages, two fresh environments) may both try to create the role, and the
-- loser sees duplicate_object or, racing on pg_authid's unique index,
-- unique_violation. Either means the role is there.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'debated_app') THEN
        CREATE ROLE debated_app NOLOGIN;
    END IF;
EXCEPTION
    WHEN duplicate_object OR unique_violation THEN
        NULL;
END
$$;

GRANT USAGE ON SCHEMA public TO debated_app;

-- Service metadata: no RLS, authentication looks a key up before it knows
-- the tenant.
CREATE TABLE tenants (
    id         text COLLATE "C" PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id         text COLLATE "C" PRIMARY KEY,
    tenant_id  text COLLATE "C" NOT NULL REFERENCES tenants (id),
    name       text NOT NULL,
    prefix     text NOT NULL,
    hash       bytea NOT NULL UNIQUE,
    scopes     text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);

CREATE INDEX api_keys_tenant_id_idx ON api_keys (tenant_id);

-- The claim registry. Every row carries its tenant; the full record of each
-- resource is kept as JSON (record), and the columns beside it are the ones
-- queries filter, order or search on.
CREATE TABLE deals (
    tenant_id             text COLLATE "C" NOT NULL REFERENCES tenants (id),
    deal_id               text COLLATE "C" NOT NULL,
    external_ref          text NOT NULL,
    company_name          text NOT NULL,
    stage                 text NOT NULL,
    sector                text NOT NULL,
    status                text NOT NULL,
    materiality_threshold double precision NOT NULL,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    content_hash          text NOT NULL,
    imported_at           timestamptz NOT NULL,
    claim_count           integer NOT NULL,
    evidence_count        integer NOT NULL,
    span_count            integer NOT NULL,
    sanad_count           integer NOT NULL,
    document_count        integer NOT NULL,
    calc_count            integer NOT NULL,
    record                jsonb NOT NULL,
    PRIMARY KEY (tenant_id, deal_id)
);

-- Claim ids are unique per tenant (ClaimGet takes a claim id alone); the
-- other resources' ids are unique per tenant and deal.
CREATE TABLE claims (
    tenant_id   text COLLATE "C" NOT NULL,
    deal_id     text COLLATE "C" NOT NULL,
    claim_id    text COLLATE "C" NOT NULL,
    claim_key   text COLLATE "C" NOT NULL,
    claim_class text NOT NULL,
    materiality text NOT NULL,
    ic_bound    boolean NOT NULL,
    record      jsonb NOT NULL,
    PRIMARY KEY (tenant_id, claim_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

CREATE INDEX claims_list_idx ON claims (tenant_id, deal_id, claim_key, claim_id);

CREATE TABLE evidence_items (
    tenant_id   text COLLATE "C" NOT NULL,
    deal_id     text COLLATE "C" NOT NULL,
    evidence_id text COLLATE "C" NOT NULL,
    record      jsonb NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, evidence_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

CREATE TABLE spans (
    tenant_id    text COLLATE "C" NOT NULL,
    deal_id      text COLLATE "C" NOT NULL,
    span_id      text COLLATE "C" NOT NULL,
    document_id  text COLLATE "C" NOT NULL,
    text_excerpt text NOT NULL,
    record       jsonb NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, span_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

CREATE TABLE sanads (
    tenant_id text COLLATE "C" NOT NULL,
    deal_id   text COLLATE "C" NOT NULL,
    sanad_id  text COLLATE "C" NOT NULL,
    claim_id  text COLLATE "C" NOT NULL,
    record    jsonb NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, sanad_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

CREATE TABLE documents (
    tenant_id   text COLLATE "C" NOT NULL,
    deal_id     text COLLATE "C" NOT NULL,
    document_id text COLLATE "C" NOT NULL,
    record      jsonb NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, document_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

CREATE TABLE calcs (
    tenant_id text COLLATE "C" NOT NULL,
    deal_id   text COLLATE "C" NOT NULL,
    calc_id   text COLLATE "C" NOT NULL,
    record    jsonb NOT NULL,
    PRIMARY KEY (tenant_id, deal_id, calc_id),
    FOREIGN KEY (tenant_id, deal_id) REFERENCES deals (tenant_id, deal_id)
);

-- Row-level security on every tenant-owned table. current_setting(..., true)
-- is NULL or '' when no tenant is set, which matches no row.
ALTER TABLE deals ENABLE ROW LEVEL SECURITY;
ALTER TABLE deals FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON deals
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE claims ENABLE ROW LEVEL SECURITY;
ALTER TABLE claims FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON claims
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE evidence_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE evidence_items FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON evidence_items
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE spans ENABLE ROW LEVEL SECURITY;
ALTER TABLE spans FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON spans
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE sanads ENABLE ROW LEVEL SECURITY;
ALTER TABLE sanads FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON sanads
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE documents FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON documents
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

ALTER TABLE calcs ENABLE ROW LEVEL SECURITY;
ALTER TABLE calcs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON calcs
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

-- The service role reads and appends; it never deletes, and updates only the
-- revocation time of a key.
GRANT SELECT, INSERT ON tenants, api_keys TO debated_app;
GRANT UPDATE (revoked_at) ON api_keys TO debated_app;
GRANT SELECT, INSERT ON deals, claims, evidence_items, spans, sanads, documents, calcs TO debated_app;

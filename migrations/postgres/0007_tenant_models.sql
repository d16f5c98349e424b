-- 0007_tenant_models: a tenant's own model endpoint (bring your own key);
-- the API key is stored encrypted. Service metadata like tenants: no RLS.
CREATE TABLE tenant_models (
    tenant_id          text COLLATE "C" PRIMARY KEY REFERENCES tenants (id),
    base_url           text NOT NULL,
    model              text NOT NULL,
    api_key_ciphertext bytea,
    updated_at         timestamptz NOT NULL
);

GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_models TO debated_app;

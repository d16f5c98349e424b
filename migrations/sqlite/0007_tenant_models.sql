-- 0007_tenant_models: a tenant's own model endpoint (see PostgreSQL).
CREATE TABLE tenant_models (
    tenant_id          TEXT PRIMARY KEY REFERENCES tenants (id),
    base_url           TEXT NOT NULL,
    model              TEXT NOT NULL,
    api_key_ciphertext BLOB,
    updated_at         TEXT NOT NULL
);

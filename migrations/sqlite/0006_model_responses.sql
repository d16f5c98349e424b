-- 0006_model_responses: model responses persisted as soon as they arrive
-- (see the PostgreSQL migration).
CREATE TABLE model_responses (
    tenant_id  TEXT NOT NULL,
    cache_key  TEXT NOT NULL,
    response   BLOB NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (tenant_id, cache_key)
) WITHOUT ROWID;

-- 0012_authority: what debated_app can do without a tenant set is only what
-- authentication needs (issue 13 §6).
--
-- Before this migration, debated_app with no tenant set could read every
-- tenant's api_keys (hashes included), insert a key for any tenant, and
-- rewrite any tenant_models row: both tables were "service metadata" without
-- row-level security. Now:
--   - api_keys is under row-level security (ENABLE, not FORCE: the two
--     SECURITY DEFINER functions below run as the owner, which is the one
--     reader across tenants). debated_app may only INSERT a key of the tenant
--     it has set; it cannot read the table at all, and looks a key up and
--     revokes it only through the functions (lookup returns no hash; revoke
--     returns the hash of the key it has just made useless);
--   - tenant_models is under FORCE row-level security like every other
--     tenant-owned table;
--   - no tenant-owned row may carry the empty tenant id, which is what
--     current_setting('debated.tenant_id', true) returns on a pooled
--     connection after an earlier transaction set and released it.
-- river_job is River's; its policies are set where River's migrations run
-- (runner.MigrateRiver), since this migration may run before that table
-- exists.

-- No empty tenant id anywhere: the tenants themselves, and every table of
-- this schema with a tenant_id column (those of earlier migrations, and any
-- a migration numbered before this one added).
ALTER TABLE tenants ADD CONSTRAINT tenants_id_not_empty CHECK (id <> '');

DO $$
DECLARE t text;
BEGIN
    FOR t IN
        SELECT c.table_name FROM information_schema.columns c
        JOIN information_schema.tables tb USING (table_schema, table_name)
        WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id'
          AND tb.table_type = 'BASE TABLE'
        ORDER BY c.table_name
    LOOP
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (tenant_id <> %L)',
            t, t || '_tenant_id_not_empty', '');
    END LOOP;
END
$$;

-- api_keys: row-level security binds debated_app; the owner is not bound,
-- so the definer functions below see every tenant's keys.
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

REVOKE ALL ON api_keys FROM debated_app;
GRANT INSERT ON api_keys TO debated_app;

-- The functions are created with the schema spelled out and a search_path
-- of pg_catalog and pg_temp last, so that no object a caller creates (a
-- temporary table named api_keys) can stand in for the real one.
DO $$
BEGIN
    EXECUTE format($f$
CREATE FUNCTION debated_api_key_lookup(p_hash bytea)
RETURNS TABLE (id text, tenant_id text, name text, prefix text, scopes text[], created_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $body$
    SELECT k.id, k.tenant_id, k.name, k.prefix, k.scopes, k.created_at
    FROM %1$I.api_keys k
    WHERE k.hash = p_hash AND k.revoked_at IS NULL
$body$
$f$, current_schema());

    EXECUTE format($f$
CREATE FUNCTION debated_api_key_revoke(p_id text, p_at timestamptz)
RETURNS TABLE (id text, tenant_id text, name text, prefix text, scopes text[], created_at timestamptz, hash bytea, revoked_at timestamptz)
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $body$
    UPDATE %1$I.api_keys k SET revoked_at = coalesce(k.revoked_at, p_at)
    WHERE k.id = p_id
    RETURNING k.id, k.tenant_id, k.name, k.prefix, k.scopes, k.created_at, k.hash, k.revoked_at
$body$
$f$, current_schema());
END
$$;

REVOKE ALL ON FUNCTION debated_api_key_lookup(bytea) FROM PUBLIC;
REVOKE ALL ON FUNCTION debated_api_key_revoke(text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION debated_api_key_lookup(bytea) TO debated_app;
GRANT EXECUTE ON FUNCTION debated_api_key_revoke(text, timestamptz) TO debated_app;

-- tenant_models: a tenant-owned table like the others.
ALTER TABLE tenant_models ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_models FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_models
    USING (tenant_id = current_setting('debated.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('debated.tenant_id', true));

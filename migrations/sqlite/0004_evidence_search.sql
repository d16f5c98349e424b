-- 0004_evidence_search: nothing to do for the embedded store. PostgreSQL's
-- 0004_evidence_search adds a full-text index on span texts; the embedded
-- store ranks span texts in memory. The version exists so that both stores
-- keep the same numbered migrations.

SELECT 1;

-- 0009_ledger_lz4: nothing to do for the embedded store (PostgreSQL's
-- 0009_ledger_lz4 sets the compression of large ledger values). The version
-- exists so that both stores keep the same numbered migrations.

SELECT 1;

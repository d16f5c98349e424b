-- 0008_step_commit_cost: nothing to do for the embedded store. PostgreSQL's
-- 0008_step_commit_cost drops the ledger's per-row foreign keys (its step
-- fence guarantees the debate); SQLite checks them cheaply in-process. The
-- version exists so that both stores keep the same numbered migrations.

SELECT 1;

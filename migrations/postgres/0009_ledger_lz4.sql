-- 0009_ledger_lz4: compress large ledger payloads and checkpoint states with
-- lz4 instead of pglz.
--
-- Agent outputs are several kilobytes of JSON: PostgreSQL compresses every
-- value above about 2 KB before storing it, and pglz is slow, which shows in
-- the step commits of model-length debates. lz4 compresses JSON about as
-- well at a fraction of the CPU. It applies to rows written from now on;
-- older rows keep their compression (both read back the same bytes, which
-- the hashes cover).
ALTER TABLE debate_events ALTER COLUMN payload SET COMPRESSION lz4;
ALTER TABLE debate_checkpoints ALTER COLUMN state SET COMPRESSION lz4;

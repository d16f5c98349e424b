-- 0011_deal_chain: the deal audit log is hash-chained and signed like a
-- debate's ledger (docs/ledger.md, "Deal audit logs"). Rows written before
-- keep the four columns NULL: legacy events, reported as such (see the
-- PostgreSQL migration of the same name).
ALTER TABLE deal_events ADD COLUMN prev_hash TEXT;
ALTER TABLE deal_events ADD COLUMN hash TEXT;
ALTER TABLE deal_events ADD COLUMN key_id TEXT;
ALTER TABLE deal_events ADD COLUMN signature TEXT
    CHECK ((hash IS NULL) = (prev_hash IS NULL)
        AND (hash IS NULL) = (key_id IS NULL)
        AND (hash IS NULL) = (signature IS NULL));

-- 0011_deal_chain: the deal audit log is hash-chained and signed like a
-- debate's ledger (docs/ledger.md, "Deal audit logs").
--
-- Each event appended from now on carries the hash of the deal's previous
-- chained event, its own hash, the id of the key that signed it and the
-- signature. Rows written before this migration keep the four columns NULL:
-- they are legacy events, a prefix of their deal's log that VerifyDeal and
-- exports report as such and cannot vouch for (no secret is available to a
-- migration, and deal_events refuses every UPDATE). The first event chained
-- after them starts from the genesis hash. Adding NULL columns rewrites no
-- row.
ALTER TABLE deal_events
    ADD COLUMN prev_hash text,
    ADD COLUMN hash text,
    ADD COLUMN key_id text,
    ADD COLUMN signature text,
    ADD CONSTRAINT deal_events_chain_complete CHECK (
        (hash IS NULL) = (prev_hash IS NULL)
        AND (hash IS NULL) = (key_id IS NULL)
        AND (hash IS NULL) = (signature IS NULL));

-- 0008_step_commit_cost: cheaper step commits.
--
-- Every step commit inserts a handful of ledger events and one checkpoint.
-- Their foreign keys to debates ran a referential-integrity query per row
-- (an SPI query taking a key-share lock on the debate row the step itself
-- locks and updates): about an eighth of PostgreSQL's work per step.
-- The step's fence gives the same guarantee, once per commit: it moves the
-- debate row, visible to the caller's tenant, only if its ledger head is
-- the one the step expects, holding the row lock until the commit, and
-- every other write of the step depends on it (see the PostgreSQL store's
-- StepCommit). What the foreign keys also prevented, deleting a debate that
-- has a ledger, is refused below for every role, the owner included, like
-- changes to the ledger itself.
ALTER TABLE debate_events DROP CONSTRAINT debate_events_tenant_id_debate_id_fkey;
ALTER TABLE debate_checkpoints DROP CONSTRAINT debate_checkpoints_tenant_id_debate_id_fkey;

CREATE FUNCTION debates_refuse_delete() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'debates are never deleted: their ledgers are append-only'
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER debates_never_deleted
    BEFORE DELETE OR TRUNCATE ON debates
    FOR EACH STATEMENT EXECUTE FUNCTION debates_refuse_delete();


-- 0014_rounds_completed: how many rounds each debate has completed (see
-- PostgreSQL), counted from the ledgers for existing debates.
ALTER TABLE debates ADD COLUMN rounds_completed INTEGER NOT NULL DEFAULT 0 CHECK (rounds_completed >= 0);

UPDATE debates SET rounds_completed = (
    SELECT count(*) FROM debate_events e
    WHERE e.tenant_id = debates.tenant_id AND e.debate_id = debates.debate_id AND e.type = 'round.completed');

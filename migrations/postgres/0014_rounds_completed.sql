-- 0014_rounds_completed: how many rounds each debate has completed (its
-- round.completed events), kept by the step commits so that a list of
-- debates can say it without reading their ledgers. A debate's round can
-- be one more (nodes after the last round, a finaliser, run in the next
-- one), which is why lists showed an ended two-round debate at round 3.
ALTER TABLE debates ADD COLUMN rounds_completed integer NOT NULL DEFAULT 0
    CHECK (rounds_completed >= 0);

-- Existing debates count their ledgers. The owner reads every tenant's
-- rows for it, so row security is relaxed for the owner within this
-- transaction only.
ALTER TABLE debates NO FORCE ROW LEVEL SECURITY;
ALTER TABLE debate_events NO FORCE ROW LEVEL SECURITY;
UPDATE debates d SET rounds_completed = c.n
FROM (SELECT tenant_id, debate_id, count(*) AS n FROM debate_events
      WHERE type = 'round.completed' GROUP BY tenant_id, debate_id) c
WHERE d.tenant_id = c.tenant_id AND d.debate_id = c.debate_id;
ALTER TABLE debates FORCE ROW LEVEL SECURITY;
ALTER TABLE debate_events FORCE ROW LEVEL SECURITY;

GRANT UPDATE (rounds_completed) ON debates TO debated_app;

package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// DebateArgs is the River job that carries a debate on.
type DebateArgs struct {
	TenantID string `json:"tenant_id"`
	DebateID string `json:"debate_id"`
}

// Kind implements river.JobArgs.
func (DebateArgs) Kind() string { return "debated.debate" }

// InsertOpts implements river.JobArgsWithInsertOpts. Jobs are not unique: a
// duplicate finds the debate already carried on (the commit fence makes
// concurrent runs safe) and ends at once, whereas a uniqueness rule could
// swallow the job a resolved gate needs.
func (DebateArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1000}
}

type debateWorker struct {
	river.WorkerDefaults[DebateArgs]
	r       *Runner
	slice   time.Duration
	timeout time.Duration
}

// Work runs the debate for one slice. A debate still running at the end of
// its slice, or when the client stops, is snoozed: available again at once
// to any replica, from its last commit.
func (w *debateWorker) Work(ctx context.Context, job *river.Job[DebateArgs]) error {
	sctx, cancel := context.WithTimeout(ctx, w.slice)
	defer cancel()
	err := w.r.Run(sctx, job.Args.TenantID, job.Args.DebateID)
	switch {
	case err == nil:
		return nil
	case sctx.Err() != nil:
		return river.JobSnooze(time.Millisecond)
	case errors.Is(err, debate.ErrNotFound):
		// No such debate (its tenant gone, say): no attempt can carry it
		// on, so the job ends instead of retrying a thousand times.
		return river.JobCancel(err)
	}
	return err
}

// Timeout implements river.Worker. The slice bounds a run (a job still
// working when its slice ends snoozes itself back to the queue, its commit
// included), so a job running for RescueAfter has a dead or wedged replica.
// River cancels the job at that point and, above all, its rescuer only
// rescues a running job whose timeout has passed: a worker without a
// timeout (-1) left every SIGKILLed replica's job running forever.
func (w *debateWorker) Timeout(*river.Job[DebateArgs]) time.Duration { return w.timeout }

// RiverConfig configures the River scheduler.
type RiverConfig struct {
	// MaxWorkers is how many debates this replica runs at once; default 16.
	MaxWorkers int
	// Slice is how long one job runs a debate before handing it back to
	// the queue; default 20s.
	Slice time.Duration
	// RescueAfter is how long a job may stay running before it is taken to
	// belong to a dead replica: it is the job's River timeout (River's
	// rescuer then finalises it or makes it available again) and the age
	// after which the sweeper takes its debate over. It must exceed Slice.
	// Default 3×Slice.
	RescueAfter time.Duration
	// FetchPollInterval bounds how late a job is picked up when a
	// notification is missed; default 500ms.
	FetchPollInterval time.Duration
	// StopTimeout bounds how long Run, once its context ends, waits for the
	// running debates to hand themselves back; default 10s.
	StopTimeout time.Duration
	Logger      *slog.Logger
}

// RiverStore is the PostgreSQL store as the River scheduler uses it: its
// pool, and the writes that make a debate runnable, which run a function
// of the scheduler's in their transaction (where it inserts the debate's
// job with River's InsertTx).
type RiverStore interface {
	Pool() *pgxpool.Pool
	DebateCreateWith(ctx context.Context, d debate.Debate, inTx func(context.Context, pgx.Tx) error) (debate.Debate, bool, error)
	StepCommitWith(ctx context.Context, c debate.StepCommit, inTx func(context.Context, pgx.Tx) error) error
}

// River schedules debates as River jobs on PostgreSQL: any replica runs any
// debate, a crashed replica's debates are rescued, and shutdown hands
// running debates back promptly.
type River struct {
	client *river.Client[pgx.Tx]
	store  RiverStore
	r      *Runner
	cfg    RiverConfig
	log    *slog.Logger
}

// NewRiver returns a River scheduler over st running debates with r.
// Nothing runs until Run; DebateCreate and StepCommit work before.
func NewRiver(st RiverStore, r *Runner, cfg RiverConfig) (*River, error) {
	cfg.MaxWorkers = cmp.Or(cfg.MaxWorkers, 16)
	cfg.StopTimeout = cmp.Or(cfg.StopTimeout, 10*time.Second)
	cfg.Slice = cmp.Or(cfg.Slice, 20*time.Second)
	cfg.RescueAfter = cmp.Or(cfg.RescueAfter, 3*cfg.Slice)
	cfg.FetchPollInterval = cmp.Or(cfg.FetchPollInterval, 500*time.Millisecond)
	if cfg.RescueAfter <= cfg.Slice {
		return nil, fmt.Errorf("runner: RescueAfter (%s) must exceed Slice (%s)", cfg.RescueAfter, cfg.Slice)
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &debateWorker{r: r, slice: cfg.Slice, timeout: cfg.RescueAfter}); err != nil {
		return nil, err
	}
	client, err := river.NewClient(riverpgxv5.New(st.Pool()), &river.Config{
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.MaxWorkers}},
		Workers:              workers,
		JobTimeout:           -1,
		RescueStuckJobsAfter: cfg.RescueAfter,
		FetchCooldown:        5 * time.Millisecond,
		FetchPollInterval:    cfg.FetchPollInterval,
		Logger:               cmp.Or(cfg.Logger, slog.Default()),
	})
	if err != nil {
		return nil, fmt.Errorf("runner: river client: %w", err)
	}
	return &River{client: client, store: st, r: r, cfg: cfg, log: cmp.Or(cfg.Logger, slog.Default())}, nil
}

// QueueDepth counts the debate jobs waiting or running, through River's
// API (every job on this River is a debate's). A running job whose
// cancellation was asked for (the sweeper took its debate over) is not
// counted: its work is done or handed on, and River's rescuer finalises
// it. River cannot filter a count, so the running jobs (at most the
// replicas' workers) are listed.
func (rv *River) QueueDepth(ctx context.Context) (int, error) {
	counts, err := rv.client.Driver().GetExecutor().JobCountByAllStates(ctx, &riverdriver.JobCountByAllStatesParams{})
	if err != nil {
		return 0, err
	}
	running, err := rv.client.JobList(ctx, river.NewJobListParams().States(rivertype.JobStateRunning).
		Where("metadata->>'cancel_attempted_at' IS NULL").First(10000))
	if err != nil {
		return 0, err
	}
	return counts[rivertype.JobStateAvailable] + counts[rivertype.JobStateScheduled] +
		counts[rivertype.JobStateRetryable] + len(running.Jobs), nil
}

// DebateCreate stores d (see debate.DebateStore) and, if it created the
// debate, inserts its job with River's InsertTx in the same transaction: a
// debate and its job commit together or not at all (DESIGN §2).
func (rv *River) DebateCreate(ctx context.Context, d debate.Debate) (debate.Debate, bool, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return debate.Debate{}, false, err
	}
	return rv.store.DebateCreateWith(ctx, d, rv.insertJob(tenant, d.ID))
}

// StepCommit commits c (see debate.DebateStore) and, if c.Enqueue, inserts
// the debate's job in the same transaction.
func (rv *River) StepCommit(ctx context.Context, c debate.StepCommit) error {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return err
	}
	var inTx func(context.Context, pgx.Tx) error
	if c.Enqueue {
		inTx = rv.insertJob(tenant, c.DebateID)
	}
	return rv.store.StepCommitWith(ctx, c, inTx)
}

func (rv *River) insertJob(tenantID, debateID string) func(context.Context, pgx.Tx) error {
	return func(ctx context.Context, tx pgx.Tx) error {
		if _, err := rv.client.InsertTx(ctx, tx, DebateArgs{TenantID: tenantID, DebateID: debateID}, nil); err != nil {
			return fmt.Errorf("schedule its job: %w", err)
		}
		return nil
	}
}

// Run works debate jobs and sweeps for debates whose replica died until
// ctx ends; then it cancels the running debates' contexts, so each commits
// or drops its current step and is snoozed back to the queue, and waits
// for them for at most StopTimeout. It returns nil after a clean stop.
func (rv *River) Run(ctx context.Context) error {
	// Take over the debates of dead replicas before River starts: its
	// rescuer would otherwise make their stuck jobs available again under
	// their old ids, racing the sweeper that gives each debate exactly one
	// live job.
	rv.sweepLogged(ctx)
	if err := rv.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("runner: start river: %w", err)
	}
	rv.sweepLoop(ctx)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rv.cfg.StopTimeout)
	defer cancel()
	if err := rv.client.StopAndCancel(sctx); err != nil {
		return fmt.Errorf("runner: river did not stop in time: %w", err)
	}
	return nil
}

// sweepLoop takes over the debates of dead replicas. River rescues a stuck
// job only after its timeout (RescueAfter) and its own 30-second
// maintenance period, under an elected leader; a debate whose replica died
// would wait for that. The sweeper looks for running debate jobs that have
// made no commit for RescueAfter and, for each, finalises the job through
// River and gives the debate a new one (see sweep).
func (rv *River) sweepLoop(ctx context.Context) {
	interval := max(rv.cfg.RescueAfter/4, 100*time.Millisecond)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rv.sweepLogged(ctx)
	}
}

// sweepLogged sweeps once; a failure is logged (the next sweep tries again).
func (rv *River) sweepLogged(ctx context.Context) {
	if _, err := rv.sweep(ctx); err != nil && ctx.Err() == nil {
		rv.log.Warn("sweeping for stuck debates", slog.String("error", err.Error()))
	}
}

// sweep handles every debate job running for longer than RescueAfter whose
// cancellation nobody has asked for yet, and returns how many it handled:
//   - its debate is still runnable and has made no commit for RescueAfter:
//     in one transaction the job is cancelled (JobCancelTx) and a new job is
//     inserted, so the debate always has exactly one live job and another
//     replica's sweeper does not take it over a second time;
//   - its debate is no longer runnable (finished, awaiting a person, gone):
//     the job is cancelled;
//   - its debate committed recently: the job's replica is alive (a commit
//     may outlast the slice), so it is left alone.
//
// A cancelled job of a live replica has its context cancelled and ends as
// cancelled; a dead replica's job stays running until River's rescuer,
// which the job's timeout now lets act, finalises it as cancelled.
func (rv *River) sweep(ctx context.Context) (int, error) {
	params := river.NewJobListParams().Kinds(DebateArgs{}.Kind()).States(rivertype.JobStateRunning).
		Where("attempted_at < now() - make_interval(secs => @rescue_after) AND metadata->>'cancel_attempted_at' IS NULL",
			river.NamedArgs{"rescue_after": rv.cfg.RescueAfter.Seconds()}).
		First(500)
	res, err := rv.client.JobList(ctx, params)
	if err != nil {
		return 0, err
	}
	handled := 0
	for _, job := range res.Jobs {
		var args DebateArgs
		if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
			return handled, fmt.Errorf("runner: job %d args: %w", job.ID, err)
		}
		d, err := rv.r.cfg.Store.DebateGet(TenantContext(ctx, args.TenantID), args.DebateID)
		switch {
		case errors.Is(err, debate.ErrNotFound) || err == nil && !d.Status.Runnable():
			if _, err := rv.client.JobCancel(ctx, job.ID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
				return handled, err
			}
			handled++
			continue
		case err != nil:
			return handled, err
		case time.Since(d.UpdatedAt) < rv.cfg.RescueAfter:
			continue
		}
		err = pgx.BeginFunc(ctx, rv.store.Pool(), func(tx pgx.Tx) error {
			if _, err := rv.client.JobCancelTx(ctx, tx, job.ID); err != nil {
				return err
			}
			_, err := rv.client.InsertTx(ctx, tx, args, nil)
			return err
		})
		if errors.Is(err, rivertype.ErrNotFound) {
			continue // finalised meanwhile
		}
		if err != nil {
			return handled, err
		}
		handled++
		rv.log.Info("taking over a debate whose replica stopped committing",
			slog.String("tenant_id", args.TenantID), slog.String("debate_id", args.DebateID), slog.Int64("stuck_job", job.ID))
	}
	return handled, nil
}

// MigrateRiver applies River's own migrations on the database at
// databaseURL (as the schema owner) and grants the service role what River
// needs on its tables.
func MigrateRiver(ctx context.Context, databaseURL, appRole string) error {
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("runner: connect for river migrations: %w", err)
	}
	defer pool.Close()
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	// Serialise concurrent migrators (replicas starting together).
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(7260001)"); err != nil {
		return err
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(7260001)") }()
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("runner: river migrations: %w", err)
	}
	role := pgx.Identifier{appRole}.Sanitize()
	grants := fmt.Sprintf(`DO $$
DECLARE t text;
BEGIN
  FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'river%%'
      AND tablename <> 'river_migration' LOOP
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %%I TO %s', t);
  END LOOP;
  -- River's migrations are the owner's business: the service only reads
  -- which have run.
  REVOKE ALL ON river_migration FROM %s;
  GRANT SELECT ON river_migration TO %s;
  FOR t IN SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = current_schema() AND sequence_name LIKE 'river%%' LOOP
    EXECUTE format('GRANT USAGE, SELECT, UPDATE ON SEQUENCE %%I TO %s', t);
  END LOOP;
END $$`, role, role, role, role)
	if _, err := conn.Exec(ctx, grants); err != nil {
		return fmt.Errorf("runner: grant river tables: %w", err)
	}
	if _, err := conn.Exec(ctx, riverJobPolicies); err != nil {
		return fmt.Errorf("runner: river_job policies: %w", err)
	}
	return nil
}

// riverJobPolicies puts river_job under row-level security for the service
// role. River runs on the service role's pool and needs to read, insert,
// update and delete jobs (fetch, complete, snooze, cancel, the cleaner), so
// the grants stay; what the policies take away is deleting a job that is
// not finished: River itself deletes only finalised jobs (its cleaner, and
// JobDelete refuses running ones), whereas a deleted available or running
// job would silently stall its debate. See docs/decisions.md (2026-11-26)
// for why River keeps the service role rather than a role of its own.
const riverJobPolicies = `
ALTER TABLE river_job ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS debated_read ON river_job;
DROP POLICY IF EXISTS debated_insert ON river_job;
DROP POLICY IF EXISTS debated_update ON river_job;
DROP POLICY IF EXISTS debated_delete_finalised ON river_job;
CREATE POLICY debated_read ON river_job FOR SELECT USING (true);
CREATE POLICY debated_insert ON river_job FOR INSERT WITH CHECK (true);
CREATE POLICY debated_update ON river_job FOR UPDATE USING (true) WITH CHECK (true);
CREATE POLICY debated_delete_finalised ON river_job FOR DELETE
    USING (state IN ('completed', 'cancelled', 'discarded'));`

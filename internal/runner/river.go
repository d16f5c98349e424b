package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
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
	r     *Runner
	slice time.Duration
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
	}
	return err
}

// Timeout implements river.Worker: the slice bounds a run, not River.
func (w *debateWorker) Timeout(*river.Job[DebateArgs]) time.Duration { return -1 }

// RiverConfig configures the River scheduler.
type RiverConfig struct {
	// MaxWorkers is how many debates this replica runs at once; default 16.
	MaxWorkers int
	// Slice is how long one job runs a debate before handing it back to
	// the queue; default 20s.
	Slice time.Duration
	// RescueAfter is how long a job may stay running before River assumes
	// its replica died and makes it available again; it must exceed Slice.
	// Default 3×Slice.
	RescueAfter time.Duration
	// FetchPollInterval bounds how late a job is picked up when a
	// notification is missed; default 500ms.
	FetchPollInterval time.Duration
	Logger            *slog.Logger
}

// River schedules debates as River jobs on PostgreSQL: any replica runs any
// debate, a crashed replica's debates are rescued, and shutdown hands
// running debates back promptly.
type River struct {
	client *river.Client[pgx.Tx]
	pool   *pgxpool.Pool
	r      *Runner
	cfg    RiverConfig
	log    *slog.Logger
	stop   context.CancelFunc
	done   chan struct{}
}

// NewRiver returns a River scheduler over pool running debates with r.
func NewRiver(pool *pgxpool.Pool, r *Runner, cfg RiverConfig) (*River, error) {
	cfg.MaxWorkers = cmp.Or(cfg.MaxWorkers, 16)
	cfg.Slice = cmp.Or(cfg.Slice, 20*time.Second)
	cfg.RescueAfter = cmp.Or(cfg.RescueAfter, 3*cfg.Slice)
	cfg.FetchPollInterval = cmp.Or(cfg.FetchPollInterval, 500*time.Millisecond)
	if cfg.RescueAfter <= cfg.Slice {
		return nil, fmt.Errorf("runner: RescueAfter (%s) must exceed Slice (%s)", cfg.RescueAfter, cfg.Slice)
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &debateWorker{r: r, slice: cfg.Slice}); err != nil {
		return nil, err
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
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
	return &River{client: client, pool: pool, r: r, cfg: cfg, log: cmp.Or(cfg.Logger, slog.Default())}, nil
}

// QueueDepth counts the debate jobs waiting or running.
func (rv *River) QueueDepth(ctx context.Context) (int, error) {
	var n int
	err := rv.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1
		AND state IN ('available', 'scheduled', 'retryable', 'running')`, DebateArgs{}.Kind()).Scan(&n)
	return n, err
}

// InsertDebateJob schedules the debate's job inside tx, so a debate and its
// job are committed together (the PostgreSQL store calls it).
func (rv *River) InsertDebateJob(ctx context.Context, tx pgx.Tx, tenantID, debateID string) error {
	_, err := rv.client.InsertTx(ctx, tx, DebateArgs{TenantID: tenantID, DebateID: debateID}, nil)
	return err
}

// Start begins working jobs and sweeping for debates whose replica died.
func (rv *River) Start(ctx context.Context) error {
	if err := rv.client.Start(ctx); err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rv.stop, rv.done = cancel, make(chan struct{})
	go rv.sweepLoop(sctx)
	return nil
}

// sweepLoop takes over the debates of dead replicas. River rescues a stuck
// job only after RescueStuckJobsAfter and its own 30-second maintenance
// period, under an elected leader; a debate's job whose replica died would
// wait for that. The sweeper looks for running debate jobs that have made no
// commit for RescueAfter and schedules a new job for each: the commit fence
// makes a late duplicate harmless.
func (rv *River) sweepLoop(ctx context.Context) {
	defer close(rv.done)
	interval := max(rv.cfg.RescueAfter/4, 100*time.Millisecond)
	t := time.NewTicker(interval)
	defer t.Stop()
	recent := map[int64]time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := rv.sweep(ctx, recent); err != nil && ctx.Err() == nil {
			rv.log.Warn("sweeping for stuck debates", slog.String("error", err.Error()))
		}
	}
}

func (rv *River) sweep(ctx context.Context, recent map[int64]time.Time) error {
	rows, err := rv.pool.Query(ctx, `SELECT id, args FROM river_job
		WHERE kind = $1 AND state = 'running' AND attempted_at < now() - make_interval(secs => $2)`,
		DebateArgs{}.Kind(), rv.cfg.RescueAfter.Seconds())
	if err != nil {
		return err
	}
	type stuck struct {
		id   int64
		args DebateArgs
	}
	var jobs []stuck
	for rows.Next() {
		var j stuck
		if err := rows.Scan(&j.id, &j.args); err != nil {
			rows.Close()
			return err
		}
		jobs = append(jobs, j)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	now := time.Now()
	for id, at := range recent {
		if now.Sub(at) > 2*rv.cfg.RescueAfter {
			delete(recent, id)
		}
	}
	for _, j := range jobs {
		if _, done := recent[j.id]; done {
			continue
		}
		d, err := rv.r.cfg.Store.DebateGet(TenantContext(ctx, j.args.TenantID), j.args.DebateID)
		if err != nil || !d.Status.Runnable() || now.Sub(d.UpdatedAt) < rv.cfg.RescueAfter {
			continue
		}
		if _, err := rv.client.Insert(ctx, j.args, nil); err != nil {
			return err
		}
		recent[j.id] = now
		rv.log.Info("taking over a debate whose replica stopped committing",
			slog.String("tenant_id", j.args.TenantID), slog.String("debate_id", j.args.DebateID), slog.Int64("stuck_job", j.id))
	}
	return nil
}

// Stop cancels the running debates' contexts, so each commits or drops its
// current step and is snoozed back to the queue, then waits for them until
// ctx ends.
func (rv *River) Stop(ctx context.Context) error {
	if rv.stop != nil {
		rv.stop()
		<-rv.done
	}
	err := rv.client.StopAndCancel(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("runner: river did not stop in time: %w", err)
	}
	return err
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
	grants := fmt.Sprintf(`DO $$
DECLARE t text;
BEGIN
  FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'river%%' LOOP
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %%I TO %s', t);
  END LOOP;
  FOR t IN SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = current_schema() AND sequence_name LIKE 'river%%' LOOP
    EXECUTE format('GRANT USAGE, SELECT, UPDATE ON SEQUENCE %%I TO %s', t);
  END LOOP;
END $$`, pgx.Identifier{appRole}.Sanitize(), pgx.Identifier{appRole}.Sanitize())
	if _, err := conn.Exec(ctx, grants); err != nil {
		return fmt.Errorf("runner: grant river tables: %w", err)
	}
	return nil
}

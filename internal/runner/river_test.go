package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/synthetic"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/postgres"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/pgtest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestRiverFinalisesDeadReplicasJobs: the jobs a SIGKILLed replica left
// running (simulated by rows in river_job that nobody works) do not stay
// behind. The sweeper takes the stalled debate over with a new job and
// cancels the dead one; the job of a debate that no longer exists is
// cancelled too; River's rescuer then finalises both, and the queue depth
// falls to 0. A waiting job of a debate that does not exist is cancelled
// by the worker that takes it. (The sweep runs once before River starts:
// when River's rescuer came first, it made the dead jobs available again
// and they ended completed or retrying, one run in about twelve.)
func TestRiverFinalisesDeadReplicasJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	require.NoError(t, postgres.Migrate(ctx, url))
	require.NoError(t, runner.MigrateRiver(ctx, url, postgres.AppRole))
	st, err := postgres.New(ctx, postgres.Config{URL: url})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	tctx, tenant := storetest.NewTenant(t, st)
	_, err = st.DealImport(tctx, storetest.SampleBundle("deal-rescue"), "h", time.Now())
	require.NoError(t, err)
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("river-test-signing-secret-of-32-bytes!")}, "v1")
	require.NoError(t, err)
	reg, err := orchestrator.NewRegistry(synthetic.Protocol())
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)
	run, err := runner.New(runner.Config{Store: st, Engine: eng})
	require.NoError(t, err)

	// A debate whose replica died an hour ago, and its job, still running.
	id := uuid.NewString()
	stale := time.Now().Add(-time.Hour)
	_, _, err = st.DebateCreate(tctx, debate.Debate{ID: id, TenantID: tenant, DealID: "deal-rescue", Protocol: synthetic.Name,
		Options: []byte(`{"max_rounds":1,"message_bytes":100}`), Status: debate.DebateQueued, CreatedAt: stale, UpdatedAt: stale})
	require.NoError(t, err)
	owner, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer owner.Close(ctx)
	deadJob := func(debateID string) int64 {
		var jobID int64
		require.NoError(t, owner.QueryRow(ctx, `INSERT INTO river_job (kind, args, state, attempt, attempted_at, attempted_by, max_attempts)
			VALUES ('debated.debate', jsonb_build_object('tenant_id', $1::text, 'debate_id', $2::text), 'running', 1,
				now() - interval '1 hour', '{dead-replica}', 1000) RETURNING id`, tenant, debateID).Scan(&jobID))
		return jobID
	}
	stuck, orphan := deadJob(id), deadJob(uuid.NewString())
	// And a waiting job of a debate that does not exist: a worker takes it
	// and must end it, not retry it.
	var missing int64
	require.NoError(t, owner.QueryRow(ctx, `INSERT INTO river_job (kind, args, state, max_attempts)
		VALUES ('debated.debate', jsonb_build_object('tenant_id', $1::text, 'debate_id', $2::text), 'available', 1000) RETURNING id`,
		tenant, uuid.NewString()).Scan(&missing))

	rv, err := runner.NewRiver(st, run, runner.RiverConfig{Slice: 300 * time.Millisecond, RescueAfter: 700 * time.Millisecond})
	require.NoError(t, err)
	rctx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- rv.Run(rctx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-stopped)
	})

	state := func(jobID int64) string {
		var s string
		require.NoError(t, owner.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, jobID).Scan(&s))
		return s
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		d, err := st.DebateGet(tctx, id)
		require.NoError(t, err)
		depth, err := rv.QueueDepth(ctx)
		require.NoError(t, err)
		if d.Status == debate.DebateCompleted && state(stuck) == "cancelled" && state(orphan) == "cancelled" && state(missing) == "cancelled" && depth == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "debate %s, dead jobs %s and %s, missing debate's job %s, queue depth %d",
			d.Status, state(stuck), state(orphan), state(missing), depth)
		time.Sleep(200 * time.Millisecond)
	}
	var running int
	require.NoError(t, owner.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&running))
	require.Zero(t, running)
}

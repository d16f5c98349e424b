package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/store/storetest"
)

// TestNotifyRetriesAfterAFailure: a notification whose send fails (here,
// the notifier's backend was terminated under it) is sent again on a new
// connection instead of being lost, so another replica's listener still
// hears the commit.
func TestNotifyRetriesAfterAFailure(t *testing.T) {
	t.Parallel()
	a, b := ownStore(t, 2), ownStore(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	aCtx, aTenant, aDebate := storetest.NewDebate(t, a)

	heard := make(chan string, 16)
	startListening(ctx, t, b, func(tenant, debateID string) {
		if tenant == aTenant {
			heard <- debateID
		}
	})
	hear := func(why string) {
		t.Helper()
		select {
		case id := <-heard:
			require.Equal(t, aDebate.ID, id)
		case <-ctx.Done():
			t.Fatal(why)
		}
	}

	l := storetest.NewLedger(aTenant, aDebate, stepAt)
	c := l.Next(1)
	require.NoError(t, a.StepCommit(aCtx, c))
	l.Commit(c)
	hear("no notification of the first commit")

	// Kill the notifier's connection; the next send fails on it.
	pid := a.notify.pid.Load()
	require.NotZero(t, pid)
	admin, err := pgx.Connect(ctx, testDB.url)
	require.NoError(t, err)
	defer admin.Close(context.Background())
	var killed bool
	require.NoError(t, admin.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, int32(pid)).Scan(&killed))
	require.True(t, killed)

	c = l.Next(1)
	require.NoError(t, a.StepCommit(aCtx, c))
	hear("the commit after a failed send was never notified")
	require.NotEqual(t, pid, a.notify.pid.Load(), "sent on a new connection")
}

package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// TestTamperedLedgerFailsVerification changes stored ledger rows behind the
// service's back (as the database owner, with the append-only trigger
// disabled, which the service's own role cannot do) and checks that
// VerifyDebate names the first bad event each time.
func TestTamperedLedgerFailsVerification(t *testing.T) {
	t.Parallel()
	s := startStack(t, "postgres", nil)
	d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 1})
	msgs := s.watch(t, s.a, d.GetDebateId(), 0, nil)
	n := int64(len(msgs))
	require.Greater(t, n, int64(8))

	conn, err := pgx.Connect(context.Background(), s.dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	ctx := context.Background()
	_, err = conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE ledger_snapshot AS SELECT * FROM debate_events WHERE debate_id = '%s'`, d.GetDebateId()))
	require.NoError(t, err)

	// The service's role is refused UPDATE and DELETE outright.
	for _, q := range []string{
		`UPDATE debate_events SET payload = '{}' WHERE debate_id = $1 AND seq = 3`,
		`DELETE FROM debate_events WHERE debate_id = $1 AND seq = 3`,
	} {
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, "SET LOCAL ROLE debated_app")
		require.NoError(t, err)
		_, err = tx.Exec(ctx, q, d.GetDebateId())
		require.Error(t, err, q)
		require.NoError(t, tx.Rollback(ctx))
	}

	cases := []struct {
		name   string
		sql    string
		badSeq int64
	}{
		{"payload byte", `UPDATE debate_events SET payload = regexp_replace(payload::text, '"', '"X')::json WHERE debate_id = $1 AND seq = 4`, 4},
		{"hash", `UPDATE debate_events SET hash = repeat('0', 64) WHERE debate_id = $1 AND seq = 5`, 5},
		{"signature", `UPDATE debate_events SET signature = (SELECT signature FROM debate_events WHERE debate_id = $1 AND seq = 2) WHERE debate_id = $1 AND seq = 6`, 6},
		{"deleted event", `DELETE FROM debate_events WHERE debate_id = $1 AND seq = 7`, 7},
		{"reordered events", `UPDATE debate_events SET seq = 1003 WHERE debate_id = $1 AND seq = 3;
			UPDATE debate_events SET seq = 3 WHERE debate_id = $1 AND seq = 4;
			UPDATE debate_events SET seq = 4 WHERE debate_id = $1 AND seq = 1003`, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := conn.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			_, err = tx.Exec(ctx, `ALTER TABLE debate_events DISABLE TRIGGER USER`)
			require.NoError(t, err)
			for _, q := range strings.Split(tc.sql, ";") {
				_, err = tx.Exec(ctx, q, d.GetDebateId())
				require.NoError(t, err, q)
			}
			_, err = tx.Exec(ctx, `ALTER TABLE debate_events ENABLE TRIGGER USER`)
			require.NoError(t, err)
			require.NoError(t, tx.Commit(ctx))
			v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: d.GetDebateId()})
			require.NoError(t, err)
			require.False(t, v.GetOk(), "tampering with the %s went unnoticed", tc.name)
			require.Equal(t, tc.badSeq, v.GetFirstBadSeq(), "%v", v.GetProblems())
			restore(t, conn, d.GetDebateId())
		})
	}
	v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: d.GetDebateId()})
	require.NoError(t, err)
	require.True(t, v.GetOk(), "restored ledger: %v", v.GetProblems())
}

// restore puts the original ledger back from the snapshot taken before the
// cases ran.
func restore(t *testing.T, conn *pgx.Conn, debateID string) {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	for _, q := range []string{
		`ALTER TABLE debate_events DISABLE TRIGGER USER`,
		`DELETE FROM debate_events WHERE debate_id = $1`,
		`INSERT INTO debate_events SELECT * FROM ledger_snapshot WHERE debate_id = $1`,
		`ALTER TABLE debate_events ENABLE TRIGGER USER`,
	} {
		if q == `DELETE FROM debate_events WHERE debate_id = $1` || q == `INSERT INTO debate_events SELECT * FROM ledger_snapshot WHERE debate_id = $1` {
			_, err = tx.Exec(ctx, q, debateID)
		} else {
			_, err = tx.Exec(ctx, q)
		}
		require.NoError(t, err, q)
	}
	require.NoError(t, tx.Commit(ctx))
}

// TestSIGTERMHandsDebatesBack: on SIGTERM the service stops within its grace
// period, a watcher's stream ends with UNAVAILABLE naming the seq to resume
// from, and the debate resumes from its last commit at the next start.
func TestSIGTERMHandsDebatesBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addr := freeAddr(t)
	env := []string{"DEBATED_DATA_DIR=" + dir, "DEBATED_ADMIN_TOKEN=e2e-admin", "DEBATED_SHUTDOWN_TIMEOUT=10s"}
	c := startChild(t, addr, env)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	waitServing(t, conn)
	s := &stack{conn: conn, debate: debatedv1.NewDebateServiceClient(conn)}
	s.a = s.login(t, "a")
	// A gate holds the debate mid-way so the stream is open when SIGTERM comes.
	d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 2, "gate_round": 1})
	s.watch(t, s.a, d.GetDebateId(), 0, isGate)
	st, err := s.debate.WatchDebate(s.a, &debatedv1.WatchDebateRequest{DebateId: d.GetDebateId()})
	require.NoError(t, err)
	var last int64
	for last == 0 || last < 5 {
		m, err := st.Recv()
		require.NoError(t, err)
		evs := apiconv.WatchEvents(m)
		last = evs[len(evs)-1].GetSeq()
	}
	start := time.Now()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	// Drain what was already sent; the stream must end with UNAVAILABLE.
	var endErr error
	for {
		if _, endErr = st.Recv(); endErr != nil {
			break
		}
	}
	require.Equal(t, codes.Unavailable, status.Code(endErr), "%v", endErr)
	require.Contains(t, status.Convert(endErr).Message(), "after_seq=")
	require.NoError(t, c.cmd.Wait(), "debated must exit cleanly")
	require.Less(t, time.Since(start), 10*time.Second)

	// At the next start the debate is where it was and goes on once resolved.
	startChild(t, addr, env)
	waitServing(t, s.conn)
	got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: d.GetDebateId()})
	require.NoError(t, err)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_AWAITING_REVIEW, got.GetDebate().GetStatus())
	_, err = s.debate.ResolveHumanGate(s.a, &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(), GateId: got.GetGates()[0].GetGateId(), Approve: true, Reason: "after restart"})
	require.NoError(t, err)
	msgs := s.watch(t, s.a, d.GetDebateId(), 0, nil)
	requireChain(t, msgs, 1)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus())
}

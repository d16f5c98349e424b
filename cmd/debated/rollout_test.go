package main

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// TestRollingRestart sends SIGTERM to a debated that runs debates with
// watchers attached, while a second debated shares the database: every
// debate completes on the second, and every watcher resumes there from the
// cursor the first gave it, losing and duplicating nothing.
func TestRollingRestart(t *testing.T) {
	t.Parallel()
	url := migratedDatabase(t)
	env := []string{"DEBATED_DATABASE_URL=" + url, "DEBATED_MIGRATE_ON_START=false", "DEBATED_SIGNING_KEYS=" + testSigningKeys, "DEBATED_CHECKPOINT_KEYS=" + testCheckpointKeys,
		"DEBATED_ADMIN_TOKEN=e2e-admin", "DEBATED_JOB_SLICE=300ms", "DEBATED_RESCUE_AFTER=700ms", "DEBATED_SHUTDOWN_TIMEOUT=10s"}
	addrA, addrB := freeAddr(t), freeAddr(t)
	a := startChild(t, addrA, env)
	startChild(t, addrB, env)
	dial := func(addr string) *grpc.ClientConn {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		waitServing(t, c)
		return c
	}
	connA, connB := dial(addrA), dial(addrB)
	sA := &stack{conn: connA, debate: debatedv1.NewDebateServiceClient(connA)}
	ctx := sA.login(t, "roll")
	sB := &stack{conn: connB, debate: debatedv1.NewDebateServiceClient(connB)}

	// Long debates, watched on A.
	var ids []string
	for range 4 {
		d := sA.create(t, ctx, "deal-roll", map[string]any{"max_rounds": 40, "message_bytes": 2000})
		ids = append(ids, d.GetDebateId())
	}
	type result struct {
		seqs []int64
		err  error
	}
	results := make(chan result, len(ids))
	started := make(chan struct{}, len(ids))
	for _, id := range ids {
		go func() {
			var seqs []int64
			after := int64(0)
			// First on A until it goes away, then on B from the cursor.
			for _, dc := range []debatedv1.DebateServiceClient{sA.debate, sB.debate} {
				st, err := dc.WatchDebate(ctx, &debatedv1.WatchDebateRequest{DebateId: id, AfterSeq: after})
				if err != nil {
					results <- result{err: err}
					return
				}
				for {
					msg, err := st.Recv()
					if errors.Is(err, io.EOF) {
						results <- result{seqs: seqs}
						return
					}
					if err != nil {
						if status.Code(err) != codes.Unavailable {
							results <- result{err: err}
							return
						}
						// The resume cursor is in the message.
						m := status.Convert(err).Message()
						i := strings.Index(m, "after_seq=")
						if i < 0 {
							results <- result{err: err}
							return
						}
						n, perr := strconv.ParseInt(m[i+len("after_seq="):], 10, 64)
						if perr != nil || n != after {
							results <- result{err: errors.New("resume cursor " + m + " does not match the last seq received")}
							return
						}
						break
					}
					for _, e := range apiconv.WatchEvents(msg) {
						if len(seqs) == 5 {
							started <- struct{}{}
						}
						seqs = append(seqs, e.GetSeq())
						after = e.GetSeq()
					}
				}
			}
			results <- result{err: errors.New("the stream did not end")}
		}()
	}
	for range ids {
		<-started
	}
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, a.cmd.Wait(), "A exits cleanly")

	for range ids {
		r := <-results
		require.NoError(t, r.err)
		for i, seq := range r.seqs {
			require.EqualValues(t, i+1, seq, "no event lost or duplicated across the restart")
		}
	}
	for _, id := range ids {
		got, err := sB.debate.GetDebate(ctx, &debatedv1.GetDebateRequest{DebateId: id})
		require.NoError(t, err)
		require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, got.GetDebate().GetStatus())
		v, err := sB.debate.VerifyDebate(ctx, &debatedv1.VerifyDebateRequest{DebateId: id})
		require.NoError(t, err)
		require.True(t, v.GetOk())
	}
}

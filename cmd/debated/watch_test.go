package main

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding/gzip"
)

// TestThousandWatchers: 1,000 watchers on one debate each receive every
// event once and in order; a watcher that never reads does not hold the
// debate back; a watcher that reconnects with after_seq loses nothing.
func TestThousandWatchers(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	// The gate holds the debate until every watcher is attached.
	d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 3, "gate_round": 1, "message_bytes": 300})
	id := d.GetDebateId()
	s.watch(t, s.a, id, 0, isGate)

	// A watcher that stops reading.
	stalledCtx, stopStalled := context.WithCancel(s.a)
	defer stopStalled()
	_, err := s.debate.WatchDebate(stalledCtx, &debatedv1.WatchDebateRequest{DebateId: id})
	require.NoError(t, err)

	const watchers = 1000
	var wg sync.WaitGroup
	results := make([][]int64, watchers)
	errs := make([]error, watchers)
	ready := make(chan struct{}, watchers)
	for i := range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := s.debate.WatchDebate(s.a, &debatedv1.WatchDebateRequest{DebateId: id})
			if err != nil {
				errs[i] = err
				ready <- struct{}{}
				return
			}
			first := true
			for {
				msg, err := st.Recv()
				if first {
					ready <- struct{}{}
					first = false
				}
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					errs[i] = err
					return
				}
				for _, e := range apiconv.WatchEvents(msg) {
					results[i] = append(results[i], e.GetSeq())
				}
			}
		}()
	}
	for range watchers {
		<-ready
	}
	got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
	require.NoError(t, err)
	_, err = s.debate.ResolveHumanGate(s.a, &debatedv1.ResolveHumanGateRequest{DebateId: id, GateId: got.GetGates()[0].GetGateId(), Approve: true, Reason: "go"})
	require.NoError(t, err)
	wg.Wait()

	final, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
	require.NoError(t, err)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, final.GetDebate().GetStatus(), "the stalled watcher must not hold the debate")
	n := final.GetDebate().GetLastSeq()
	for i := range watchers {
		require.NoError(t, errs[i], "watcher %d", i)
		require.Len(t, results[i], int(n), "watcher %d", i)
		for j, seq := range results[i] {
			require.EqualValues(t, j+1, seq, "watcher %d", i)
		}
	}

	// Reconnecting with after_seq continues exactly where it left off.
	part := s.watch(t, s.a, id, n-5, nil)
	require.Len(t, part, 5)
	require.EqualValues(t, n-4, part[0].GetEvent().GetSeq())
}

// TestWatchersWithAndWithoutCompression: watchers whose clients compress
// (the server answers them compressed) and watchers that do not, on the
// same debate at once, all read every event exactly once and in order: a
// message prepared once for the plain watchers is never one compressed
// for another.
func TestWatchersWithAndWithoutCompression(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 3, "gate_round": 1, "message_bytes": 2000})
	id := d.GetDebateId()
	s.watch(t, s.a, id, 0, isGate)

	const watchers = 20
	var wg sync.WaitGroup
	results := make([][]int64, watchers)
	errs := make([]error, watchers)
	ready := make(chan struct{}, watchers)
	for i := range watchers {
		var opts []grpc.CallOption
		if i%2 == 0 {
			opts = append(opts, grpc.UseCompressor(gzip.Name))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			signalled := false
			defer func() {
				if !signalled {
					ready <- struct{}{}
				}
			}()
			st, err := s.debate.WatchDebate(s.a, &debatedv1.WatchDebateRequest{DebateId: id}, opts...)
			if err != nil {
				errs[i] = err
				return
			}
			for {
				msg, err := st.Recv()
				if !signalled {
					signalled = true
					ready <- struct{}{} // attached: it has read the replay
				}
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					errs[i] = err
					return
				}
				for _, e := range apiconv.WatchEvents(msg) {
					results[i] = append(results[i], e.GetSeq())
				}
			}
		}()
	}
	for range watchers {
		<-ready
	}
	got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
	require.NoError(t, err)
	_, err = s.debate.ResolveHumanGate(s.a, &debatedv1.ResolveHumanGateRequest{DebateId: id, GateId: got.GetGates()[0].GetGateId(), Approve: true, Reason: "go"})
	require.NoError(t, err)
	wg.Wait()
	final, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
	require.NoError(t, err)
	n := final.GetDebate().GetLastSeq()
	for i := range watchers {
		require.NoError(t, errs[i], "watcher %d (compressed: %t)", i, i%2 == 0)
		require.Len(t, results[i], int(n), "watcher %d", i)
		for j, seq := range results[i] {
			require.EqualValues(t, j+1, seq, "watcher %d", i)
		}
	}
}

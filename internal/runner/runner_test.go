package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/stream"
)

// faultyStore is the embedded store with commits that can be slowed down
// or made to fail before they reach it.
type faultyStore struct {
	*sqlite.Store
	commits atomic.Int64
	// fail, if set, answers commit n (1-based) with an error instead of
	// committing it.
	fail func(n int64) error
	// done counts the commits that have returned.
	done atomic.Int64
	// nodes counts the node runs; with waitAhead, commit n of a running
	// debate waits (up to a second) for run n+1 before it commits, so a
	// runner that computes ahead does so while the commit is in flight.
	nodes     atomic.Int64
	waitAhead bool
}

func (s *faultyStore) StepCommit(ctx context.Context, c debate.StepCommit) error {
	defer s.done.Add(1)
	n := s.commits.Add(1)
	if s.fail != nil {
		if err := s.fail(n); err != nil {
			return err
		}
	}
	if s.waitAhead && c.Status == debate.DebateRunning {
		for deadline := time.Now().Add(time.Second); s.nodes.Load() <= n && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
	}
	return s.Store.StepCommit(ctx, c)
}

// seen is what a node saw of the ledger when it ran.
type seen struct {
	node    string
	headSeq int64
	pending []int64 // seqs
	outputs int     // "said" events through HeadSeq plus those pending
	done    int64   // commits that had returned
}

// ledgerReader is a protocol that reads the ledger as IDIS does: every
// node counts the "said" events before it (the committed ones through
// HeadSeq, from the store, and the pending ones) and says how many it saw.
// Without pipelining it would run the same way.
type ledgerReader struct {
	st        *faultyStore
	mu        sync.Mutex
	runs      []seen
	pipelined bool
}

func (p *ledgerReader) node(name, next string) *orchestrator.Node {
	return &orchestrator.Node{Name: name, Actor: "speaker", Edges: []string{next}, Run: func(ctx context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
		evs, err := p.st.EventList(ctx, in.DebateID, 0, 1000)
		if err != nil {
			return nil, err
		}
		// The store may hold the pending events by now: only those through
		// HeadSeq are read from it.
		said := 0
		for _, e := range evs {
			if e.Type == "said" && e.Seq <= in.HeadSeq {
				said++
			}
		}
		for _, e := range in.Pending {
			if e.Type == "said" {
				said++
			}
		}
		s := seen{node: name, headSeq: in.HeadSeq, outputs: said, done: p.st.done.Load()}
		p.st.nodes.Add(1)
		for _, e := range in.Pending {
			s.pending = append(s.pending, e.Seq)
		}
		p.mu.Lock()
		p.runs = append(p.runs, s)
		p.mu.Unlock()
		return &orchestrator.NodeOutput{Events: []orchestrator.Emit{{Type: "said", Payload: map[string]any{"node": name, "heard": said}}}}, nil
	}}
}

func (p *ledgerReader) protocol() *orchestrator.Protocol {
	nodes := []*orchestrator.Node{p.node("a", "b"), p.node("b", "c"), p.node("c", "d"), p.node("d", "e"), p.node("e", "f")}
	last := p.node("f", "")
	last.Edges = nil
	return &orchestrator.Protocol{
		Name: "ledger-reader.v1", Roles: []string{"speaker"}, Start: "a", MaxSteps: 20, Pipelined: p.pipelined,
		RoleGuard: map[string][]string{"said": {"speaker"}},
		Nodes:     append(nodes, last),
	}
}

type runnerEnv struct {
	st     *faultyStore
	proto  *ledgerReader
	runner *runner.Runner
	ctx    context.Context
	tenant string
}

func newRunnerEnv(t *testing.T, pipelined bool) *runnerEnv {
	t.Helper()
	sq, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(sq.Close)
	st := &faultyStore{Store: sq}
	ctx, tenant := storetest.NewTenant(t, sq)
	_, err = sq.DealImport(ctx, storetest.SampleBundle("deal-r"), "h", time.Now())
	require.NoError(t, err)
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("runner-test-signing-secret-32-bytes!")}, "v1")
	require.NoError(t, err)
	p := &ledgerReader{st: st, pipelined: pipelined}
	reg, err := orchestrator.NewRegistry(p.protocol())
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{Store: st, Engine: eng, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return &runnerEnv{st: st, proto: p, runner: r, ctx: ctx, tenant: tenant}
}

func (e *runnerEnv) create(t *testing.T) string {
	t.Helper()
	id := uuid.NewString()
	_, _, err := e.st.DebateCreate(e.ctx, debate.Debate{ID: id, TenantID: e.tenant, DealID: "deal-r", Protocol: "ledger-reader.v1",
		Status: debate.DebateQueued, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	require.NoError(t, err)
	return id
}

// requireLedger checks that the debate completed with a contiguous,
// chained ledger in which every node said once, having heard every node
// before it.
func (e *runnerEnv) requireLedger(t *testing.T, id string) {
	t.Helper()
	d, err := e.st.DebateGet(e.ctx, id)
	require.NoError(t, err)
	require.Equal(t, debate.DebateCompleted, d.Status)
	evs, err := e.st.EventList(e.ctx, id, 0, 1000)
	require.NoError(t, err)
	var said []string
	for i, ev := range evs {
		require.Equal(t, int64(i+1), ev.Seq)
		if i > 0 {
			require.Equal(t, evs[i-1].Hash, ev.PrevHash, "seq %d chains", ev.Seq)
		}
		if ev.Type == "said" {
			var p struct {
				Node  string `json:"node"`
				Heard int    `json:"heard"`
			}
			require.NoError(t, json.Unmarshal(ev.Payload, &p))
			require.Equal(t, len(said), p.Heard, "node %s heard every node before it", p.Node)
			said = append(said, p.Node)
		}
	}
	require.Equal(t, []string{"a", "b", "c", "d", "e", "f"}, said, "every node committed once, in order")
	require.Equal(t, d.LastSeq, evs[len(evs)-1].Seq)
}

// TestPipelinedRunComputesAhead: for a Pipelined protocol the runner
// computes each step while the previous one commits, and the step gets the
// previous step's events as Pending, after HeadSeq; the debate says what
// it would say one step at a time.
func TestPipelinedRunComputesAhead(t *testing.T) {
	t.Parallel()
	e := newRunnerEnv(t, true)
	e.st.waitAhead = true
	id := e.create(t)
	require.NoError(t, e.runner.Run(context.Background(), e.tenant, id))
	e.requireLedger(t, id)

	require.Len(t, e.proto.runs, 6)
	require.Empty(t, e.proto.runs[0].pending)
	for i, r := range e.proto.runs[1:] {
		require.NotEmpty(t, r.pending, "%s was computed ahead", r.node)
		require.Equal(t, r.headSeq+1, r.pending[0], "%s: the pending events follow HeadSeq", r.node)
		require.Equal(t, int64(i), r.done, "%s was computed before the previous step's commit returned", r.node)
	}
}

// TestUnpipelinedRunWaits: without Pipelined, each step is computed after
// the previous one committed, and Pending is always empty.
func TestUnpipelinedRunWaits(t *testing.T) {
	t.Parallel()
	e := newRunnerEnv(t, false)
	id := e.create(t)
	require.NoError(t, e.runner.Run(context.Background(), e.tenant, id))
	e.requireLedger(t, id)
	for i, r := range e.proto.runs {
		require.Empty(t, r.pending, r.node)
		require.Equal(t, int64(i), r.done, "%s ran after every commit before it returned", r.node)
	}
}

// TestPipelinedStepDroppedWhenCommitFails: when a commit loses the race
// (conflict), the step computed ahead of it is thrown away and the runner
// carries on from the store's head; when a commit fails otherwise, Run
// returns the error without committing the step computed ahead, and a
// later run finishes the debate. Either way every node commits once.
func TestPipelinedStepDroppedWhenCommitFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"conflict", fmt.Errorf("injected: %w", debate.ErrConflict)},
		{"store error", errors.New("injected: connection reset")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newRunnerEnv(t, true)
			e.st.fail = func(n int64) error {
				if n == 3 {
					return tc.err
				}
				return nil
			}
			id := e.create(t)
			err := e.runner.Run(context.Background(), e.tenant, id)
			if errors.Is(tc.err, debate.ErrConflict) {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, "connection reset")
				evs, err := e.st.EventList(e.ctx, id, 0, 1000)
				require.NoError(t, err)
				said := 0
				for _, ev := range evs {
					if ev.Type == "said" {
						said++
					}
				}
				require.Equal(t, 2, said, "nothing after the failed commit was committed")
				require.NoError(t, e.runner.Run(context.Background(), e.tenant, id))
			}
			e.requireLedger(t, id)
			computed := map[string]int{}
			for _, r := range e.proto.runs {
				computed[r.node]++
			}
			require.Equal(t, 2, computed["c"], "the step whose commit failed ran again")
			require.Equal(t, 2, computed["d"], "the step computed ahead of it was thrown away and ran again")
		})
	}
}

// TestPipelinedPublishesAtCommit: a step's events reach this replica's
// watchers as soon as its commit lands, not once the step computed ahead of
// it has finished: with model-backed turns that is a whole turn later. Each
// node computed ahead waits (up to a second) for a watcher to have the
// events pending before it, and records whether they came.
func TestPipelinedPublishesAtCommit(t *testing.T) {
	t.Parallel()
	e := newRunnerEnv(t, true)
	hub := stream.New(e.st, stream.Config{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(hub.Close)
	var received atomic.Int64 // the last seq a watcher has
	var heard []bool          // per node computed ahead: its pending events had reached the watcher
	var mu sync.Mutex
	p := e.proto.protocol()
	for _, n := range p.Nodes {
		run := n.Run
		n.Run = func(ctx context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
			if len(in.Pending) > 0 {
				last := in.Pending[len(in.Pending)-1].Seq
				deadline := time.Now().Add(time.Second)
				for received.Load() < last && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				mu.Lock()
				heard = append(heard, received.Load() >= last)
				mu.Unlock()
			}
			return run(ctx, in)
		}
	}
	reg, err := orchestrator.NewRegistry(p)
	require.NoError(t, err)
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("runner-test-signing-secret-32-bytes!")}, "v1")
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{Store: e.st, Engine: eng, Publisher: hub, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)

	id := e.create(t)
	watched := make(chan error, 1)
	go func() {
		watched <- hub.Watch(e.ctx, id, 0, func(b stream.Batch) error {
			received.Store(b.Last().Event.Seq)
			return nil
		})
	}()
	require.Eventually(t, func() bool { return hub.Watching() == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, r.Run(context.Background(), e.tenant, id))
	require.NoError(t, <-watched)
	e.requireLedger(t, id)
	require.Len(t, heard, 5, "every node after the first was computed ahead")
	for i, ok := range heard {
		require.True(t, ok, "node %d ran ahead without the previous step's events reaching the watcher", i+2)
	}
}

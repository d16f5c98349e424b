package orchestrator

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/canon"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/redact"
)

// roundEvents is the ledger of one round of the test protocol.
func roundEvents(r int) []string {
	var out []string
	if r == 1 {
		out = append(out, "debate.started engine")
	}
	out = append(out,
		"node.started open engine", "argument open advocate", "node.completed open engine",
		"node.started critique engine", "critique a critic_a", "critique b critic_b", "node.completed critique engine",
		"node.started close engine")
	if r == 1 {
		out = append(out, "node.retry close engine", "node.retry close engine")
	}
	return append(out, "verdict close arbiter", "node.completed close engine",
		"node.started check engine", "node.completed check engine", "round.completed check engine")
}

func threeRounds() []string {
	return slices.Concat(roundEvents(1), roundEvents(2), roundEvents(3))
}

func TestStepFullDebate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `{"rounds":3}`)
	h.run(t.Context(), nil)

	want := append(threeRounds(),
		"node.started finish engine", "summary finish arbiter", "node.completed finish engine", "debate.stopped finish engine")
	require.Equal(t, want, compact(h.events))

	// The debate's final row.
	require.Equal(t, debate.DebateCompleted, h.d.Status)
	require.Equal(t, ReasonEnd, h.d.StopReason)
	require.Empty(t, h.d.Error)
	require.Empty(t, h.d.NextNode)
	require.Equal(t, 4, h.d.Round, "finish runs after round 3 was completed")

	// Checkpoints: one per node step, chained by their state hashes.
	var nodes []string
	for i, cp := range h.cps {
		require.Equal(t, i+1, cp.Step)
		require.Equal(t, "deb-1", cp.DebateID)
		require.Equal(t, hashHex(cp.State), cp.OutputHash)
		if i > 0 {
			require.Equal(t, h.cps[i-1].OutputHash, cp.InputHash, "step %d starts from step %d's state", i+1, i)
			require.Equal(t, h.cps[i-1].NextNode, cp.Node)
		}
		nodes = append(nodes, cp.Node)
	}
	require.Equal(t, []string{
		"open", "critique", "close", "check", "open", "critique", "close", "check",
		"open", "critique", "close", "check", "finish",
	}, nodes)
	require.Equal(t, []int{1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4}, roundsOf(h.cps))
	require.Empty(t, h.cps[len(h.cps)-1].NextNode)
	st, err := decodeState(h.cp.State)
	require.NoError(t, err)
	require.Equal(t, []string{
		"open@1", "a@1", "b@1", "close@1", "check@1",
		"open@2", "a@2", "b@2", "close@2", "check@2",
		"open@3", "a@3", "b@3", "close@3", "check@3", "finish@4",
	}, st.Log, "branch outputs merge in declared order")

	// debate.started records what ran.
	started := payload(t, h.events[0])
	require.Equal(t, "test", started["protocol"])
	require.Equal(t, "deal-1", started["deal_id"])
	require.Equal(t, map[string]any{"mode": "", "rounds": float64(3)}, started["options"])
	require.Equal(t, h.cps[0].InputHash, started["state_hash"])

	// node.completed carries the audit artifacts of seed 001 §7.
	completed := ofType(h.events, EventNodeCompleted)
	require.Len(t, completed, len(h.cps))
	for i, e := range completed {
		p := payload(t, e)
		require.Equal(t, h.cps[i].InputHash, p["input_hash"])
		require.Equal(t, h.cps[i].OutputHash, p["output_hash"])
		require.Equal(t, float64(i+1), p["step"])
		require.Equal(t, h.cps[i].Node, p["node"])
	}
	open := payload(t, completed[0])
	require.Equal(t, []any{"c-1"}, open["claims"])
	require.Equal(t, map[string]any{"argument": float64(1)}, open["events"])
	require.Equal(t, "critique", open["next_node"])
	crit := payload(t, completed[1])
	require.Equal(t, []any{"d-a-1", "d-b-1"}, crit["defects"])
	require.Equal(t, float64(2), crit["event_count"])
	require.Equal(t, []any{
		map[string]any{"node": "a", "actor": "critic_a", "attempts": float64(1), "events": map[string]any{"critique": float64(1)}},
		map[string]any{"node": "b", "actor": "critic_b", "attempts": float64(1), "events": map[string]any{"critique": float64(1)}},
	}, crit["branches"])
	require.Equal(t, float64(3), payload(t, completed[2])["attempts"], "close succeeded at its third attempt")
	require.Equal(t, map[string]any{}, payload(t, completed[3])["events"])

	// Rounds: every event carries its round; round.completed counts them.
	for _, e := range h.events {
		switch {
		case e.Node == "finish":
			require.Equal(t, 4, e.Round)
		case e.Type == EventDebateStarted:
			require.Equal(t, 1, e.Round)
		}
	}
	var rounds []float64
	for _, e := range ofType(h.events, EventRoundCompleted) {
		rounds = append(rounds, payload(t, e)["round"].(float64))
	}
	require.Equal(t, []float64{1, 2, 3}, rounds)

	// Retries: two failed attempts, with jittered exponential backoff.
	retries := ofType(h.events, EventNodeRetry)
	require.Len(t, retries, 2)
	for i, e := range retries {
		p := payload(t, e)
		require.Equal(t, float64(i+1), p["attempt"])
		require.Equal(t, fmt.Sprintf("arbiter model overloaded (attempt %d)", i+1), p["error"])
	}
	require.Equal(t, []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}, h.sleepsSeen(),
		"Rand 0.5 × BaseBackoff·2^(n-1)")

	// The parallel group: b always finished first, a is always first in
	// the ledger.
	_, done := h.hooks.snapshot()
	require.Equal(t, []string{"b", "a", "b", "a", "b", "a"}, done)
}

func roundsOf(cps []debate.Checkpoint) []int {
	out := make([]int, len(cps))
	for i, cp := range cps {
		out[i] = cp.Round
	}
	return out
}

func TestStepDeterministic(t *testing.T) {
	t.Parallel()
	for _, opts := range []string{`{"rounds":3}`, `{"rounds":2,"mode":"gate"}`, `{"rounds":1,"mode":"fail"}`} {
		var runs [][]string
		var states [][]string
		for range 3 {
			h := newHarness(t, opts)
			h.run(t.Context(), nil)
			if h.d.Status == debate.DebateAwaitingReview {
				c, err := h.eng.ResolveGate(h.d, h.gate(), true, "ok", debate.Authority{ClaimedActor: "alice"})
				require.NoError(t, err)
				h.apply(c)
				h.run(t.Context(), nil)
			}
			runs = append(runs, hashes(h.events))
			var s []string
			for _, cp := range h.cps {
				s = append(s, cp.OutputHash, string(cp.State))
			}
			states = append(states, s)
		}
		require.Equal(t, runs[0], runs[1], opts)
		require.Equal(t, runs[0], runs[2], opts)
		require.Equal(t, states[0], states[1], opts)
	}
}

func TestStepCrashResume(t *testing.T) {
	t.Parallel()
	ref := newHarness(t, `{"rounds":3}`)
	ref.run(t.Context(), nil)

	t.Run("worker dies before every commit", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, `{"rounds":3}`)
		h.run(t.Context(), func(int) bool { return true })
		require.Equal(t, hashes(ref.events), hashes(h.events))
		require.Equal(t, ref.cps, h.cps)
		// At-least-once execution: every node ran twice.
		runs, _ := h.hooks.snapshot()
		refRuns, _ := ref.hooks.snapshot()
		require.Len(t, runs, 2*len(refRuns))
	})

	for _, node := range []string{"close", "a", "open"} {
		t.Run("shutdown during "+node, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, `{"rounds":3}`)
			ctx, cancel := context.WithCancel(t.Context())
			fired := false
			h.hooks.before = func(nctx context.Context, n string, in *NodeInput) error {
				if n == node && in.Round == 2 && !fired {
					fired = true
					cancel()
					<-nctx.Done()
					return nctx.Err()
				}
				return nil
			}
			var err error
			for h.d.Status.Runnable() {
				var c *debate.StepCommit
				c, err = h.step(ctx)
				if err != nil {
					require.Nil(t, c, "no commit on shutdown")
					break
				}
				h.apply(c)
			}
			require.ErrorIs(t, err, context.Canceled)
			require.True(t, fired)
			seq := h.d.LastSeq
			require.Less(t, seq, ref.d.LastSeq)
			require.Equal(t, hashes(ref.events[:seq]), hashes(h.events), "what was committed is a prefix of the reference")
			// A new worker resumes from the last checkpoint.
			h.run(t.Context(), nil)
			require.Equal(t, hashes(ref.events), hashes(h.events))
			require.Equal(t, debate.DebateCompleted, h.d.Status)
		})
	}
}

func TestStepGate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		approve    bool
		tail       []string
		status     debate.DebateStatus
		stopReason string
	}{
		{
			approve: true,
			tail: []string{
				"node.started after_review engine", "review_outcome after_review arbiter", "node.completed after_review engine",
				"node.started finish engine", "summary finish arbiter", "node.completed finish engine", "debate.stopped finish engine",
			},
			status: debate.DebateCompleted, stopReason: ReasonEnd,
		},
		{
			approve: false,
			tail: []string{
				"node.started after_review engine", "review_outcome after_review arbiter", "node.completed after_review engine",
				"node.started rejected engine", "node.completed rejected engine", "debate.stopped rejected engine",
			},
			status: debate.DebateNeedsReview, stopReason: "REJECTED_BY_REVIEWER",
		},
	} {
		t.Run(fmt.Sprintf("approve=%v", tc.approve), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, `{"rounds":3,"mode":"gate"}`)
			h.run(t.Context(), nil)

			// The review node opened a gate and the debate waits.
			require.Equal(t, debate.DebateAwaitingReview, h.d.Status)
			require.Equal(t, "after_review", h.d.NextNode)
			gateOpened := []string{"node.started review engine", "node.completed review engine", "human_gate.created review engine"}
			require.Equal(t, append(threeRounds(), gateOpened...), compact(h.events))
			g := h.gate()
			require.Equal(t, GateID("deb-1", 13), g.ID)
			require.Equal(t, "review", g.Node)
			require.Equal(t, []string{"c-1", "c-3"}, g.ClaimIDs)
			require.Equal(t, "after_review", h.cp.NextNode)
			created := payload(t, h.events[len(h.events)-1])
			require.Equal(t, g.ID, created["gate_id"])
			require.Equal(t, "after_review", created["next_node"])
			require.Equal(t, true, payload(t, h.events[len(h.events)-2])["gate"])

			// Nothing runs while the gate is open.
			_, err := h.step(t.Context())
			require.ErrorIs(t, err, debate.ErrFailedPrecondition)
			_, err = h.eng.ResolveGate(h.d, debate.HumanGate{ID: g.ID, DebateID: "other", Status: debate.GateOpen}, true, "", debate.Authority{ClaimedActor: "alice"})
			require.ErrorIs(t, err, debate.ErrFailedPrecondition)

			c, err := h.eng.ResolveGate(h.d, g, tc.approve, "checked the statements",
				debate.Authority{KeyID: "key-1", Scopes: []string{"admin"}, ClaimedActor: "alice"})
			require.NoError(t, err)
			require.True(t, c.Enqueue)
			require.Equal(t, debate.DebateRunning, c.Status)
			require.Equal(t, "after_review", c.NextNode)
			require.Nil(t, c.Checkpoint)
			require.Equal(t, []string{"human_gate.resolved review operator"}, compact(c.Events))
			want := debate.GateRejected
			if tc.approve {
				want = debate.GateApproved
			}
			require.Equal(t, map[string]any{"gate_id": g.ID, "status": string(want), "reason": "checked the statements", "by": "alice",
				"authority": map[string]any{"key_id": "key-1", "scopes": []any{"admin"}, "claimed_actor": "alice"}}, payload(t, c.Events[0]),
				"the claimed actor is shown, and the key that was authenticated is recorded beside it")
			require.Equal(t, want, c.ResolveGate.Status)
			require.Equal(t, "alice", c.ResolveGate.ResolvedBy)
			h.apply(c)

			// A gate resolves once; a runner must hand it to the next step.
			_, err = h.eng.ResolveGate(h.d, h.gates[g.ID], true, "", debate.Authority{ClaimedActor: "bob"})
			require.ErrorIs(t, err, debate.ErrFailedPrecondition)
			require.EqualError(t, err, fmt.Sprintf("gate %q of debate %q is already resolved (%s by alice): failed precondition", g.ID, h.d.ID, want))
			_, err = h.eng.Step(t.Context(), h.d, h.cp, nil)
			require.ErrorIs(t, err, debate.ErrFailedPrecondition)

			h.run(t.Context(), nil)
			require.Equal(t, slices.Concat(threeRounds(), gateOpened, []string{"human_gate.resolved review operator"}, tc.tail), compact(h.events))
			require.Equal(t, tc.status, h.d.Status)
			require.Equal(t, tc.stopReason, h.d.StopReason)
			outcome := ofType(h.events, "review_outcome")
			require.Len(t, outcome, 1)
			require.Equal(t, string(want), payload(t, outcome[0])["status"])
			if !tc.approve {
				p := payload(t, ofType(h.events, EventNodeCompleted)[14])
				require.Equal(t, map[string]any{"status": "needs_review", "reason": "REJECTED_BY_REVIEWER"}, p["stop"])
			}
		})
	}
}

func TestStepFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode     string
		node     string
		attempts int
		err      string
	}{
		{mode: "fail", node: "boom", attempts: 3, err: "model unavailable"},
		{mode: "timeout", node: "hang", attempts: 2, err: "timed out after 20ms"},
		{mode: "panic", node: "panicky", attempts: 3, err: "panic: kaboom"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, `{"rounds":3,"mode":"`+tc.mode+`"}`)
			h.run(t.Context(), nil)

			var tail []string
			tail = append(tail, "node.started "+tc.node+" engine")
			for range tc.attempts - 1 {
				tail = append(tail, "node.retry "+tc.node+" engine")
			}
			tail = append(tail, "node.failed "+tc.node+" engine", "debate.stopped "+tc.node+" engine")
			require.Equal(t, append(threeRounds(), tail...), compact(h.events))

			require.Equal(t, debate.DebateNeedsReview, h.d.Status)
			require.Equal(t, ReasonNodeFailed, h.d.StopReason)
			require.Equal(t, "node "+tc.node+": "+tc.err, h.d.Error)
			require.Empty(t, h.d.NextNode)
			require.Equal(t, tc.attempts, h.d.Attempt)
			require.Len(t, h.cps, 12, "a failed step writes no checkpoint")

			n := len(h.events)
			require.Equal(t, map[string]any{"node": tc.node, "step": float64(13), "attempts": float64(tc.attempts), "error": tc.err}, payload(t, h.events[n-2]))
			require.Equal(t, map[string]any{"status": "needs_review", "reason": ReasonNodeFailed, "node": tc.node, "error": tc.err}, payload(t, h.events[n-1]))
			for i, e := range ofType(h.events, EventNodeRetry)[2:] {
				require.Equal(t, map[string]any{"node": tc.node, "attempt": float64(i + 1), "error": tc.err}, payload(t, e))
			}
			require.Len(t, h.sleepsSeen(), 2+tc.attempts-1)

			// A terminal debate does not step.
			_, err := h.step(t.Context())
			require.ErrorIs(t, err, debate.ErrFailedPrecondition)
		})
	}

	t.Run("stop", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, `{"rounds":2,"mode":"stop"}`)
		h.run(t.Context(), nil)
		require.Equal(t, debate.DebateCompleted, h.d.Status)
		require.Equal(t, "CONSENSUS", h.d.StopReason)
		require.Equal(t, []string{"node.started stopper engine", "node.completed stopper engine", "debate.stopped stopper engine"},
			compact(h.events[len(h.events)-3:]))
		require.Equal(t, map[string]any{"status": "completed", "reason": "CONSENSUS"}, payload(t, h.events[len(h.events)-2])["stop"])
		require.Equal(t, map[string]any{"status": "completed", "reason": "CONSENSUS", "node": "stopper"}, payload(t, h.events[len(h.events)-1]))
		require.Empty(t, h.cp.NextNode)
		require.Equal(t, "stopper", h.cp.Node)
	})

	t.Run("max steps", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, `{"rounds":5}`)
		h.run(t.Context(), nil)
		require.Equal(t, debate.DebateNeedsReview, h.d.Status)
		require.Equal(t, ReasonMaxSteps, h.d.StopReason)
		require.Len(t, h.cps, 16)
		require.Equal(t, 4, h.d.Round)
		last := h.events[len(h.events)-1]
		require.Equal(t, "debate.stopped check engine", compact([]debate.Event{last})[0])
		require.Equal(t, map[string]any{"status": "needs_review", "reason": ReasonMaxSteps, "node": "check", "next_node": "open"}, payload(t, last))
		require.Equal(t, "round.completed check engine", compact(h.events[len(h.events)-2:])[0])
		require.Empty(t, h.cp.NextNode)
	})
}

func TestAbort(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `{}`)
	for range 3 {
		c, err := h.step(t.Context())
		require.NoError(t, err)
		h.apply(c)
	}
	c, err := h.eng.Abort(h.d, "deal withdrawn", debate.Authority{KeyID: "key-2", Scopes: []string{}, ClaimedActor: "alice"})
	require.NoError(t, err)
	require.Equal(t, debate.DebateAborted, c.Status)
	require.Equal(t, "deal withdrawn", c.StopReason)
	require.Empty(t, c.NextNode)
	require.Nil(t, c.Checkpoint)
	require.Equal(t, []string{"debate.aborted check operator"}, compact(c.Events))
	require.Equal(t, map[string]any{"reason": "deal withdrawn", "by": "alice",
		"authority": map[string]any{"key_id": "key-2", "scopes": []any{}, "claimed_actor": "alice"}}, payload(t, c.Events[0]))
	h.apply(c)

	_, err = h.eng.Abort(h.d, "again", debate.Authority{ClaimedActor: "alice"})
	require.ErrorIs(t, err, debate.ErrFailedPrecondition)
	_, err = h.step(t.Context())
	require.ErrorIs(t, err, debate.ErrFailedPrecondition)

	// A queued debate with an empty ledger, or one waiting at a gate, can
	// be aborted too.
	q := newHarness(t, `{}`)
	c, err = q.eng.Abort(q.d, "", debate.Authority{})
	require.NoError(t, err)
	require.Equal(t, int64(1), c.Events[0].Seq)
	require.Equal(t, ReasonAborted, c.StopReason)
	require.Equal(t, map[string]any{"reason": ReasonAborted, "by": ActorOperator}, payload(t, c.Events[0]))

	g := newHarness(t, `{"rounds":1,"mode":"gate"}`)
	g.run(t.Context(), nil)
	require.Equal(t, debate.DebateAwaitingReview, g.d.Status)
	var open debate.HumanGate
	for _, x := range g.gates {
		if x.Status == debate.GateOpen {
			open = x
		}
	}
	require.NotEmpty(t, open.ID)
	c, err = g.eng.Abort(g.d, "", debate.Authority{ClaimedActor: "bob"}, open)
	require.NoError(t, err)
	// The open gate is closed as cancelled, and the event names it.
	require.NotNil(t, c.ResolveGate)
	require.Equal(t, debate.GateCancelled, c.ResolveGate.Status)
	require.Equal(t, "bob", c.ResolveGate.ResolvedBy)
	require.Equal(t, open.ID, payload(t, c.Events[0])["cancelled_gate"])
	g.apply(c)
	require.Equal(t, debate.DebateAborted, g.d.Status)
}

func TestStepPreconditions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `{}`)
	for range 2 {
		c, err := h.step(t.Context())
		require.NoError(t, err)
		h.apply(c)
	}
	cp := *h.cp
	resolved := debate.HumanGate{ID: GateID("deb-1", cp.Step), DebateID: "deb-1", Status: debate.GateApproved}
	for _, tc := range []struct {
		name string
		mut  func(d *debate.Debate, cp **debate.Checkpoint, g **debate.HumanGate)
	}{
		{"unknown protocol", func(d *debate.Debate, _ **debate.Checkpoint, _ **debate.HumanGate) { d.Protocol = "nope" }},
		{"awaiting review", func(d *debate.Debate, _ **debate.Checkpoint, _ **debate.HumanGate) {
			d.Status = debate.DebateAwaitingReview
		}},
		{"completed", func(d *debate.Debate, _ **debate.Checkpoint, _ **debate.HumanGate) { d.Status = debate.DebateCompleted }},
		{"next node without checkpoint", func(_ *debate.Debate, c **debate.Checkpoint, _ **debate.HumanGate) { *c = nil }},
		{"checkpoint without next node", func(d *debate.Debate, _ **debate.Checkpoint, _ **debate.HumanGate) { d.NextNode = "" }},
		{"checkpoint of another debate", func(_ *debate.Debate, c **debate.Checkpoint, _ **debate.HumanGate) {
			x := **c
			x.DebateID = "deb-2"
			*c = &x
		}},
		{"checkpoint disagrees on next node", func(d *debate.Debate, _ **debate.Checkpoint, _ **debate.HumanGate) { d.NextNode = "open" }},
		{"checkpoint past the head", func(d *debate.Debate, _ **debate.Checkpoint, _ **debate.HumanGate) { d.LastSeq = 3 }},
		{"gate resolved since the checkpoint not given", func(d *debate.Debate, _ **debate.Checkpoint, _ **debate.HumanGate) { d.LastSeq++ }},
		{"gate without a resolution since the checkpoint", func(_ *debate.Debate, _ **debate.Checkpoint, g **debate.HumanGate) { *g = &resolved }},
		{"gate of another step", func(d *debate.Debate, _ **debate.Checkpoint, g **debate.HumanGate) {
			d.LastSeq++
			x := resolved
			x.ID = GateID("deb-1", 1)
			*g = &x
		}},
		{"open gate", func(d *debate.Debate, _ **debate.Checkpoint, g **debate.HumanGate) {
			d.LastSeq++
			x := resolved
			x.Status = debate.GateOpen
			*g = &x
		}},
		{"gate before the first step", func(d *debate.Debate, c **debate.Checkpoint, g **debate.HumanGate) {
			d.NextNode, *c, *g = "", nil, &resolved
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, c := h.d, &cp
			var g *debate.HumanGate
			tc.mut(&d, &c, &g)
			out, err := h.eng.Step(t.Context(), d, c, g)
			require.ErrorIs(t, err, debate.ErrFailedPrecondition)
			require.Nil(t, out)
		})
	}

	t.Run("cancelled context", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		out, err := h.eng.Step(ctx, h.d, &cp, nil)
		require.ErrorIs(t, err, context.Canceled)
		require.Nil(t, out)
	})

	t.Run("resolve gate of a running debate", func(t *testing.T) {
		t.Parallel()
		_, err := h.eng.ResolveGate(h.d, debate.HumanGate{ID: "g", DebateID: "deb-1", Status: debate.GateOpen}, true, "", debate.Authority{})
		require.ErrorIs(t, err, debate.ErrFailedPrecondition)
	})
}

func TestStepCheckpointIntegrity(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `{}`)
	for range 4 {
		c, err := h.step(t.Context())
		require.NoError(t, err)
		h.apply(c)
	}
	want, err := h.step(t.Context())
	require.NoError(t, err)

	// A store that hands the state back reordered and re-spaced (jsonb)
	// changes nothing.
	var m map[string]any
	require.NoError(t, json.Unmarshal(h.cp.State, &m))
	pretty, err := json.MarshalIndent(m, "", "   ")
	require.NoError(t, err)
	cp := *h.cp
	cp.State = pretty
	got, err := h.eng.Step(t.Context(), h.d, &cp, nil)
	require.NoError(t, err)
	require.Equal(t, want, got)

	// A state that no longer matches its hash fails the debate.
	for _, state := range []string{`{"rounds":3,"mode":"","round":1,"log":["forged"]}`, `{not json`} {
		cp.State = json.RawMessage(state)
		c, err := h.eng.Step(t.Context(), h.d, &cp, nil)
		require.NoError(t, err)
		require.Equal(t, debate.DebateFailed, c.Status)
		require.Equal(t, ReasonCheckpointIntegrity, c.StopReason)
		require.Nil(t, c.Checkpoint)
		require.Equal(t, []string{"debate.stopped open engine"}, compact(c.Events))
		require.Contains(t, c.Error, "checkpoint 4")
	}
}

// soloProtocol is a one-node protocol whose node returns out (or err).
func soloProtocol(out *NodeOutput, next func(json.RawMessage) (string, error)) *Protocol {
	n := &Node{Name: "solo", Actor: "advocate", Run: func(context.Context, *NodeInput) (*NodeOutput, error) { return out, nil }}
	p := &Protocol{
		Name: "solo", Roles: []string{"advocate", "arbiter"}, Start: "solo", MaxSteps: 5,
		RoleGuard: map[string][]string{"verdict": {"arbiter"}},
		Nodes:     []*Node{n},
	}
	if next != nil {
		n.Edges, n.Next = []string{"other"}, next
		p.Nodes = append(p.Nodes, &Node{Name: "other", Actor: "arbiter", Run: n.Run})
	}
	return p
}

func newTestEngine(t testing.TB, ps ...*Protocol) (*Engine, *[]time.Duration) {
	reg, err := NewRegistry(ps...)
	require.NoError(t, err)
	var sleeps []time.Duration
	var mu sync.Mutex // branches sleep concurrently
	e, err := New(Config{
		Protocols: reg, Sealer: fakeSealer{}, Now: func() time.Time { return t0 }, Rand: func() float64 { return 0.5 },
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			sleeps = append(sleeps, d)
			return ctx.Err()
		},
	})
	require.NoError(t, err)
	return e, &sleeps
}

func firstStep(t testing.TB, e *Engine, protocol string) *debate.StepCommit {
	t.Helper()
	c, err := e.Step(t.Context(), debate.Debate{ID: "deb-1", TenantID: "ten-1", DealID: "deal-1", Protocol: protocol, Status: debate.DebateQueued}, nil, nil)
	require.NoError(t, err)
	return c
}

func TestStepOutputChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		out  *NodeOutput
		next func(json.RawMessage) (string, error)
		err  string
	}{
		{name: "engine event type", out: &NodeOutput{Events: []Emit{{Type: EventDebateStopped}}}, err: `events[0]: "debate.stopped" is an engine event type`},
		{name: "empty event type", out: &NodeOutput{Events: []Emit{{Payload: map[string]any{}}}}, err: "events[0]: empty event type"},
		{name: "actor not a role", out: &NodeOutput{Events: []Emit{{Type: "x", Actor: "operator"}}}, err: `events[0]: actor "operator" is not a role of the protocol`},
		{name: "role guard", out: &NodeOutput{Events: []Emit{{Type: "verdict"}}}, err: `events[0]: role guard: "advocate" may not emit "verdict"`},
		{name: "payload not an object", out: &NodeOutput{Events: []Emit{{Type: "x", Payload: []int{1}}}}, err: "events[0]: payload: not a JSON object"},
		{name: "raw payload not an object", out: &NodeOutput{Events: []Emit{{Type: "x", Payload: json.RawMessage(`"s"`)}}}, err: "events[0]: payload: not a JSON object"},
		{name: "raw payload invalid", out: &NodeOutput{Events: []Emit{{Type: "x", Payload: []byte(`{"a":`)}}}, err: "events[0]: payload: not a JSON object"},
		{name: "payload not encodable", out: &NodeOutput{Events: []Emit{{Type: "x", Payload: map[string]any{"f": func() {}}}}}, err: "events[0]: payload: json: unsupported type"},
		{name: "state not JSON", out: &NodeOutput{State: json.RawMessage(`{"a":1`)}, err: "state: "},
		{name: "gate without reason", out: &NodeOutput{Gate: &GateRequest{}}, next: func(json.RawMessage) (string, error) { return "other", nil }, err: "gate: reason is required"},
		{name: "gate and stop", out: &NodeOutput{Gate: &GateRequest{Reason: "r"}, Stop: &Stop{Reason: "r"}}, err: "cannot both stop"},
		{name: "gate at the end", out: &NodeOutput{Gate: &GateRequest{Reason: "r"}}, err: `gate: node "solo" asks for a gate but has no next node`},
		{name: "stop without reason", out: &NodeOutput{Stop: &Stop{}}, err: "stop: reason is required"},
		{name: "stop aborted", out: &NodeOutput{Stop: &Stop{Status: debate.DebateAborted, Reason: "r"}}, err: `stop: status "aborted" is not completed`},
		{name: "next not an edge", out: &NodeOutput{}, next: func(json.RawMessage) (string, error) { return "solo", nil }, err: `next: "solo" is not an edge of "solo"`},
		{name: "next fails", out: &NodeOutput{}, next: func(json.RawMessage) (string, error) { return "", errors.New("bad state") }, err: "next: bad state"},
		{name: "next panics", out: &NodeOutput{}, next: func(json.RawMessage) (string, error) { panic("oops") }, err: "next: panic: oops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, sleeps := newTestEngine(t, soloProtocol(tc.out, tc.next))
			c := firstStep(t, e, "solo")
			require.Equal(t, debate.DebateNeedsReview, c.Status, "an output the engine refuses fails the attempt")
			require.Equal(t, []string{
				"debate.started engine", "node.started solo engine", "node.retry solo engine", "node.retry solo engine",
				"node.failed solo engine", "debate.stopped solo engine",
			}, compact(c.Events))
			require.Contains(t, c.Error, tc.err)
			require.Len(t, *sleeps, 2)
		})
	}

	t.Run("accepted", func(t *testing.T) {
		t.Parallel()
		out := &NodeOutput{
			State: json.RawMessage(` { "b" : [1, 2.50, "x"], "a" : null } `),
			Events: []Emit{
				{Type: "verdict", Actor: "arbiter", Payload: map[string]any{"claim_ids": []string{"c1", "c2"}, "defect_id": "d1"}},
				{Type: "note", Payload: json.RawMessage(` {"claim_id": "c2", "defect_ids": "not a list"} `)},
				{Type: "note"},
			},
		}
		e, _ := newTestEngine(t, soloProtocol(out, nil))
		c := firstStep(t, e, "solo")
		require.Equal(t, debate.DebateCompleted, c.Status)
		require.Equal(t, []string{
			"debate.started engine", "node.started solo engine", "verdict solo arbiter", "note solo advocate", "note solo advocate",
			"node.completed solo engine", "debate.stopped solo engine",
		}, compact(c.Events))
		require.Equal(t, `{"a":null,"b":[1,2.5,"x"]}`, string(c.Checkpoint.State), "the state is stored canonical")
		require.Equal(t, "{}", string(c.Events[4].Payload))
		p := payload(t, c.Events[5])
		require.Equal(t, []any{"c1", "c2"}, p["claims"])
		require.Equal(t, []any{"d1"}, p["defects"])
		require.Equal(t, map[string]any{"verdict": float64(1), "note": float64(2)}, p["events"])
		require.Equal(t, hashHex([]byte("{}")), p["input_hash"])
		require.Equal(t, hashHex(c.Checkpoint.State), p["output_hash"])
	})

	t.Run("canonical already", func(t *testing.T) {
		t.Parallel()
		text, err := canon.Encode(map[string]any{"b": 1, "a": "x"})
		require.NoError(t, err)
		state := json.RawMessage(`{"a":1}`)
		e, _ := newTestEngine(t, soloProtocol(&NodeOutput{State: state, Canonical: true, Events: []Emit{{Type: "note", Payload: text}}}, nil))
		c := firstStep(t, e, "solo")
		require.Equal(t, debate.DebateCompleted, c.Status)
		require.Equal(t, `{"a":"x","b":1}`, string(c.Events[2].Payload))
		require.Same(t, &state[0], &c.Checkpoint.State[0], "a canonical state is kept as it is")
		require.Equal(t, hashHex(state), c.Checkpoint.OutputHash)
	})
}

func TestStepRetryPolicy(t *testing.T) {
	t.Parallel()
	failing := func(n *Node, err error) *Protocol {
		n.Name, n.Actor = "n", "advocate"
		n.Run = func(context.Context, *NodeInput) (*NodeOutput, error) { return nil, err }
		return &Protocol{Name: "p", Roles: []string{"advocate"}, Start: "n", MaxSteps: 1, Nodes: []*Node{n}}
	}

	t.Run("permanent error", func(t *testing.T) {
		t.Parallel()
		e, sleeps := newTestEngine(t, failing(&Node{}, Permanent(errors.New("schema mismatch"))))
		c := firstStep(t, e, "p")
		require.Equal(t, []string{"debate.started engine", "node.started n engine", "node.failed n engine", "debate.stopped n engine"}, compact(c.Events))
		require.Equal(t, "node n: schema mismatch", c.Error)
		require.Empty(t, *sleeps)
		require.Nil(t, Permanent(nil))
	})

	t.Run("backoff grows and is capped", func(t *testing.T) {
		t.Parallel()
		e, sleeps := newTestEngine(t, failing(&Node{MaxAttempts: 7}, errors.New("503")))
		c := firstStep(t, e, "p")
		require.Len(t, ofType(c.Events, EventNodeRetry), 6)
		require.Equal(t, 7, c.Attempt)
		ms := time.Millisecond
		require.Equal(t, []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms, 800 * ms, 1000 * ms}, *sleeps)
		require.Equal(t, time.Second, e.backoff(60), "no overflow")
	})

	t.Run("secrets in error texts are masked before sealing", func(t *testing.T) {
		t.Parallel()
		const configured = "plain-configured-key-42"
		leak := errors.New("401: Incorrect API key provided: " + configured + " (Authorization: Bearer sk-live-abcdef123456)")
		reg, err := NewRegistry(failing(&Node{}, leak))
		require.NoError(t, err)
		var logs bytes.Buffer
		e, err := New(Config{Protocols: reg, Sealer: fakeSealer{}, Now: func() time.Time { return t0 },
			Sleep:  func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
			Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
			Redact: func(s string) string { return strings.ReplaceAll(redact.Text(s), configured, redact.Mask) }})
		require.NoError(t, err)
		c := firstStep(t, e, "p")
		require.Len(t, ofType(c.Events, EventNodeRetry), 2)
		texts := []string{c.Error, logs.String()}
		for _, ev := range c.Events {
			texts = append(texts, string(ev.Payload))
		}
		for _, s := range texts {
			require.NotContains(t, s, configured)
			require.NotContains(t, s, "sk-live-abcdef123456")
		}
		require.Contains(t, c.Error, "Incorrect API key provided")

		// Without a Redact, credential shapes are still masked.
		e, _ = newTestEngine(t, failing(&Node{}, leak))
		c = firstStep(t, e, "p")
		require.NotContains(t, c.Error, "sk-live-abcdef123456")
		require.NotContains(t, string(ofType(c.Events, EventNodeRetry)[0].Payload), "sk-live-abcdef123456")
	})

	t.Run("attempts already spent", func(t *testing.T) {
		t.Parallel()
		e, _ := newTestEngine(t, failing(&Node{}, errors.New("503")))
		c, err := e.Step(t.Context(), debate.Debate{ID: "d", TenantID: "t", Protocol: "p", Status: debate.DebateRunning, Attempt: 2}, nil, nil)
		require.NoError(t, err)
		require.Equal(t, float64(3), payload(t, c.Events[1])["attempt"])
		require.Empty(t, ofType(c.Events, EventNodeRetry))
	})

	t.Run("init fails", func(t *testing.T) {
		t.Parallel()
		p := failing(&Node{}, nil)
		p.Init = func(context.Context, InitInput) (json.RawMessage, error) {
			return nil, errors.New("registry unavailable")
		}
		e, _ := newTestEngine(t, p)
		c := firstStep(t, e, "p")
		require.Equal(t, []string{
			"debate.started engine", "node.started n engine", "node.retry n engine", "node.retry n engine",
			"node.failed n engine", "debate.stopped n engine",
		}, compact(c.Events))
		require.Equal(t, "init", payload(t, c.Events[2])["phase"])
		require.Equal(t, "init", payload(t, c.Events[4])["phase"])
		require.NotContains(t, payload(t, c.Events[0]), "state_hash")
		require.Equal(t, debate.DebateNeedsReview, c.Status)
	})

	t.Run("node ignores its context", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		n := &Node{Name: "n", Actor: "advocate", Timeout: 10 * time.Millisecond, MaxAttempts: 1,
			Run: func(context.Context, *NodeInput) (*NodeOutput, error) { <-release; return nil, nil }}
		e, _ := newTestEngine(t, &Protocol{Name: "p", Roles: []string{"advocate"}, Start: "n", MaxSteps: 1, Nodes: []*Node{n}})
		c := firstStep(t, e, "p")
		require.Equal(t, "node n: timed out after 10ms", c.Error, "the worker is not held")
	})
}

func TestStepParallelGroup(t *testing.T) {
	t.Parallel()
	branch := func(name string, out *NodeOutput, err error) *Node {
		return &Node{Name: name, Actor: name, Run: func(context.Context, *NodeInput) (*NodeOutput, error) { return out, err }}
	}
	group := func(branches ...*Node) *Protocol {
		var roles []string
		for _, b := range branches {
			roles = append(roles, b.Name)
		}
		return &Protocol{
			Name: "g", Roles: roles, Start: "group", MaxSteps: 3,
			Nodes: []*Node{
				{Name: "group", Branches: branches, Edges: []string{"after"},
					Merge: func(state json.RawMessage, outs []*NodeOutput) (json.RawMessage, error) {
						var parts []string
						for _, o := range outs {
							parts = append(parts, cmp.Or(string(o.State), "null"))
						}
						return json.RawMessage(`{"merged":[` + strings.Join(parts, ",") + `]}`), nil
					}},
				{Name: "after", Actor: ActorEngine, Run: func(context.Context, *NodeInput) (*NodeOutput, error) { return nil, nil }},
			},
		}
	}
	ev := func(typ string) []Emit { return []Emit{{Type: typ}} }

	t.Run("a failed branch fails the group", func(t *testing.T) {
		t.Parallel()
		e, _ := newTestEngine(t, group(
			branch("x", &NodeOutput{State: json.RawMessage(`1`), Events: ev("ok")}, nil),
			branch("y", nil, errors.New("y is down")),
			branch("z", nil, errors.New("z is down")),
		))
		c := firstStep(t, e, "g")
		require.Equal(t, []string{
			"debate.started engine", "node.started group engine",
			"node.retry y engine", "node.retry y engine", "node.retry z engine", "node.retry z engine",
			"node.failed group engine", "debate.stopped group engine",
		}, compact(c.Events), "retries in declared order; the unmerged outputs are not committed")
		p := payload(t, c.Events[6])
		require.Equal(t, []any{"y", "z"}, p["failed_branches"])
		require.Equal(t, "branch y: y is down", p["error"])
	})

	t.Run("gates merge, a stop wins", func(t *testing.T) {
		t.Parallel()
		e, _ := newTestEngine(t, group(
			branch("x", &NodeOutput{State: json.RawMessage(`{"x":1}`), Gate: &GateRequest{Reason: "x unsure", ClaimIDs: []string{"c1", "c2"}}}, nil),
			branch("y", &NodeOutput{Gate: &GateRequest{Reason: "y unsure", ClaimIDs: []string{"c2", "c3"}}}, nil),
		))
		c := firstStep(t, e, "g")
		require.Equal(t, debate.DebateAwaitingReview, c.Status)
		require.Equal(t, "x unsure; y unsure", c.OpenGate.Reason)
		require.Equal(t, []string{"c1", "c2", "c3"}, c.OpenGate.ClaimIDs)
		require.Equal(t, `{"merged":[{"x":1},null]}`, string(c.Checkpoint.State), "branch states canonical, in declared order")

		e, _ = newTestEngine(t, group(
			branch("x", &NodeOutput{Gate: &GateRequest{Reason: "x unsure"}}, nil),
			branch("y", &NodeOutput{Stop: &Stop{Status: debate.DebateFailed, Reason: "CRITICAL_DEFECT"}}, nil),
		))
		c = firstStep(t, e, "g")
		require.Equal(t, debate.DebateFailed, c.Status)
		require.Equal(t, "CRITICAL_DEFECT", c.StopReason)
		require.Nil(t, c.OpenGate)
	})

	t.Run("merge fails once", func(t *testing.T) {
		t.Parallel()
		calls := 0
		p := group(branch("x", nil, nil))
		p.Nodes[0].Merge = func(json.RawMessage, []*NodeOutput) (json.RawMessage, error) {
			calls++
			panic("merge bug")
		}
		e, _ := newTestEngine(t, p)
		c := firstStep(t, e, "g")
		require.Equal(t, "node group: merge: panic: merge bug", c.Error)
		require.Equal(t, 1, calls)
	})

	t.Run("bounded concurrency", func(t *testing.T) {
		t.Parallel()
		var running, peak atomic.Int32
		var bs []*Node
		for i := range 6 {
			name := fmt.Sprintf("b%d", i)
			bs = append(bs, &Node{Name: name, Actor: name, Run: func(context.Context, *NodeInput) (*NodeOutput, error) {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(2 * time.Millisecond) // gives siblings the chance to overlap, if they may
				running.Add(-1)
				return nil, nil
			}})
		}
		reg, err := NewRegistry(group(bs...))
		require.NoError(t, err)
		e, err := New(Config{Protocols: reg, Sealer: fakeSealer{}, MaxParallel: 2})
		require.NoError(t, err)
		c := firstStep(t, e, "g")
		require.Equal(t, debate.DebateRunning, c.Status)
		require.LessOrEqual(t, peak.Load(), int32(2))
		require.Positive(t, peak.Load())
	})
}

func TestNew(t *testing.T) {
	t.Parallel()
	reg, err := NewRegistry()
	require.NoError(t, err)
	for _, cfg := range []Config{
		{Sealer: fakeSealer{}},
		{Protocols: reg},
		{Protocols: reg, Sealer: fakeSealer{}, BaseBackoff: -1},
		{Protocols: reg, Sealer: fakeSealer{}, BaseBackoff: time.Second, MaxBackoff: time.Millisecond},
		{Protocols: reg, Sealer: fakeSealer{}, MaxParallel: -1},
	} {
		_, err := New(cfg)
		require.ErrorIs(t, err, debate.ErrInvalid)
	}
	e, err := New(Config{Protocols: reg, Sealer: fakeSealer{}})
	require.NoError(t, err)
	require.Equal(t, DefaultBaseBackoff, e.cfg.BaseBackoff)
	require.Equal(t, DefaultMaxBackoff, e.cfg.MaxBackoff)
	require.NoError(t, e.cfg.Sleep(t.Context(), time.Microsecond))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, e.cfg.Sleep(ctx, time.Hour), context.Canceled)
	d := e.backoff(1)
	require.True(t, d >= 0 && d < DefaultBaseBackoff, "%s", d)
}

func TestUnknownNode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `{}`)
	c, err := h.step(t.Context())
	require.NoError(t, err)
	h.apply(c)
	d, cp := h.d, *h.cp
	d.NextNode, cp.NextNode = "renamed", "renamed"
	c, err = h.eng.Step(t.Context(), d, &cp, nil)
	require.NoError(t, err)
	require.Equal(t, debate.DebateNeedsReview, c.Status)
	require.Equal(t, ReasonUnknownNode, c.StopReason)
	require.Equal(t, []string{"debate.stopped renamed engine"}, compact(c.Events))
}

// TestStepParallelScheduling runs a group whose branches sleep random,
// different times on every run, so they finish in varying orders: the
// commit is the same every time.
func TestStepParallelScheduling(t *testing.T) {
	t.Parallel()
	var bs []*Node
	var roles []string
	for i := range 4 {
		name := fmt.Sprintf("b%d", i)
		roles = append(roles, name)
		bs = append(bs, &Node{Name: name, Actor: name, Run: func(_ context.Context, in *NodeInput) (*NodeOutput, error) {
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			return &NodeOutput{
				State:  json.RawMessage(fmt.Sprintf(`{"by":%q}`, name)),
				Events: []Emit{{Type: "finding", Payload: map[string]any{"claim_id": "c-" + name}}, {Type: "finding"}},
			}, nil
		}})
	}
	p := &Protocol{Name: "g", Roles: roles, Start: "g", MaxSteps: 2, Nodes: []*Node{{
		Name: "g", Branches: bs,
		Merge: func(_ json.RawMessage, outs []*NodeOutput) (json.RawMessage, error) {
			var by []string
			for _, o := range outs {
				var x struct{ By string }
				if err := json.Unmarshal(o.State, &x); err != nil {
					return nil, err
				}
				by = append(by, x.By)
			}
			return json.Marshal(map[string]any{"order": by})
		},
	}}}
	e, _ := newTestEngine(t, p)
	want := firstStep(t, e, "g")
	require.Equal(t, `{"order":["b0","b1","b2","b3"]}`, string(want.Checkpoint.State))
	require.Equal(t, []any{"c-b0", "c-b1", "c-b2", "c-b3"}, payload(t, want.Events[10])["claims"])
	for range 20 {
		require.Equal(t, want, firstStep(t, e, "g"))
	}
}

// TestNodeInputHeadSeq: every node (branches included) sees the seq of the
// last event committed before its step, so a protocol that caches what it
// read of the ledger knows whether it has read everything.
func TestNodeInputHeadSeq(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `{"rounds":2}`)
	var mu sync.Mutex
	seen := map[string]int64{} // node@round → head seq it saw
	h.hooks.before = func(_ context.Context, node string, in *NodeInput) error {
		mu.Lock()
		defer mu.Unlock()
		seen[fmt.Sprintf("%s@%d", node, in.Round)] = in.HeadSeq
		return nil
	}
	// The committed events before each node's step: its node.started opens
	// the step (after debate.started in the first step, where nothing is
	// committed yet), so the head is the event before it.
	want := map[string]int64{}
	h.run(t.Context(), nil)
	for _, e := range h.events {
		if e.Type == EventNodeStarted {
			want[fmt.Sprintf("%s@%d", e.Node, e.Round)] = e.Seq - 1
		}
	}
	require.Equal(t, EventDebateStarted, h.events[0].Type)
	want["open@1"] = 0
	require.NotEmpty(t, seen)
	for k, head := range seen {
		node, _, _ := strings.Cut(k, "@")
		if grp, ok := map[string]string{"a": "critique", "b": "critique"}[node]; ok {
			k = grp + k[len(node):]
		}
		w, ok := want[k]
		require.True(t, ok, "no node.started for %s", k)
		require.Equal(t, w, head, k)
	}
}

// TestStepAhead: a step computed ahead gets the previous step's events as
// Pending after HeadSeq, is fenced by that step's head, and is the step
// Step would compute once the previous one committed; StepAhead refuses a
// protocol that is not Pipelined and pending events that do not end at the
// debate's head.
func TestStepAhead(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `{"rounds":2}`)
	var mu sync.Mutex
	var seen []NodeInput
	h.hooks.before = func(_ context.Context, _ string, in *NodeInput) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, *in)
		return nil
	}
	first, err := h.step(t.Context())
	require.NoError(t, err)
	h.apply(first)

	_, err = h.eng.StepAhead(t.Context(), h.d, h.cp, first.Events)
	require.ErrorIs(t, err, debate.ErrFailedPrecondition, "the test protocol is not pipelined")

	h.proto.Pipelined = true
	_, err = h.eng.StepAhead(t.Context(), h.d, h.cp, first.Events[:len(first.Events)-1])
	require.ErrorIs(t, err, debate.ErrFailedPrecondition, "pending events that stop short of the head")

	seen = nil
	ahead, err := h.eng.StepAhead(t.Context(), h.d, h.cp, first.Events)
	require.NoError(t, err)
	require.NotEmpty(t, seen)
	in := seen[0]
	require.Equal(t, first.ExpectSeq, in.HeadSeq, "HeadSeq is the head before the pending step")
	require.Equal(t, first.Events, in.Pending)
	require.Equal(t, h.d.LastSeq, ahead.ExpectSeq, "fenced by the pending step's head")
	require.Equal(t, h.d.HeadHash, ahead.ExpectHash)

	seen = nil
	now, err := h.step(t.Context())
	require.NoError(t, err)
	require.Empty(t, seen[0].Pending)
	require.Equal(t, h.d.LastSeq, seen[0].HeadSeq)
	require.Equal(t, now, ahead, "the same step as once the previous one committed")
}

package orchestrator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// TestMain fails the package if a goroutine started by the engine outlives
// the tests (goleak is not a dependency of the module; this is its gist).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(2 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by the engine:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

func waitNoLeaks(timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "internal/orchestrator.") && !strings.Contains(g, "waitNoLeaks") && !strings.Contains(g, "TestMain") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// fakeSealer chains SHA-256 hashes over the fields the ledger hashes. It is
// what the engine needs of a sealer, without keys.
type fakeSealer struct{}

func (f fakeSealer) SealCanonical(prev *debate.Event, es []debate.Event) ([]debate.Event, error) {
	out := make([]debate.Event, 0, len(es))
	for _, e := range es {
		sealed, err := f.Seal(prev, e)
		if err != nil {
			return nil, err
		}
		out = append(out, sealed)
		prev = &out[len(out)-1]
	}
	return out, nil
}

func (fakeSealer) Seal(prev *debate.Event, e debate.Event) (debate.Event, error) {
	e.Seq, e.PrevHash = 1, genesis
	if prev != nil {
		if prev.DebateID != e.DebateID || prev.TenantID != e.TenantID || len(prev.Hash) != 64 {
			return debate.Event{}, errors.New("fake sealer: chain mismatch")
		}
		e.Seq, e.PrevHash = prev.Seq+1, prev.Hash
	}
	if e.Actor == "" || e.Type == "" || !json.Valid(e.Payload) || !isObject(e.Payload) {
		return debate.Event{}, fmt.Errorf("fake sealer: invalid event %+v", e)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, e.Payload); err != nil {
		return debate.Event{}, err
	}
	e.Payload = compact.Bytes()
	e.KeyID = "fake:" + e.TenantID + "/" + e.Actor
	sum := sha256.Sum256([]byte(strings.Join([]string{
		e.DebateID, e.TenantID, strconv.FormatInt(e.Seq, 10), e.Type, e.Actor, e.Node,
		strconv.Itoa(e.Round), string(e.Payload), e.Time.UTC().Format(time.RFC3339Nano), e.PrevHash, e.KeyID,
	}, "\x00")))
	e.Hash = hex.EncodeToString(sum[:])
	e.Signature = "fake-signature-of-" + e.Hash[:16]
	return e, nil
}

// The test protocol: rounds of open → critique (a ‖ b) → close → check
// (which ends the round),
// then, by the "mode" option: finish (end of graph), review (a human gate)
// → after_review → finish | rejected (a Stop), boom (always fails), hang
// (times out), panicky (panics) or stopper (a Stop). close fails its first
// two attempts in round 1; branch a waits for branch b, so branches finish
// in the reverse of their declared order.

type testOptions struct {
	Rounds int    `json:"rounds"`
	Mode   string `json:"mode"`
}

var testModes = []string{"", "gate", "fail", "timeout", "panic", "stop"}

func testOptionsFunc(raw json.RawMessage) (json.RawMessage, error) {
	o := testOptions{Rounds: 3}
	var v debate.Violations
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			v.Add("options", "%v", err)
			return nil, v.Err()
		}
	}
	if o.Rounds < 1 || o.Rounds > 5 {
		v.Add("options.rounds", "must be between 1 and 5, got %d", o.Rounds)
	}
	if !slices.Contains(testModes, o.Mode) {
		v.Add("options.mode", "unknown mode %q", o.Mode)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return json.Marshal(o)
}

type tstate struct {
	Rounds  int      `json:"rounds"`
	Mode    string   `json:"mode"`
	Round   int      `json:"round"`
	Log     []string `json:"log"`
	Verdict string   `json:"verdict,omitempty"`
}

func decodeState(raw json.RawMessage) (tstate, error) {
	var s tstate
	err := json.Unmarshal(raw, &s)
	return s, err
}

func (s tstate) encode() json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// hooks observe and steer the test protocol's nodes.
type hooks struct {
	mu        sync.Mutex
	runs      []string // "node@round#attempt", in call order
	completed []string // branch completion order
	bDone     chan struct{}
	// before runs at the start of every node call; an error fails it.
	before func(ctx context.Context, node string, in *NodeInput) error
}

func newHooks() *hooks { return &hooks{bDone: make(chan struct{}, 64)} }

func (h *hooks) enter(ctx context.Context, node string, in *NodeInput) error {
	h.mu.Lock()
	h.runs = append(h.runs, fmt.Sprintf("%s@%d#%d", node, in.Round, in.Attempt))
	before := h.before
	h.mu.Unlock()
	if before != nil {
		return before(ctx, node, in)
	}
	return nil
}

func (h *hooks) complete(branch string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.completed = append(h.completed, branch)
}

func (h *hooks) snapshot() (runs, completed []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.runs), slices.Clone(h.completed)
}

// logNode returns a node function that appends "name@round" to the state's
// log and emits the events ev builds.
func logNode(h *hooks, name string, ev func(in *NodeInput) []Emit) NodeFunc {
	return func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
		if err := h.enter(ctx, name, in); err != nil {
			return nil, err
		}
		st, err := decodeState(in.State)
		if err != nil {
			return nil, err
		}
		st.Log = append(st.Log, fmt.Sprintf("%s@%d", name, in.Round))
		out := &NodeOutput{State: st.encode()}
		if ev != nil {
			out.Events = ev(in)
		}
		return out, nil
	}
}

func newTestProtocol(h *hooks) *Protocol {
	branch := func(name, actor string, wait bool) *Node {
		return &Node{Name: name, Actor: actor, Timeout: 5 * time.Second, Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
			if err := h.enter(ctx, name, in); err != nil {
				return nil, err
			}
			if wait {
				select {
				case <-h.bDone:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			h.complete(name)
			if !wait {
				h.bDone <- struct{}{}
			}
			return &NodeOutput{
				State:  json.RawMessage(fmt.Sprintf(`{"note": "%s@%d"}`, name, in.Round)),
				Events: []Emit{{Type: "critique", Payload: map[string]any{"defect_ids": []string{fmt.Sprintf("d-%s-%d", name, in.Round)}}}},
			}, nil
		}}
	}
	stateNext := func(f func(st tstate) string) func(json.RawMessage) (string, error) {
		return func(raw json.RawMessage) (string, error) {
			st, err := decodeState(raw)
			if err != nil {
				return "", err
			}
			return f(st), nil
		}
	}
	return &Protocol{
		Name:        "test",
		Description: "a protocol exercising every feature of the engine",
		Roles:       []string{"advocate", "critic_a", "critic_b", "arbiter"},
		Start:       "open",
		MaxSteps:    16,
		Options:     testOptionsFunc,
		Init: func(_ context.Context, in InitInput) (json.RawMessage, error) {
			var o testOptions
			if err := json.Unmarshal(in.Options, &o); err != nil {
				return nil, err
			}
			return tstate{Rounds: o.Rounds, Mode: o.Mode, Log: []string{}}.encode(), nil
		},
		RoleGuard: map[string][]string{
			"argument":       {"advocate"},
			"critique":       {"critic_a", "critic_b"},
			"verdict":        {"arbiter"},
			"review_outcome": {"arbiter"},
			"summary":        {"arbiter"},
		},
		Tools: map[string][]string{"advocate": {"claim_lookup"}, "arbiter": {"claim_lookup", "calc_run"}},
		Nodes: []*Node{
			{Name: "open", Actor: "advocate", Edges: []string{"critique"}, Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
				out, err := logNode(h, "open", func(in *NodeInput) []Emit {
					return []Emit{{Type: "argument", Payload: map[string]any{"claim_id": fmt.Sprintf("c-%d", in.Round), "text": "ARR is 4.2M"}}}
				})(ctx, in)
				if err != nil {
					return nil, err
				}
				st, _ := decodeState(out.State)
				st.Round = in.Round
				out.State = st.encode()
				return out, nil
			}},
			{
				Name: "critique", Edges: []string{"close"},
				Branches: []*Node{branch("a", "critic_a", true), branch("b", "critic_b", false)},
				Merge: func(state json.RawMessage, outs []*NodeOutput) (json.RawMessage, error) {
					st, err := decodeState(state)
					if err != nil {
						return nil, err
					}
					for _, o := range outs {
						var n struct{ Note string }
						if err := json.Unmarshal(o.State, &n); err != nil {
							return nil, err
						}
						st.Log = append(st.Log, n.Note)
					}
					return st.encode(), nil
				},
			},
			{Name: "close", Actor: "arbiter", Edges: []string{"check"}, Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
				if in.Round == 1 && in.Attempt < 3 {
					_ = h.enter(ctx, "close", in)
					return nil, fmt.Errorf("arbiter model overloaded (attempt %d)", in.Attempt)
				}
				return logNode(h, "close", func(in *NodeInput) []Emit {
					return []Emit{{Type: "verdict", Payload: map[string]any{"round": in.Round}}}
				})(ctx, in)
			}},
			{
				Name: "check", Actor: ActorEngine, Run: logNode(h, "check", nil), EndsRound: true,
				Edges: []string{"open", "finish", "review", "boom", "hang", "panicky", "stopper"},
				Next: stateNext(func(st tstate) string {
					if st.Round < st.Rounds {
						return "open"
					}
					return map[string]string{"": "finish", "gate": "review", "fail": "boom", "timeout": "hang", "panic": "panicky", "stop": "stopper"}[st.Mode]
				}),
			},
			{Name: "review", Actor: "arbiter", Edges: []string{"after_review"}, Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
				if err := h.enter(ctx, "review", in); err != nil {
					return nil, err
				}
				return &NodeOutput{Gate: &GateRequest{Reason: "confirm the verdict on material claims", ClaimIDs: []string{"c-1", "c-3"}}}, nil
			}},
			{
				Name: "after_review", Actor: "arbiter", Edges: []string{"finish", "rejected"},
				Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
					if err := h.enter(ctx, "after_review", in); err != nil {
						return nil, err
					}
					if in.Gate == nil {
						return nil, Permanent(errors.New("no gate"))
					}
					st, err := decodeState(in.State)
					if err != nil {
						return nil, err
					}
					st.Verdict = string(in.Gate.Status)
					return &NodeOutput{State: st.encode(), Events: []Emit{{Type: "review_outcome", Payload: map[string]any{
						"gate_id": in.Gate.ID, "status": in.Gate.Status, "by": in.Gate.ResolvedBy,
					}}}}, nil
				},
				Next: stateNext(func(st tstate) string {
					if st.Verdict == string(debate.GateApproved) {
						return "finish"
					}
					return "rejected"
				}),
			},
			{Name: "rejected", Actor: "arbiter", Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
				if err := h.enter(ctx, "rejected", in); err != nil {
					return nil, err
				}
				return &NodeOutput{Stop: &Stop{Status: debate.DebateNeedsReview, Reason: "REJECTED_BY_REVIEWER"}}, nil
			}},
			{Name: "finish", Actor: "arbiter", Run: logNode(h, "finish", func(*NodeInput) []Emit {
				return []Emit{{Type: "summary", Payload: json.RawMessage(`{"consensus": "invest", "dissent": []}`)}}
			})},
			{Name: "boom", Actor: "arbiter", Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
				if err := h.enter(ctx, "boom", in); err != nil {
					return nil, err
				}
				return nil, errors.New("model unavailable")
			}},
			{Name: "hang", Actor: "arbiter", Timeout: 20 * time.Millisecond, MaxAttempts: 2, Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
				if err := h.enter(ctx, "hang", in); err != nil {
					return nil, err
				}
				<-ctx.Done()
				return nil, ctx.Err()
			}},
			{Name: "panicky", Actor: "arbiter", Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
				if err := h.enter(ctx, "panicky", in); err != nil {
					return nil, err
				}
				panic("kaboom")
			}},
			{Name: "stopper", Actor: ActorEngine, Run: func(ctx context.Context, in *NodeInput) (*NodeOutput, error) {
				if err := h.enter(ctx, "stopper", in); err != nil {
					return nil, err
				}
				return &NodeOutput{Stop: &Stop{Reason: "CONSENSUS"}}, nil
			}},
		},
	}
}

var t0 = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// harness drives one debate with an in-memory "store" that applies each
// StepCommit the way a real store would, fence included.
type harness struct {
	t      testing.TB
	hooks  *hooks
	proto  *Protocol
	eng    *Engine
	d      debate.Debate
	cp     *debate.Checkpoint
	cps    []debate.Checkpoint
	events []debate.Event
	gates  map[string]debate.HumanGate

	mu     sync.Mutex
	sleeps []time.Duration
}

type harnessOption func(*Config)

func newHarness(t testing.TB, options string, opts ...harnessOption) *harness {
	h := &harness{t: t, hooks: newHooks(), gates: map[string]debate.HumanGate{}}
	h.proto = newTestProtocol(h.hooks)
	reg, err := NewRegistry(h.proto)
	require.NoError(t, err)
	cfg := Config{
		Protocols: reg,
		Sealer:    fakeSealer{},
		Now:       h.clock,
		Rand:      func() float64 { return 0.5 },
		Sleep: func(ctx context.Context, d time.Duration) error {
			h.mu.Lock()
			h.sleeps = append(h.sleeps, d)
			h.mu.Unlock()
			return ctx.Err()
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	h.eng, err = New(cfg)
	require.NoError(t, err)
	canon, err := h.proto.ValidateOptions(json.RawMessage(options))
	require.NoError(t, err)
	h.d = debate.Debate{
		ID: "deb-1", TenantID: "ten-1", DealID: "deal-1", Protocol: "test", Options: canon,
		Status: debate.DebateQueued, CreatedAt: t0, UpdatedAt: t0,
	}
	return h
}

// clock is a function of the debate's progress, so that a re-run step sees
// the same time as the run it replaces.
func (h *harness) clock() time.Time {
	step := 1
	if h.cp != nil {
		step = h.cp.Step + 1
	}
	return t0.Add(time.Duration(step)*time.Second + time.Duration(len(h.events))*time.Millisecond)
}

func (h *harness) sleepsSeen() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.sleeps)
}

// apply commits c as a store would: fenced, atomically.
func (h *harness) apply(c *debate.StepCommit) {
	t := h.t
	require.NotNil(t, c)
	require.Equal(t, h.d.ID, c.DebateID)
	require.Equal(t, h.d.LastSeq, c.ExpectSeq, "fence seq")
	require.Equal(t, h.d.HeadHash, c.ExpectHash, "fence hash")
	require.NotEmpty(t, c.Events)
	prev := h.d.HeadHash
	if prev == "" {
		prev = genesis
	}
	for i, e := range c.Events {
		require.Equal(t, c.ExpectSeq+int64(i)+1, e.Seq)
		require.Equal(t, prev, e.PrevHash)
		prev = e.Hash
	}
	h.events = append(h.events, c.Events...)
	last := c.Events[len(c.Events)-1]
	h.d.LastSeq, h.d.HeadHash = last.Seq, last.Hash
	h.d.Status, h.d.StopReason, h.d.Error = c.Status, c.StopReason, c.Error
	h.d.Round, h.d.NextNode, h.d.Attempt = c.Round, c.NextNode, c.Attempt
	h.d.UpdatedAt = c.At
	if c.Checkpoint != nil {
		require.Equal(t, last.Seq, c.Checkpoint.Seq)
		cp := *c.Checkpoint
		h.cp = &cp
		h.cps = append(h.cps, cp)
	}
	if g := c.OpenGate; g != nil {
		_, dup := h.gates[g.ID]
		require.False(t, dup, "gate %s opened twice", g.ID)
		h.gates[g.ID] = *g
	}
	if g := c.ResolveGate; g != nil {
		require.Equal(t, debate.GateOpen, h.gates[g.ID].Status)
		h.gates[g.ID] = *g
	}
}

// resolvedGate is the gate a runner hands to the next Step.
func (h *harness) resolvedGate() *debate.HumanGate {
	if h.cp == nil {
		return nil
	}
	g, ok := h.gates[GateID(h.d.ID, h.cp.Step)]
	if !ok || g.Status == debate.GateOpen {
		return nil
	}
	return &g
}

func (h *harness) step(ctx context.Context) (*debate.StepCommit, error) {
	return h.eng.Step(ctx, h.d, h.cp, h.resolvedGate())
}

// run steps the debate until it is no longer runnable. crash, when set,
// is asked before each step whether to throw that step's commit away first.
func (h *harness) run(ctx context.Context, crash func(step int) bool) {
	for i := 0; h.d.Status.Runnable(); i++ {
		require.Less(h.t, i, 100, "runaway debate")
		next := 1
		if h.cp != nil {
			next = h.cp.Step + 1
		}
		if crash != nil && crash(next) {
			_, err := h.step(ctx) // the worker dies before committing
			require.NoError(h.t, err)
		}
		c, err := h.step(ctx)
		require.NoError(h.t, err)
		h.apply(c)
	}
}

func (h *harness) gate() debate.HumanGate {
	for _, g := range h.gates {
		if g.Status == debate.GateOpen {
			return g
		}
	}
	h.t.Fatal("no open gate")
	return debate.HumanGate{}
}

// compact renders events as "type node actor" lines for sequence asserts.
func compact(events []debate.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		parts := []string{e.Type, e.Node, e.Actor}
		out[i] = strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), " ")
	}
	return out
}

func payload(t testing.TB, e debate.Event) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(e.Payload, &m))
	return m
}

func ofType(events []debate.Event, typ string) []debate.Event {
	var out []debate.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func hashes(events []debate.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Hash
	}
	return out
}

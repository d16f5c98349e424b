// Package synthetic is a debate-shaped protocol with no model and no
// registry reads: rounds of eight nodes (open, challenge, a two-wide
// parallel critique, rebuttal, evidence, close, check) in which every node
// appends one message of a chosen size. It exercises every engine feature
// the real protocols use (rounds, a conditional loop, a parallel group, an
// optional human gate) and is the graph the engine benchmarks and crash
// tests run. It is deterministic: the same options give the same ledger
// apart from times.
package synthetic

import (
	"context"
	"fmt"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
)

// Name is the protocol's name.
const Name = "synthetic.v1"

// Options of a synthetic debate.
type Options struct {
	// MaxRounds is how many rounds run (1–50, default 5).
	MaxRounds int `json:"max_rounds"`
	// MessageBytes is the size of each node's message (0–16384, default 300).
	MessageBytes int `json:"message_bytes"`
	// GateRound, when > 0, opens a human gate after that round's check;
	// approving continues, rejecting stops the debate.
	GateRound int `json:"gate_round"`
	// ThinkMS, when > 0, makes each agent's message take that long
	// (0–10000 ms), as a model-backed turn does: a debate at a real
	// debate's pace rather than the engine's. Left out of the options when
	// 0, so a debate without it is recorded as before.
	ThinkMS int `json:"think_ms,omitempty"`
}

type state struct {
	MaxRounds int  `json:"max_rounds"`
	Round     int  `json:"round"`
	Messages  int  `json:"messages"`
	Gated     bool `json:"gated"`
}

type (
	node = protocol.Node[Options, state]
	turn = protocol.Turn[Options, state]
)

func check(o *Options, v *debate.Violations) {
	if o.MaxRounds < 1 || o.MaxRounds > 50 {
		v.Add("options.max_rounds", "must be between 1 and 50")
	}
	if o.MessageBytes < 0 || o.MessageBytes > 16384 {
		v.Add("options.message_bytes", "must be between 0 and 16384")
	}
	if o.GateRound < 0 || o.GateRound > o.MaxRounds {
		v.Add("options.gate_round", "must be between 0 and max_rounds")
	}
	if o.ThinkMS < 0 || o.ThinkMS > 10000 {
		v.Add("options.think_ms", "must be between 0 and 10000")
	}
}

// say is a node's work: one message of the configured size, after the
// configured think time.
func say(kind string) func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
	return func(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
		if t.Opts.ThinkMS > 0 {
			if err := orchestrator.Sleep(ctx, time.Duration(t.Opts.ThinkMS)*time.Millisecond); err != nil {
				return nil, err
			}
		}
		t.State.Messages++
		text := fmt.Sprintf("%s of round %d, message %d. ", kind, t.Round, t.State.Messages)
		for len(text) < t.Opts.MessageBytes {
			text += text
		}
		return t.Save([]orchestrator.Emit{{Type: "agent.message", Payload: map[string]any{"kind": kind, "text": text[:t.Opts.MessageBytes]}}}, nil)
	}
}

// Protocol returns the synthetic protocol.
func Protocol() *orchestrator.Protocol {
	task := func(name, actor, kind string, edges ...string) *node {
		return &node{Name: name, Actor: actor, Run: say(kind), Edges: edges}
	}
	roles := []string{"advocate", "challenger", "critic_left", "critic_right", "arbiter"}
	return protocol.Compile(&protocol.Spec[Options, state]{
		Name:        Name,
		Description: "engine exercise and benchmark graph: rounds of open → challenge → critique(left ‖ right) → rebuttal → evidence → close → check, one message per node",
		Roles:       roles,
		Start:       "open",
		MaxSteps:    50*8 + 10,
		// No node reads the ledger: the runner may compute a step while the
		// previous one commits.
		Pipelined: true,
		Defaults:  func() Options { return Options{MaxRounds: 5, MessageBytes: 300} },
		Check:     check,
		Init: func(o *Options, _ orchestrator.InitInput) (*state, error) {
			return &state{MaxRounds: o.MaxRounds}, nil
		},
		RoleGuard: map[string][]string{"agent.message": roles},
		Nodes: []*node{
			{Name: "open", Actor: "advocate", Edges: []string{"challenge"}, Run: func(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
				if t.Gate != nil && t.Gate.Status == debate.GateRejected {
					return &orchestrator.NodeOutput{Stop: &orchestrator.Stop{Reason: "GATE_REJECTED"}}, nil
				}
				return say("opening")(ctx, t)
			}},
			task("challenge", "challenger", "challenge", "critique"),
			{
				Name:     "critique",
				Branches: []*node{task("critique_left", "critic_left", "critique"), task("critique_right", "critic_right", "critique")},
				Merge: func(s *state, outs []*orchestrator.NodeOutput) error {
					s.Messages += len(outs)
					return nil
				},
				Edges: []string{"rebuttal"},
			},
			task("rebuttal", "advocate", "rebuttal", "evidence"),
			task("evidence", "challenger", "evidence", "close"),
			task("close", "arbiter", "ruling", "check"),
			{
				Name: "check", Actor: "arbiter", EndsRound: true, Edges: []string{"open", "finish"},
				Run: func(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
					t.State.Round = t.Round
					var gate *orchestrator.GateRequest
					if t.Opts.GateRound == t.Round && !t.State.Gated {
						t.State.Gated = true
						gate = &orchestrator.GateRequest{Reason: fmt.Sprintf("review round %d before going on", t.Round)}
					}
					out, err := t.Save([]orchestrator.Emit{{Type: "agent.message", Payload: map[string]any{"kind": "check", "round": t.Round}}}, nil)
					if out != nil {
						out.Gate = gate
					}
					return out, err
				},
				Next: func(s *state) string {
					if s.Round >= s.MaxRounds {
						return "finish"
					}
					return "open"
				},
			},
			{Name: "finish", Actor: "arbiter", Run: func(context.Context, *turn) (*orchestrator.NodeOutput, error) {
				return &orchestrator.NodeOutput{Stop: &orchestrator.Stop{Reason: "MAX_ROUNDS"}}, nil
			}},
		},
	})
}

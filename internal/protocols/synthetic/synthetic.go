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
	"encoding/json"
	"fmt"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
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
}

type state struct {
	MaxRounds int  `json:"max_rounds"`
	Round     int  `json:"round"`
	Messages  int  `json:"messages"`
	Gated     bool `json:"gated"`
}

func parseOptions(raw json.RawMessage) (Options, error) {
	o := Options{MaxRounds: 5, MessageBytes: 300}
	var v debate.Violations
	if len(raw) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			v.Add("options", "%v", err)
			return o, v.Err()
		}
	}
	if o.MaxRounds < 1 || o.MaxRounds > 50 {
		v.Add("options.max_rounds", "must be between 1 and 50")
	}
	if o.MessageBytes < 0 || o.MessageBytes > 16384 {
		v.Add("options.message_bytes", "must be between 0 and 16384")
	}
	if o.GateRound < 0 || o.GateRound > o.MaxRounds {
		v.Add("options.gate_round", "must be between 0 and max_rounds")
	}
	return o, v.Err()
}

func load(in *orchestrator.NodeInput) (Options, state, error) {
	o, err := parseOptions(in.Options)
	if err != nil {
		return o, state{}, err
	}
	var s state
	if err := json.Unmarshal(in.State, &s); err != nil {
		return o, s, fmt.Errorf("synthetic: state: %w", err)
	}
	return o, s, nil
}

func save(s state) json.RawMessage {
	b, _ := json.Marshal(s) // a struct of ints and a bool always encodes
	return b
}

// say is a node that appends one message of the configured size.
func say(kind string) orchestrator.NodeFunc {
	return func(_ context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
		o, s, err := load(in)
		if err != nil {
			return nil, err
		}
		s.Messages++
		text := fmt.Sprintf("%s of round %d, message %d. ", kind, in.Round, s.Messages)
		for len(text) < o.MessageBytes {
			text += text
		}
		return &orchestrator.NodeOutput{
			State:  save(s),
			Events: []orchestrator.Emit{{Type: "agent.message", Payload: map[string]any{"kind": kind, "text": text[:o.MessageBytes]}}},
		}, nil
	}
}

// Protocol returns the synthetic protocol.
func Protocol() *orchestrator.Protocol {
	node := func(name, actor, kind string, edges ...string) *orchestrator.Node {
		return &orchestrator.Node{Name: name, Actor: actor, Run: say(kind), Edges: edges}
	}
	critique := &orchestrator.Node{
		Name: "critique",
		Branches: []*orchestrator.Node{
			{Name: "critique_left", Actor: "critic_left", Run: say("critique")},
			{Name: "critique_right", Actor: "critic_right", Run: say("critique")},
		},
		Merge: func(st json.RawMessage, outs []*orchestrator.NodeOutput) (json.RawMessage, error) {
			var s state
			if err := json.Unmarshal(st, &s); err != nil {
				return nil, err
			}
			s.Messages += len(outs)
			return save(s), nil
		},
		Edges: []string{"rebuttal"},
	}
	check := &orchestrator.Node{
		Name:      "check",
		Actor:     "arbiter",
		EndsRound: true,
		Edges:     []string{"open", "finish"},
		Run: func(_ context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
			o, s, err := load(in)
			if err != nil {
				return nil, err
			}
			s.Round = in.Round
			out := &orchestrator.NodeOutput{State: save(s), Events: []orchestrator.Emit{{Type: "agent.message", Payload: map[string]any{"kind": "check", "round": in.Round}}}}
			if o.GateRound == in.Round && !s.Gated {
				s.Gated = true
				out.State = save(s)
				out.Gate = &orchestrator.GateRequest{Reason: fmt.Sprintf("review round %d before going on", in.Round)}
			}
			return out, nil
		},
		Next: func(st json.RawMessage) (string, error) {
			var s state
			if err := json.Unmarshal(st, &s); err != nil {
				return "", err
			}
			if s.Round >= s.MaxRounds {
				return "finish", nil
			}
			return "open", nil
		},
	}
	p := &orchestrator.Protocol{
		Name:        Name,
		Description: "engine exercise and benchmark graph: rounds of open → challenge → critique(left ‖ right) → rebuttal → evidence → close → check, one message per node",
		Roles:       []string{"advocate", "challenger", "critic_left", "critic_right", "arbiter"},
		Start:       "open",
		MaxSteps:    50*8 + 10,
		// No node reads the ledger: the runner may compute a step while the
		// previous one commits.
		Pipelined: true,
		Options: func(raw json.RawMessage) (json.RawMessage, error) {
			o, err := parseOptions(raw)
			if err != nil {
				return nil, err
			}
			return json.Marshal(o)
		},
		Init: func(_ context.Context, in orchestrator.InitInput) (json.RawMessage, error) {
			o, err := parseOptions(in.Options)
			if err != nil {
				return nil, err
			}
			return save(state{MaxRounds: o.MaxRounds}), nil
		},
		RoleGuard: map[string][]string{"agent.message": {"advocate", "challenger", "critic_left", "critic_right", "arbiter"}},
		Nodes: []*orchestrator.Node{
			{Name: "open", Actor: "advocate", Edges: []string{"challenge"}, Run: func(ctx context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
				if in.Gate != nil && in.Gate.Status == debate.GateRejected {
					return &orchestrator.NodeOutput{Stop: &orchestrator.Stop{Reason: "GATE_REJECTED"}}, nil
				}
				return say("opening")(ctx, in)
			}},
			node("challenge", "challenger", "challenge", "critique"),
			critique,
			node("rebuttal", "advocate", "rebuttal", "evidence"),
			node("evidence", "challenger", "evidence", "close"),
			node("close", "arbiter", "ruling", "check"),
			check,
			{Name: "finish", Actor: "arbiter", Run: func(_ context.Context, in *orchestrator.NodeInput) (*orchestrator.NodeOutput, error) {
				return &orchestrator.NodeOutput{Stop: &orchestrator.Stop{Reason: "MAX_ROUNDS"}}, nil
			}},
		},
	}
	return p
}

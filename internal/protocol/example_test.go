package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/enginetest"
)

// The example protocol, prosandcons.v1: a pro and a con argue a topic in
// parallel for a number of rounds, a judge counts the arguments after each
// round, and the debate ends with its deliverables. Its plumbing (the
// types, the Spec and its graph) is what a new protocol costs on the kit;
// the rules answers and the gate are its own logic.

type prosOptions struct {
	Topic  string `json:"topic"`
	Rounds int    `json:"rounds"`
}

type prosState struct {
	Arguments []string `json:"arguments"`
	Rejected  int      `json:"rejected"`
	Round     int      `json:"round"`
}

type (
	prosNode = protocol.Node[prosOptions, prosState]
	prosTurn = protocol.Turn[prosOptions, prosState]
)

// prosProtocol returns the example over models (nil: the rules answer);
// checks counts the option checks.
func prosProtocol(models protocol.Models, checks *atomic.Int64) *orchestrator.Protocol {
	argue := func(role string) *prosNode {
		return &prosNode{Name: "argue_" + role, Actor: role, Run: func(ctx context.Context, t *prosTurn) (*orchestrator.NodeOutput, error) {
			ans, err := models.Ask(ctx, t.NodeInput, protocol.Call{
				Prompt: protocol.Prompt{Role: role, PromptID: "pros." + role + ".v1", System: "Argue " + role + ".", SchemaName: "argument",
					Schema: json.RawMessage(`{"type":"object","required":["argument"]}`), Rules: rulesArgue(role)},
				CacheKey: fmt.Sprintf("%s/%s/r%d/a%d", t.DebateID, role, t.Round, t.Attempt), Task: "argue",
				Data: map[string]any{"topic": t.Opts.Topic, "round": t.Round}, Check: checkArgument,
			})
			if err != nil {
				return protocol.BudgetStop(role, err, ans.Model, nil)
			}
			if len(ans.Violations) > 0 {
				return &orchestrator.NodeOutput{State: json.RawMessage(`""`), Events: []orchestrator.Emit{{Type: protocol.EventRejected,
					Payload: map[string]any{"role": role, "violations": ans.Violations}}}}, nil
			}
			var a argument
			if err := json.Unmarshal(ans.Raw, &a); err != nil {
				return nil, err
			}
			st, err := protocol.Encode(a.Argument)
			return &orchestrator.NodeOutput{State: st, Events: []orchestrator.Emit{{Type: "argument.made", Payload: ans.Raw}}}, err
		}}
	}
	return protocol.Compile(&protocol.Spec[prosOptions, prosState]{
		Name: "prosandcons.v1", Roles: []string{"pro", "con", "judge"}, Start: "argue", MaxSteps: 20,
		Defaults: func() prosOptions { return prosOptions{Rounds: 2} },
		Check: func(o *prosOptions, v *debate.Violations) {
			checks.Add(1)
			if o.Topic == "" {
				v.Add("options.topic", "required")
			}
			if o.Rounds < 1 || o.Rounds > 5 {
				v.Add("options.rounds", "must be between 1 and 5")
			}
		},
		RoleGuard: map[string][]string{"argument.made": {"pro", "con"}, protocol.EventRejected: {"pro", "con"},
			protocol.EventBudgetExceeded: {"pro", "con"}, protocol.EventDeliverables: {orchestrator.ActorEngine}},
		Nodes: []*prosNode{
			{Name: "argue", Branches: []*prosNode{argue("pro"), argue("con")}, Edges: []string{"judge"},
				Merge: func(s *prosState, outs []*orchestrator.NodeOutput) error {
					args, err := protocol.Branches[string](outs)
					for _, a := range args {
						if a == "" {
							s.Rejected++
						} else {
							s.Arguments = append(s.Arguments, a)
						}
					}
					return err
				}},
			{Name: "judge", Actor: "judge", EndsRound: true, Edges: []string{"argue", "close"},
				Run: func(_ context.Context, t *prosTurn) (*orchestrator.NodeOutput, error) {
					t.State.Round = t.Round
					return t.Save([]orchestrator.Emit{{Type: "argument.made", Actor: "pro", Payload: map[string]any{"count": len(t.State.Arguments)}}}, nil)
				},
				Next: func(s *prosState) string {
					if s.Round >= 2 {
						return "close"
					}
					return "argue"
				}},
			{Name: "close", Actor: orchestrator.ActorEngine, Run: func(_ context.Context, t *prosTurn) (*orchestrator.NodeOutput, error) {
				return &orchestrator.NodeOutput{Events: []orchestrator.Emit{{Type: protocol.EventDeliverables, Payload: t.State}},
					Stop: &orchestrator.Stop{Reason: "ROUNDS_DONE"}}, nil
			}},
		},
	})
}

// rulesArgue is the rules answer of role.
func rulesArgue(role string) func(json.RawMessage) (json.RawMessage, error) {
	return func(data json.RawMessage) (json.RawMessage, error) {
		var d struct {
			Topic string `json:"topic"`
			Round int    `json:"round"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, err
		}
		if d.Topic == "silence" {
			return json.RawMessage(`{"argument":""}`), nil
		}
		return json.Marshal(map[string]string{"argument": fmt.Sprintf("%s on %s, round %d", role, d.Topic, d.Round)})
	}
}

type argument struct {
	Argument string `json:"argument"`
}

// checkArgument is the gate: a non-empty argument and nothing else.
var checkArgument = protocol.DecodeCheck(func(a argument) []debate.Violation {
	if a.Argument == "" {
		return []debate.Violation{{Rule: "EMPTY", Field: "argument", Detail: "say something"}}
	}
	return nil
})

func setupPros(t *testing.T) (*enginetest.Env, *orchestrator.Protocol, *atomic.Int64) {
	t.Helper()
	checks := &atomic.Int64{}
	p := prosProtocol(nil, checks)
	e := enginetest.New(t, func(*sqlite.Store, *ledger.Keyring) []*orchestrator.Protocol {
		return []*orchestrator.Protocol{p}
	}, enginetest.Options{})
	e.ImportDeal(t, storetest.SampleBundle("deal-1"))
	return e, p, checks
}

// TestSpecRunsOnTheEngine: a protocol written on the kit runs under the
// engine: its options are decoded strictly with their defaults, its
// parallel group's branches are merged in order, its conditional edge
// loops for the rounds and its deliverables end it; the options are
// checked once at creation and once for all the nodes of the run, not
// once per node.
func TestSpecRunsOnTheEngine(t *testing.T) {
	t.Parallel()
	e, p, checks := setupPros(t)
	opts, err := p.ValidateOptions(json.RawMessage(`{"topic":"tea"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"topic":"tea","rounds":2}`, string(opts))
	d, evs := e.Run(t, "deal-1", "prosandcons.v1", opts)
	require.Equal(t, debate.DebateCompleted, d.Status)
	require.Equal(t, "ROUNDS_DONE", d.StopReason)
	var del prosState
	for _, ev := range evs {
		if ev.Type == protocol.EventDeliverables {
			require.NoError(t, json.Unmarshal(ev.Payload, &del))
		}
	}
	require.Equal(t, []string{"pro on tea, round 1", "con on tea, round 1", "pro on tea, round 2", "con on tea, round 2"}, del.Arguments)
	require.EqualValues(t, 2, checks.Load(), "one check at creation, one for all the nodes of the run")
}

// TestSpecGatesTheRules: a rules answer that fails the gate is rejected
// like a model's.
func TestSpecGatesTheRules(t *testing.T) {
	t.Parallel()
	e, p, _ := setupPros(t)
	opts, err := p.ValidateOptions(json.RawMessage(`{"topic":"silence","rounds":1}`))
	require.NoError(t, err)
	d, evs := e.Run(t, "deal-1", "prosandcons.v1", opts)
	require.Equal(t, debate.DebateCompleted, d.Status)
	var rejected int
	for _, ev := range evs {
		if ev.Type == protocol.EventRejected {
			rejected++
			require.Contains(t, string(ev.Payload), `"EMPTY"`)
		}
	}
	require.Equal(t, 4, rejected, "both roles, both rounds")
}

// TestSpecOptions: unknown members, bad values and non-objects are refused
// with field paths under options; a protocol without options takes {}.
func TestSpecOptions(t *testing.T) {
	t.Parallel()
	p := prosProtocol(nil, &atomic.Int64{})
	for raw, field := range map[string]string{
		`{"topic":"tea","colour":"red"}`: "options",
		`{"topic":"","rounds":9}`:        "options.topic",
		`[1]`:                            "options",
		`{"topic":"tea"} {"topic":"x"}`:  "options",
	} {
		_, err := p.ValidateOptions(json.RawMessage(raw))
		require.ErrorIs(t, err, debate.ErrInvalid, raw)
		ve, ok := errorsAs[*debate.ValidationError](err)
		require.True(t, ok, raw)
		require.Equal(t, field, ve.Violations[0].Field, raw)
	}
	none := protocol.Compile(&protocol.Spec[protocol.None, prosState]{Name: "none.v1"})
	require.Nil(t, none.Options, "no options: the engine takes {} only")
	require.Nil(t, none.Init, "no Init: the engine starts from {}")
}

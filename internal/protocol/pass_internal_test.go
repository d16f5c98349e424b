package protocol

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/orchestrator"
)

type passState struct {
	N int            `json:"n"`
	M map[string]int `json:"m,omitempty"`
}

// TestPassState: a node's saved state goes to the next node of the same
// debate (and to a group's Merge and an edge's Next) as the value itself,
// once, when the next node is given its bytes; otherwise the state is
// decoded, and the value is always what decoding gives.
func TestPassState(t *testing.T) {
	t.Parallel()
	var seen []*passState
	run := func(ctx context.Context, t *Turn[None, passState]) (*orchestrator.NodeOutput, error) {
		seen = append(seen, t.State)
		t.State.N++
		t.State.M["n"] = t.State.N
		return t.Save(nil, nil)
	}
	var merged *passState
	spec := &Spec[None, passState]{Name: "pass", Roles: []string{"r"}, Start: "a", MaxSteps: 9, PassState: true,
		NewState: func() *passState { return &passState{M: map[string]int{}} },
		Nodes: []*Node[None, passState]{
			{Name: "a", Actor: "r", Run: run, Edges: []string{"g"}},
			{Name: "g", Branches: []*Node[None, passState]{{Name: "b", Actor: "r", Run: run}},
				Merge: func(s *passState, _ []*orchestrator.NodeOutput) error { merged = s; s.N += 10; return nil },
				Edges: []string{"a"}, Next: func(s *passState) string {
					if s.N > 100 {
						return ""
					}
					return "a"
				}},
		}}
	p := Compile(spec)
	a, g := p.Nodes[0], p.Nodes[1]
	in := func(debate string, state []byte) *orchestrator.NodeInput {
		return &orchestrator.NodeInput{TenantID: "t", DebateID: debate, State: state, Options: json.RawMessage(`{}`)}
	}
	out, err := a.Run(context.Background(), in("d1", []byte(`{"n":1}`)))
	require.NoError(t, err)
	require.JSONEq(t, `{"n":2,"m":{"n":2}}`, string(out.State))
	first := seen[0]

	// The branch decodes; the group's Merge takes the value, and the edge
	// reads its Next.
	_, err = g.Branches[0].Run(context.Background(), in("d1", out.State))
	require.NoError(t, err)
	require.NotSame(t, first, seen[1])
	st, err := g.Merge(out.State, nil)
	require.NoError(t, err)
	require.Same(t, first, merged)
	require.JSONEq(t, `{"n":12,"m":{"n":2}}`, string(st))
	next, err := g.Next(st)
	require.NoError(t, err)
	require.Equal(t, "a", next)

	// The next node of the same debate takes it, given the same bytes.
	out, err = a.Run(context.Background(), in("d1", st))
	require.NoError(t, err)
	require.Same(t, first, seen[2])
	require.JSONEq(t, `{"n":13,"m":{"n":13}}`, string(out.State))

	// Once only; another debate or other bytes decode.
	_, err = g.Merge(out.State, nil)
	require.NoError(t, err)
	require.Same(t, first, merged)
	_, err = g.Merge(out.State, nil)
	require.NoError(t, err)
	require.NotSame(t, first, merged)
	out, err = a.Run(context.Background(), in("d2", []byte(`{"n":1}`)))
	require.NoError(t, err)
	_, err = a.Run(context.Background(), in("d3", out.State))
	require.NoError(t, err)
	require.NotSame(t, seen[3], seen[4])
	_, err = a.Run(context.Background(), in("d2", []byte(`{"n":2, "m":{"n":2}}`)))
	require.NoError(t, err)
	require.NotSame(t, seen[3], seen[5])
	require.Equal(t, &passState{N: 3, M: map[string]int{"n": 3}}, seen[5])

	// A value decoding would not give back (nil where NewState has a
	// map) is not passed on.
	spec.Nodes[0].Run = func(ctx context.Context, t *Turn[None, passState]) (*orchestrator.NodeOutput, error) {
		seen = append(seen, t.State)
		t.State.M = nil
		return t.Save(nil, nil)
	}
	p = Compile(spec)
	out, err = p.Nodes[0].Run(context.Background(), in("d4", []byte(`{}`)))
	require.NoError(t, err)
	_, err = p.Nodes[1].Merge(out.State, nil)
	require.NoError(t, err)
	require.NotSame(t, seen[6], merged)
	require.NotNil(t, merged.M)

	// A Next that panics does so when the engine asks, not in Run.
	spec.Nodes[0].Run, spec.Nodes[0].Edges = run, []string{"a"}
	spec.Nodes[0].Next = func(*passState) string { panic("oops") }
	p = Compile(spec)
	out, err = p.Nodes[0].Run(context.Background(), in("d5", []byte(`{}`)))
	require.NoError(t, err)
	require.Panics(t, func() { _, _ = p.Nodes[0].Next(out.State) })
}

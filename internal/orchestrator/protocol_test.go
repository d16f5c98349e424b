package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

func noop(context.Context, *NodeInput) (*NodeOutput, error) { return nil, nil }

// validProtocol is a small protocol that passes Validate: a → g(b1 ‖ b2) →
// c → (a | end).
func validProtocol() *Protocol {
	return &Protocol{
		Name: "p", Roles: []string{"r1", "r2"}, Start: "a", MaxSteps: 10,
		RoleGuard: map[string][]string{"said": {"r1"}},
		Tools:     map[string][]string{"r1": {"lookup"}},
		Nodes: []*Node{
			{Name: "a", Actor: "r1", Run: noop, Edges: []string{"g"}},
			{Name: "g", Branches: []*Node{{Name: "b1", Actor: "r1", Run: noop}, {Name: "b2", Actor: "r2", Run: noop}},
				Merge: func(s json.RawMessage, _ []*NodeOutput) (json.RawMessage, error) { return s, nil }, Edges: []string{"c"}},
			{Name: "c", Actor: ActorEngine, Run: noop, Edges: []string{"a"},
				Next: func(json.RawMessage) (string, error) { return "", nil }},
		},
	}
}

func TestProtocolValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, validProtocol().Validate())
	require.NoError(t, newTestProtocol(newHooks()).Validate())

	for _, tc := range []struct {
		name   string
		mut    func(p *Protocol)
		fields []string
	}{
		{"no name", func(p *Protocol) { p.Name = "" }, []string{"name"}},
		{"no max steps", func(p *Protocol) { p.MaxSteps = 0 }, []string{"max_steps"}},
		{"empty role", func(p *Protocol) { p.Roles = append(p.Roles, "") }, []string{"roles[2]"}},
		{"duplicate role", func(p *Protocol) { p.Roles = append(p.Roles, "r1") }, []string{"roles[2]"}},
		{"reserved role", func(p *Protocol) { p.Roles = append(p.Roles, ActorOperator) }, []string{"roles[2]"}},
		{"no nodes", func(p *Protocol) { p.Nodes = nil }, []string{"nodes", "start"}},
		{"nil node", func(p *Protocol) { p.Nodes = append(p.Nodes, nil) }, []string{"nodes[3]"}},
		{"no start", func(p *Protocol) { p.Start = "" }, []string{"start"}},
		{"unknown start", func(p *Protocol) { p.Start = "zz" }, []string{"start"}},
		{"start is a branch", func(p *Protocol) { p.Start = "b1" }, []string{"start"}},
		{"duplicate node", func(p *Protocol) { p.Nodes[2].Name = "a" }, []string{"nodes[2].name", "nodes[1].edges[0]"}},
		{"branch named like a node", func(p *Protocol) { p.Nodes[1].Branches[0].Name = "c" }, []string{"nodes[2].name"}},
		{"node without name", func(p *Protocol) { p.Nodes[2].Name = "" }, []string{"nodes[2].name", "nodes[1].edges[0]"}},
		{"task without run", func(p *Protocol) { p.Nodes[0].Run = nil }, []string{"nodes[0].run"}},
		{"task without actor", func(p *Protocol) { p.Nodes[0].Actor = "" }, []string{"nodes[0].actor"}},
		{"actor not a role", func(p *Protocol) { p.Nodes[0].Actor = "r9" }, []string{"nodes[0].actor"}},
		{"task with merge", func(p *Protocol) { p.Nodes[0].Merge = p.Nodes[1].Merge }, []string{"nodes[0].merge"}},
		{"negative timeout", func(p *Protocol) { p.Nodes[0].Timeout = -1 }, []string{"nodes[0].timeout"}},
		{"negative attempts", func(p *Protocol) { p.Nodes[1].Branches[1].MaxAttempts = -1 }, []string{"nodes[1].branches[1].max_attempts"}},
		{"group with run", func(p *Protocol) { p.Nodes[1].Run = noop }, []string{"nodes[1].run"}},
		{"group without merge", func(p *Protocol) { p.Nodes[1].Merge = nil }, []string{"nodes[1].merge"}},
		{"group actor not a role", func(p *Protocol) { p.Nodes[1].Actor = "r9" }, []string{"nodes[1].actor"}},
		{"nil branch", func(p *Protocol) { p.Nodes[1].Branches[0] = nil }, []string{"nodes[1].branches[0]"}},
		{"branch without run", func(p *Protocol) { p.Nodes[1].Branches[0].Run = nil }, []string{"nodes[1].branches[0].run"}},
		{"branch without actor", func(p *Protocol) { p.Nodes[1].Branches[0].Actor = "" }, []string{"nodes[1].branches[0].actor"}},
		{"nested group", func(p *Protocol) {
			p.Nodes[1].Branches[0].Branches = []*Node{{Name: "deep", Actor: "r1", Run: noop}}
		}, []string{"nodes[1].branches[0].branches"}},
		{"branch with edges", func(p *Protocol) { p.Nodes[1].Branches[0].Edges = []string{"c"} }, []string{"nodes[1].branches[0].edges"}},
		{"branch with merge", func(p *Protocol) { p.Nodes[1].Branches[0].Merge = p.Nodes[1].Merge }, []string{"nodes[1].branches[0].merge"}},
		{"branch ends a round", func(p *Protocol) { p.Nodes[1].Branches[0].EndsRound = true }, []string{"nodes[1].branches[0].ends_round"}},
		{"unknown edge", func(p *Protocol) { p.Nodes[0].Edges = []string{"zz"} }, []string{"nodes[0].edges[0]", "nodes[1]", "nodes[2]"}},
		{"edge to a branch", func(p *Protocol) { p.Nodes[2].Edges = []string{"a", "b1"} }, []string{"nodes[2].edges[1]"}},
		{"empty edge", func(p *Protocol) { p.Nodes[2].Edges = []string{"a", ""} }, []string{"nodes[2].edges[1]"}},
		{"duplicate edge", func(p *Protocol) { p.Nodes[2].Edges = []string{"a", "a"} }, []string{"nodes[2].edges[1]"}},
		{"two static edges", func(p *Protocol) { p.Nodes[0].Edges = []string{"g", "c"} }, []string{"nodes[0].next"}},
		{"next without edges", func(p *Protocol) { p.Nodes[2].Edges = nil }, []string{"nodes[2].edges"}},
		{"unreachable node", func(p *Protocol) {
			p.Nodes = append(p.Nodes, &Node{Name: "island", Actor: "r1", Run: noop})
		}, []string{"nodes[3]"}},
		{"guard on an engine type", func(p *Protocol) { p.RoleGuard[EventNodeStarted] = []string{"r1"} }, []string{"role_guard[node.started]"}},
		{"guard without actors", func(p *Protocol) { p.RoleGuard["x"] = nil }, []string{"role_guard[x]"}},
		{"guard of an unknown role", func(p *Protocol) { p.RoleGuard["x"] = []string{"r1", "r9"} }, []string{"role_guard[x][1]"}},
		{"guard of the operator", func(p *Protocol) { p.RoleGuard["x"] = []string{ActorOperator} }, []string{"role_guard[x][0]"}},
		{"empty guard type", func(p *Protocol) { p.RoleGuard[""] = []string{"r1"} }, []string{"role_guard[]"}},
		{"tools of an unknown role", func(p *Protocol) { p.Tools["r9"] = []string{"x"} }, []string{"tools[r9]"}},
		{"empty tool", func(p *Protocol) { p.Tools["r1"] = []string{""} }, []string{"tools[r1][0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := validProtocol()
			tc.mut(p)
			err := p.Validate()
			require.ErrorIs(t, err, debate.ErrInvalid)
			var ve *debate.ValidationError
			require.ErrorAs(t, err, &ve)
			var fields []string
			for _, v := range ve.Violations {
				fields = append(fields, v.Field)
			}
			require.ElementsMatch(t, tc.fields, fields, "%v", err)
		})
	}
}

func TestValidateOptions(t *testing.T) {
	t.Parallel()
	p := newTestProtocol(newHooks())
	got, err := p.ValidateOptions(nil)
	require.NoError(t, err)
	require.Equal(t, `{"mode":"","rounds":3}`, string(got), "defaults, canonical")
	got, err = p.ValidateOptions(json.RawMessage(` {"mode":"gate", "rounds": 2} `))
	require.NoError(t, err)
	require.Equal(t, `{"mode":"gate","rounds":2}`, string(got))

	_, err = p.ValidateOptions(json.RawMessage(`{"rounds":9,"mode":"x"}`))
	var ve *debate.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, []debate.FieldViolation{
		{Field: "options.rounds", Description: "must be between 1 and 5, got 9"},
		{Field: "options.mode", Description: `unknown mode "x"`},
	}, ve.Violations)

	bad := validProtocol()
	bad.Options = func(json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`[1]`), nil }
	_, err = bad.ValidateOptions(nil)
	require.Error(t, err)
	require.NotErrorIs(t, err, debate.ErrInvalid, "a protocol bug, not the caller's")

	none := validProtocol()
	for _, raw := range []string{"", "null", " {} "} {
		got, err := none.ValidateOptions(json.RawMessage(raw))
		require.NoError(t, err)
		require.Equal(t, "{}", string(got))
	}
	_, err = none.ValidateOptions(json.RawMessage(`{"a":1}`))
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "options", ve.Violations[0].Field)
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	b := validProtocol()
	b.Name = "b"
	r, err := NewRegistry(b, validProtocol())
	require.NoError(t, err)
	require.ErrorIs(t, r.Register(validProtocol()), debate.ErrAlreadyExists)
	invalid := validProtocol()
	invalid.Name = "c"
	invalid.Start = ""
	require.ErrorIs(t, r.Register(invalid), debate.ErrInvalid)
	require.ErrorIs(t, r.Register(nil), debate.ErrInvalid)
	_, err = NewRegistry(invalid)
	require.ErrorIs(t, err, debate.ErrInvalid)

	got, err := r.Get("b")
	require.NoError(t, err)
	require.Same(t, b, got)
	_, err = r.Get("c")
	require.ErrorIs(t, err, debate.ErrNotFound)
	var names []string
	for _, p := range r.List() {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{"b", "p"}, names)

	var zero Registry
	require.NoError(t, zero.Register(validProtocol()))
}

func TestRoleGuards(t *testing.T) {
	t.Parallel()
	g := EngineRoleGuard()
	require.Len(t, g, 10)
	for typ, actors := range g {
		want := ActorEngine
		if typ == EventGateResolved || typ == EventDebateAborted {
			want = ActorOperator
		}
		require.Equal(t, []string{want}, actors, typ)
	}
	g[EventNodeStarted][0] = "mutated"
	require.Equal(t, []string{ActorEngine}, EngineRoleGuard()[EventNodeStarted], "a fresh copy")
	require.Len(t, EngineEventTypes(), 10)
	require.Equal(t, []string{EventDebateAborted, EventDebateStopped}, TerminalEventTypes())

	m := newTestProtocol(newHooks()).MergedRoleGuard()
	require.Len(t, m, 15)
	require.Equal(t, []string{"critic_a", "critic_b"}, m["critique"])
	require.Equal(t, []string{ActorOperator}, m[EventGateResolved])
	require.Equal(t, "deb-9-gate-4", GateID("deb-9", 4))
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	base := errors.New("x")
	err := Permanent(base)
	require.ErrorIs(t, err, base)
	require.Equal(t, "x", err.Error())
	require.True(t, isPermanent(err))
	require.False(t, isPermanent(base))
}

package custom_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocols/custom"
)

func example(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocols", name))
	require.NoError(t, err)
	return raw
}

func TestExamplesParseAndCompile(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"redteam-review.yaml", "pros-cons.yaml"} {
		d, err := custom.Parse(example(t, name), nil)
		require.NoError(t, err, name)
		p, err := custom.Compile(d, debate.ProtocolRef(d.Name, d.Version), custom.Config{})
		require.NoError(t, err, name)
		require.NoError(t, p.Validate(), name)
		require.Equal(t, d.Name+"@1", p.Name)
		// JSON is accepted as well as YAML, and means the same.
		js, err := json.Marshal(d)
		require.NoError(t, err)
		again, err := custom.Parse(js, nil)
		require.NoError(t, err)
		require.Equal(t, d, again)
	}
}

// violations parses doc and returns its violations by field.
func violations(t *testing.T, doc string, builtin func(string) bool) map[string]string {
	t.Helper()
	_, err := custom.Parse([]byte(doc), builtin)
	require.Error(t, err)
	require.ErrorIs(t, err, debate.ErrInvalid)
	var ve *debate.ValidationError
	require.True(t, errors.As(err, &ve))
	out := map[string]string{}
	for _, v := range ve.Violations {
		out[v.Field] = v.Description
	}
	return out
}

const base = `
name: t.proto
version: 1
roles:
  - id: a
    prompt: argue
    output: {type: object, properties: {position: {type: string, enum: [X, Y]}}, required: [position]}
graph:
  start: one
  nodes:
    - {id: one, kind: call, role: a, next: round}
    - {id: round, kind: loop, repeat: one}
stop:
  - {rule: max_rounds, rounds: 2}
deliverables:
  fields: [{name: position, from: one.position}]
`

func TestBaseIsValid(t *testing.T) {
	t.Parallel()
	_, err := custom.Parse([]byte(base), nil)
	require.NoError(t, err)
}

func TestValidationNamesThePath(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", custom.MaxPromptBytes+1)
	cases := []struct {
		name, from, to, field, contains string
	}{
		{"unknown top-level field", "version: 1\n", "version: 1\ncolour: red\n", "colour", "unknown field"},
		{"unknown nested field", "{id: one, kind: call, role: a, next: round}", "{id: one, kind: call, role: a, next: round, retries: 3}", "graph.nodes[0].retries", "unknown field"},
		{"unknown role field", "    prompt: argue\n", "    prompt: argue\n    temperature: 2\n", "roles[0].temperature", "unknown field"},
		{"unreachable node", "    - {id: round, kind: loop, repeat: one}\n", "    - {id: round, kind: loop, repeat: one}\n    - {id: orphan, kind: call, role: a}\n", "graph.nodes[2]", "unreachable"},
		{"no stop rule", "stop:\n  - {rule: max_rounds, rounds: 2}\n", "stop: []\n", "stop", "at least one stop rule"},
		{"loop without max_rounds", "  - {rule: max_rounds, rounds: 2}\n", "  - {rule: budget, tokens: 100}\n", "stop", "max_rounds"},
		{"unknown tool", "    prompt: argue\n", "    prompt: argue\n    tools: [lookup_claim, fetch_url]\n", "roles[0].tools[1]", "unknown tool"},
		{"prompt too long", "    prompt: argue\n", "    prompt: " + long + "\n", "roles[0].prompt", "more than"},
		{"unknown gate", "    prompt: argue\n", "    prompt: argue\n    gates: [vibes]\n", "roles[0].gates[0]", "unknown gate"},
		{"unknown kind", "kind: loop, repeat", "kind: goto, repeat", "graph.nodes[1].kind", "unknown kind"},
		{"unknown role in node", "kind: call, role: a,", "kind: call, role: b,", "graph.nodes[0].role", "unknown role"},
		{"unknown next", "next: round}", "next: nowhere}", "graph.nodes[0].next", "unknown node"},
		{"unknown stop rule", "rule: max_rounds, rounds: 2", "rule: max_rounds, rounds: 2}\n  - {rule: sentiment", "stop[1].rule", "unknown rule"},
		{"schema keyword", "required: [position]}", "required: [position], $ref: 'http://x'}", "roles[0].output.$ref", "not supported"},
		{"schema not object", "output: {type: object,", "output: {type: array,", "roles[0].output.type", "type object"},
		{"reserved schema field", "properties: {position:", "properties: {refs: {type: string}, position:", "roles[0].output.properties.refs", "reserved"},
		{"bad deliverable", "from: one.position", "from: ghost.position", "deliverables.fields[0].from", "unknown node"},
		{"cycle without a loop", "{id: round, kind: loop, repeat: one}", "{id: round, kind: call, role: a, next: one}", "graph.nodes[0].next", "cycle"},
		{"reserved node name", "id: round,", "id: finalize,", "graph.nodes[1].id", "reserved"},
		{"wrong type", "version: 1\n", "version: one\n", "version", "must be int"},
		{"bad name", "name: t.proto", "name: T@1", "name", "must match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Contains(t, base, c.from)
			doc := strings.Replace(base, c.from, c.to, 1)
			vs := violations(t, doc, nil)
			require.Contains(t, vs, c.field, "violations: %v", vs)
			require.Contains(t, vs[c.field], c.contains)
		})
	}
}

func TestBuiltinNamesAreTaken(t *testing.T) {
	t.Parallel()
	vs := violations(t, base, func(n string) bool { return n == "t.proto" })
	require.Contains(t, vs["name"], "built-in")
}

func TestDocumentSizeLimit(t *testing.T) {
	t.Parallel()
	vs := violations(t, base+"#"+strings.Repeat("x", custom.MaxDocumentBytes), nil)
	require.Contains(t, vs[""], "bytes")
}

func TestNotADocument(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"", "- a\n- b\n", "{", ": :"} {
		_, err := custom.Parse([]byte(doc), nil)
		require.ErrorIs(t, err, debate.ErrInvalid, "%q", doc)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte(`{"name":"x","version":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := custom.Parse(raw, nil)
		if err != nil {
			require.ErrorIs(t, err, debate.ErrInvalid)
			return
		}
		_, err = custom.Compile(d, debate.ProtocolRef(d.Name, d.Version), custom.Config{})
		require.NoError(t, err)
	})
}

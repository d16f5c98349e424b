package idis

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/canon"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
)

func ev(seq int64, typ string, payload string) debate.Event {
	return debate.Event{Seq: seq, Type: typ, Payload: json.RawMessage(payload)}
}

// TestTranscriptsPublish: the feed keeps IDIS debates only, follows them
// without gaps, and forgets a debate when it ends.
func TestTranscriptsPublish(t *testing.T) {
	c := NewTranscripts()
	c.Publish("t", "other", []debate.Event{ev(1, orchestrator.EventDebateStarted, `{"protocol":"synthetic.v1"}`), ev(2, "node.started", `{}`)})
	require.Nil(t, c.get("t\x00other", false), "not an IDIS debate")

	c.Publish("t", "d", []debate.Event{ev(1, orchestrator.EventDebateStarted, `{"protocol":"`+Name+`"}`),
		ev(2, EventAgentOutput, `{"agent_id":"advocate","role":"advocate","round_number":1,"content":"x"}`)})
	tr := c.get("t\x00d", false)
	require.NotNil(t, tr)
	require.Equal(t, int64(2), tr.seen)
	require.Len(t, tr.outputs, 1)
	require.Equal(t, "advocate", tr.outputs[0].Role)

	c.Publish("t", "d", []debate.Event{ev(5, EventAgentOutput, `{"role":"arbiter"}`)})
	require.Equal(t, int64(2), tr.seen, "a gap is left to the next read")
	require.Len(t, tr.outputs, 1)

	c.Publish("t", "d", []debate.Event{ev(3, "node.completed", `{}`), ev(4, orchestrator.EventDebateStopped, `{}`)})
	require.Nil(t, c.get("t\x00d", false), "an ended debate is forgotten")
}

// TestTranscriptsReadStopsAtHead: a step sees the outputs committed
// through its HeadSeq only, although the store (a step computed ahead
// runs while the previous step commits) or the cache (fed by another
// worker's commits) may hold later ones; it gets those from
// NodeInput.Pending instead.
func TestTranscriptsReadStopsAtHead(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx, tenant, d := storetest.NewDebate(t, st)
	l := storetest.NewLedger(tenant, d, time.Now())
	l.Payload = func(seq int64) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"agent_id":"a%d","role":"advocate","round_number":1,"content":"x"}`, seq))
	}
	var heads []int64
	for range 3 {
		c := l.Next(2) // two agent.output events
		require.NoError(t, st.StepCommit(ctx, c))
		l.Commit(c)
		heads = append(heads, l.Seq)
	}
	ids := func(outs []debate.AgentOutput) []string {
		var out []string
		for _, o := range outs {
			out = append(out, o.AgentID)
		}
		return out
	}

	c := NewTranscripts()
	outs, err := c.read(ctx, st, tenant, d.ID, 0)
	require.NoError(t, err)
	require.Empty(t, outs, "nothing is committed before the first step")
	outs, err = c.read(ctx, st, tenant, d.ID, heads[0])
	require.NoError(t, err)
	require.Equal(t, []string{"a1", "a2"}, ids(outs), "the store holds more; the step sees through its head")
	outs, err = c.read(ctx, st, tenant, d.ID, heads[1])
	require.NoError(t, err)
	require.Equal(t, []string{"a1", "a2", "a3", "a4"}, ids(outs))

	// A cache that has seen further answers an earlier head from what it
	// holds, without the later outputs.
	outs, err = c.read(ctx, st, tenant, d.ID, heads[2])
	require.NoError(t, err)
	require.Len(t, outs, 6)
	outs, err = c.read(ctx, st, tenant, d.ID, heads[0])
	require.NoError(t, err)
	require.Equal(t, []string{"a1", "a2"}, ids(outs))
}

// TestTranscriptsPendingThenPublish: a step's pending outputs are decoded
// once for its branches and the Publish of the same events; a payload
// that differs at the same seq is decoded afresh.
func TestTranscriptsPendingThenPublish(t *testing.T) {
	c := NewTranscripts()
	c.Publish("t", "d", []debate.Event{ev(1, orchestrator.EventDebateStarted, `{"protocol":"`+Name+`"}`)})
	pend := []debate.Event{ev(2, "node.started", `{}`), ev(3, EventAgentOutput, `{"role":"advocate","content":"x"}`)}
	outs, err := c.pending("t", "d", pend)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	require.Equal(t, "x", outs[0].Content)
	tr := c.get("t\x00d", false)
	require.Len(t, tr.decoded, 1)

	other := []debate.Event{pend[0], ev(3, EventAgentOutput, `{"role":"advocate","content":"y"}`)}
	outs, err = c.pending("t", "d", other)
	require.NoError(t, err)
	require.Equal(t, "y", outs[0].Content, "same seq, other bytes: decoded again")

	c.Publish("t", "d", pend)
	require.Equal(t, int64(3), tr.seen)
	require.Equal(t, "x", tr.outputs[0].Content)
	require.Empty(t, tr.decoded, "published outputs are no longer kept aside")

	_, err = c.pending("t", "d", []debate.Event{ev(4, EventAgentOutput, `{"role":`)})
	require.ErrorContains(t, err, "idis: transcript seq 4")
}

// TestTranscriptsSpoken: an output a step emits is kept for the decode of
// its payload only when decoding the payload gives the same output; then
// the pending event is not decoded again.
func TestTranscriptsSpoken(t *testing.T) {
	full := func() debate.AgentOutput {
		return debate.AgentOutput{AgentID: "advocate", Role: "advocate", RoundNumber: 2, Content: "x <y> & \u2028 é",
			StructuredContent: json.RawMessage(`{"b": [1, 2.50], "a": "\u00e9"}`), ClaimRefs: []string{"c1"},
			ToolCalls: []debate.ToolCall{{Tool: "t", Args: json.RawMessage(`{"z":1e2,"y":null}`)}},
			Muhasabah: debate.Muhasabah{SupportedClaimIDs: []string{"c1"}, Confidence: 0.1 + 0.2,
				FalsifiabilityTests: []debate.FalsifiabilityTest{{TestDescription: "d", RequiredEvidence: "e", PassFailRule: "r"}}},
			Position: &debate.Position{Recommendation: "INVEST", Confidence: 1e-7},
			Model:    &debate.ModelCall{Model: "m", Calls: 3}}
	}
	kept := map[string]func(o *debate.AgentOutput){
		"full":   func(*debate.AgentOutput) {},
		"zero":   func(o *debate.AgentOutput) { *o = debate.AgentOutput{} },
		"no raw": func(o *debate.AgentOutput) { o.StructuredContent, o.ToolCalls = nil, nil },
		// Omitted, so decoded as nil, which spoken keeps.
		"empty raw": func(o *debate.AgentOutput) { o.StructuredContent = json.RawMessage{} },
	}
	dropped := map[string]func(o *debate.AgentOutput){
		"invalid UTF-8":        func(o *debate.AgentOutput) { o.Content = "a\xffb" },
		"invalid UTF-8 inside": func(o *debate.AgentOutput) { o.Muhasabah.FalsifiabilityTests[0].PassFailRule = "\xc3" },
		"nil args":             func(o *debate.AgentOutput) { o.ToolCalls[0].Args = nil },
		"args not JSON":        func(o *debate.AgentOutput) { o.ToolCalls[0].Args = json.RawMessage(`{`) },
		"empty omitted slice":  func(o *debate.AgentOutput) { o.OpenQuestions = []string{} },
		"minus zero":           func(o *debate.AgentOutput) { o.Position.Confidence = math.Copysign(0, -1) },
		"huge integer":         func(o *debate.AgentOutput) { o.Model.PromptTokens = 1<<60 + 1 },
	}
	seq := int64(1)
	for name, change := range mergeMaps(kept, dropped) {
		t.Run(name, func(t *testing.T) {
			o := full()
			change(&o)
			payload, err := canon.Marshal(&o)
			if err != nil {
				require.Contains(t, dropped, name)
				return
			}
			c := NewTranscripts()
			c.spoken("t", "d", payload, &o)
			tr := c.get("t\x00d", false)
			_, isKept := kept[name]
			require.Equal(t, isKept, tr != nil && len(tr.spoken) == 1, "kept")
			seq++
			e := ev(seq, EventAgentOutput, string(payload))
			outs, err := c.pending("t", "d", []debate.Event{e})
			require.NoError(t, err)
			var want debate.AgentOutput
			require.NoError(t, json.Unmarshal(payload, &want))
			require.Equal(t, []debate.AgentOutput{want}, outs, "the decoding of the payload, reused or not")
			require.Empty(t, c.get("t\x00d", false).spoken, "taken by the decode")
		})
	}
}

func mergeMaps[M ~map[K]V, K comparable, V any](a, b M) M {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}

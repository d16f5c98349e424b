package idis

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
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

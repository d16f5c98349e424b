package synthetic_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/synthetic"
)

// TestThinkTime: think_ms is checked, left out of the options a debate
// records when it is 0 (so such debates are recorded as before), and makes
// a node take that long and give up when its context ends.
func TestThinkTime(t *testing.T) {
	t.Parallel()
	p := synthetic.Protocol()
	for _, bad := range []string{`{"think_ms": -1}`, `{"think_ms": 10001}`} {
		_, err := p.Options(json.RawMessage(bad))
		require.ErrorIs(t, err, debate.ErrInvalid, bad)
		require.ErrorContains(t, err, "options.think_ms", bad)
	}
	opts, err := p.Options(json.RawMessage(`{"max_rounds": 2}`))
	require.NoError(t, err)
	require.NotContains(t, string(opts), "think_ms")
	opts, err = p.Options(json.RawMessage(`{"max_rounds": 2, "think_ms": 30}`))
	require.NoError(t, err)
	require.Contains(t, string(opts), `"think_ms":30`)

	var open *orchestrator.Node
	for _, n := range p.Nodes {
		if n.Name == p.Start {
			open = n
		}
	}
	require.NotNil(t, open)
	state, err := p.Init(context.Background(), orchestrator.InitInput{DebateID: "d", TenantID: "t", DealID: "deal", Options: opts})
	require.NoError(t, err)
	in := &orchestrator.NodeInput{Options: opts, State: state, Round: 1}
	start := time.Now()
	out, err := open.Run(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, out.Events, 1)
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond, "the node thought before it spoke")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = open.Run(ctx, in)
	require.ErrorIs(t, err, context.Canceled, "a node gives up its think time when its context ends")
}

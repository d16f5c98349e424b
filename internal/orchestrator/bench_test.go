package orchestrator

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// benchPayload is a typical agent output of about 300 bytes.
var benchPayload = json.RawMessage(`{"text":"ARR of 4.2M USD is supported by the audited statements (claim c-17, grade A); ` +
	`the deck's 5.1M figure is not.","claim_refs":["c-17","c-18","c-22"],"calc_refs":["calc-3"],` +
	`"confidence":0.82,"muhasabah":{"passed":true,"uncertainties":["churn cohort 2024"]},"round":2,"node":"advocate_opening"}`)

// BenchmarkStep measures the engine's cost of one step of a trivial node
// (one ~300-byte event, a small state): node.started, the event and
// node.completed sealed, the checkpoint built. The commit itself is the
// store's and is not included. "engine" seals with a SHA-256 chain only;
// "ledger" with the real ledger (RFC 8785 + SHA-256 + Ed25519 per event).
func BenchmarkStep(b *testing.B) {
	require.InDelta(b, 300, len(benchPayload), 10)
	p := &Protocol{
		Name: "bench", Roles: []string{"advocate"}, Start: "n", MaxSteps: 1 << 30,
		Nodes: []*Node{{Name: "n", Actor: "advocate", Edges: []string{"n"}, Run: func(_ context.Context, in *NodeInput) (*NodeOutput, error) {
			return &NodeOutput{
				State:  json.RawMessage(`{"round":2,"turns":17,"open_questions":["q1","q2"]}`),
				Events: []Emit{{Type: "agent.output", Payload: benchPayload}},
			}, nil
		}}},
	}
	for _, bc := range []struct {
		name   string
		sealer func(testing.TB) Sealer
	}{
		{"engine", func(testing.TB) Sealer { return fakeSealer{} }},
		{"ledger", func(t testing.TB) Sealer { return newLedgerSealer(t) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			reg, err := NewRegistry(p)
			require.NoError(b, err)
			e, err := New(Config{Protocols: reg, Sealer: bc.sealer(b), Now: func() time.Time { return t0 }})
			require.NoError(b, err)
			d := debate.Debate{ID: "deb-1", TenantID: "ten-1", DealID: "deal-1", Protocol: "bench", Status: debate.DebateQueued}
			first, err := e.Step(b.Context(), d, nil, nil)
			require.NoError(b, err)
			last := first.Events[len(first.Events)-1]
			d.Status, d.NextNode, d.Round, d.LastSeq, d.HeadHash = first.Status, first.NextNode, first.Round, last.Seq, last.Hash
			cp := first.Checkpoint
			b.ReportAllocs()
			for b.Loop() {
				c, err := e.Step(b.Context(), d, cp, nil)
				if err != nil || len(c.Events) != 3 {
					b.Fatal(err, c)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

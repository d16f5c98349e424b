package idis_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/enginetest"
)

// countingLedger counts the transcript reads that reach the store.
type countingLedger struct {
	*sqlite.Store
	reads atomic.Int64
}

func (c *countingLedger) EventPayloads(ctx context.Context, debateID string, afterSeq int64, eventType string, limit int) ([]debate.Event, error) {
	c.reads.Add(1)
	return c.Store.EventPayloads(ctx, debateID, afterSeq, eventType, limit)
}

// runIDIS runs one debate on a fresh store holding the sample deal; feed
// wires the transcript cache to the runner as the service does.
func runIDIS(t *testing.T, feed bool, cache *idis.Transcripts) (*countingLedger, []debate.Event) {
	t.Helper()
	var led *countingLedger
	o := enginetest.Options{}
	if feed {
		o.Publisher = cache
	}
	e := enginetest.New(t, func(st *sqlite.Store, _ *ledger.Keyring) []*orchestrator.Protocol {
		led = &countingLedger{Store: st}
		return []*orchestrator.Protocol{idis.Protocol(idis.Config{Registry: st, Ledger: led, Roles: rules.New(), Transcripts: cache})}
	}, o)
	e.ImportDeal(t, storetest.SampleBundle("deal-feed"))
	_, evs := e.Run(t, "deal-feed", idis.Name, json.RawMessage(`{"max_rounds":3}`))
	return led, evs
}

// outputs returns the agent outputs of a ledger, without their times.
func outputs(t *testing.T, evs []debate.Event) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		if e.Type == idis.EventAgentOutput {
			out = append(out, e.Actor+" "+string(e.Payload))
		}
	}
	return out
}

// TestTranscriptCacheFedByTheRunner: fed the events the runner commits, the
// transcript cache lets turns read nothing from the store after the first
// step, and the debate says exactly what it says when every turn reads its
// transcript from the store.
func TestTranscriptCacheFedByTheRunner(t *testing.T) {
	t.Parallel()
	unfed, reference := runIDIS(t, false, nil)
	fed, evs := runIDIS(t, true, idis.NewTranscripts())
	require.NotEmpty(t, outputs(t, reference))
	require.Equal(t, outputs(t, reference), outputs(t, evs), "the same debate either way")
	require.Greater(t, unfed.reads.Load(), int64(3), "without the feed every turn reads")
	require.LessOrEqual(t, fed.reads.Load(), int64(1), "with it, at most the first turn reads (nothing is committed yet)")

}

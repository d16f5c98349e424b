package legal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/enginetest"
)

// caseID is the deal the test debates are filed under.
const caseID = "case-1"

// bench is an embedded store with a tenant and an engine running the
// legal protocol over cfg.
type bench struct{ *enginetest.Env }

func setup(t testing.TB, cfg Config) *bench {
	t.Helper()
	e := enginetest.New(t, func(*sqlite.Store, *ledger.Keyring) []*orchestrator.Protocol {
		return []*orchestrator.Protocol{Protocol(cfg)}
	}, enginetest.Options{})
	// The store keys debates by deal: the case needs a deal row.
	e.ImportDeal(t, storetest.SampleBundle(caseID))
	return &bench{e}
}

// fixture reads a testdata case as options, with maxRounds set.
func fixture(t testing.TB, name string, maxRounds int) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	require.NoError(t, err)
	var o map[string]any
	require.NoError(t, json.Unmarshal(data, &o))
	o["max_rounds"] = maxRounds
	out, err := json.Marshal(o)
	require.NoError(t, err)
	return out
}

// result is a finished debate: its row, events and deliverables.
type result struct {
	d      debate.Debate
	events []debate.Event
	del    Deliverables
}

func (r *result) artifacts() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, e := range r.events {
		if e.Type != EventArtifact {
			continue
		}
		var a struct {
			Name    string          `json:"name"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(e.Payload, &a) == nil {
			out[a.Name] = a.Content
		}
	}
	return out
}

func (r *result) count(typ string) int {
	n := 0
	for _, e := range r.events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func (r *result) decisions(t *testing.T) []Decision {
	t.Helper()
	var out []Decision
	for _, e := range r.events {
		if e.Type == EventDecision {
			var d Decision
			require.NoError(t, json.Unmarshal(e.Payload, &d))
			out = append(out, d)
		}
	}
	return out
}

// debate runs one debate with options to its end.
func (b *bench) debate(t testing.TB, opts json.RawMessage) *result {
	t.Helper()
	p := Protocol(Config{})
	canon, err := p.ValidateOptions(opts)
	require.NoError(t, err)
	d, evs := b.Run(t, caseID, Name, canon)
	res := &result{d: d, events: evs}
	for _, e := range evs {
		if e.Type == EventDeliverables {
			require.NoError(t, json.Unmarshal(e.Payload, &res.del))
		}
	}
	return res
}

package legal

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// modelCall is one request the test model server answered.
type modelCall struct {
	data    map[string]json.RawMessage
	repairs int // assistant turns before this request: its repair number
	schema  string
}

// rulesModel is the test double for the model API (openaitest): it answers
// like a model, composing the answer to the request's DATA block with the
// rules backend (ComposeByRules). spoil, if set, may damage an answer
// before it is sent (to exercise the gates' repair requests).
type rulesModel struct {
	srv *openaitest.Server
}

func newRulesModel(t testing.TB, spoil func(c modelCall, answer map[string]any)) *rulesModel {
	t.Helper()
	return &rulesModel{srv: openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		c := callOf(r)
		ans, err := ComposeByRules(r.Data)
		if err != nil {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: err.Error()}
		}
		if spoil != nil {
			var obj map[string]any
			_ = json.Unmarshal(ans, &obj)
			spoil(c, obj)
			ans, _ = json.Marshal(obj)
		}
		return openaitest.Answer{Content: string(ans)}
	})}
}

// callOf is what a test asserts on of one request.
func callOf(r openaitest.Request) modelCall {
	c := modelCall{schema: r.SchemaName}
	_ = json.Unmarshal(r.Data, &c.data)
	for _, msg := range r.Messages {
		if msg.Role == "assistant" {
			c.repairs++
		}
	}
	return c
}

func (m *rulesModel) config(t testing.TB, budget int) Config {
	t.Helper()
	b, err := llm.NewBackend(llm.Config{BaseURL: m.srv.URL, Model: "legal-test", Budget: budget,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	require.NoError(t, err)
	return Config{ModelFor: func(context.Context) (llm.Caller, error) { return b, nil }}
}

// snapshot is the requests the model answered (a request it refused is
// not one).
func (m *rulesModel) snapshot() []modelCall {
	var out []modelCall
	for _, r := range m.srv.Requests() {
		if _, err := ComposeByRules(r.Data); err == nil {
			out = append(out, callOf(r))
		}
	}
	return out
}

// TestModelBackend: with the agents played by a model, a critique without
// a suggested_fix is sent back for repair before it can enter the debate;
// the debate then runs as with the rules backend, and the supervisor's
// model sees only the final revisions and the summary.
func TestModelBackend(t *testing.T) {
	t.Parallel()
	m := newRulesModel(t, func(c modelCall, answer map[string]any) {
		if ks, _ := answer["critiques"].([]any); c.schema == schemaCritique && c.repairs == 0 && len(ks) > 0 {
			ks[0].(map[string]any)["suggested_fix"] = ""
		}
	})
	opts := fixture(t, "minangkabau_pusaka", 2)
	got := setup(t, m.config(t, 0)).debate(t, opts)
	want := setup(t, Config{}).debate(t, opts)
	requireSound(t, got, opts)
	require.Equal(t, want.d.StopReason, got.d.StopReason)
	require.Equal(t, want.decisions(t), got.decisions(t))
	for n, c := range want.artifacts() {
		if n != SummaryArtifact {
			require.JSONEq(t, string(c), string(got.artifacts()[n]), n)
		}
	}
	calls := m.snapshot()
	repairs := 0
	for _, c := range calls {
		if c.repairs > 0 {
			repairs++
			require.Equal(t, schemaCritique, c.schema)
		}
	}
	critiqued := 0
	for n, c := range want.artifacts() {
		var cs CritiqueSet
		if strings.HasPrefix(n, "critique_") && json.Unmarshal(c, &cs) == nil && len(cs.Critiques) > 0 {
			critiqued++
		}
	}
	require.Equal(t, critiqued, repairs, "each critique set was repaired once")
	var sup []modelCall
	for _, c := range calls {
		if c.schema == schemaSynthesis {
			sup = append(sup, c)
		}
	}
	require.Len(t, sup, 1)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range sup[0].data {
			if !yield(k) {
				return
			}
		}
	})
	require.Equal(t, []string{"debate_summary", "final_revisions", "kind", "round"}, keys, "the supervisor sees the final revisions and the summary only")
	for _, e := range got.events {
		if e.Type == EventArtifact && e.Actor != "engine" {
			var a struct{ Model *debate.ModelCall }
			require.NoError(t, json.Unmarshal(e.Payload, &a))
			require.NotNil(t, a.Model, "a model-backed output records its calls")
			require.Equal(t, "legal-test", a.Model.Model)
		}
	}
}

// TestModelOutputRejected: an answer that still cites a source outside the
// context after the repairs is rejected, recorded with its violations,
// kept out of the debate, and escalates it.
func TestModelOutputRejected(t *testing.T) {
	t.Parallel()
	m := newRulesModel(t, func(c modelCall, answer map[string]any) {
		if c.schema == schemaOutput && string(c.data["agent"]) == `"NLA"` {
			claim := answer["claims"].([]any)[0].(map[string]any)
			claim["evidence"] = []any{"an-invented-source"}
		}
	})
	r := setup(t, m.config(t, 0)).debate(t, fixture(t, "jawa_gonogini", 2))
	require.Equal(t, debate.DebateNeedsReview, r.d.Status)
	require.Equal(t, ReasonEscalated, r.d.StopReason)
	require.Equal(t, 1, r.count(EventRejected))
	for _, e := range r.events {
		if e.Type == EventRejected {
			var rej rejection
			require.NoError(t, json.Unmarshal(e.Payload, &rej))
			require.Equal(t, AgentNLA, rej.Agent)
			require.Equal(t, KindAnswer, rej.Kind)
			require.Equal(t, RuleNoFreeFacts, rej.Violations[0].Rule)
			require.Equal(t, 1+llm.DefaultMaxRepairs, rej.Model.Calls, "the model was asked to repair first")
			require.Equal(t, RoleNLA, e.Actor)
		}
	}
	names := slices.Collect(maps.Keys(r.artifacts()))
	require.NotContains(t, names, "debate_round1_nla.json", "a rejected output never enters the debate")
	require.Contains(t, names, "debate_round1_ala.json")
	require.Equal(t, []string{EscalateRejected}, r.decisions(t)[0].Escalation)
	require.True(t, r.del.NeedsHumanReview)
	require.Equal(t, []Rejection{{Agent: AgentNLA, Round: 1, Kind: KindAnswer, Rules: []string{RuleNoFreeFacts}}}, r.del.Summary.Rejections)
}

// TestModelBudget: a debate whose next model call would exceed its token
// budget stops for review before the call.
func TestModelBudget(t *testing.T) {
	t.Parallel()
	m := newRulesModel(t, nil)
	r := setup(t, m.config(t, 10)).debate(t, fixture(t, "jawa_gonogini", 2))
	require.Equal(t, debate.DebateNeedsReview, r.d.Status)
	require.Equal(t, ReasonTokenBudget, r.d.StopReason)
	require.Positive(t, r.count(EventBudgetExceeded))
	require.Empty(t, m.snapshot(), "no call was sent over the budget")
}

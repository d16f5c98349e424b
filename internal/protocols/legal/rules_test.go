package legal

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// gateFor runs the gate the protocol runs on an answer to r, with the
// request's own context, target, finals and summary; it returns what the
// gate parsed (nil if nothing) and its violations.
func gateFor(r *Request, ans json.RawMessage) (any, []debate.Violation) {
	switch r.Kind {
	case KindCritique:
		target := r.Target
		if target == nil {
			target = &Output{}
		}
		cs, vs := checkCritiques(ans, r.Round, r.Agent, target)
		if cs == nil {
			return nil, vs
		}
		return cs, vs
	case KindSynthesis:
		sum := r.Summary
		if sum == nil {
			sum = &Summary{}
		}
		syn, vs := checkSynthesis(ans, r.Finals, sum)
		if syn == nil {
			return nil, vs
		}
		return syn, vs
	default:
		o, vs := checkOutput(ans, r.Round, r.Agent, Options{Context: r.Context}.sources())
		if o == nil {
			return nil, vs
		}
		return o, vs
	}
}

// modelData runs every testdata case with the agents played by a model
// (the rules backend behind the model API) and returns the DATA blocks the
// model was sent: what a tenant's model would read.
func modelData(tb testing.TB) []json.RawMessage {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(tb, err)
	require.NotEmpty(tb, names)
	var out []json.RawMessage
	for _, n := range names {
		m := newRulesModel(tb, nil)
		setup(tb, m.config(tb, 0)).debate(tb, fixture(tb, strings.TrimSuffix(filepath.Base(n), ".json"), MaxRounds))
		for _, r := range m.srv.Requests() {
			out = append(out, r.Data)
		}
	}
	return out
}

// FuzzComposeByRules: no DATA makes the rules backend (or the gate it
// answers through) panic; it answers what parses, and its answer is either
// valid or rejected by the protocol's gate, never half-read. The seeds are
// the DATA blocks of real debates over the testdata cases, on which every
// answer is valid, and the request that used to panic: a conflict critique
// of a claim that states no fact.
func FuzzComposeByRules(f *testing.F) {
	seeds := modelData(f)
	for _, d := range seeds {
		var r Request
		require.NoError(f, json.Unmarshal(d, &r))
		ans, err := ComposeByRules(d)
		require.NoError(f, err)
		parsed, vs := gateFor(&r, ans)
		require.Empty(f, vs, "a real debate's request gets a valid answer: %s", d)
		require.NotNil(f, parsed)
		f.Add([]byte(d))
	}
	f.Add([]byte(`{"kind":"revision","round":2,"agent":"ALA","own_output":{"round":1,"agent":"ALA","answer":"a",` +
		`"claims":[{"id":"C1","statement":"s","evidence":["n1"],"confidence":0.8,"assumptions":[]}],"uncertainties":[],"open_questions":[]},` +
		`"critiques_received":[{"id":"K1","target_claim_id":"C1","issue_type":"conflict","description":"d","severity":"MAJOR","suggested_fix":"f"}]}`))
	f.Add([]byte(`{"kind":"critique","round":1,"agent":"NLA","target_output":{"claims":[{"id":"C1","triple":{}}]},"own_output":{"claims":[{"id":"C1","triple":{"object":"x"}}]}}`))
	f.Add([]byte(`{"kind":"synthesis","final_revisions":{"NLA":null},"debate_summary":{}}`))
	f.Add([]byte(`{"kind":"nope"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ans, err := ComposeByRules(data)
		var r Request
		if jerr := json.Unmarshal(data, &r); jerr != nil {
			require.Error(t, err, "a request that does not parse is refused")
			return
		}
		if err != nil {
			require.NotContains(t, []string{KindAnswer, KindCritique, KindRevision, KindSynthesis}, r.Kind, "a known kind is answered: %v", err)
			return
		}
		require.True(t, json.Valid(ans))
		parsed, vs := gateFor(&r, ans)
		if len(vs) == 0 {
			require.NotNil(t, parsed, "the gate accepted an answer it did not read")
		}
	})
}

// TestConflictOnAClaimWithoutAFact: a conflict critique of a claim that
// states no fact (as a model may write) leaves the claim disputed with a
// note, where it used to panic.
func TestConflictOnAClaimWithoutAFact(t *testing.T) {
	t.Parallel()
	own := Output{Round: 1, Agent: AgentALA, Answer: "a", Claims: []Claim{{ID: "C1", Statement: "The heir takes the land.",
		Evidence: []string{"adat-1"}, Confidence: 0.8, Assumptions: []string{}}}}
	own.normalize()
	req := Request{Kind: KindRevision, Round: 2, Agent: AgentALA, Own: &own,
		Context:  []Passage{{SourceID: "adat-1", Domain: DomainAdatMinangkabau, Text: "The heir takes the land."}},
		Received: []Critique{{ID: "K1", TargetClaimID: "C1", IssueType: IssueConflict, Severity: SeverityMajor, Description: "d", SuggestedFix: "f"}}}
	data, err := json.Marshal(req)
	require.NoError(t, err)
	ans, err := ComposeByRules(data)
	require.NoError(t, err)
	parsed, vs := gateFor(&req, ans)
	require.Empty(t, vs)
	o := parsed.(*Output)
	require.Len(t, o.Claims, 1)
	require.InDelta(t, confDisputed, o.Claims[0].Confidence, 1e-9)
	require.Contains(t, o.Uncertainties, "C1 conflicts with the NLA position (critique K1); no context source settles which norm prevails.")
}

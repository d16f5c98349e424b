package legal

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocol"
)

var testSources = Options{Context: []Passage{
	{SourceID: "n1", Domain: DomainNational, Text: "t"},
	{SourceID: "a1", Domain: DomainAdatBali, Text: "t"},
}}.sources()

func validOutput() map[string]any {
	return map[string]any{
		"round": 1, "agent": "NLA", "answer": "Children inherit equally.",
		"claims": []any{map[string]any{"id": "C1", "statement": "Children inherit equally.", "evidence": []any{"n1"},
			"confidence": 0.7, "assumptions": []any{"national law applies"}}},
		"uncertainties": []any{}, "open_questions": []any{},
	}
}

func validCritiques(n int) map[string]any {
	var ks []any
	for i := 1; i <= n; i++ {
		ks = append(ks, map[string]any{"id": fmt.Sprintf("K%d", i), "target_claim_id": "C1", "issue_type": "logic_gap",
			"description": "scope is unstated", "severity": "MINOR", "suggested_fix": "state the scope"})
	}
	return map[string]any{"round": 1, "agent": "ALA", "target": "NLA", "critiques": ks}
}

func raw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func rules(vs []debate.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

func claim0(o map[string]any) map[string]any { return o["claims"].([]any)[0].(map[string]any) }

func TestCheckOutput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		mutate func(o map[string]any)
		want   []string
	}{
		{"valid", func(map[string]any) {}, nil},
		{"unknown evidence id (No-Free-Facts)", func(o map[string]any) { claim0(o)["evidence"] = []any{"n1", "made-up-source"} }, []string{RuleNoFreeFacts}},
		{"claim without evidence not marked as a risk", func(o map[string]any) { claim0(o)["evidence"] = []any{} }, []string{RuleUnmarkedRisk}},
		{"claim without evidence marked as a risk", func(o map[string]any) {
			claim0(o)["evidence"] = []any{}
			claim0(o)["risk"] = true
		}, nil},
		{"more than 10 claims (token blow-up)", func(o map[string]any) {
			var cs []any
			for i := 1; i <= 11; i++ {
				cs = append(cs, map[string]any{"id": fmt.Sprintf("C%d", i),
					"statement": "s", "evidence": []any{"n1"}, "confidence": 0.5, "assumptions": []any{}})
			}
			o["claims"] = cs
		}, []string{RuleTooManyClaims}},
		{"no claim", func(o map[string]any) { o["claims"] = []any{} }, []string{RuleSchema}},
		{"wrong round", func(o map[string]any) { o["round"] = 2 }, []string{RuleSchema}},
		{"speaks for the other agent", func(o map[string]any) { o["agent"] = "ALA" }, []string{RuleSchema}},
		{"confidence out of range", func(o map[string]any) { claim0(o)["confidence"] = 1.5 }, []string{RuleSchema}},
		{"bad claim id", func(o map[string]any) { claim0(o)["id"] = "claim-1" }, []string{RuleSchema}},
		{"unknown field", func(o map[string]any) { o["verdict"] = "yes" }, []string{RuleSchema}},
		{"empty answer", func(o map[string]any) { o["answer"] = " " }, []string{RuleSchema}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := validOutput()
			tc.mutate(o)
			got, vs := checkOutput(raw(t, o), 1, AgentNLA, testSources)
			require.Equal(t, tc.want, rules(vs), "%v", vs)
			if tc.name != "unknown field" {
				require.NotNil(t, got)
			}
		})
	}
	_, vs := checkOutput(json.RawMessage(`[1,2]`), 1, AgentNLA, testSources)
	require.Equal(t, []string{RuleSchema}, rules(vs))
}

func TestCheckCritiques(t *testing.T) {
	t.Parallel()
	target := &Output{Round: 1, Agent: AgentNLA, Claims: []Claim{{ID: "C1"}}}
	for _, tc := range []struct {
		name   string
		round  int
		n      int
		mutate func(c map[string]any)
		want   []string
	}{
		{"three critiques in round 1", 1, 3, func(map[string]any) {}, nil},
		{"two critiques in round 1 (echo chamber)", 1, 2, func(map[string]any) {}, []string{RuleEchoChamber}},
		{"no critique in round 2 is allowed", 2, 0, func(c map[string]any) { c["round"] = 2 }, nil},
		{"a critique without suggested_fix (over-criticism)", 1, 3, func(c map[string]any) {
			c["critiques"].([]any)[1].(map[string]any)["suggested_fix"] = ""
		}, []string{RuleSuggestedFix}},
		{"a critique of a claim that does not exist", 1, 3, func(c map[string]any) {
			c["critiques"].([]any)[0].(map[string]any)["target_claim_id"] = "C9"
		}, []string{RuleNoFreeFacts}},
		{"an unknown issue type and severity", 1, 3, func(c map[string]any) {
			k := c["critiques"].([]any)[2].(map[string]any)
			k["issue_type"], k["severity"] = "style", "LOW"
		}, []string{RuleSchema, RuleSchema}},
		{"a self-critique", 1, 3, func(c map[string]any) { c["target"] = "ALA" }, []string{RuleSchema}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := validCritiques(tc.n)
			tc.mutate(c)
			_, vs := checkCritiques(raw(t, c), tc.round, AgentALA, target)
			require.Equal(t, tc.want, rules(vs), "%v", vs)
		})
	}
}

func TestCheckSynthesis(t *testing.T) {
	t.Parallel()
	finals := map[string]*Output{AgentNLA: {Agent: AgentNLA, Claims: []Claim{{ID: "C1"}}}, AgentALA: {Agent: AgentALA, Claims: []Claim{{ID: "C2"}}}}
	good := map[string]any{"answer": "a", "agreed_claims": []any{"NLA.C1", "ALA.C2"}, "disputed_claims": []any{}, "needs_human_review": true, "rationale": "r"}
	_, vs := checkSynthesis(raw(t, good), finals, &Summary{NeedsHumanReview: true})
	require.Empty(t, vs)
	good["agreed_claims"] = []any{"NLA.C2"}
	good["needs_human_review"] = false
	_, vs = checkSynthesis(raw(t, good), finals, &Summary{NeedsHumanReview: true})
	require.Equal(t, []string{RuleNoFreeFacts, RuleReviewFlag}, rules(vs))
}

func TestParseOptions(t *testing.T) {
	t.Parallel()
	ok := `{"query":"q","context":[{"source_id":"s1","domain":"national","text":"t"}]}`
	o, err := protocol.ParseOptions(json.RawMessage(ok), defaults, check)
	require.NoError(t, err)
	require.Equal(t, DefaultRounds, o.MaxRounds)
	long := strings.Repeat("x", MaxPassageChars+1)
	for _, tc := range []struct {
		name, opts string
		fields     []string
	}{
		{"empty", `{}`, []string{"options.query", "options.context"}},
		{"unknown member", `{"query":"q","context":[],"foo":1}`, []string{"options"}},
		{"duplicate source id, unknown domain, no text", `{"query":"q","context":[{"source_id":"s","domain":"national","text":"t"},{"source_id":"s","domain":"adat_sunda","text":""}]}`,
			[]string{"options.context[1].source_id", "options.context[1].domain", "options.context[1].text"}},
		{"too long a passage, a bad triple", `{"query":"q","context":[{"source_id":"s","domain":"national","text":"` + long + `","triple":{"subject":"a","predicate":"","object":"c"}}]}`,
			[]string{"options.context[0].text", "options.context[0].triple.predicate"}},
		{"rounds and hint", `{"query":"q","context":[{"source_id":"s","domain":"national","text":"t"}],"max_rounds":4,"domain_hint":"maybe"}`,
			[]string{"options.domain_hint", "options.max_rounds"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := protocol.ParseOptions(json.RawMessage(tc.opts), defaults, check)
			require.ErrorIs(t, err, debate.ErrInvalid)
			var ve *debate.ValidationError
			require.True(t, errors.As(err, &ve))
			var fields []string
			for _, v := range ve.Violations {
				fields = append(fields, v.Field)
			}
			require.Equal(t, tc.fields, fields)
		})
	}
}

// FuzzGates: no input makes the gates panic, and whatever they accept is
// within the §8 bounds.
func FuzzGates(f *testing.F) {
	f.Add([]byte(`{"round":1,"agent":"NLA","answer":"a","claims":[{"id":"C1","statement":"s","evidence":["n1"],"confidence":0.5,"assumptions":[]}],"uncertainties":[],"open_questions":[]}`))
	f.Add([]byte(`{"round":1,"agent":"ALA","target":"NLA","critiques":[{"id":"K1","target_claim_id":"C1","issue_type":"conflict","description":"d","severity":"MAJOR","suggested_fix":"f"}]}`))
	f.Add([]byte(`null`))
	target := &Output{Round: 1, Agent: AgentNLA, Claims: []Claim{{ID: "C1"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		if o, vs := checkOutput(data, 1, AgentNLA, testSources); len(vs) == 0 {
			require.NotNil(t, o)
			require.LessOrEqual(t, len(o.Claims), MaxClaims)
		}
		if cs, vs := checkCritiques(data, 1, AgentALA, target); len(vs) == 0 {
			require.GreaterOrEqual(t, len(cs.Critiques), MinCritiquesRound1)
			for _, k := range cs.Critiques {
				require.NotEmpty(t, strings.TrimSpace(k.SuggestedFix))
			}
		}
		finals := map[string]*Output{AgentNLA: target}
		if syn, vs := checkSynthesis(data, finals, &Summary{NeedsHumanReview: true}); len(vs) == 0 {
			require.True(t, syn.NeedsHumanReview)
		}
	})
}

// FuzzParseOptions: no options make the parser panic, and accepted options
// are within their bounds.
func FuzzParseOptions(f *testing.F) {
	f.Add([]byte(`{"query":"q","context":[{"source_id":"s1","domain":"national","text":"t","triple":{"subject":"a","predicate":"b","object":"c"}}],"max_rounds":3}`))
	f.Add([]byte(`{"query":"","context":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := protocol.ParseOptions(data, defaults, check)
		if err != nil {
			require.ErrorIs(t, err, debate.ErrInvalid)
			return
		}
		require.NotEmpty(t, o.Context)
		require.LessOrEqual(t, len(o.Context), MaxPassages)
		require.Len(t, o.sources(), len(o.Context), "source ids are unique")
		require.Contains(t, []int{DefaultRounds, MaxRounds}, o.MaxRounds)
	})
}

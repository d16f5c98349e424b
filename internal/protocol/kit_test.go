package protocol_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/roles/llm"
)

func errorsAs[T error](err error) (T, bool) { return errors.AsType[T](err) }

// TestBudgetStop: a spent budget stops the debate for review with one
// budget.exceeded event, signed by the role and naming it under "role";
// any other error is left to the engine.
func TestBudgetStop(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("llm: %w: over by 10", roles.ErrBudgetExceeded)
	out, got := protocol.BudgetStop("critic", err, &debate.ModelCall{Calls: 1}, map[string]any{"schema": "s"})
	require.NoError(t, got)
	require.Equal(t, debate.DebateNeedsReview, out.Stop.Status)
	require.Equal(t, protocol.ReasonTokenBudget, out.Stop.Reason)
	require.Len(t, out.Events, 1)
	ev := out.Events[0]
	require.Equal(t, protocol.EventBudgetExceeded, ev.Type)
	require.Equal(t, "critic", ev.Actor)
	p := ev.Payload.(map[string]any)
	require.Equal(t, "critic", p["role"])
	require.Equal(t, "s", p["schema"])
	require.Contains(t, p["detail"], "budget")
	require.NotNil(t, p["model"])

	other := errors.New("model down")
	out, got = protocol.BudgetStop("critic", other, nil, nil)
	require.Nil(t, out)
	require.Same(t, other, got)
}

// TestRuleNames: the rules of violations, consecutive repeats once, never
// nil.
func TestRuleNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{}, protocol.RuleNames(nil))
	require.Equal(t, []string{"A", "B", "A"}, protocol.RuleNames([]debate.Violation{{Rule: "A"}, {Rule: "A"}, {Rule: "B"}, {Rule: "A"}}))
}

// TestGateAndRegate: both verdicts run the gate on the answer whatever the
// model's client reported and refuse a result without an answer; Regate
// also refuses an answer the client refused, Gate lets the gate judge it.
func TestGateAndRegate(t *testing.T) {
	t.Parallel()
	check := protocol.DecodeCheck(func(a struct {
		N int `json:"n"`
	}) []debate.Violation {
		if a.N < 1 {
			return []debate.Violation{{Rule: "POSITIVE", Field: "n"}}
		}
		return nil
	})
	reported := []debate.Violation{{Rule: "CLIENT"}}
	for _, tc := range []struct {
		name             string
		res              llm.JSONResult
		regate, gateOnly string
	}{
		{"good, passed", llm.JSONResult{Answer: json.RawMessage(`{"n":1}`)}, "", ""},
		{"bad, passed", llm.JSONResult{Answer: json.RawMessage(`{"n":0}`)}, "POSITIVE", "POSITIVE"},
		{"not the schema, passed", llm.JSONResult{Answer: json.RawMessage(`{"m":1}`)}, "SCHEMA", "SCHEMA"},
		{"trailing data, passed", llm.JSONResult{Answer: json.RawMessage(`{"n":1} {}`)}, "SCHEMA", "SCHEMA"},
		{"good, refused", llm.JSONResult{Answer: json.RawMessage(`{"n":1}`), Violations: reported}, "CLIENT", ""},
		{"none, refused", llm.JSONResult{Violations: reported}, "CLIENT", "CLIENT"},
		{"none, nothing said", llm.JSONResult{}, "SCHEMA", "SCHEMA"},
	} {
		first := func(vs []debate.Violation) string {
			if len(vs) == 0 {
				return ""
			}
			return vs[0].Rule
		}
		require.Equal(t, tc.regate, first(protocol.Regate(check, tc.res)), "Regate: %s", tc.name)
		require.Equal(t, tc.gateOnly, first(protocol.Gate(check, tc.res)), "Gate: %s", tc.name)
	}
}

// TestAskWithoutAModel: without a model the rules answer the call's DATA
// (encoded, or as given when already JSON) and the gate judges the answer.
func TestAskWithoutAModel(t *testing.T) {
	t.Parallel()
	double := protocol.Rules(func(d struct {
		N int `json:"n"`
	}) map[string]int {
		return map[string]int{"n": 2 * d.N}
	})
	check := func(raw json.RawMessage) []debate.Violation {
		if string(raw) != `{"n":4}` {
			return []debate.Violation{{Rule: "FOUR", Field: "n"}}
		}
		return nil
	}
	in := &orchestrator.NodeInput{DebateID: "d", Round: 1, Attempt: 1}
	var models protocol.Models
	for _, data := range []any{map[string]int{"n": 2}, json.RawMessage(`{"n":2}`)} {
		ans, err := models.Ask(context.Background(), in, protocol.Call{Prompt: protocol.Prompt{Role: "r", Rules: double}, Data: data, Check: check})
		require.NoError(t, err)
		require.JSONEq(t, `{"n":4}`, string(ans.Raw))
		require.Empty(t, ans.Violations)
		require.Nil(t, ans.Model)
	}
	ans, err := models.Ask(context.Background(), in, protocol.Call{Prompt: protocol.Prompt{Role: "r", Rules: double}, Data: map[string]int{"n": 3}, Check: check})
	require.NoError(t, err)
	require.Equal(t, "FOUR", ans.Violations[0].Rule, "the rules are gated like a model")
	_, err = models.Ask(context.Background(), in, protocol.Call{Prompt: protocol.Prompt{Role: "r", Rules: double}, Data: json.RawMessage(`[1]`), Check: check})
	require.Error(t, err, "DATA the rules cannot read")
}

// TestParseOptionsNamesUnknownMembers: every unknown member is named at
// once by its path, with the members the options have; names match as
// encoding/json matches them (case-insensitively); a protocol without
// options says it takes none; other decoding errors keep the decoder's
// words.
func TestParseOptionsNamesUnknownMembers(t *testing.T) {
	t.Parallel()
	type opts struct {
		Rounds int    `json:"rounds"`
		Mode   string `json:"mode,omitempty"`
		Hidden string `json:"-"`
	}
	detail := func(t *testing.T, err error) string {
		t.Helper()
		require.ErrorIs(t, err, debate.ErrInvalid)
		ve, ok := errorsAs[*debate.ValidationError](err)
		require.True(t, ok)
		require.Len(t, ve.Violations, 1)
		require.Equal(t, "options", ve.Violations[0].Field)
		return ve.Violations[0].Description
	}
	_, err := protocol.ParseOptions[opts](json.RawMessage(`{"rounds":2,"zeta":1,"alpha":true,"-":3}`), nil, nil)
	require.Equal(t, `unknown members "options.-", "options.alpha", "options.zeta" (the members are rounds, mode)`, detail(t, err))

	o, err := protocol.ParseOptions[opts](json.RawMessage(`{"ROUNDS":3}`), nil, nil)
	require.NoError(t, err)
	require.Equal(t, 3, o.Rounds)

	_, err = protocol.ParseOptions[protocol.None](json.RawMessage(`{"x":1}`), nil, nil)
	require.Equal(t, `unknown member "options.x" (there are none)`, detail(t, err))

	// A wrong type names the member and what it takes, not Go's types.
	for raw, want := range map[string]string{
		`{"rounds":"two"}`: "must be a whole number, not a JSON string",
		`{"rounds":1.5}`:   "must be a whole number, not a JSON number 1.5",
		`{"mode":7}`:       "must be a string, not a JSON number",
	} {
		_, err = protocol.ParseOptions[opts](json.RawMessage(raw), nil, nil)
		ve, ok := errorsAs[*debate.ValidationError](err)
		require.True(t, ok, raw)
		require.Len(t, ve.Violations, 1, raw)
		require.Contains(t, []string{"options.rounds", "options.mode"}, ve.Violations[0].Field, raw)
		require.Equal(t, want, ve.Violations[0].Description, raw)
		require.NotContains(t, ve.Violations[0].Description, "Go struct", raw)
	}
	_, err = protocol.ParseOptions[opts](json.RawMessage(`{"rounds":2} {}`), nil, nil)
	require.Equal(t, "trailing data after the JSON value", detail(t, err), "other decoding errors keep their words")
}

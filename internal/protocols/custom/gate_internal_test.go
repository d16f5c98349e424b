package custom

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/store/storetest"
)

// TestCheckAppliesTheRoleGates: the schema, No-Free-Facts and Muḥāsabah
// gates of the red-team example's attacker, on answers built from the
// sample deal.
func TestCheckAppliesTheRoleGates(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocols", "redteam-review.yaml"))
	require.NoError(t, err)
	d, err := Parse(raw, nil)
	require.NoError(t, err)
	p := &proto{doc: d, schemas: map[string]map[string]any{}}
	for i := range d.Roles {
		s, err := answerSchema(&d.Roles[i])
		require.NoError(t, err)
		p.schemas[d.Roles[i].ID] = s
	}
	b := storetest.SampleBundle("deal-x")
	facts := gate.NewFacts(b, nil)
	claim := b.Claims[0]
	rec := map[string]any{"supported_claim_ids": []string{claim.ID}, "confidence": 0.5,
		"falsifiability_tests": []map[string]any{{"test_description": "check the source", "required_evidence": "the source", "pass_fail_rule": "fails if it disagrees"}},
		"uncertainties":        []map[string]any{{"uncertainty": "stale source", "impact": "medium", "mitigation": "ask again"}}}
	good := map[string]any{"attacks": []map[string]any{{"claim_id": claim.ID, "attack": "the evidence for " + claim.Key + " is thin"}},
		"severity": "HIGH", "refs": []string{claim.ID}, "muhasabah_record": rec}
	attacker := d.role("attacker")
	rules := func(answer map[string]any, final bool) []string {
		js, err := json.Marshal(answer)
		require.NoError(t, err)
		var out []string
		for _, v := range p.check(attacker, js, facts, final) {
			out = append(out, v.Rule+" "+v.Field)
		}
		return out
	}
	require.Empty(t, rules(good, true))

	clone := func(f func(m map[string]any)) map[string]any {
		js, _ := json.Marshal(good)
		var m map[string]any
		require.NoError(t, json.Unmarshal(js, &m))
		f(m)
		return m
	}
	require.Contains(t, rules(clone(func(m map[string]any) { m["severity"] = "EXTREME" }), true), "SCHEMA severity")
	require.Contains(t, rules(clone(func(m map[string]any) { delete(m, "attacks") }), true), "SCHEMA attacks")
	require.Contains(t, rules(clone(func(m map[string]any) { delete(m, "refs") }), true), "SCHEMA refs")
	require.Contains(t, rules(clone(func(m map[string]any) {
		m["attacks"] = []map[string]any{{"claim_id": claim.ID, "attack": "revenue grew 300% to $40M"}}
		m["refs"] = []string{}
	}), true), gate.RuleNoFreeFacts+" attacks[0].attack", "a free fact is refused")
	require.Contains(t, rules(clone(func(m map[string]any) { m["refs"] = []string{"no-such-claim"} }), true), gate.RuleNoFreeFactsUnknownRef+" refs[0]")
	require.NotEmpty(t, rules(clone(func(m map[string]any) {
		m["muhasabah_record"] = map[string]any{"supported_claim_ids": []string{}, "confidence": 0}
	}), true),
		"an empty Muhasabah record is refused")
	// Before the last tool round, an answer that asks for tools is checked
	// only for the shape of its calls; at the last, the calls are dropped
	// and the rest must hold.
	askOnly := map[string]any{"tool_calls": []map[string]any{{"tool": "lookup_claim", "args": map[string]any{"claim_id": claim.ID}}}}
	require.Empty(t, rules(askOnly, false))
	require.Contains(t, rules(askOnly, true), "SCHEMA attacks")
	require.Contains(t, rules(map[string]any{"tool_calls": []map[string]any{{"args": map[string]any{}}}}, false), "SCHEMA tool_calls[0].tool")
}

// FuzzCheck: a model's answer, whatever it is, gets violations or none,
// never a panic.
func FuzzCheck(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocols", "redteam-review.yaml"))
	require.NoError(f, err)
	d, err := Parse(raw, nil)
	require.NoError(f, err)
	p := &proto{doc: d, schemas: map[string]map[string]any{}}
	for i := range d.Roles {
		s, err := answerSchema(&d.Roles[i])
		require.NoError(f, err)
		p.schemas[d.Roles[i].ID] = s
	}
	facts := gate.NewFacts(storetest.SampleBundle("deal-x"), nil)
	f.Add([]byte(`{"attacks":[{"claim_id":"x","attack":"y"}],"severity":"LOW","refs":["x"],"muhasabah_record":{"confidence":2}}`), true)
	f.Add([]byte(`{"tool_calls":[{"tool":1}]}`), false)
	f.Add([]byte(`[]`), true)
	f.Fuzz(func(t *testing.T, answer []byte, final bool) {
		for _, r := range d.Roles {
			_ = p.check(&r, answer, facts, final)
		}
		_ = toolCalls(answer)
		_ = withoutToolCalls(answer)
	})
}

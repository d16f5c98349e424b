package stratmaster

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/roles/llm"
)

// TestRegate: the protocol's gate has the last word on a model's answer,
// whatever the caller reported. An answer the caller passed but the gate
// refuses is refused (a caller that does not run the gate, or runs
// another); so is one the caller refused, and no answer at all.
func TestRegate(t *testing.T) {
	t.Parallel()
	claims := map[string]bool{"c1": true}
	check := protocol.DecodeCheck(func(pl researchPlan) []debate.Violation { return checkPlan(pl, claims) })
	good := json.RawMessage(`{"searches":[{"query":"runway"}],"lookups":["c1"]}`)
	bad := json.RawMessage(`{"searches":[],"lookups":["invented"]}`)
	reported := []debate.Violation{{Rule: "RESEARCH_PLAN", Field: "searches", Detail: "the caller's finding"}}
	for _, tc := range []struct {
		name  string
		res   llm.JSONResult
		rules []string
	}{
		{"valid and passed", llm.JSONResult{Answer: good}, nil},
		{"invalid but passed", llm.JSONResult{Answer: bad}, []string{"RESEARCH_PLAN"}},
		{"not the schema but passed", llm.JSONResult{Answer: json.RawMessage(`{"plan":"later"}`)}, []string{"SCHEMA"}},
		{"valid but refused", llm.JSONResult{Answer: good, Violations: reported}, []string{"RESEARCH_PLAN"}},
		{"no answer, refused", llm.JSONResult{Violations: reported}, []string{"RESEARCH_PLAN"}},
		{"no answer, no finding", llm.JSONResult{}, []string{"SCHEMA"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var rules []string
			for _, v := range protocol.Regate(check, tc.res) {
				rules = append(rules, v.Rule)
			}
			require.Equal(t, tc.rules, rules)
		})
	}
}

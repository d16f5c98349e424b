package stratmaster

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocol"
)

const fullConstitution = `
id: prudent
version: "2.1"
principles:
  - id: P1
    description: two sources
    rule: {min_evidence_per_hypothesis: 2}
  - id: P2
    description: graded sources
    rule: {min_source_grade: B}
  - id: P3
    description: argue against yourself
    rule: {require_counter_hypothesis: true}
  - id: P4
    description: modest without A
    rule: {max_confidence_without_grade_a: 0.7}
  - id: P5
    description: no hype
    rule: {forbid_terms: [guaranteed, "risk-free"]}
  - id: P6
    description: enough hypotheses
    rule: {min_hypotheses: 2}
review_metrics:
  - {name: hypothesis_count, threshold: 2}
  - {name: mean_confidence, threshold: 0.5}
  - {name: grade_ab_share, threshold: 0.5}
  - {name: counter_hypotheses, threshold: 1}
`

func TestParseConstitution(t *testing.T) {
	t.Parallel()
	c, err := ParseConstitution(fullConstitution, "options.constitution")
	require.NoError(t, err)
	require.Equal(t, "prudent", c.ID)
	require.Equal(t, "2.1", c.Version)
	require.Len(t, c.Principles, 6)
	require.Equal(t, Rule{Kind: RuleForbidTerms, Terms: []string{"guaranteed", "risk-free"}}, c.Principles[4].Rule)
	require.Len(t, c.ReviewMetrics, 4)
	b, err := json.Marshal(c.Principles[1].Rule)
	require.NoError(t, err)
	require.JSONEq(t, `{"min_source_grade":"B"}`, string(b))

	base := "id: c\nversion: \"1\"\nprinciples:\n"
	ok := "  - {id: P1, description: d, rule: {min_hypotheses: 1}}\n"
	for _, tc := range []struct {
		name, yaml, field string
	}{
		{"empty", "", "options.constitution"},
		{"not yaml", "id: [", "options.constitution"},
		{"unknown top-level field", base + ok + "extra: 1\n", "options.constitution"},
		{"two documents", base + ok + "---\nid: d\n", "options.constitution"},
		{"no id", "version: \"1\"\nprinciples:\n" + ok, "options.constitution.id"},
		{"no version", "id: c\nprinciples:\n" + ok, "options.constitution.version"},
		{"no principles", "id: c\nversion: \"1\"\n", "options.constitution.principles"},
		{"unknown rule", base + ok + ok[:0] + "  - {id: P2, description: d, rule: {min_hypotheses: 1}}\n  - {id: P3, description: d, rule: {be_nice: true}}\n", "options.constitution.principles[2].rule"},
		{"two rules", base + "  - {id: P1, description: d, rule: {min_hypotheses: 1, min_source_grade: A}}\n", "options.constitution.principles[0].rule"},
		{"rule not a mapping", base + "  - {id: P1, description: d, rule: min_hypotheses}\n", "options.constitution.principles[0].rule"},
		{"duplicate principle", base + ok + ok, "options.constitution.principles[1].id"},
		{"no description", base + "  - {id: P1, rule: {min_hypotheses: 1}}\n", "options.constitution.principles[0].description"},
		{"bad int", base + "  - {id: P1, description: d, rule: {min_evidence_per_hypothesis: 0}}\n", "options.constitution.principles[0].rule.min_evidence_per_hypothesis"},
		{"bad grade", base + "  - {id: P1, description: d, rule: {min_source_grade: E}}\n", "options.constitution.principles[0].rule.min_source_grade"},
		{"counter false", base + "  - {id: P1, description: d, rule: {require_counter_hypothesis: false}}\n", "options.constitution.principles[0].rule.require_counter_hypothesis"},
		{"bad confidence", base + "  - {id: P1, description: d, rule: {max_confidence_without_grade_a: 1.5}}\n", "options.constitution.principles[0].rule.max_confidence_without_grade_a"},
		{"no terms", base + "  - {id: P1, description: d, rule: {forbid_terms: []}}\n", "options.constitution.principles[0].rule.forbid_terms"},
		{"blank term", base + "  - {id: P1, description: d, rule: {forbid_terms: [\" \"]}}\n", "options.constitution.principles[0].rule.forbid_terms[0]"},
		{"unknown metric", base + ok + "review_metrics:\n  - {name: vibes, threshold: 1}\n", "options.constitution.review_metrics[0].name"},
		{"no threshold", base + ok + "review_metrics:\n  - {name: hypothesis_count}\n", "options.constitution.review_metrics[0].threshold"},
		{"duplicate metric", base + ok + "review_metrics:\n  - {name: hypothesis_count, threshold: 1}\n  - {name: hypothesis_count, threshold: 2}\n", "options.constitution.review_metrics[1].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseConstitution(tc.yaml, "options.constitution")
			require.ErrorIs(t, err, debate.ErrInvalid)
			var ve *debate.ValidationError
			require.True(t, errors.As(err, &ve))
			var fields []string
			for _, v := range ve.Violations {
				fields = append(fields, v.Field)
			}
			require.Contains(t, fields, tc.field, "%v", ve)
		})
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	cons := `"id: c\nversion: \"1\"\nprinciples:\n  - {id: P1, description: d, rule: {min_hypotheses: 1}}\n"`
	o, err := protocol.ParseOptions(json.RawMessage(`{"question":" Why? ","constitution":`+cons+`}`), nil, check)
	require.NoError(t, err)
	c := o.cons
	require.Equal(t, "Why?", o.Question)
	require.Equal(t, DefaultMaxAttempts, o.MaxAttempts)
	require.Equal(t, DefaultMaxRevisions, *o.MaxRevisions)
	require.Equal(t, "c", c.ID)
	for _, tc := range []struct{ raw, field string }{
		{`{"constitution":` + cons + `}`, "options.question"},
		{`{"question":"` + strings.Repeat("q", maxQuestionBytes+1) + `","constitution":` + cons + `}`, "options.question"},
		{`{"question":"q"}`, "options.constitution"},
		{`{"question":"q","constitution":` + cons + `,"max_attempts":4}`, "options.max_attempts"},
		{`{"question":"q","constitution":` + cons + `,"max_revisions":6}`, "options.max_revisions"},
		{`{"question":"q","constitution":` + cons + `,"rounds":2}`, "options"},
		{`[1]`, "options"},
	} {
		_, err := protocol.ParseOptions(json.RawMessage(tc.raw), nil, check)
		var ve *debate.ValidationError
		require.True(t, errors.As(err, &ve), tc.raw)
		require.Equal(t, tc.field, ve.Violations[0].Field, tc.raw)
	}
}

// FuzzParseConstitution: any text is parsed or refused with field
// violations, never a panic.
func FuzzParseConstitution(f *testing.F) {
	f.Add(fullConstitution)
	f.Add("id: c\nversion: 1\nprinciples:\n  - {id: P, description: d, rule: {forbid_terms: [a, b]}}\n")
	f.Add("principles: [{rule: {min_source_grade: [A]}}]")
	f.Add("&a [*a]")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := ParseConstitution(text, "options.constitution")
		if err != nil {
			var ve *debate.ValidationError
			if !errors.As(err, &ve) || len(ve.Violations) == 0 {
				t.Fatalf("error %v is not a validation error", err)
			}
			return
		}
		if c.ID == "" || len(c.Principles) == 0 {
			t.Fatalf("accepted an incomplete constitution: %+v", c)
		}
		for _, p := range c.Principles {
			if _, err := json.Marshal(p.Rule); err != nil {
				t.Fatalf("accepted rule does not encode: %v", err)
			}
		}
	})
}

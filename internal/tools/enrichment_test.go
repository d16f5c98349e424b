package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

func TestEnrichmentGrade(t *testing.T) {
	t.Parallel()
	for in, want := range map[debate.SourceGrade]debate.SourceGrade{
		debate.GradeA: debate.GradeC, debate.GradeB: debate.GradeC, debate.GradeC: debate.GradeC,
		debate.GradeD: debate.GradeD, "": debate.GradeD, "Z": debate.GradeD, "a": debate.GradeD,
	} {
		require.Equal(t, want, EnrichmentGrade(in), "grade %q", in)
	}
}

func (f *fixture) enrich(t *testing.T, inv *Invoker, args map[string]any) (EnrichmentOutput, Result) {
	t.Helper()
	res, aud := inv.Call(context.Background(), debate.RoleContradictionFinder, toolCall(t, QueryEnrichment, args))
	requireAudit(t, aud, debate.RoleContradictionFinder, QueryEnrichment, res)
	require.NotEqual(t, StatusDenied, res.Status, res.Error)
	if res.Status != StatusSuccess {
		return EnrichmentOutput{}, res
	}
	return output[EnrichmentOutput](t, res), res
}

func recordIDs(out EnrichmentOutput) []string {
	var s []string
	for _, r := range out.Results {
		s = append(s, r.RecordID)
	}
	return s
}

func TestQueryEnrichment(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker(unlimited)

	// Entity names match whatever their case, spacing and punctuation;
	// data points by their folded spelling and common metric spellings.
	out, res := f.enrich(t, inv, map[string]any{
		"entity_type": "COMPANY", "entity_name": "  autoscale   COMMERCE ",
		"data_points": []string{"Annual Recurring Revenue", "employees", "total_funding", "churn", "ARR"},
	})
	require.Equal(t, StatusSuccess, res.Status)
	require.Equal(t, []string{"enr-00", "enr-01", "enr-02", "enr-03"}, recordIDs(out))
	require.Equal(t, []string{"churn"}, out.MissingDataPoints)
	require.Equal(t, 4, out.TotalCount)
	require.Equal(t, EnrichmentNote, out.Note)
	require.Equal(t, EnrichmentResult{
		RecordID: "enr-01", EntityType: "COMPANY", EntityName: "AutoScale Commerce", DataPoint: "ARR",
		ClaimText: "AutoScale Commerce ARR: $11,900,000", Value: "$11,900,000", Source: "Crunchbase", AsOf: "2025-11-30",
		SourceGrade: "C", CorroborationRequired: true,
	}, out.Results[1])

	// Grades are C or D whatever the record says: B and A are capped at C,
	// an unknown grade is D.
	grades := map[string]string{}
	for _, r := range out.Results {
		grades[r.RecordID] = r.SourceGrade
		require.Contains(t, []string{"C", "D"}, r.SourceGrade)
		require.True(t, r.CorroborationRequired)
		require.NotEmpty(t, r.Source, "source attribution")
	}
	require.Equal(t, map[string]string{"enr-00": "D", "enr-01": "C", "enr-02": "C", "enr-03": "D"}, grades)

	// Revenue is not ARR: no merging of different metrics.
	out, _ = f.enrich(t, inv, map[string]any{"entity_type": "COMPANY", "entity_name": "AutoScale Commerce", "data_points": []string{"revenue", "MRR"}})
	require.Empty(t, out.Results)
	require.Equal(t, []string{"revenue", "MRR"}, out.MissingDataPoints)

	// The entity type must match.
	out, _ = f.enrich(t, inv, map[string]any{"entity_type": "PERSON", "entity_name": "AutoScale Commerce", "data_points": []string{"ARR"}})
	require.Empty(t, out.Results)
	out, _ = f.enrich(t, inv, map[string]any{"entity_type": "MARKET", "entity_name": "mid-market e-commerce automation", "data_points": []string{"TAM", "market size"}})
	require.Equal(t, []string{"enr-04"}, recordIDs(out), "a record answers once")
	require.Equal(t, "C", out.Results[0].SourceGrade)
	out, _ = f.enrich(t, inv, map[string]any{"entity_type": "PERSON", "entity_name": "Jane Doe", "data_points": []string{"Prior Exits"}})
	require.Equal(t, []string{"enr-05"}, recordIDs(out))
	require.Equal(t, "D", out.Results[0].SourceGrade)

	// Another company's records never answer.
	out, _ = f.enrich(t, inv, map[string]any{"entity_type": "COMPANY", "entity_name": "Other Co", "data_points": []string{"ARR"}})
	require.Equal(t, []string{"enr-06"}, recordIDs(out))

	// No records, no results: no external call is made.
	bare := f.invoker(func(c *Config) { c.Deal = &Deal{Bundle: f.bundle} })
	out, res = f.enrich(t, bare, map[string]any{"entity_type": "COMPANY", "entity_name": "AutoScale Commerce", "data_points": []string{"ARR"}})
	require.Equal(t, StatusSuccess, res.Status)
	require.Empty(t, out.Results)
	require.Equal(t, []string{"ARR"}, out.MissingDataPoints)
}

func TestQueryEnrichmentInvalid(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker(unlimited)
	many := make([]string, 33)
	for i := range many {
		many[i] = "p"
	}
	for _, tc := range []struct {
		args  map[string]any
		field string
	}{
		{map[string]any{"entity_name": "A", "data_points": []string{"ARR"}}, "entity_type"},
		{map[string]any{"entity_type": "company", "entity_name": "A", "data_points": []string{"ARR"}}, "entity_type"},
		{map[string]any{"entity_type": "FUND", "entity_name": "A", "data_points": []string{"ARR"}}, "entity_type"},
		{map[string]any{"entity_type": "COMPANY", "data_points": []string{"ARR"}}, "entity_name"},
		{map[string]any{"entity_type": "COMPANY", "entity_name": "--", "data_points": []string{"ARR"}}, "entity_name"},
		{map[string]any{"entity_type": "COMPANY", "entity_name": strings.Repeat("n", 513), "data_points": []string{"ARR"}}, "entity_name"},
		{map[string]any{"entity_type": "COMPANY", "entity_name": "A"}, "data_points"},
		{map[string]any{"entity_type": "COMPANY", "entity_name": "A", "data_points": []string{}}, "data_points"},
		{map[string]any{"entity_type": "COMPANY", "entity_name": "A", "data_points": "ARR"}, "data_points"},
		{map[string]any{"entity_type": "COMPANY", "entity_name": "A", "data_points": []string{"ARR", " "}}, "data_points[1]"},
		{map[string]any{"entity_type": "COMPANY", "entity_name": "A", "data_points": many}, "data_points"},
		{map[string]any{"entity_type": "COMPANY", "entity_name": "A", "data_points": []string{"ARR"}, "url": "http://x"}, "url"},
	} {
		_, res := f.enrich(t, inv, tc.args)
		require.Equal(t, StatusInvalid, res.Status, "%v", tc.args)
		require.Equal(t, RuleArguments, res.Rule)
		require.Equal(t, tc.field, res.Field, res.Error)
	}
}

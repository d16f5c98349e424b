package tools

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

func (f *fixture) search(t *testing.T, inv *Invoker, args map[string]any) (SearchOutput, Result) {
	t.Helper()
	if _, ok := args["deal_id"]; !ok {
		args["deal_id"] = testDealID
	}
	res, aud := inv.Call(context.Background(), debate.RoleSanadBreaker, toolCall(t, SearchEvidence, args))
	requireAudit(t, aud, debate.RoleSanadBreaker, SearchEvidence, res)
	require.NotEqual(t, StatusDenied, res.Status, res.Error)
	if res.Status != StatusSuccess {
		return SearchOutput{}, res
	}
	return output[SearchOutput](t, res), res
}

func ids(out SearchOutput) []string {
	var s []string
	for _, r := range out.Results {
		s = append(s, r.EvidenceID)
	}
	return s
}

func sortedIDs(xs ...string) []string {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs
}

func TestSearchEvidenceRanking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	e := f.evidence
	tests := []struct {
		query string
		want  []string // in order
	}{
		// Synonyms: ARR, revenue and MRR are one metric; ties by id.
		{"ARR", sortedIDs(e["C1"], e["B12"])},
		{"revenue", sortedIDs(e["C1"], e["B12"])},
		{"What is the MRR?", sortedIDs(e["C1"], e["B12"])},
		// GM and gross margin are one metric.
		{"GM", []string{e["C2"]}},
		{"gross margin", []string{e["C2"]}},
		// Term overlap ranks: both terms beat one term.
		{"monthly burn", []string{e["C3"], e["C4"]}},
		{"burn runway", []string{e["C4"], e["C3"]}},
		{"CAC", []string{e["C5"]}},
		{"customer acquisition cost", []string{e["C5"]}},
		// NRR is not revenue, although its spelling says "revenue".
		{"net revenue retention", []string{e["C6"]}},
		{"TAM", []string{e["C7"]}},
		{"addressable market", []string{e["C7"]}},
		// Numbers are whole terms.
		{"12,500,000", sortedIDs(e["C1"], e["B12"])},
		{"nothing matches this", nil},
		{"the of and", nil},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			t.Parallel()
			out, res := f.search(t, f.invoker(), map[string]any{"query": tc.query})
			require.Equal(t, StatusSuccess, res.Status, res.Error)
			require.Equal(t, tc.want, ids(out))
			require.Equal(t, len(tc.want), out.TotalCount)
			for i, r := range out.Results {
				require.Greater(t, r.RelevanceScore, 0.0)
				require.LessOrEqual(t, r.RelevanceScore, 1.0)
				if i > 0 {
					require.LessOrEqual(t, r.RelevanceScore, out.Results[i-1].RelevanceScore)
				}
				require.NotNil(t, r.SourceSpan)
				require.Equal(t, r.SourceSpan.TextExcerpt, r.TextExcerpt)
				require.NotEmpty(t, r.SourceGrade)
			}
		})
	}

	out, _ := f.search(t, f.invoker(), map[string]any{"query": "monthly burn"})
	require.InDelta(t, 1.0, out.Results[0].RelevanceScore, 0)
	require.InDelta(t, 0.5, out.Results[1].RelevanceScore, 0)
}

func TestSearchEvidenceDeterministic(t *testing.T) {
	t.Parallel()
	f := setup(t)
	args := map[string]any{"query": "ARR gross margin burn runway CAC NRR TAM cash COGS", "limit": 50}
	_, first := f.search(t, f.invoker(), args)
	_, again := f.search(t, f.invoker(), args)
	require.Equal(t, first.Output, again.Output)

	// The order of the bundle's lists changes nothing.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		b := *f.bundle
		b.Evidence = slices.Clone(b.Evidence)
		b.Spans = slices.Clone(b.Spans)
		b.Claims = slices.Clone(b.Claims)
		b.Sanads = slices.Clone(b.Sanads)
		rng.Shuffle(len(b.Evidence), func(i, j int) { b.Evidence[i], b.Evidence[j] = b.Evidence[j], b.Evidence[i] })
		rng.Shuffle(len(b.Spans), func(i, j int) { b.Spans[i], b.Spans[j] = b.Spans[j], b.Spans[i] })
		rng.Shuffle(len(b.Claims), func(i, j int) { b.Claims[i], b.Claims[j] = b.Claims[j], b.Claims[i] })
		rng.Shuffle(len(b.Sanads), func(i, j int) { b.Sanads[i], b.Sanads[j] = b.Sanads[j], b.Sanads[i] })
		inv := f.invoker(func(c *Config) { c.Deal = &Deal{Bundle: &b, Grading: f.deal.Grading} })
		_, res := f.search(t, inv, args)
		require.Equal(t, first.Output, res.Output)
	}
	out := output[SearchOutput](t, first)
	require.Equal(t, 10, out.TotalCount, "every evidence item matches one term")
	require.Len(t, out.Results, 10)
}

func TestSearchEvidenceFilters(t *testing.T) {
	t.Parallel()
	f := setup(t)
	e := f.evidence
	inv := f.invoker(unlimited)

	// min_grade: the deck's ARR line is C, the model's revenue cell B.
	out, _ := f.search(t, inv, map[string]any{"query": "ARR", "min_grade": "B"})
	require.Equal(t, []string{e["B12"]}, ids(out))
	out, _ = f.search(t, inv, map[string]any{"query": "ARR", "min_grade": "A"})
	require.Empty(t, out.Results)
	out, _ = f.search(t, inv, map[string]any{"query": "TAM", "min_grade": "C"})
	require.Empty(t, out.Results, "the TAM line is graded D")
	out, _ = f.search(t, inv, map[string]any{"query": "TAM", "min_grade": "D"})
	require.Equal(t, []string{e["C7"]}, ids(out))

	// claim_class: the class of the claims citing the evidence (primary
	// span or sanad).
	out, _ = f.search(t, inv, map[string]any{"query": "ARR", "claim_class": "FINANCIAL"})
	require.Equal(t, sortedIDs(e["C1"], e["B12"]), ids(out))
	out, _ = f.search(t, inv, map[string]any{"query": "ARR", "claim_class": "TRACTION"})
	require.Empty(t, out.Results)
	out, _ = f.search(t, inv, map[string]any{"query": "CAC NRR burn", "claim_class": "TRACTION"})
	require.Equal(t, sortedIDs(e["C5"], e["C6"]), ids(out))
	out, _ = f.search(t, inv, map[string]any{"query": "cash", "claim_class": "FINANCIAL", "min_grade": "B"})
	require.Equal(t, []string{e["B20"]}, ids(out), "cited by the runway claim's sanad")
	out, _ = f.search(t, inv, map[string]any{"query": "cash", "claim_class": "MARKET_SIZE"})
	require.Empty(t, out.Results)

	// limit.
	out, _ = f.search(t, inv, map[string]any{"query": "ARR gross margin burn", "limit": 2})
	require.Len(t, out.Results, 2)
	require.Equal(t, 5, out.TotalCount)

	for _, tc := range []struct {
		args  map[string]any
		rule  string
		field string
	}{
		{map[string]any{"query": "ARR", "limit": 0}, RuleArguments, "limit"},
		{map[string]any{"query": "ARR", "limit": 51}, RuleArguments, "limit"},
		{map[string]any{"query": "ARR", "limit": 2.5}, RuleArguments, "limit"},
		{map[string]any{"query": "ARR", "min_grade": "E"}, RuleArguments, "min_grade"},
		{map[string]any{"query": "ARR", "min_grade": "b"}, RuleArguments, "min_grade"},
		{map[string]any{"query": "ARR", "claim_class": "VIBES"}, RuleArguments, "claim_class"},
		{map[string]any{"query": "  "}, RuleArguments, "query"},
		{map[string]any{"query": strings.Repeat("q", 513)}, RuleArguments, "query"},
		{map[string]any{"query": "ARR", "deal_id": "deal-other"}, RuleNotFound, "deal_id"},
		{map[string]any{"query": "ARR", "deal_id": ""}, RuleArguments, "deal_id"},
	} {
		_, res := f.search(t, inv, tc.args)
		require.Equal(t, StatusInvalid, res.Status, "%v", tc.args)
		require.Equal(t, tc.rule, res.Rule, res.Error)
		require.Equal(t, tc.field, res.Field, res.Error)
	}
}

func TestSearchEvidenceSearcher(t *testing.T) {
	t.Parallel()
	f := setup(t)
	e := f.evidence
	s := &fakeSearcher{
		hits: []Hit{
			{EvidenceID: "evidence-of-another-deal", SourceGrade: debate.GradeA, Relevance: 0.99, TextExcerpt: "secret"},
			{EvidenceID: e["C5"], SpanID: "some-other-span", SourceGrade: debate.GradeB, Relevance: 0.9, TextExcerpt: "leak?"},
			{EvidenceID: e["C7"], SourceGrade: debate.GradeD, Relevance: 0.8},
			{EvidenceID: e["B12"], SourceGrade: debate.GradeB, Relevance: math.NaN()},
		},
		total: 12,
	}
	inv := f.invoker(unlimited, func(c *Config) { c.Searcher = s })
	out, res := f.search(t, inv, map[string]any{"query": "acquisition", "min_grade": "C"})
	require.Equal(t, StatusSuccess, res.Status)
	require.Equal(t, []string{testDealID + "|acquisition||C|10"}, s.calls)
	// The foreign hit and the D-graded one are dropped, the rest keep the
	// searcher's order with the deal's own spans and excerpts.
	require.Equal(t, []string{e["C5"], e["B12"]}, ids(out))
	require.Equal(t, "Blended CAC: $1,150", out.Results[0].TextExcerpt)
	require.Equal(t, f.bundle.Spans[4].ID, out.Results[0].SourceSpan.SpanID)
	require.InDelta(t, 0.9, out.Results[0].RelevanceScore, 0)
	require.Zero(t, out.Results[1].RelevanceScore)
	require.Equal(t, 10, out.TotalCount)
	require.NotContains(t, string(res.Output), "secret")

	out, _ = f.search(t, inv, map[string]any{"query": "acquisition", "claim_class": "TRACTION", "limit": 1})
	require.Equal(t, []string{e["C5"]}, ids(out))
	require.Equal(t, testDealID+"|acquisition|TRACTION|D|1", s.calls[1])
}

package tools

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

type claimLookupOut struct {
	Claim    ClaimOut      `json:"claim"`
	Sanad    *SanadOut     `json:"sanad"`
	Evidence []EvidenceOut `json:"evidence"`
}

func TestLookupClaim(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker()
	ctx := context.Background()

	res, _ := inv.Call(ctx, debate.RoleAdvocate, f.validCall(t, LookupClaim))
	out := output[claimLookupOut](t, res)
	c := out.Claim
	require.Equal(t, f.claim["C1"], c.ClaimID)
	require.Equal(t, "C1", c.ClaimKey)
	require.Equal(t, "FINANCIAL", c.ClaimClass)
	require.Equal(t, "ARR is $12,500,000 as of December 2025", c.ClaimText)
	require.NotNil(t, c.ValueStruct)
	require.Equal(t, "12500000", c.ValueStruct.Value.String())
	require.Equal(t, "FY2025", c.ValueStruct.TimeWindow.Label)
	g, ok := f.deal.Grading.Claim("C1")
	require.True(t, ok)
	require.Equal(t, string(g.Grade), c.ClaimGrade)
	require.Equal(t, string(g.Verdict), c.ClaimVerdict)
	require.NotEmpty(t, c.ClaimGrade)

	require.NotNil(t, out.Sanad)
	require.Equal(t, f.evidence["C1"], out.Sanad.PrimaryEvidenceID)
	require.Equal(t, []string{f.evidence["B12"]}, out.Sanad.CorroboratingEvidenceIDs)
	require.Len(t, out.Sanad.Chain, 3)
	require.Equal(t, string(g.Corroboration), out.Sanad.Corroboration)

	require.Len(t, out.Evidence, 2)
	require.Equal(t, "PRIMARY", out.Evidence[0].Role)
	require.Equal(t, "CORROBORATING", out.Evidence[1].Role)
	require.True(t, out.Evidence[1].Resolved)
	require.Equal(t, "B", out.Evidence[1].SourceGrade)
	require.Equal(t, "B12", out.Evidence[1].SourceSpan.Cell)
	require.Equal(t, "FIN_MODEL", out.Evidence[1].SourceSpan.ArtifactType)
	require.Equal(t, "Revenue FY2025: 12,500,000", out.Evidence[1].SourceSpan.TextExcerpt)

	// Without the flags: the claim alone.
	res, _ = inv.Call(ctx, debate.RoleAdvocate, toolCall(t, LookupClaim, map[string]any{"claim_id": f.claim["C7"]}))
	m := output[map[string]any](t, res)
	require.Equal(t, []string{"claim"}, keys(m))
	out = output[claimLookupOut](t, res)
	require.Nil(t, out.Claim.ValueStruct)

	// Errors.
	for _, tc := range []struct {
		args  any
		rule  string
		field string
	}{
		{map[string]any{}, RuleArguments, "claim_id"},
		{map[string]any{"claim_id": nil}, RuleArguments, "claim_id"},
		{map[string]any{"claim_id": 7}, RuleArguments, "claim_id"},
		{map[string]any{"claim_id": f.claim["C1"], "include_sanad": "yes"}, RuleArguments, "include_sanad"},
		{map[string]any{"claim_id": f.claim["C1"], "Claim_ID": "x"}, RuleArguments, "Claim_ID"},
		{map[string]any{"claim_id": "not-here"}, RuleNotFound, "claim_id"},
		{map[string]any{"claim_id": f.calcID}, RuleNotFound, "claim_id"},
		{map[string]any{"claim_id": "has space"}, RuleArguments, "claim_id"},
	} {
		res, _ := inv.Call(ctx, debate.RoleAdvocate, toolCall(t, LookupClaim, tc.args))
		require.Equal(t, StatusInvalid, res.Status, "%v", tc.args)
		require.Equal(t, tc.rule, res.Rule, res.Error)
		require.Equal(t, tc.field, res.Field, res.Error)
	}
}

func TestLookupClaimOtherDeal(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// A claim whose deal id is another deal's is not this deal's claim.
	b := *f.bundle
	b.Claims = append([]debate.Claim{{ID: "foreign-claim", DealID: "deal-other", Key: "X1"}}, b.Claims...)
	inv := f.invoker(func(c *Config) { c.Deal = &Deal{Bundle: &b} })
	res, _ := inv.Call(context.Background(), debate.RoleAdvocate, toolCall(t, LookupClaim, map[string]any{"claim_id": "foreign-claim"}))
	require.Equal(t, StatusInvalid, res.Status)
	require.Equal(t, RuleNotFound, res.Rule)

	// Without grading, grades are absent; without a deal, nothing is found.
	res, _ = inv.Call(context.Background(), debate.RoleAdvocate, f.validCall(t, LookupClaim))
	out := output[claimLookupOut](t, res)
	require.Empty(t, out.Claim.ClaimGrade)
	empty := f.invoker(func(c *Config) { c.Deal = nil })
	res, _ = empty.Call(context.Background(), debate.RoleAdvocate, f.validCall(t, LookupClaim))
	require.Equal(t, RuleNotFound, res.Rule)
}

func TestLookupCalc(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker()
	ctx := context.Background()
	type calcOut struct {
		Calc      CalcOut       `json:"calc"`
		Inputs    []ClaimOut    `json:"inputs"`
		CalcSanad *CalcSanadOut `json:"calc_sanad"`
	}
	res, _ := inv.Call(ctx, debate.RoleRiskOfficer, f.validCall(t, LookupCalc))
	out := output[calcOut](t, res)
	require.Equal(t, f.calcID, out.Calc.CalcID)
	require.Equal(t, "GROSS_MARGIN", out.Calc.CalcType)
	require.Equal(t, "sha256:gm_formula_v1_8a7b6c5d4e3f2a1b", out.Calc.FormulaHash)
	require.Equal(t, "idis-calc-engine@1.0.0", out.Calc.CodeVersion)
	require.InDelta(t, 68.5, out.Calc.Output["gross_margin_percent"], 1e-9)
	require.NotEmpty(t, out.Calc.CalcGrade)
	require.Len(t, out.Inputs, 1, "include_inputs defaults to true")
	require.Equal(t, "C2", out.Inputs[0].ClaimKey)
	require.Equal(t, []string{f.claim["C2"]}, out.CalcSanad.InputClaimIDs)
	require.Equal(t, []CalcInputOut{
		{Name: "cogs", Value: debate.MustDecimal("3937500"), SpanID: f.bundle.Spans[8].ID, TextExcerpt: "COGS FY2025: 3,937,500"},
		{Name: "revenue", Value: debate.MustDecimal("12500000"), SpanID: f.bundle.Spans[7].ID, TextExcerpt: "Revenue FY2025: 12,500,000"},
	}, out.CalcSanad.InputValues)

	res, _ = inv.Call(ctx, debate.RoleRiskOfficer, toolCall(t, LookupCalc, map[string]any{"calc_id": f.calcID, "include_inputs": false}))
	require.NotContains(t, output[map[string]any](t, res), "inputs")

	res, _ = inv.Call(ctx, debate.RoleRiskOfficer, toolCall(t, LookupCalc, map[string]any{"calc_id": f.claim["C2"]}))
	require.Equal(t, RuleNotFound, res.Rule)
	res, _ = inv.Call(ctx, debate.RoleRiskOfficer, toolCall(t, LookupCalc, map[string]any{"calc_id": f.calcID, "include_sanad": true}))
	require.Equal(t, RuleArguments, res.Rule)
	require.Equal(t, "include_sanad", res.Field)
}

// TestDealIndexedOnce: invokers given the same *Deal share one index of it
// (a protocol hands every step on a deal the same Deal); another deal id
// or another Deal gets its own.
func TestDealIndexedOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a, b := f.invoker(), f.invoker()
	require.Same(t, a.deal, b.deal)
	res, _ := b.Call(context.Background(), debate.RoleAdvocate, f.validCall(t, LookupClaim))
	require.Equal(t, StatusSuccess, res.Status, "%+v", res)
	other := f.invoker(func(c *Config) { c.Deal = &Deal{Bundle: f.bundle} })
	require.NotSame(t, a.deal, other.deal)
	require.NotSame(t, a.deal, f.invoker(func(c *Config) { c.DealID = "another-deal" }).deal)
	require.NotNil(t, NewInvoker(Config{}).deal, "no deal: an empty index")
}

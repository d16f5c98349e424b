package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// seedMatrix is seed 000 §5's table as printed: tool → allowed for
// advocate, sanad breaker, contradiction finder, risk officer, arbiter.
var seedMatrix = map[string][5]bool{
	LookupClaim:        {true, true, true, true, true},
	LookupCalc:         {true, true, true, true, true},
	SearchEvidence:     {false, true, true, true, true},
	FlagDefect:         {false, true, false, false, false},
	RequestHumanReview: {false, false, false, false, true},
	QueryEnrichment:    {false, false, true, true, false},
}

func TestToolPermissionMatrix(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.Len(t, debate.IDISRoles, 5)
	require.ElementsMatch(t, Names, keys(seedMatrix))
	require.ElementsMatch(t, debate.IDISRoles, keys(testMatrix))

	for _, tool := range Names {
		for i, role := range debate.IDISRoles {
			allowed := seedMatrix[tool][i]
			t.Run(role+"/"+tool, func(t *testing.T) {
				t.Parallel()
				require.Equal(t, allowed, testMatrix.Allows(role, tool), "testMatrix differs from seed 000 §5")
				inv := f.invoker()
				call := f.validCall(t, tool)
				res, audit := inv.Call(context.Background(), role, call)
				if allowed {
					require.Equal(t, StatusSuccess, res.Status, "%+v", res)
					require.True(t, json.Valid(res.Output))
					require.Empty(t, res.Rule)
				} else {
					require.Equal(t, StatusDenied, res.Status)
					require.Equal(t, RulePermission, res.Rule)
					require.Empty(t, res.Output)
					// A refused call has no effect and uses no quota.
					require.Empty(t, inv.Flagged())
					require.Empty(t, inv.ReviewRequests())
					require.Zero(t, inv.Usage().Count(role, tool))
				}
				requireAudit(t, audit, role, tool, res)
				require.Equal(t, []Audit{audit}, inv.Audits())
			})
		}
	}
}

func TestToolPermissionUnknownRoleAndTool(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker()
	ctx := context.Background()

	res, audit := inv.Call(ctx, "intruder", f.validCall(t, LookupClaim))
	require.Equal(t, StatusDenied, res.Status)
	require.Equal(t, RulePermission, res.Rule)
	requireAudit(t, audit, "intruder", LookupClaim, res)

	res, audit = inv.Call(ctx, debate.RoleArbiter, debate.ToolCall{Tool: "delete_deal", Args: json.RawMessage(`{}`)})
	require.Equal(t, StatusInvalid, res.Status)
	require.Equal(t, RuleUnknownTool, res.Rule)
	require.Equal(t, "tool", res.Field)
	requireAudit(t, audit, debate.RoleArbiter, "delete_deal", res)

	// A protocol without a matrix refuses everything.
	none := f.invoker(func(c *Config) { c.Matrix = nil })
	res, _ = none.Call(ctx, debate.RoleArbiter, f.validCall(t, LookupClaim))
	require.Equal(t, StatusDenied, res.Status)
	require.Len(t, inv.Audits(), 2)
}

func TestMatrixHelpers(t *testing.T) {
	t.Parallel()
	m := Matrix{"a": {QueryEnrichment, LookupClaim, LookupClaim}}
	require.Equal(t, []string{LookupClaim, QueryEnrichment}, m.Tools("a"))
	require.Nil(t, m.Tools("b"))
	c := m.Clone()
	c["a"][0] = FlagDefect
	require.Equal(t, QueryEnrichment, m["a"][0])
	require.Equal(t, []string{LookupCalc, LookupClaim}, testMatrix.Tools(debate.RoleAdvocate))

	// The Invoker copies its matrix: a later change does not widen it.
	f := setup(t)
	mm := Matrix{debate.RoleAdvocate: {LookupClaim}}
	inv := f.invoker(func(cfg *Config) { cfg.Matrix = mm })
	mm[debate.RoleAdvocate] = append(mm[debate.RoleAdvocate], FlagDefect)
	res, _ := inv.Call(context.Background(), debate.RoleAdvocate, f.validCall(t, FlagDefect))
	require.Equal(t, StatusDenied, res.Status)
}

func TestBind(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker()
	tools := inv.Bind(debate.RoleAdvocate)
	ctx := context.Background()

	res, err := tools.Call(ctx, f.validCall(t, LookupClaim))
	require.NoError(t, err)
	require.Equal(t, StatusSuccess, res.Status)
	require.True(t, json.Valid(res.Output))
	require.Empty(t, res.Error)

	res, err = tools.Call(ctx, f.validCall(t, FlagDefect))
	require.NoError(t, err, "a refusal is a result, not an error")
	require.Equal(t, StatusDenied, res.Status)
	require.Contains(t, res.Error, RulePermission)
	require.Nil(t, res.Output)

	audits := inv.Audits()
	require.Len(t, audits, 2)
	require.Equal(t, StatusSuccess, audits[0].ResultStatus)
	require.Equal(t, StatusDenied, audits[1].ResultStatus)
	require.Equal(t, debate.RoleAdvocate, inv.Bind(debate.RoleAdvocate).Role())
}

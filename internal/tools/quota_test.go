package tools

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

func TestDefaultLimits(t *testing.T) {
	t.Parallel()
	l := DefaultLimits()
	// Seed 000 §6.2.
	require.Equal(t, 20, l.MaxCalls(LookupClaim))
	require.Equal(t, 10, l.MaxCalls(LookupCalc))
	require.Equal(t, 5, l.MaxCalls(SearchEvidence))
	require.Equal(t, 3, l.MaxCalls(FlagDefect))
	require.Equal(t, 1, l.FlagDefectMinEvidenceRefs)
	require.Equal(t, 50, l.FlagDefectMinDescription)
	// Ours, for the tools the seed leaves open.
	require.Equal(t, 5, l.MaxCalls(QueryEnrichment))
	require.Equal(t, 2, l.MaxCalls(RequestHumanReview))
	require.Equal(t, DefaultMaxCallsPerRound, l.MaxCalls("another_protocols_tool"))
	require.Equal(t, DefaultMaxCallsPerRound, Limits{}.MaxCalls(LookupClaim))
	require.Equal(t, 0, Limits{MaxCallsPerRound: map[string]int{LookupClaim: 0}}.MaxCalls(LookupClaim))
}

// TestToolQuota spends each tool's quota for one role and round.
func TestToolQuota(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, tool := range Names {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			inv := f.invoker()
			role := permittedRole(tool)
			ctx := context.Background()
			limit := DefaultLimits().MaxCalls(tool)
			for i := range limit {
				res, _ := inv.Call(ctx, role, f.validCall(t, tool))
				require.Equal(t, StatusSuccess, res.Status, "call %d: %+v", i+1, res)
			}
			for range 3 {
				res, aud := inv.Call(ctx, role, f.validCall(t, tool))
				require.Equal(t, StatusDenied, res.Status)
				require.Equal(t, RuleQuota, res.Rule)
				require.Equal(t, RuleQuota, aud.Rule)
				requireAudit(t, aud, role, tool, res)
			}
			require.Equal(t, limit, inv.Usage().Count(role, tool), "refused calls count toward nothing")
			require.Len(t, inv.Audits(), limit+3)

			// Quotas are per role: another permitted role still may call.
			for _, other := range debate.IDISRoles {
				if other != role && testMatrix.Allows(other, tool) {
					res, _ := inv.Call(ctx, other, f.validCall(t, tool))
					require.Equal(t, StatusSuccess, res.Status)
				}
			}
			// The effects stop at the quota.
			switch tool {
			case FlagDefect:
				require.Len(t, inv.Flagged(), limit)
			case RequestHumanReview:
				require.Len(t, inv.ReviewRequests(), limit)
			}
		})
	}
}

func TestToolQuotaCarriesUsage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	role := debate.RoleRiskOfficer
	first := f.invoker()
	for range 4 {
		res, _ := first.Call(ctx, role, f.validCall(t, SearchEvidence))
		require.Equal(t, StatusSuccess, res.Status)
	}
	usage := first.Usage()
	require.Equal(t, 4, usage.Count(role, SearchEvidence))

	// The next node of the round starts from the stored usage.
	next := f.invoker(func(c *Config) { c.Usage = usage })
	res, _ := next.Call(ctx, role, f.validCall(t, SearchEvidence))
	require.Equal(t, StatusSuccess, res.Status)
	res, _ = next.Call(ctx, role, f.validCall(t, SearchEvidence))
	require.Equal(t, StatusDenied, res.Status)
	require.Equal(t, RuleQuota, res.Rule)
	require.Equal(t, 5, next.Usage().Count(role, SearchEvidence))
	// The config's usage was copied, not changed.
	require.Equal(t, 4, usage.Count(role, SearchEvidence))
}

func TestToolQuotaCountsInvalidNotErrors(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()

	// A malformed call is admitted and counts: a model cannot flood the
	// server with bad calls.
	inv := f.invoker()
	for range 3 {
		res, _ := inv.Call(ctx, debate.RoleSanadBreaker, toolCall(t, FlagDefect, map[string]any{"claim_id": f.claim["C1"]}))
		require.Equal(t, StatusInvalid, res.Status)
	}
	res, _ := inv.Call(ctx, debate.RoleSanadBreaker, f.validCall(t, FlagDefect))
	require.Equal(t, StatusDenied, res.Status)
	require.Equal(t, RuleQuota, res.Rule)

	// An ERROR is the server's failure and gives the slot back.
	s := &fakeSearcher{err: errors.New("index offline")}
	inv = f.invoker(func(c *Config) { c.Searcher = s })
	for range 8 {
		res, aud := inv.Call(ctx, debate.RoleArbiter, f.validCall(t, SearchEvidence))
		require.Equal(t, StatusError, res.Status)
		require.NotContains(t, res.Error, "index offline", "no internals reach the agent")
		requireAudit(t, aud, debate.RoleArbiter, SearchEvidence, res)
	}
	require.Zero(t, inv.Usage().Count(debate.RoleArbiter, SearchEvidence))
	require.Len(t, s.calls, 8)
	_, err := inv.Bind(debate.RoleArbiter).Call(ctx, f.validCall(t, SearchEvidence))
	require.ErrorIs(t, err, ErrToolFailed)
	require.ErrorContains(t, err, "index offline")

	// So does a cancelled context.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	tr, err := inv.Bind(debate.RoleArbiter).Call(cctx, f.validCall(t, LookupClaim))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, StatusError, tr.Status)
	require.Len(t, inv.Audits(), 10)
}

func TestToolQuotaZeroLimitsMeanDefaults(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker(func(c *Config) { c.Limits = Limits{} })
	ctx := context.Background()
	for range 3 {
		res, _ := inv.Call(ctx, debate.RoleSanadBreaker, f.validCall(t, FlagDefect))
		require.Equal(t, StatusSuccess, res.Status)
	}
	res, _ := inv.Call(ctx, debate.RoleSanadBreaker, f.validCall(t, FlagDefect))
	require.Equal(t, RuleQuota, res.Rule)

	// A listed 0 disables a tool.
	inv = f.invoker(func(c *Config) { c.Limits = Limits{MaxCallsPerRound: map[string]int{LookupClaim: 0}} })
	res, _ = inv.Call(ctx, debate.RoleAdvocate, f.validCall(t, LookupClaim))
	require.Equal(t, RuleQuota, res.Rule)
	res, _ = inv.Call(ctx, debate.RoleAdvocate, f.validCall(t, LookupCalc))
	require.Equal(t, StatusSuccess, res.Status)
}

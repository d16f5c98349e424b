package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

func TestFlagDefectRequirements(t *testing.T) {
	t.Parallel()
	f := setup(t)
	desc50 := strings.Repeat("é", 50) // 50 characters, 100 bytes
	desc49 := "  " + strings.Repeat("x", 49) + "\n"
	base := func(edit func(m map[string]any)) map[string]any {
		m := map[string]any{
			"claim_id": f.claim["C1"], "defect_type": "UNKNOWN_SOURCE", "description": longDescription,
			"evidence_refs": []string{f.evidence["C1"]},
		}
		if edit != nil {
			edit(m)
		}
		return m
	}
	tests := []struct {
		name       string
		args       map[string]any
		rule       string // empty: SUCCESS
		field      string
		errContain string
	}{
		{name: "valid", args: base(nil)},
		{name: "description of exactly 50 characters", args: base(func(m map[string]any) { m["description"] = desc50 })},
		{name: "no evidence refs", args: base(func(m map[string]any) { delete(m, "evidence_refs") }), rule: RuleRequirement, field: "evidence_refs", errContain: "at least 1"},
		{name: "empty evidence refs", args: base(func(m map[string]any) { m["evidence_refs"] = []string{} }), rule: RuleRequirement, field: "evidence_refs"},
		{name: "short description", args: base(func(m map[string]any) { m["description"] = desc49 }), rule: RuleRequirement, field: "description", errContain: "got 49"},
		{name: "no description", args: base(func(m map[string]any) { delete(m, "description") }), rule: RuleRequirement, field: "description"},
		{name: "both requirements", args: base(func(m map[string]any) { delete(m, "description"); delete(m, "evidence_refs") }), rule: RuleRequirement, field: "evidence_refs", errContain: "description"},
		{name: "unknown evidence ref", args: base(func(m map[string]any) {
			m["evidence_refs"] = []string{f.evidence["C1"], "ev-of-another-deal"}
		}), rule: RuleNotFound, field: "evidence_refs[1]"},
		{name: "unknown claim", args: base(func(m map[string]any) { m["claim_id"] = "claim-elsewhere" }), rule: RuleNotFound, field: "claim_id"},
		{name: "unknown defect type", args: base(func(m map[string]any) { m["defect_type"] = "VIBES" }), rule: RuleArguments, field: "defect_type"},
		{name: "missing defect type", args: base(func(m map[string]any) { delete(m, "defect_type") }), rule: RuleArguments, field: "defect_type"},
		{name: "unknown severity", args: base(func(m map[string]any) { m["severity"] = "CATASTROPHIC" }), rule: RuleArguments, field: "severity"},
		{name: "unknown cure", args: base(func(m map[string]any) { m["cure_protocol"] = "PRAY" }), rule: RuleArguments, field: "cure_protocol"},
		{name: "refs not strings", args: base(func(m map[string]any) { m["evidence_refs"] = []any{1} }), rule: RuleArguments, field: "evidence_refs"},
		{name: "ref with a space", args: base(func(m map[string]any) { m["evidence_refs"] = []string{"a b"} }), rule: RuleArguments, field: "evidence_refs[0]"},
		{name: "unknown field", args: base(func(m map[string]any) { m["claim_ids"] = []string{f.claim["C1"]} }), rule: RuleArguments, field: "claim_ids"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inv := f.invoker()
			res, aud := inv.Call(context.Background(), debate.RoleSanadBreaker, toolCall(t, FlagDefect, tc.args))
			requireAudit(t, aud, debate.RoleSanadBreaker, FlagDefect, res)
			if tc.rule == "" {
				require.Equal(t, StatusSuccess, res.Status, "%+v", res)
				require.Len(t, inv.Flagged(), 1)
				return
			}
			require.Equal(t, StatusInvalid, res.Status)
			require.Equal(t, tc.rule, res.Rule, res.Error)
			require.Equal(t, tc.field, res.Field, res.Error)
			require.Contains(t, res.Error, tc.errContain)
			require.NotContains(t, res.Error, "ev-of-another-deal", "the message does not echo unknown ids")
			require.Empty(t, inv.Flagged())
		})
	}
}

func TestFlagDefectRecord(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker()
	ctx := context.Background()
	b := f.bundle
	// Every kind of deal id may be cited: evidence, span, calc, calc
	// sanad, claim, document, sanad and chain node; repeats collapse.
	refs := []string{
		f.evidence["C7"], b.Spans[0].ID, f.calcID, b.Calcs[0].CalcSanadID, f.claim["C1"], b.Documents[0].ID,
		b.Sanads[0].ID, b.Sanads[0].Chain[0].ID, f.evidence["C7"],
	}
	res, _ := inv.Call(ctx, debate.RoleSanadBreaker, toolCall(t, FlagDefect, map[string]any{
		"claim_id": f.claim["C7"], "defect_type": "CIRCULARITY", "description": "  " + longDescription + " ",
		"evidence_refs": refs,
	}))
	out := output[DefectOut](t, res)

	flagged := inv.Flagged()
	require.Len(t, flagged, 1)
	d := flagged[0]
	require.NoError(t, d.Validate())
	require.Equal(t, "id-001", d.ID)
	require.Equal(t, testDealID, d.DealID)
	require.Equal(t, debate.OriginFlagged, d.Origin)
	require.Equal(t, debate.DefectOpen, d.Status)
	require.Equal(t, debate.RoleSanadBreaker, d.Actor)
	require.Equal(t, f.claim["C7"], d.ClaimID)
	require.Equal(t, "C7", d.ClaimKey)
	require.Equal(t, debate.DefectCircularity, d.Type)
	require.Equal(t, debate.SeverityFatal, d.Severity, "defaulted from the type")
	require.Equal(t, debate.CureReconstructChain, d.CureProtocol, "defaulted from the type")
	require.Equal(t, longDescription, d.Description)
	require.Len(t, d.EvidenceRefs, 8)
	require.IsNonDecreasing(t, d.EvidenceRefs)
	require.True(t, d.CreatedAt.Equal(testNow))

	require.Equal(t, DefectOut{
		DefectID: "id-001", DealID: testDealID, ClaimID: d.ClaimID, ClaimKey: "C7", Origin: "FLAGGED",
		DefectType: "CIRCULARITY", Severity: "FATAL", CureProtocol: "RECONSTRUCT_CHAIN", Status: "OPEN",
		Description: longDescription, EvidenceRefs: d.EvidenceRefs, Actor: debate.RoleSanadBreaker,
		CreatedAt: "2026-03-02T10:30:00.123456Z",
	}, out)

	// An explicit severity and cure win over the defaults.
	res, _ = inv.Call(ctx, debate.RoleSanadBreaker, toolCall(t, FlagDefect, map[string]any{
		"claim_id": f.claim["C2"], "defect_type": "INCONSISTENCY", "severity": "MINOR", "cure_protocol": "HUMAN_ARBITRATION",
		"description": longDescription, "evidence_refs": []string{f.evidence["B12"]},
	}))
	out = output[DefectOut](t, res)
	require.Equal(t, "MINOR", out.Severity)
	require.Equal(t, "HUMAN_ARBITRATION", out.CureProtocol)
	require.Equal(t, "id-002", out.DefectID)
	require.Len(t, inv.Flagged(), 2)
}

func TestFlagDefectDerivedIDs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	mk := func(round int) *Invoker {
		return f.invoker(func(c *Config) { c.NewID = nil; c.Round = round })
	}
	a, b, c := mk(1), mk(1), mk(2)
	for _, inv := range []*Invoker{a, b, c} {
		for range 2 {
			res, _ := inv.Call(ctx, debate.RoleSanadBreaker, f.validCall(t, FlagDefect))
			require.Equal(t, StatusSuccess, res.Status)
		}
	}
	fa, fb, fc := a.Flagged(), b.Flagged(), c.Flagged()
	require.Equal(t, fa, fb, "same inputs, same ids")
	require.NotEqual(t, fa[0].ID, fa[1].ID)
	require.NotEqual(t, fa[0].ID, fc[0].ID, "another round, other ids")
	require.Len(t, fa[0].ID, 36)
}

func TestRequestHumanReview(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	inv := f.invoker(func(c *Config) {
		c.Now = func() time.Time { return testNow.In(time.FixedZone("X", 3600)) }
	})
	res, aud := inv.Call(ctx, debate.RoleArbiter, toolCall(t, RequestHumanReview, map[string]any{
		"claim_ids": []string{f.claim["C4"], f.claim["C1"], f.claim["C4"]}, "reason": " Runway rests on a stale cash balance ",
		"priority": "HIGH", "required_role": "PARTNER",
	}))
	requireAudit(t, aud, debate.RoleArbiter, RequestHumanReview, res)
	out := output[ReviewOut](t, res)
	require.Equal(t, ReviewOut{
		ReviewID: "id-001", Status: "PENDING", DealID: testDealID, DebateID: testDebateID, RoundNumber: 2,
		ClaimIDs: []string{f.claim["C4"], f.claim["C1"]}, Reason: "Runway rests on a stale cash balance",
		Priority: "HIGH", RequiredRole: "PARTNER", RequestedBy: debate.RoleArbiter, CreatedAt: "2026-03-02T10:30:00.123456Z",
	}, out)
	reqs := inv.ReviewRequests()
	require.Len(t, reqs, 1)
	require.Equal(t, ReviewRequest{
		ID: "id-001", DealID: testDealID, DebateID: testDebateID, Round: 2, ClaimIDs: out.ClaimIDs,
		Reason: out.Reason, Priority: "HIGH", RequiredRole: "PARTNER", RequestedBy: debate.RoleArbiter, CreatedAt: testNow,
	}, reqs[0])

	// Defaults.
	res, _ = inv.Call(ctx, debate.RoleArbiter, f.validCall(t, RequestHumanReview))
	out = output[ReviewOut](t, res)
	require.Equal(t, PriorityNormal, out.Priority)
	require.Equal(t, DefaultRequiredRole, out.RequiredRole)

	for _, tc := range []struct {
		args  map[string]any
		rule  string
		field string
	}{
		{map[string]any{"reason": "x"}, RuleArguments, "claim_ids"},
		{map[string]any{"claim_ids": []string{}, "reason": "x"}, RuleArguments, "claim_ids"},
		{map[string]any{"claim_ids": []string{f.claim["C1"]}}, RuleArguments, "reason"},
		{map[string]any{"claim_ids": []string{f.claim["C1"]}, "reason": "x", "priority": "URGENT"}, RuleArguments, "priority"},
		{map[string]any{"claim_ids": []string{f.claim["C1"]}, "reason": "x", "required_role": "partner"}, RuleArguments, "required_role"},
		{map[string]any{"claim_ids": []string{f.claim["C1"], "nope"}, "reason": "x"}, RuleNotFound, "claim_ids[1]"},
	} {
		inv := f.invoker()
		res, _ := inv.Call(ctx, debate.RoleArbiter, toolCall(t, RequestHumanReview, tc.args))
		require.Equal(t, StatusInvalid, res.Status)
		require.Equal(t, tc.rule, res.Rule, res.Error)
		require.Equal(t, tc.field, res.Field, res.Error)
		require.Empty(t, inv.ReviewRequests())
	}
}

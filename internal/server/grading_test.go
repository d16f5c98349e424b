package server_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/gdbs"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// outcomeOf renders a dashboard from the wire in the shape of the expected
// files, so the API's answer is compared, not the grader's: the summary,
// and the rows of every page.
func outcomeOf(g *debatedv1.DealGradingSummary, claims []*debatedv1.ClaimGrading, calcs []*debatedv1.CalcGrading) sanad.Outcome {
	o := sanad.Outcome{
		DealID:           g.GetDealId(),
		Claims:           map[string]sanad.ClaimOutcome{},
		Defects:          []sanad.DefectOutcome{},
		GradeDCount:      int(g.GetGradeDCount()),
		SanadCoverage:    g.GetSanadCoverage(),
		BlockedClaimKeys: []string{},
	}
	for _, c := range claims {
		o.Claims[c.GetClaimKey()] = sanad.ClaimOutcome{
			ClaimID:     c.GetClaimId(),
			Grade:       strings.TrimPrefix(c.GetGrade().String(), "GRADE_"),
			Verdict:     strings.TrimPrefix(c.GetVerdict().String(), "VERDICT_"),
			Action:      strings.TrimPrefix(c.GetAction().String(), "ACTION_"),
			DefectCount: len(c.GetDefects()),
		}
		if c.GetBlocked() {
			o.BlockedClaimKeys = append(o.BlockedClaimKeys, c.GetClaimKey())
		}
		for _, d := range c.GetDefects() {
			o.Defects = append(o.Defects, sanad.DefectOutcome{
				DefectType:   strings.TrimPrefix(d.GetDefectType().String(), "DEFECT_TYPE_"),
				Severity:     strings.TrimPrefix(d.GetSeverity().String(), "DEFECT_SEVERITY_"),
				ClaimKey:     d.GetClaimKey(),
				CureProtocol: strings.TrimPrefix(d.GetCureProtocol().String(), "CURE_PROTOCOL_"),
			})
		}
	}
	for _, c := range calcs {
		o.Calcs = append(o.Calcs, sanad.CalcOutcome{
			CalcID:   c.GetCalcId(),
			CalcType: strings.TrimPrefix(c.GetCalcType().String(), "CALC_TYPE_"),
			Grade:    strings.TrimPrefix(c.GetGrade().String(), "GRADE_"),
			Output:   floatOutputs(c.GetOutput()),
		})
	}
	return o
}

// allRows reads the rest of a grading's pages after resp's.
func allRows(t testing.TB, b *bundle, ctx context.Context, dealID string, resp *debatedv1.GradeDealResponse) ([]*debatedv1.ClaimGrading, []*debatedv1.CalcGrading) {
	t.Helper()
	claims, calcs := resp.GetClaims(), resp.GetCalcs()
	for token := resp.GetNextPageToken(); token != ""; {
		page, err := b.registry.GetDealGrading(ctx, &debatedv1.GetDealGradingRequest{DealId: dealID, PageToken: token, PageSize: 1000})
		require.NoError(t, err)
		claims = append(claims, page.GetClaims()...)
		calcs = append(calcs, page.GetCalcs()...)
		token = page.GetNextPageToken()
	}
	return claims, calcs
}

// claimOf returns the row of claimID, failing the test without one.
func claimOf(t testing.TB, claims []*debatedv1.ClaimGrading, claimID string) *debatedv1.ClaimGrading {
	t.Helper()
	for _, c := range claims {
		if c.GetClaimId() == claimID {
			return c
		}
	}
	require.FailNow(t, "no row for claim "+claimID)
	return nil
}

// requireOutcome compares a dashboard with an expected file: every claim,
// every defect (in any order), the deal-level figures and every pinned calc.
func requireOutcome(t *testing.T, want, got sanad.Outcome) {
	t.Helper()
	require.Equal(t, want.Claims, got.Claims)
	require.ElementsMatch(t, want.Defects, got.Defects)
	require.Equal(t, want.GradeDCount, got.GradeDCount)
	require.InDelta(t, want.SanadCoverage, got.SanadCoverage, 1e-9)
	require.ElementsMatch(t, want.BlockedClaimKeys, got.BlockedClaimKeys)
	for _, wc := range want.Calcs {
		var found bool
		for _, gc := range got.Calcs {
			if gc.CalcID == wc.CalcID {
				found = true
				require.Equal(t, wc.Grade, gc.Grade, "calc %s", wc.CalcID)
				require.Equal(t, wc.CalcType, gc.CalcType)
				for k, v := range wc.Output {
					require.InDelta(t, v, gc.Output[k], 1e-9, "calc %s output %s", wc.CalcID, k)
				}
			}
		}
		require.True(t, found, "calc %s missing", wc.CalcID)
	}
}

type dealCase struct{ name, dir, expected string }

func dealCases(t *testing.T, root string) []dealCase {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "deals", "*"))
	require.NoError(t, err)
	var out []dealCase
	for _, d := range dirs {
		name := filepath.Base(d)
		out = append(out, dealCase{name: name, dir: d, expected: filepath.Join(root, "expected", name+".json")})
	}
	require.NotEmpty(t, out)
	return out
}

// gradeThroughAPI imports every deal of root through ImportDeal, grades it
// through GradeDeal and compares the answer with its expected file.
func gradeThroughAPI(t *testing.T, root string) {
	cases := dealCases(t, root)
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		_, ctx := b.tenant(t, "grading")
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				bundle, err := dealfile.Load(c.dir)
				require.NoError(t, err)
				req, err := apiconv.BundleToProto(bundle)
				require.NoError(t, err)
				_, err = b.registry.ImportDeal(ctx, req)
				require.NoError(t, err)
				resp, err := b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: bundle.Deal.ID})
				require.NoError(t, err)
				data, err := os.ReadFile(c.expected)
				require.NoError(t, err)
				var want sanad.Outcome
				require.NoError(t, json.Unmarshal(data, &want))
				claims, calcs := allRows(t, b, ctx, bundle.Deal.ID, resp)
				requireOutcome(t, want, outcomeOf(resp.GetSummary(), claims, calcs))
				for _, cl := range claims {
					require.NotEmpty(t, cl.GetExplanation(), "claim %s has no explanation", cl.GetClaimKey())
				}
			})
		}
	})
}

func TestGradeDealMatchesGDBS(t *testing.T) {
	t.Parallel()
	gradeThroughAPI(t, gdbs.Dir(t))
}

func TestGradeDealMatchesAuthoredDeals(t *testing.T) {
	t.Parallel()
	gradeThroughAPI(t, filepath.Join("..", "sanad", "testdata"))
}

func importAuthored(t *testing.T, b *bundle, ctx context.Context, name string) *debatedv1.ImportDealRequest {
	t.Helper()
	bundle, err := dealfile.Load(filepath.Join("..", "sanad", "testdata", "deals", name))
	require.NoError(t, err)
	req, err := apiconv.BundleToProto(bundle)
	require.NoError(t, err)
	_, err = b.registry.ImportDeal(ctx, req)
	require.NoError(t, err)
	return req
}

func TestGradeDealRecordsChanges(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		_, ctx := b.tenant(t, "acme")
		req := importAuthored(t, b, ctx, "inconsistency")
		dealID := req.GetDeal().GetDealId()

		first, err := b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: dealID})
		require.NoError(t, err)
		list, err := b.registry.ListDealEvents(ctx, &debatedv1.ListDealEventsRequest{DealId: dealID})
		require.NoError(t, err)
		types := map[string]int{}
		for i, e := range list.GetEvents() {
			require.EqualValues(t, i+1, e.GetSeq())
			types[e.GetEventType()]++
		}
		require.Len(t, list.GetEvents(), int(first.GetEventCount()))
		require.EqualValues(t, 1, first.GetFirstEventSeq())
		require.EqualValues(t, first.GetEventCount(), first.GetLastEventSeq())
		require.Equal(t, len(req.GetClaims()), types["claim.grade.changed"])
		require.Equal(t, len(req.GetClaims()), types["claim.verdict.changed"])
		require.Equal(t, int(first.GetSummary().GetOpenDefectCount()), types["defect.created"])
		require.NotZero(t, types["defect.created"])

		again, err := b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: dealID})
		require.NoError(t, err)
		require.Zero(t, again.GetEventCount(), "nothing changed, nothing recorded")
		require.Zero(t, again.GetFirstEventSeq())
		page, err := b.registry.ListDealEvents(ctx, &debatedv1.ListDealEventsRequest{DealId: dealID, AfterSeq: 2, PageSize: 3})
		require.NoError(t, err)
		require.Len(t, page.GetEvents(), 3)
		require.EqualValues(t, 3, page.GetEvents()[0].GetSeq())
		created := list.GetEvents()[0]
		for _, e := range list.GetEvents() {
			if e.GetEventType() == "defect.created" {
				created = e
			}
		}
		for _, f := range []string{"defect_id", "claim_id", "defect_type", "severity", "cure_protocol", "description", "evidence_refs"} {
			require.Contains(t, created.GetPayload().GetFields(), f)
		}
	})
}

func TestDefectLifecycle(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		tenantID, ctx := b.tenant(t, "acme")
		req := importAuthored(t, b, ctx, "inconsistency")
		dealID := req.GetDeal().GetDealId()
		g, err := b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: dealID})
		require.NoError(t, err)
		var target *debatedv1.ClaimGrading
		var clean *debatedv1.ClaimGrading
		for _, c := range g.GetClaims() {
			if len(c.GetDefects()) > 0 && target == nil {
				target = c
			}
			if len(c.GetDefects()) == 0 && clean == nil {
				clean = c
			}
		}
		require.NotNil(t, target)
		require.NotNil(t, clean)
		require.Equal(t, debatedv1.Grade_GRADE_D, target.GetGrade())
		defectID := target.GetDefects()[0].GetDefectId()

		// Flagging needs real evidence references and a long enough description.
		bad, err := b.registry.FlagDefect(ctx, &debatedv1.FlagDefectRequest{DealId: dealID, ClaimId: clean.GetClaimId(),
			DefectType: debatedv1.DefectType_DEFECT_TYPE_CONCEALMENT, Description: strings.Repeat("d", 60),
			EvidenceRefs: []string{"not-in-this-deal"}})
		require.Nil(t, bad)
		require.Contains(t, fieldViolations(t, err), "evidence_refs[0]")
		_, err = b.registry.FlagDefect(ctx, &debatedv1.FlagDefectRequest{DealId: dealID, ClaimId: clean.GetClaimId(),
			DefectType: debatedv1.DefectType_DEFECT_TYPE_CONCEALMENT, Description: "too short",
			EvidenceRefs: []string{req.GetEvidenceItems()[0].GetEvidenceId()}})
		require.Contains(t, fieldViolations(t, err), "description")

		fl, err := b.registry.FlagDefect(ctx, &debatedv1.FlagDefectRequest{DealId: dealID, ClaimId: clean.GetClaimId(),
			DefectType:   debatedv1.DefectType_DEFECT_TYPE_CONCEALMENT,
			Description:  "the deck leaves out a lost anchor customer that the model still books as revenue",
			EvidenceRefs: []string{req.GetEvidenceItems()[0].GetEvidenceId()}, Actor: "analyst@fund"})
		require.NoError(t, err)
		require.Equal(t, debatedv1.DefectOrigin_DEFECT_ORIGIN_FLAGGED, fl.GetDefect().GetOrigin())
		require.Equal(t, debatedv1.DefectSeverity_DEFECT_SEVERITY_FATAL, fl.GetDefect().GetSeverity())
		require.Equal(t, clean.GetClaimId(), fl.GetClaim().GetClaimId())
		require.Equal(t, debatedv1.Grade_GRADE_D, fl.GetClaim().GetGrade(), "a FATAL flag makes the claim D")
		require.Equal(t, debatedv1.Action_ACTION_PARTNER_OVERRIDE_REQUIRED, fl.GetClaim().GetAction())
		require.Equal(t, g.GetSummary().GetOpenDefectCount()+1, fl.GetSummary().GetOpenDefectCount())

		// Waiving needs an admin-scoped key.
		_, err = b.registry.WaiveDefect(ctx, &debatedv1.WaiveDefectRequest{DealId: dealID, DefectId: defectID, Actor: "a", Reason: "r"})
		requireCode(t, err, codes.PermissionDenied)
		kr, err := b.admin.CreateAPIKey(bearer(context.Background(), adminToken), &debatedv1.CreateAPIKeyRequest{TenantId: tenantID, Scopes: []debatedv1.Scope{debatedv1.Scope_SCOPE_ADMIN}})
		require.NoError(t, err)
		adminCtx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+kr.GetSecret())
		_, err = b.registry.WaiveDefect(adminCtx, &debatedv1.WaiveDefectRequest{DealId: dealID, DefectId: defectID, Actor: "partner@fund"})
		require.Contains(t, fieldViolations(t, err), "reason")
		w, err := b.registry.WaiveDefect(adminCtx, &debatedv1.WaiveDefectRequest{DealId: dealID, DefectId: defectID, Actor: "partner@fund", Reason: "confirmed with the auditor"})
		require.NoError(t, err)
		require.Equal(t, debatedv1.DefectStatus_DEFECT_STATUS_WAIVED, w.GetDefect().GetStatus())
		require.Equal(t, "partner@fund", w.GetDefect().GetActor())
		require.Equal(t, target.GetClaimId(), w.GetClaim().GetClaimId())
		require.NotEqual(t, debatedv1.Grade_GRADE_D, w.GetClaim().GetGrade(), "a waived defect no longer counts")
		require.Empty(t, w.GetClaim().GetDefects())
		page, err := b.registry.GetDealGrading(ctx, &debatedv1.GetDealGradingRequest{DealId: dealID, PageSize: 1000})
		require.NoError(t, err)
		require.Equal(t, w.GetClaim().GetGrade(), claimOf(t, page.GetClaims(), target.GetClaimId()).GetGrade(), "the stored dashboard is the waiver's")
		_, err = b.registry.WaiveDefect(adminCtx, &debatedv1.WaiveDefectRequest{DealId: dealID, DefectId: defectID, Actor: "p", Reason: "again"})
		requireCode(t, err, codes.FailedPrecondition)
		_, err = b.registry.CureDefect(ctx, &debatedv1.CureDefectRequest{DealId: dealID, DefectId: "dfx_unknown", Actor: "a", Reason: "r"})
		requireCode(t, err, codes.NotFound)

		// Curing the flag restores the clean claim.
		c, err := b.registry.CureDefect(ctx, &debatedv1.CureDefectRequest{DealId: dealID, DefectId: fl.GetDefect().GetDefectId(), Actor: "analyst@fund", Reason: "customer list reconciled"})
		require.NoError(t, err)
		require.Equal(t, clean.GetGrade(), c.GetClaim().GetGrade())
		open, err := b.registry.ListDefects(ctx, &debatedv1.ListDefectsRequest{DealId: dealID})
		require.NoError(t, err)
		all, err := b.registry.ListDefects(ctx, &debatedv1.ListDefectsRequest{DealId: dealID, IncludeClosed: true})
		require.NoError(t, err)
		require.Len(t, all.GetDefects(), len(open.GetDefects())+2)

		evs, err := b.registry.ListDealEvents(ctx, &debatedv1.ListDealEventsRequest{DealId: dealID, PageSize: 1000})
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, e := range evs.GetEvents() {
			seen[e.GetEventType()] = true
		}
		for _, typ := range []string{"defect.flagged", "defect.waived", "defect.cured", "claim.grade.changed", "claim.verdict.changed"} {
			require.True(t, seen[typ], "no %s event", typ)
		}
	})
}

// TestHumanActsRecordTheirAuthority: a defect flagged, cured or waived "as"
// a named actor records, in its audit event, the key that was authenticated
// and its scopes beside the name, which is kept as a claim only.
func TestHumanActsRecordTheirAuthority(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		tenantID, _ := b.tenant(t, "acme")
		actx := bearer(context.Background(), adminToken)
		plain, err := b.admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tenantID, Name: "intern"})
		require.NoError(t, err)
		admin, err := b.admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tenantID, Name: "partner",
			Scopes: []debatedv1.Scope{debatedv1.Scope_SCOPE_ADMIN}})
		require.NoError(t, err)
		ctx, adminCtx := bearer(context.Background(), plain.GetSecret()), bearer(context.Background(), admin.GetSecret())
		req := importAuthored(t, b, ctx, "inconsistency")
		dealID := req.GetDeal().GetDealId()
		g, err := b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: dealID})
		require.NoError(t, err)
		var detected, clean string
		for _, c := range g.GetClaims() {
			if len(c.GetDefects()) > 0 && detected == "" {
				detected = c.GetDefects()[0].GetDefectId()
			}
			if len(c.GetDefects()) == 0 && clean == "" {
				clean = c.GetClaimId()
			}
		}
		fl, err := b.registry.FlagDefect(ctx, &debatedv1.FlagDefectRequest{DealId: dealID, ClaimId: clean,
			DefectType:   debatedv1.DefectType_DEFECT_TYPE_CONCEALMENT,
			Description:  "the deck leaves out a lost anchor customer that the model still books as revenue",
			EvidenceRefs: []string{req.GetEvidenceItems()[0].GetEvidenceId()}, Actor: "managing-partner@fund"})
		require.NoError(t, err)
		_, err = b.registry.CureDefect(ctx, &debatedv1.CureDefectRequest{DealId: dealID, DefectId: fl.GetDefect().GetDefectId(),
			Actor: "analyst@fund", Reason: "customer list reconciled"})
		require.NoError(t, err)
		_, err = b.registry.WaiveDefect(adminCtx, &debatedv1.WaiveDefectRequest{DealId: dealID, DefectId: detected,
			Actor: "managing-partner@fund", Reason: "confirmed with the auditor"})
		require.NoError(t, err)

		evs, err := b.registry.ListDealEvents(ctx, &debatedv1.ListDealEventsRequest{DealId: dealID, PageSize: 1000})
		require.NoError(t, err)
		got := map[string]map[string]any{}
		actors := map[string]string{}
		for _, e := range evs.GetEvents() {
			switch e.GetEventType() {
			case "defect.flagged", "defect.cured", "defect.waived":
				a, ok := e.GetPayload().AsMap()["authority"].(map[string]any)
				require.True(t, ok, "%s has no authority: %v", e.GetEventType(), e.GetPayload().AsMap())
				got[e.GetEventType()] = a
				actors[e.GetEventType()] = e.GetActor()
			default:
				require.NotContains(t, e.GetPayload().AsMap(), "authority", "the grader's own events carry no key")
			}
		}
		plainID, adminID := plain.GetApiKey().GetKeyId(), admin.GetApiKey().GetKeyId()
		require.Equal(t, map[string]map[string]any{
			"defect.flagged": {"key_id": plainID, "scopes": []any{}, "claimed_actor": "managing-partner@fund"},
			"defect.cured":   {"key_id": plainID, "scopes": []any{}, "claimed_actor": "analyst@fund"},
			"defect.waived":  {"key_id": adminID, "scopes": []any{"admin"}, "claimed_actor": "managing-partner@fund"},
		}, got)
		require.Equal(t, map[string]string{"defect.flagged": "managing-partner@fund", "defect.cured": "analyst@fund",
			"defect.waived": "managing-partner@fund"}, actors)
	})
}

// TestGradeDealBounded: grading a large deal answers a summary and a page,
// whatever the deal's size; the rest is read a page at a time from the
// stored dashboard; a deal above the server's limit is refused before
// anything is written.
func TestGradeDealBounded(t *testing.T) {
	t.Parallel()
	const claims = 1500
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken, func(c *server.Config) { c.MaxGradeClaims = claims })
		_, ctx := b.tenant(t, "big")
		req, err := apiconv.BundleToProto(storetest.LargeBundle("deal-big", claims))
		require.NoError(t, err)
		_, err = b.registry.ImportDeal(ctx, req)
		require.NoError(t, err)

		resp, err := b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: "deal-big"})
		require.NoError(t, err)
		require.Less(t, proto.Size(resp), 256<<10, "the answer does not grow with the deal")
		require.Len(t, resp.GetClaims(), 100)
		require.EqualValues(t, claims, resp.GetSummary().GetClaimCount())
		require.Greater(t, int(resp.GetEventCount()), claims)
		require.NotEmpty(t, resp.GetNextPageToken())

		rows, _ := allRows(t, b, ctx, "deal-big", resp)
		require.Len(t, rows, claims)
		seen := map[string]bool{}
		for i, c := range rows {
			require.False(t, seen[c.GetClaimId()], "claim %s twice", c.GetClaimId())
			seen[c.GetClaimId()] = true
			if i > 0 {
				require.Less(t, rows[i-1].GetClaimKey(), c.GetClaimKey())
			}
		}
		page, err := b.registry.GetDealGrading(ctx, &debatedv1.GetDealGradingRequest{DealId: "deal-big", PageSize: 1000})
		require.NoError(t, err)
		require.Len(t, page.GetClaims(), 1000)
		require.Less(t, proto.Size(page), 4<<20, "a full page fits gRPC's default receive limit")
		require.NotEmpty(t, page.GetNextPageToken())
		last, err := b.registry.ListDealEvents(ctx, &debatedv1.ListDealEventsRequest{DealId: "deal-big", AfterSeq: resp.GetLastEventSeq() - 1})
		require.NoError(t, err)
		require.Len(t, last.GetEvents(), 1, "the events the answer counts are in the audit log")

		// A token names its grading: after a new one it is refused.
		_, err = b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: "deal-big", PageSize: 1})
		require.NoError(t, err)
		_, err = b.registry.GetDealGrading(ctx, &debatedv1.GetDealGradingRequest{DealId: "deal-big", PageToken: resp.GetNextPageToken()})
		requireCode(t, err, codes.FailedPrecondition)
		_, err = b.registry.GetDealGrading(ctx, &debatedv1.GetDealGradingRequest{DealId: "deal-big", PageToken: "not-a-token"})
		require.Contains(t, fieldViolations(t, err), "page_token")

		// One claim more than the server grades: refused, nothing written.
		req, err = apiconv.BundleToProto(storetest.LargeBundle("deal-bigger", claims+1))
		require.NoError(t, err)
		_, err = b.registry.ImportDeal(ctx, req)
		require.NoError(t, err)
		_, err = b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: "deal-bigger"})
		requireCode(t, err, codes.FailedPrecondition)
		evs, err := b.registry.ListDealEvents(ctx, &debatedv1.ListDealEventsRequest{DealId: "deal-bigger"})
		require.NoError(t, err)
		require.Empty(t, evs.GetEvents())
		_, err = b.registry.GetDealGrading(ctx, &debatedv1.GetDealGradingRequest{DealId: "deal-bigger"})
		requireCode(t, err, codes.FailedPrecondition)
		_, err = b.registry.GetDealGrading(ctx, &debatedv1.GetDealGradingRequest{DealId: "no-such-deal"})
		requireCode(t, err, codes.NotFound)
	})
}

// TestGradingBudgetAdmitsOneAtATime: with a budget smaller than a deal,
// gradings of it still run (one at a time) and agree.
func TestGradingBudgetAdmitsOneAtATime(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", adminToken, func(c *server.Config) { c.GradingClaimBudget = 1 })
	_, ctx := b.tenant(t, "budget")
	req := importAuthored(t, b, ctx, "inconsistency")
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: req.GetDeal().GetDealId()})
			errs <- err
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}

// floatOutputs reads a calc's decimal-string outputs as the numbers the
// expected outcomes hold; one that is not a canonical decimal is NaN, which
// no expectation matches.
func floatOutputs(m map[string]string) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, s := range m {
		out[k] = math.NaN()
		if d, err := debate.ParseDecimal(s); err == nil {
			out[k] = d.Float64()
		}
	}
	return out
}

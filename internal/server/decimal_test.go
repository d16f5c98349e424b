package server_test

import (
	"regexp"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
)

// TestDecimalsOnTheWire imports figures no double holds as written and
// reads them back through every RPC that shows them, byte for byte.
func TestDecimalsOnTheWire(t *testing.T) {
	t.Parallel()
	canonical := regexp.MustCompile(debate.DecimalPattern)
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		_, ctx := b.tenant(t, "acme")
		bundle := storetest.AwkwardBundle("deal-awkward")
		req, err := apiconv.BundleToProto(bundle)
		require.NoError(t, err)
		for i, v := range storetest.AwkwardValues {
			require.Equal(t, v, req.GetClaims()[i].GetValue().GetValue())
		}
		_, err = b.registry.ImportDeal(ctx, req)
		require.NoError(t, err)

		deal, err := b.registry.GetDeal(ctx, &debatedv1.GetDealRequest{DealId: "deal-awkward"})
		require.NoError(t, err)
		require.Equal(t, "0.10000000000000000001", deal.GetDeal().GetDeal().GetMaterialityThreshold())

		list, err := b.registry.ListClaims(ctx, &debatedv1.ListClaimsRequest{DealId: "deal-awkward"})
		require.NoError(t, err)
		listed := map[string]string{}
		for _, c := range list.GetClaims() {
			listed[c.GetClaimId()] = c.GetValue().GetValue()
		}
		for i, v := range storetest.AwkwardValues {
			id := req.GetClaims()[i].GetClaimId()
			got, err := b.registry.GetClaim(ctx, &debatedv1.GetClaimRequest{ClaimId: id})
			require.NoError(t, err)
			require.Equal(t, v, got.GetClaim().GetValue().GetValue(), "GetClaim %s", id)
			require.Equal(t, v, listed[id], "ListClaims %s", id)
		}

		// Recomputed outputs are decimal strings too.
		graded, err := b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: "deal-awkward"})
		require.NoError(t, err)
		require.NotEmpty(t, graded.GetCalcs())
		for _, c := range graded.GetCalcs() {
			for k, v := range c.GetOutput() {
				require.Regexp(t, canonical, v, "calc %s output %s", c.GetCalcId(), k)
			}
		}
	})
}

// TestDecimalsRejected sends figures that are not canonical decimal strings:
// each is INVALID_ARGUMENT naming its field, and nothing is stored.
func TestDecimalsRejected(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", adminToken)
	_, ctx := b.tenant(t, "acme")
	long := "1" + strings.Repeat("0", debate.MaxDecimalLen)
	bad := []string{"3.15e+06", "3150000.0", "1.50", "+1", "01", "-0", ".5", "1.", "NaN", "Infinity", "1,000", " 1", "0x10", "١", long}
	for _, s := range bad {
		for _, tc := range []struct {
			field string
			edit  func(r *debatedv1.ImportDealRequest)
		}{
			{"claims[0].value.value", func(r *debatedv1.ImportDealRequest) { r.Claims[0].Value.Value = s }},
			{`calcs[0].inputs["revenue"]`, func(r *debatedv1.ImportDealRequest) { r.Calcs[0].Inputs["revenue"] = s }},
			{"deal.materiality_threshold", func(r *debatedv1.ImportDealRequest) { r.Deal.MaterialityThreshold = s }},
		} {
			req := importRequest(t, "deal-bad")
			tc.edit(req)
			_, err := b.registry.ImportDeal(ctx, req)
			fields := fieldViolations(t, err)
			require.Contains(t, fields, tc.field, "%q in %s", s, tc.field)
		}
	}
	// A claim value is required; an empty threshold is 0.
	req := importRequest(t, "deal-bad")
	req.Claims[0].Value.Value = ""
	_, err := b.registry.ImportDeal(ctx, req)
	require.Contains(t, fieldViolations(t, err), "claims[0].value.value")
	_, err = b.registry.GetDeal(ctx, &debatedv1.GetDealRequest{DealId: "deal-bad"})
	requireCode(t, err, codes.NotFound) // nothing was stored

	req = importRequest(t, "deal-zero")
	req.Deal.MaterialityThreshold = ""
	_, err = b.registry.ImportDeal(ctx, req)
	require.NoError(t, err)
	got, err := b.registry.GetDeal(ctx, &debatedv1.GetDealRequest{DealId: "deal-zero"})
	require.NoError(t, err)
	require.Equal(t, "0", got.GetDeal().GetDeal().GetMaterialityThreshold())
}

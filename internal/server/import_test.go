package server_test

import (
	"context"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// TestMalformedImports sends imports that are wrong in one way each: every
// one answers InvalidArgument naming the bad field, and nothing is stored.
func TestMalformedImports(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(r *debatedv1.ImportDealRequest)
		field  string
	}{
		{"no deal", func(r *debatedv1.ImportDealRequest) { r.Deal = nil }, "deal"},
		{"missing deal id", func(r *debatedv1.ImportDealRequest) { r.Deal.DealId = "" }, "deal.deal_id"},
		{"missing claim id", func(r *debatedv1.ImportDealRequest) { r.Claims[2].ClaimId = "" }, "claims[2].claim_id"},
		{"missing evidence id", func(r *debatedv1.ImportDealRequest) { r.EvidenceItems[1].EvidenceId = "" }, "evidence_items[1].evidence_id"},
		{"missing chain node id", func(r *debatedv1.ImportDealRequest) { r.Sanads[0].TransmissionChain[0].NodeId = "" }, "sanads[0].transmission_chain[0].node_id"},
		{"unknown claim class", func(r *debatedv1.ImportDealRequest) { r.Claims[1].ClaimClass = 99 }, "claims[1].claim_class"},
		{"unspecified materiality", func(r *debatedv1.ImportDealRequest) { r.Claims[0].Materiality = 0 }, "claims[0].materiality"},
		{"unknown source grade", func(r *debatedv1.ImportDealRequest) { r.EvidenceItems[0].SourceGrade = 42 }, "evidence_items[0].source_grade"},
		{"unknown span type", func(r *debatedv1.ImportDealRequest) { r.Spans[0].SpanType = 7 }, "spans[0].span_type"},
		{"duplicate claim id", func(r *debatedv1.ImportDealRequest) { r.Claims[3].ClaimId = r.Claims[0].ClaimId }, "claims[3].claim_id"},
		{"duplicate claim key", func(r *debatedv1.ImportDealRequest) { r.Claims[4].ClaimKey = r.Claims[1].ClaimKey }, "claims[4].claim_key"},
		{"duplicate span id", func(r *debatedv1.ImportDealRequest) { r.Spans[1].SpanId = r.Spans[0].SpanId }, "spans[1].span_id"},
		{"claim of another deal", func(r *debatedv1.ImportDealRequest) { r.Claims[0].DealId = "another-deal" }, "claims[0].deal_id"},
		{"id with spaces", func(r *debatedv1.ImportDealRequest) { r.Claims[0].ClaimId = "a claim" }, "claims[0].claim_id"},
		{"oversized text", func(r *debatedv1.ImportDealRequest) { r.Spans[0].TextExcerpt = strings.Repeat("x", 20000) }, "spans[0].text_excerpt"},
		{"oversized id", func(r *debatedv1.ImportDealRequest) { r.Deal.DealId = strings.Repeat("d", 200) }, "deal.deal_id"},
		{"too many claims", func(r *debatedv1.ImportDealRequest) {
			for len(r.Claims) <= 20000 {
				r.Claims = append(r.Claims, &debatedv1.Claim{})
			}
		}, "claims"},
	}
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t, kind, adminToken)
			_, ctx := b.tenant(t, "acme")
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					req := importRequest(t, "deal-bad")
					tc.mutate(req)
					_, err := b.registry.ImportDeal(ctx, req)
					require.Contains(t, fieldViolations(t, err), tc.field)
				})
			}
			list, err := b.registry.ListDeals(ctx, &debatedv1.ListDealsRequest{})
			require.NoError(t, err)
			require.Empty(t, list.GetDeals(), "a rejected import stored something")
			_, err = b.registry.GetClaim(ctx, &debatedv1.GetClaimRequest{ClaimId: importRequest(t, "x").Claims[0].GetClaimId()})
			requireCode(t, err, codes.NotFound)
		})
	}
}

// TestImportAboveTransportLimit: a request above the server's message limit is
// refused before decoding, and nothing is stored.
func TestImportAboveTransportLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", adminToken)
	_, ctx := b.tenant(t, "acme")
	req := importRequest(t, "deal-huge")
	for i := range 700 {
		s := proto.Clone(req.Spans[0]).(*debatedv1.Span)
		s.SpanId = s.SpanId + "-" + string(rune('a'+i%26)) + strings.Repeat("x", i%100)
		s.TextExcerpt = strings.Repeat("y", 16000)
		req.Spans = append(req.Spans, s)
	}
	_, err := b.registry.ImportDeal(ctx, req)
	requireCode(t, err, codes.ResourceExhausted)
	_, err = b.registry.GetDeal(ctx, &debatedv1.GetDealRequest{DealId: "deal-huge"})
	requireCode(t, err, codes.NotFound)
}

// A dangling reference is data, not an error: it is stored as sent.
func TestDanglingReferencesAreKept(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", adminToken)
	_, ctx := b.tenant(t, "acme")
	req := importRequest(t, "deal-dangling")
	req.Sanads[0].CorroboratingEvidenceIds = append(req.Sanads[0].CorroboratingEvidenceIds, "evidence-that-does-not-exist")
	req.Claims[0].PrimarySpanId = "span-that-does-not-exist"
	resp, err := b.registry.ImportDeal(ctx, req)
	require.NoError(t, err)
	require.True(t, resp.GetCreated())
	gc, err := b.registry.GetClaim(ctx, &debatedv1.GetClaimRequest{ClaimId: req.Claims[0].GetClaimId()})
	require.NoError(t, err)
	require.Equal(t, "span-that-does-not-exist", gc.GetClaim().GetPrimarySpanId())
	_ = context.Background()
}

package server

import (
	"context"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
)

// ImportDeal implements RegistryService. The request's shape is checked by
// its protovalidate rules (decimal strings included: the conversion checks
// them again), then the bundle's cross-field rules (unique ids,
// known enumerations) by debate.DealBundle.Validate; only then is anything
// written, in one transaction.
func (s *Server) ImportDeal(ctx context.Context, req *debatedv1.ImportDealRequest) (*debatedv1.ImportDealResponse, error) {
	b, err := apiconv.BundleFromProto(req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if err := b.Validate(); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	hash, err := b.ContentHash()
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	res, err := s.registry.DealImport(ctx, b, hash, s.now().UTC())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.ImportDealResponse{Deal: apiconv.DealSummaryToProto(res.Summary), Created: res.Created}, nil
}

// GetDeal implements RegistryService.
func (s *Server) GetDeal(ctx context.Context, req *debatedv1.GetDealRequest) (*debatedv1.GetDealResponse, error) {
	d, err := s.registry.DealGet(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.GetDealResponse{Deal: apiconv.DealSummaryToProto(d)}, nil
}

// ListDeals implements RegistryService.
func (s *Server) ListDeals(ctx context.Context, req *debatedv1.ListDealsRequest) (*debatedv1.ListDealsResponse, error) {
	ds, next, err := s.registry.DealList(ctx, debate.Page{After: req.GetPageToken(), Limit: int(req.GetPageSize())})
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.ListDealsResponse{NextPageToken: next}
	for _, d := range ds {
		out.Deals = append(out.Deals, apiconv.DealSummaryToProto(d))
	}
	return out, nil
}

// GetClaim implements RegistryService.
func (s *Server) GetClaim(ctx context.Context, req *debatedv1.GetClaimRequest) (*debatedv1.GetClaimResponse, error) {
	c, err := s.registry.ClaimGet(ctx, req.GetClaimId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.GetClaimResponse{Claim: apiconv.ClaimToProto(c)}, nil
}

// ListEvidence implements RegistryService.
func (s *Server) ListEvidence(ctx context.Context, req *debatedv1.ListEvidenceRequest) (*debatedv1.ListEvidenceResponse, error) {
	es, next, err := s.registry.EvidenceList(ctx, req.GetDealId(), debate.Page{After: req.GetPageToken(), Limit: int(req.GetPageSize())})
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.ListEvidenceResponse{NextPageToken: next}
	for _, e := range es {
		out.EvidenceItems = append(out.EvidenceItems, apiconv.EvidenceToProto(e))
	}
	return out, nil
}

// GetEvidence implements RegistryService.
func (s *Server) GetEvidence(ctx context.Context, req *debatedv1.GetEvidenceRequest) (*debatedv1.GetEvidenceResponse, error) {
	e, deal, err := s.registry.EvidenceGet(ctx, req.GetDealId(), req.GetEvidenceId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.GetEvidenceResponse{EvidenceItem: apiconv.EvidenceToProto(e), DealId: deal}, nil
}

// ListClaims implements RegistryService.
func (s *Server) ListClaims(ctx context.Context, req *debatedv1.ListClaimsRequest) (*debatedv1.ListClaimsResponse, error) {
	filter := debate.ClaimFilter{
		DealID:      req.GetDealId(),
		Class:       apiconv.ClassFromProto(req.GetClaimClass()),
		Materiality: apiconv.MaterialityFromProto(req.GetMateriality()),
	}
	cs, next, err := s.registry.ClaimList(ctx, filter, debate.Page{After: req.GetPageToken(), Limit: int(req.GetPageSize())})
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.ListClaimsResponse{NextPageToken: next}
	for _, c := range cs {
		out.Claims = append(out.Claims, apiconv.ClaimToProto(c))
	}
	return out, nil
}

// ListSanads implements RegistryService: the deal's sanads, or one claim's,
// and the evidence items they cite. Returns NOT_FOUND for an unknown deal
// (another tenant's included).
func (s *Server) ListSanads(ctx context.Context, req *debatedv1.ListSanadsRequest) (*debatedv1.ListSanadsResponse, error) {
	b, err := s.registry.DealBundleGet(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	all, err := apiconv.BundleToProto(b)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.ListSanadsResponse{}
	cited := map[string]bool{}
	for _, sn := range all.GetSanads() {
		if req.GetClaimId() != "" && sn.GetClaimId() != req.GetClaimId() {
			continue
		}
		out.Sanads = append(out.Sanads, sn)
		cited[sn.GetPrimaryEvidenceId()] = true
		for _, id := range sn.GetCorroboratingEvidenceIds() {
			cited[id] = true
		}
	}
	for _, ev := range all.GetEvidenceItems() {
		if cited[ev.GetEvidenceId()] {
			out.EvidenceItems = append(out.EvidenceItems, ev)
		}
	}
	return out, nil
}

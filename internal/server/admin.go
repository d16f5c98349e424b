package server

import (
	"context"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/google/uuid"
)

// CreateTenant implements AdminService.
func (s *Server) CreateTenant(ctx context.Context, req *debatedv1.CreateTenantRequest) (*debatedv1.CreateTenantResponse, error) {
	t := debate.Tenant{ID: uuid.NewString(), Name: req.GetName(), CreatedAt: s.now().UTC()}
	if err := s.tenants.TenantCreate(ctx, t); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.CreateTenantResponse{Tenant: apiconv.TenantToProto(t)}, nil
}

// ListTenants implements AdminService.
func (s *Server) ListTenants(ctx context.Context, req *debatedv1.ListTenantsRequest) (*debatedv1.ListTenantsResponse, error) {
	ts, next, err := s.tenants.TenantList(ctx, debate.Page{After: req.GetPageToken(), Limit: int(req.GetPageSize())})
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out := &debatedv1.ListTenantsResponse{NextPageToken: next}
	for _, t := range ts {
		out.Tenants = append(out.Tenants, apiconv.TenantToProto(t))
	}
	return out, nil
}

// CreateAPIKey implements AdminService. The secret is in the response only;
// the store keeps its SHA-256.
func (s *Server) CreateAPIKey(ctx context.Context, req *debatedv1.CreateAPIKeyRequest) (*debatedv1.CreateAPIKeyResponse, error) {
	secret, hash, err := newAPIKeySecret()
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	k := debate.APIKey{
		ID:        uuid.NewString(),
		TenantID:  req.GetTenantId(),
		Name:      req.GetName(),
		Prefix:    secret[:len(keyPrefix)+8],
		Hash:      hash,
		Scopes:    apiconv.ScopesFromProto(req.GetScopes()),
		CreatedAt: s.now().UTC(),
	}
	if err := s.tenants.APIKeyCreate(ctx, k); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.CreateAPIKeyResponse{ApiKey: apiconv.APIKeyToProto(k), Secret: secret}, nil
}

// RevokeAPIKey implements AdminService.
func (s *Server) RevokeAPIKey(ctx context.Context, req *debatedv1.RevokeAPIKeyRequest) (*debatedv1.RevokeAPIKeyResponse, error) {
	k, err := s.tenants.APIKeyRevoke(ctx, req.GetKeyId(), s.now().UTC())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.RevokeAPIKeyResponse{ApiKey: apiconv.APIKeyToProto(k)}, nil
}

package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/netguard"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TenantModelContext is the encryption context of a tenant's model API key:
// a ciphertext opens only for its tenant.
func TenantModelContext(tenantID string) string { return "tenant-model/" + tenantID }

func tenantModelToProto(m debate.TenantModel) *debatedv1.TenantModel {
	out := &debatedv1.TenantModel{TenantId: m.TenantID, BaseUrl: m.BaseURL, Model: m.Model, HasApiKey: len(m.APIKeyCiphertext) > 0}
	if !m.UpdatedAt.IsZero() {
		out.UpdateTime = timestamppb.New(m.UpdatedAt)
	}
	return out
}

// SetTenantModel implements AdminService: the key is sealed before it is
// stored and never returned.
func (s *Server) SetTenantModel(ctx context.Context, req *debatedv1.SetTenantModelRequest) (*debatedv1.SetTenantModelResponse, error) {
	if s.models == nil || s.cfg.Secrets == nil {
		return nil, toStatus(ctx, s.log, fmt.Errorf("tenant models need an encryption key (DEBATED_ENCRYPTION_KEY): %w", debate.ErrFailedPrecondition))
	}
	m := debate.TenantModel{TenantID: req.GetTenantId(), BaseURL: req.GetBaseUrl(), Model: req.GetModel(), UpdatedAt: s.now().UTC()}
	if m.BaseURL != "" {
		var v debate.Violations
		if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			v.Add("base_url", "must be an http or https URL")
		} else if !s.cfg.AllowPrivateModelURLs {
			// Checked here and again at every connection (the model
			// client's dialer), since a name may resolve elsewhere later.
			switch err := netguard.CheckURL(ctx, s.cfg.Resolver, m.BaseURL); {
			case errors.Is(err, netguard.ErrBlocked):
				v.Add("base_url", "%s (an operator may allow private model endpoints with DEBATED_LLM_ALLOW_PRIVATE=true)", err.Error())
			case err != nil:
				v.Add("base_url", "%s", err.Error())
			}
		}
		if m.Model == "" {
			v.Add("model", "is required with a base_url")
		}
		if err := v.Err(); err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		if key := req.GetApiKey(); key != "" {
			ct, err := s.cfg.Secrets.Seal([]byte(key), TenantModelContext(m.TenantID))
			if err != nil {
				return nil, toStatus(ctx, s.log, err)
			}
			m.APIKeyCiphertext = ct
		}
	}
	if err := s.models.TenantModelSet(ctx, m); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.SetTenantModelResponse{Model: tenantModelToProto(m)}, nil
}

// GetTenantModel implements AdminService.
func (s *Server) GetTenantModel(ctx context.Context, req *debatedv1.GetTenantModelRequest) (*debatedv1.GetTenantModelResponse, error) {
	if s.models == nil {
		return nil, toStatus(ctx, s.log, fmt.Errorf("tenant %q has no model settings: this server keeps none (it runs without a store for them): %w", req.GetTenantId(), debate.ErrNotFound))
	}
	m, err := s.models.TenantModelGet(ctx, req.GetTenantId())
	if errors.Is(err, debate.ErrNotFound) {
		if _, terr := s.tenants.TenantGet(ctx, req.GetTenantId()); terr != nil {
			return nil, toStatus(ctx, s.log, terr)
		}
		return &debatedv1.GetTenantModelResponse{Model: &debatedv1.TenantModel{TenantId: req.GetTenantId()}}, nil
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &debatedv1.GetTenantModelResponse{Model: tenantModelToProto(m)}, nil
}

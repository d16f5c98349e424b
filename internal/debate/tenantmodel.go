package debate

import (
	"context"
	"time"
)

// TenantModel is a tenant's own model endpoint for the model-backed roles
// (bring your own key). The API key is kept only encrypted.
type TenantModel struct {
	TenantID         string
	BaseURL          string
	Model            string
	APIKeyCiphertext []byte
	UpdatedAt        time.Time
}

// TenantModelStore keeps tenants' model overrides. Like TenantStore it is
// service metadata, used by the admin API and the engine.
type TenantModelStore interface {
	// TenantModelSet stores m, replacing the tenant's override; an empty
	// BaseURL deletes it. Returns ErrNotFound if the tenant is unknown.
	TenantModelSet(ctx context.Context, m TenantModel) error
	// TenantModelGet returns the tenant's override. Returns ErrNotFound if
	// it has none.
	TenantModelGet(ctx context.Context, tenantID string) (TenantModel, error)
}

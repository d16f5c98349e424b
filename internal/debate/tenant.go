package debate

import (
	"context"
	"slices"
	"time"
)

// Tenant is an isolated customer of the service. Every tenant-owned row
// carries its TenantID.
type Tenant struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// Scope is a permission an API key carries beyond plain tenant access.
type Scope string

// Scopes an API key can carry.
const (
	// ScopeAdmin allows tenant-level administrative acts such as waiving a
	// defect.
	ScopeAdmin Scope = "admin"
)

// ValidScope reports whether s is a known scope.
func ValidScope(s Scope) bool { return s == ScopeAdmin }

// APIKey is a tenant credential. Only the SHA-256 hash of its secret is
// stored; the secret is shown once, when the key is created.
type APIKey struct {
	ID        string
	TenantID  string
	Name      string
	Prefix    string // the non-secret start of the key, for display
	Hash      []byte // SHA-256 of the whole key string
	Scopes    []Scope
	CreatedAt time.Time
	RevokedAt *time.Time
}

// Principal is the authenticated caller of a tenant-scoped RPC.
type Principal struct {
	TenantID string
	KeyID    string
	Scopes   []Scope
}

// HasScope reports whether the principal carries s.
func (p Principal) HasScope(s Scope) bool { return slices.Contains(p.Scopes, s) }

type principalKey struct{}

// WithPrincipal returns a context carrying p. Only the authentication
// interceptor calls it.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx, if any.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok && p.TenantID != ""
}

// TenantFrom returns the tenant id of the authenticated caller. Returns
// ErrNoTenant when the context carries none: handlers and stores take the
// tenant only from here, never from a request field.
func TenantFrom(ctx context.Context) (string, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return "", ErrNoTenant
	}
	return p.TenantID, nil
}

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

// Authority is what a human act (resolving a gate, cancelling a debate,
// flagging, curing or waiving a defect) was authorised by: the API key that
// authenticated the call, with its scopes, and the name the caller said it
// acts as. ClaimedActor is a label the caller chose and nothing checked it;
// KeyID and Scopes are what authentication established. Every human-action
// event records both, so a signed record never presents a claimed name as
// the authority.
type Authority struct {
	KeyID        string   `json:"key_id"`
	Scopes       []string `json:"scopes"`
	ClaimedActor string   `json:"claimed_actor,omitempty"`
}

// AuthorityOf returns the authority of p acting as claimed (empty: no
// claim). Scopes is never nil, so the recorded JSON always has the field.
func AuthorityOf(p Principal, claimed string) Authority {
	scopes := make([]string, 0, len(p.Scopes))
	for _, s := range p.Scopes {
		scopes = append(scopes, string(s))
	}
	return Authority{KeyID: p.KeyID, Scopes: scopes, ClaimedActor: claimed}
}

// Actor is the name the records show for the act: the claimed actor if
// there is one, else "key:" and the key id, else "" (no authority).
func (a Authority) Actor() string {
	switch {
	case a.ClaimedActor != "":
		return a.ClaimedActor
	case a.KeyID != "":
		return "key:" + a.KeyID
	}
	return ""
}

// Map returns the authority as the JSON object a deal event's payload
// carries under "authority".
func (a Authority) Map() map[string]any {
	m := map[string]any{"key_id": a.KeyID, "scopes": append([]string{}, a.Scopes...)}
	if a.ClaimedActor != "" {
		m["claimed_actor"] = a.ClaimedActor
	}
	return m
}

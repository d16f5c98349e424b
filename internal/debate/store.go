package debate

import (
	"context"
	"time"
)

// DealSummary is a stored deal with the size of its registry.
type DealSummary struct {
	Deal          Deal
	ContentHash   string // SHA-256 (hex) of the canonical import, see DealBundle hashing in the server
	ImportedAt    time.Time
	ClaimCount    int
	EvidenceCount int
	SpanCount     int
	SanadCount    int
	DocumentCount int
	CalcCount     int
}

// DealImportResult says what an import did.
type DealImportResult struct {
	Summary DealSummary
	// Created is false when the same deal with the same content was already
	// stored: the import was a no-op.
	Created bool
}

// Page asks for one page of a keyset-paginated list. After is the opaque
// cursor a previous page returned (empty for the first page). Limit ≤ 0
// means 50; stores cap it at 1000.
type Page struct {
	After string
	Limit int
}

// ClaimFilter narrows ClaimList. Zero values do not filter.
type ClaimFilter struct {
	DealID      string
	Class       ClaimClass
	Materiality Materiality
}

// TenantStore keeps tenants and their API keys. Its methods are called by the
// admin API and by authentication, never with a tenant in the context.
type TenantStore interface {
	// TenantCreate stores t. Returns ErrAlreadyExists if the id is taken.
	TenantCreate(ctx context.Context, t Tenant) error
	// TenantGet returns the tenant. Returns ErrNotFound if unknown.
	TenantGet(ctx context.Context, id string) (Tenant, error)
	// TenantList returns tenants ordered by id after page.After, and the
	// cursor of the next page ("" when there is none).
	TenantList(ctx context.Context, page Page) ([]Tenant, string, error)
	// APIKeyCreate stores k. Returns ErrNotFound if its tenant is unknown.
	APIKeyCreate(ctx context.Context, k APIKey) error
	// APIKeyLookup returns the unrevoked key whose hash is hash. Returns
	// ErrNotFound if there is none.
	APIKeyLookup(ctx context.Context, hash []byte) (APIKey, error)
	// APIKeyRevoke marks the key revoked at at. Returns ErrNotFound if the
	// key is unknown; revoking a revoked key is a no-op.
	APIKeyRevoke(ctx context.Context, keyID string, at time.Time) (APIKey, error)
}

// RegistryStore keeps the claim registries of deals. Every method is scoped
// to the tenant of the context (TenantFrom) and returns ErrNoTenant without
// one; a resource of another tenant is ErrNotFound.
type RegistryStore interface {
	// DealImport stores the whole bundle atomically. It validates the
	// bundle itself (ErrInvalid) and returns ErrNotFound when the tenant of
	// the context does not exist. Importing a deal id
	// that exists with the same contentHash is a no-op (Created false);
	// with another contentHash it returns ErrAlreadyExists and changes
	// nothing.
	DealImport(ctx context.Context, b *DealBundle, contentHash string, at time.Time) (DealImportResult, error)
	// DealGet returns the deal's summary. Returns ErrNotFound if unknown.
	DealGet(ctx context.Context, dealID string) (DealSummary, error)
	// DealList returns deals ordered by id after page.After, and the next
	// cursor.
	DealList(ctx context.Context, page Page) ([]DealSummary, string, error)
	// DealBundleGet returns the deal's whole registry. Returns ErrNotFound
	// if unknown.
	DealBundleGet(ctx context.Context, dealID string) (*DealBundle, error)
	// ClaimGet returns one claim by id. Returns ErrNotFound if unknown.
	ClaimGet(ctx context.Context, claimID string) (Claim, error)
	// ClaimList returns the claims of filter.DealID (required) ordered by
	// claim key then id, after page.After, and the next cursor. Returns
	// ErrNotFound if the deal is unknown.
	ClaimList(ctx context.Context, filter ClaimFilter, page Page) ([]Claim, string, error)
	// EvidenceList returns the evidence items of dealID ordered by id,
	// after page.After, and the next cursor. Returns ErrNotFound if the
	// deal is unknown.
	EvidenceList(ctx context.Context, dealID string, page Page) ([]EvidenceItem, string, error)
	// EvidenceGet returns an evidence item and the id of its deal. With
	// dealID empty it looks in every deal of the tenant, and an id that
	// several deals use is a *ValidationError on field deal_id. Returns
	// ErrNotFound if no deal (or not dealID) has the item.
	EvidenceGet(ctx context.Context, dealID, evidenceID string) (EvidenceItem, string, error)
}

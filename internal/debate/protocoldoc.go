package debate

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// ProtocolDocument is a debate protocol a tenant registered as data (see
// package protocols/custom): its name and version identify it within the
// tenant, and it never changes once stored. A debate runs it under the name
// Ref returns.
type ProtocolDocument struct {
	TenantID string
	Name     string
	// Version is positive.
	Version int
	// Document is the validated document in canonical JSON (RFC 8785).
	Document []byte
	// SHA256 is the hex SHA-256 of Document.
	SHA256    string
	CreatedAt time.Time
}

// Ref is the protocol name a debate of this document carries:
// "NAME@VERSION".
func (p ProtocolDocument) Ref() string { return ProtocolRef(p.Name, p.Version) }

// ProtocolStore keeps the protocol documents tenants register. Every method
// is scoped to the tenant of ctx (ErrNoTenant without one); another
// tenant's document is ErrNotFound.
type ProtocolStore interface {
	// ProtocolPut stores p under the tenant of ctx (p.TenantID is ignored)
	// and returns the stored document and whether it was created. Storing a
	// document identical (same SHA256) to the stored version is a no-op
	// that returns the stored one; a different document under an existing
	// name and version returns ErrAlreadyExists: documents are immutable.
	ProtocolPut(ctx context.Context, p ProtocolDocument) (ProtocolDocument, bool, error)
	// ProtocolGet returns the tenant's document name at version, or its
	// highest version when version is 0. Returns ErrNotFound if none.
	ProtocolGet(ctx context.Context, name string, version int) (ProtocolDocument, error)
	// ProtocolList returns every version of every document of the tenant,
	// ordered by name, then version.
	ProtocolList(ctx context.Context) ([]ProtocolDocument, error)
}

// ProtocolRef returns "NAME@VERSION", the protocol name of a debate that
// runs version of a registered document. Built-in protocol names contain
// no "@".
func ProtocolRef(name string, version int) string { return name + "@" + strconv.Itoa(version) }

// ParseProtocolRef splits "NAME@VERSION" (ok false for a name without "@"
// or a version that is not a positive integer).
func ParseProtocolRef(ref string) (name string, version int, ok bool) {
	name, v, found := strings.Cut(ref, "@")
	if !found || name == "" {
		return "", 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || strconv.Itoa(n) != v {
		return "", 0, false
	}
	return name, n, true
}

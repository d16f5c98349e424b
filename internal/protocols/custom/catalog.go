package custom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/debated/debated/internal/canon"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
)

// Catalog is the tenants' registered protocols: it parses, validates and
// stores documents, and compiles them for the engine (Resolver) and the API.
type Catalog struct {
	store   debate.ProtocolStore
	builtin func(name string) bool
	cfg     Config
}

// NewCatalog returns a catalog over store; builtin reports the names of the
// server's own protocols, which no document may take. cfg wires the
// compiled protocols (see Config).
func NewCatalog(store debate.ProtocolStore, builtin func(name string) bool, cfg Config) (*Catalog, error) {
	switch {
	case store == nil:
		return nil, errors.New("custom: a protocol store is required")
	case cfg.Registry == nil:
		return nil, errors.New("custom: Config.Registry is required")
	case cfg.ModelFor == nil:
		return nil, errors.New("custom: Config.ModelFor is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Catalog{store: store, builtin: builtin, cfg: cfg}, nil
}

// Register parses and validates raw (YAML or JSON) and stores it for the
// tenant of ctx in canonical JSON. It returns the stored document and
// whether it is new (false: the same document was registered before).
// Returns a *debate.ValidationError for a bad document, and an error
// wrapping debate.ErrAlreadyExists if another document holds its name and
// version.
func (c *Catalog) Register(ctx context.Context, raw []byte) (debate.ProtocolDocument, bool, error) {
	d, err := Parse(raw, c.builtin)
	if err != nil {
		return debate.ProtocolDocument{}, false, err
	}
	doc, err := canon.Marshal(d)
	if err != nil {
		return debate.ProtocolDocument{}, false, fmt.Errorf("custom: canonicalise document: %w", err)
	}
	sum := sha256.Sum256(doc)
	return c.store.ProtocolPut(ctx, debate.ProtocolDocument{Name: d.Name, Version: d.Version, Document: doc,
		SHA256: hex.EncodeToString(sum[:]), CreatedAt: c.cfg.Now().UTC()})
}

// Get returns the tenant's document name at version (0: the latest).
// Returns an error wrapping debate.ErrNotFound if the tenant has none.
func (c *Catalog) Get(ctx context.Context, name string, version int) (debate.ProtocolDocument, error) {
	return c.store.ProtocolGet(ctx, name, version)
}

// List returns every document of the tenant of ctx.
func (c *Catalog) List(ctx context.Context) ([]debate.ProtocolDocument, error) {
	return c.store.ProtocolList(ctx)
}

// Protocol compiles the tenant's document ref (NAME@VERSION) for the
// tenant of ctx. Returns an error wrapping debate.ErrNotFound if the tenant
// has no such document.
func (c *Catalog) Protocol(ctx context.Context, ref string) (*orchestrator.Protocol, error) {
	name, version, ok := debate.ParseProtocolRef(ref)
	if !ok {
		return nil, fmt.Errorf("custom: %q is not NAME@VERSION: %w", ref, debate.ErrNotFound)
	}
	pd, err := c.store.ProtocolGet(ctx, name, version)
	if err != nil {
		return nil, err
	}
	d, err := Parse(pd.Document, nil)
	if err != nil {
		return nil, fmt.Errorf("custom: stored document %s: %w", pd.Ref(), err)
	}
	return Compile(d, pd.Ref(), c.cfg)
}

// Resolver is the orchestrator's way to the tenants' protocols: it reads
// the document as the tenant of the debate.
func (c *Catalog) Resolver() orchestrator.Resolver {
	return func(ctx context.Context, tenantID, name string) (*orchestrator.Protocol, error) {
		if t, err := debate.TenantFrom(ctx); err != nil || t != tenantID {
			ctx = debate.WithPrincipal(ctx, debate.Principal{TenantID: tenantID, KeyID: "protocols"})
		}
		return c.Protocol(ctx, name)
	}
}

// CheckRunnable returns an error wrapping debate.ErrFailedPrecondition
// when the tenant of ctx has no model to run a data-defined protocol with
// (neither its own nor the deployment's): such protocols have no rules
// backend.
func (c *Catalog) CheckRunnable(ctx context.Context) error {
	m, err := c.cfg.ModelFor(ctx)
	if err != nil {
		return err
	}
	if m == nil {
		// The explanation goes before the sentinel: the API answers with
		// the text up to it.
		return fmt.Errorf("a protocol registered as data runs model-backed roles only, and no model is configured "+
			"(set one for the deployment with DEBATED_LLM_BASE_URL, or for the tenant with SetTenantModel): %w", debate.ErrFailedPrecondition)
	}
	return nil
}

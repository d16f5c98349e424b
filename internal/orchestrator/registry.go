package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/debated/debated/internal/debate"
)

// Registry holds the protocols a server runs, by name. It is safe for
// concurrent use; protocols are registered at start-up and read-only after.
type Registry struct {
	mu        sync.RWMutex
	protocols map[string]*compiled

	// resolver (fixed at construction) finds the protocols tenants
	// registered as data (names with an "@"); resolved caches them per
	// tenant and name, which is safe because such a protocol never changes
	// under its name.
	resolver Resolver
	resolved map[string]*compiled
}

// Resolver returns the protocol a tenant registered under name (see
// NewResolvingRegistry). It returns an error wrapping debate.ErrNotFound if
// the tenant has none. The protocol it returns for a tenant and name must
// never change.
type Resolver func(ctx context.Context, tenantID, name string) (*Protocol, error)

// maxResolved bounds the cache of resolved protocols; it is emptied when
// full.
const maxResolved = 4096

// compiled is a validated protocol with its lookups precomputed.
type compiled struct {
	*Protocol
	nodes map[string]*Node           // top-level nodes by name
	roles map[string]bool            // Roles
	guard map[string]map[string]bool // the protocol's RoleGuard as sets
}

// NewRegistry returns a registry holding ps. It returns Register's error for
// the first protocol it refuses.
func NewRegistry(ps ...*Protocol) (*Registry, error) { return NewResolvingRegistry(nil, ps...) }

// NewResolvingRegistry returns a registry holding ps that finds the
// protocols not registered in it, and whose names contain an "@"
// (NAME@VERSION, a tenant's protocol document), through res (nil: none).
func NewResolvingRegistry(res Resolver, ps ...*Protocol) (*Registry, error) {
	r := &Registry{protocols: map[string]*compiled{}, resolver: res}
	for _, p := range ps {
		if err := r.Register(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Named reports whether a name is one of ps's: the built-in names, for a
// catalog of tenant protocols built before the registry that resolves them.
func Named(ps []*Protocol) func(name string) bool {
	names := make(map[string]bool, len(ps))
	for _, p := range ps {
		names[p.Name] = true
	}
	return func(name string) bool { return names[name] }
}

// Register validates p and adds it. Returns Validate's *debate.ValidationError
// (errors.Is debate.ErrInvalid) for an invalid protocol, and an error
// wrapping debate.ErrAlreadyExists if a protocol of that name is registered.
func (r *Registry) Register(p *Protocol) error {
	if p == nil {
		return fmt.Errorf("orchestrator: %w: nil protocol", debate.ErrInvalid)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("orchestrator: protocol %q: %w", p.Name, err)
	}
	c := compile(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.protocols == nil {
		r.protocols = map[string]*compiled{}
	}
	if _, ok := r.protocols[p.Name]; ok {
		return fmt.Errorf("orchestrator: protocol %q: %w", p.Name, debate.ErrAlreadyExists)
	}
	r.protocols[p.Name] = c
	return nil
}

func compile(p *Protocol) *compiled {
	c := &compiled{Protocol: p, nodes: map[string]*Node{}, roles: map[string]bool{}, guard: map[string]map[string]bool{}}
	for _, n := range p.Nodes {
		c.nodes[n.Name] = n
	}
	for _, role := range p.Roles {
		c.roles[role] = true
	}
	for t, actors := range p.RoleGuard {
		set := map[string]bool{}
		for _, a := range actors {
			set[a] = true
		}
		c.guard[t] = set
	}
	return c
}

// Resolve returns the protocol name for a debate of tenantID: a registered
// protocol, or for a name with an "@" the resolver's, validated. Returns an
// error wrapping debate.ErrNotFound if there is none, and the resolver's or
// Validate's error otherwise.
func (r *Registry) Resolve(ctx context.Context, tenantID, name string) (*Protocol, error) {
	c, err := r.lookupFor(ctx, tenantID, name)
	if err != nil {
		return nil, err
	}
	return c.Protocol, nil
}

func (r *Registry) lookupFor(ctx context.Context, tenantID, name string) (*compiled, error) {
	c, err := r.lookup(name)
	if err == nil || r.resolver == nil || !strings.Contains(name, "@") {
		return c, err
	}
	key := tenantID + "\x00" + name
	r.mu.RLock()
	c = r.resolved[key]
	r.mu.RUnlock()
	if c != nil {
		return c, nil
	}
	p, err := r.resolver(ctx, tenantID, name)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: protocol %q: %w", name, err)
	}
	if p == nil || p.Name != name {
		return nil, fmt.Errorf("orchestrator: protocol %q: the resolver returned another protocol", name)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("orchestrator: protocol %q: %w", name, err)
	}
	c = compile(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resolved == nil || len(r.resolved) >= maxResolved {
		r.resolved = map[string]*compiled{}
	}
	r.resolved[key] = c
	return c, nil
}

// Get returns the protocol named name. Returns an error wrapping
// debate.ErrNotFound if none is registered.
func (r *Registry) Get(name string) (*Protocol, error) {
	c, err := r.lookup(name)
	if err != nil {
		return nil, err
	}
	return c.Protocol, nil
}

// List returns the registered protocols ordered by name.
func (r *Registry) List() []*Protocol {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Protocol, 0, len(r.protocols))
	for _, name := range slices.Sorted(maps.Keys(r.protocols)) {
		out = append(out, r.protocols[name].Protocol)
	}
	return out
}

func (r *Registry) lookup(name string) (*compiled, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.protocols[name]
	if !ok {
		return nil, fmt.Errorf("orchestrator: protocol %q: %w", name, debate.ErrNotFound)
	}
	return c, nil
}

package orchestrator

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/debated/debated/internal/debate"
)

// Registry holds the protocols a server runs, by name. It is safe for
// concurrent use; protocols are registered at start-up and read-only after.
type Registry struct {
	mu        sync.RWMutex
	protocols map[string]*compiled
}

// compiled is a validated protocol with its lookups precomputed.
type compiled struct {
	*Protocol
	nodes map[string]*Node           // top-level nodes by name
	roles map[string]bool            // Roles
	guard map[string]map[string]bool // the protocol's RoleGuard as sets
}

// NewRegistry returns a registry holding ps. It returns Register's error for
// the first protocol it refuses.
func NewRegistry(ps ...*Protocol) (*Registry, error) {
	r := &Registry{protocols: map[string]*compiled{}}
	for _, p := range ps {
		if err := r.Register(p); err != nil {
			return nil, err
		}
	}
	return r, nil
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

package rows

import (
	"errors"
	"maps"
	"slices"
	"sync"
)

// Dirty is a set of tenants whose transparency logs have leaves queued by
// this process since their last integration: the background integration
// loop visits only them. The zero value is an empty set; it is safe for
// concurrent use.
type Dirty struct {
	mu      sync.Mutex
	tenants map[string]struct{}
}

// Mark adds tenant to the set.
func (d *Dirty) Mark(tenant string) {
	d.mu.Lock()
	if d.tenants == nil {
		d.tenants = map[string]struct{}{}
	}
	d.tenants[tenant] = struct{}{}
	d.mu.Unlock()
}

// Take empties the set and returns its tenants, sorted.
func (d *Dirty) Take() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := slices.Sorted(maps.Keys(d.tenants))
	clear(d.tenants)
	return out
}

// Integrate takes the set and integrates each tenant's log with integrate,
// returning the heads of those that succeeded; a tenant whose integration
// fails is marked again, for the next call, and its error joined into the
// one returned.
func Integrate[H any](d *Dirty, integrate func(tenant string) (H, error)) (map[string]H, error) {
	heads := map[string]H{}
	var errs []error
	for _, tenant := range d.Take() {
		h, err := integrate(tenant)
		if err != nil {
			d.Mark(tenant)
			errs = append(errs, err)
			continue
		}
		heads[tenant] = h
	}
	return heads, errors.Join(errs...)
}

package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// TestRegistryResolvesTenantProtocols: NAME@VERSION names go to the
// resolver once per tenant and name; built-in names never do; a resolver's
// protocol must be valid and carry the name asked for.
func TestRegistryResolvesTenantProtocols(t *testing.T) {
	t.Parallel()
	builtin := validProtocol()
	reg, err := NewRegistry(builtin)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = reg.Resolve(ctx, "t1", "x@1")
	require.ErrorIs(t, err, debate.ErrNotFound, "without a resolver only registered protocols resolve")

	calls := map[string]int{}
	reg, err = NewResolvingRegistry(func(_ context.Context, tenant, name string) (*Protocol, error) {
		calls[tenant+"/"+name]++
		switch {
		case tenant == "t1" && name == "x@1":
			p := validProtocol()
			p.Name = name
			return p, nil
		case name == "bad@1":
			p := validProtocol()
			p.Name, p.Start = name, "nowhere"
			return p, nil
		case name == "other@1":
			return validProtocol(), nil
		case name == "down@1":
			return nil, errors.New("store down")
		}
		return nil, fmt.Errorf("%w: %s", debate.ErrNotFound, name)
	}, builtin)
	require.NoError(t, err)
	got, err := reg.Resolve(ctx, "t1", "p")
	require.NoError(t, err)
	require.Same(t, builtin, got)

	first, err := reg.Resolve(ctx, "t1", "x@1")
	require.NoError(t, err)
	again, err := reg.Resolve(ctx, "t1", "x@1")
	require.NoError(t, err)
	require.Same(t, first, again, "a tenant's protocol is resolved once")
	require.Equal(t, 1, calls["t1/x@1"])

	_, err = reg.Resolve(ctx, "t2", "x@1")
	require.ErrorIs(t, err, debate.ErrNotFound, "another tenant's protocol is not found")
	_, err = reg.Resolve(ctx, "t1", "y")
	require.ErrorIs(t, err, debate.ErrNotFound)
	require.Zero(t, calls["t1/y"], "a name without @ never reaches the resolver")
	_, err = reg.Resolve(ctx, "t1", "bad@1")
	require.ErrorIs(t, err, debate.ErrInvalid)
	_, err = reg.Resolve(ctx, "t1", "other@1")
	require.ErrorContains(t, err, "another protocol")
	_, err = reg.Resolve(ctx, "t1", "down@1")
	require.ErrorContains(t, err, "store down")
	require.False(t, errors.Is(err, debate.ErrNotFound))
	require.Len(t, reg.List(), 1, "resolved protocols are not listed as built-in")
}

package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/stretchr/testify/require"
)

var tenantModelCases = []struct {
	name string
	fn   func(t *testing.T, s Store)
}{
	{"TenantModels", testTenantModels},
}

// testTenantModels: set, replace, read and clear a tenant's model override.
func testTenantModels(t *testing.T, s Store) {
	ms, ok := s.(debate.TenantModelStore)
	if !ok {
		t.Skip("the store keeps no tenant models")
	}
	ctx := context.Background()
	_, tenant := NewTenant(t, s)
	_, err := ms.TenantModelGet(ctx, tenant)
	require.ErrorIs(t, err, debate.ErrNotFound)
	at := time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)
	require.NoError(t, ms.TenantModelSet(ctx, debate.TenantModel{TenantID: tenant, BaseURL: "http://a/v1", Model: "m1", APIKeyCiphertext: []byte{1, 2, 3}, UpdatedAt: at}))
	require.NoError(t, ms.TenantModelSet(ctx, debate.TenantModel{TenantID: tenant, BaseURL: "http://b/v1", Model: "m2", APIKeyCiphertext: []byte{4}, UpdatedAt: at}))
	got, err := ms.TenantModelGet(ctx, tenant)
	require.NoError(t, err)
	require.Equal(t, debate.TenantModel{TenantID: tenant, BaseURL: "http://b/v1", Model: "m2", APIKeyCiphertext: []byte{4}, UpdatedAt: at}, got)
	require.NoError(t, ms.TenantModelSet(ctx, debate.TenantModel{TenantID: tenant}))
	_, err = ms.TenantModelGet(ctx, tenant)
	require.ErrorIs(t, err, debate.ErrNotFound)
	require.ErrorIs(t, ms.TenantModelSet(ctx, debate.TenantModel{TenantID: "no-such-tenant", BaseURL: "http://a"}), debate.ErrNotFound)
}

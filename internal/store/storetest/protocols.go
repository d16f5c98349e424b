package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

var protocolCases = []struct {
	name string
	fn   func(t *testing.T, s Store)
}{
	{"ProtocolDocuments", testProtocolDocuments},
	{"ProtocolDocumentsIsolated", testProtocolDocumentsIsolated},
}

func protocolDoc(name string, version int, body string) debate.ProtocolDocument {
	sum := sha256.Sum256([]byte(body))
	return debate.ProtocolDocument{Name: name, Version: version, Document: []byte(body), SHA256: hex.EncodeToString(sum[:]),
		CreatedAt: time.Date(2026, 11, 26, 14, 0, 0, 123456789, time.UTC)}
}

// testProtocolDocuments: put, idempotent re-put, immutability, get by
// version and latest, list order.
func testProtocolDocuments(t *testing.T, s Store) {
	ps, ok := s.(debate.ProtocolStore)
	if !ok {
		t.Skip("the store keeps no protocol documents")
	}
	ctx, tenant := NewTenant(t, s)
	_, err := ps.ProtocolGet(ctx, "review", 0)
	require.ErrorIs(t, err, debate.ErrNotFound)

	v1 := protocolDoc("review", 1, `{"name":"review","version":1}`)
	got, created, err := ps.ProtocolPut(ctx, v1)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, tenant, got.TenantID)
	require.Equal(t, v1.CreatedAt.Truncate(time.Microsecond), got.CreatedAt)

	again, created, err := ps.ProtocolPut(ctx, protocolDoc("review", 1, `{"name":"review","version":1}`))
	require.NoError(t, err)
	require.False(t, created, "the same document again is not a new one")
	require.Equal(t, got, again)

	_, _, err = ps.ProtocolPut(ctx, protocolDoc("review", 1, `{"name":"review","version":1,"x":2}`))
	require.ErrorIs(t, err, debate.ErrAlreadyExists, "a version's document never changes")

	v2 := protocolDoc("review", 2, `{"name":"review","version":2}`)
	_, created, err = ps.ProtocolPut(ctx, v2)
	require.NoError(t, err)
	require.True(t, created)
	_, _, err = ps.ProtocolPut(ctx, protocolDoc("alpha", 7, `{"name":"alpha","version":7}`))
	require.NoError(t, err)

	latest, err := ps.ProtocolGet(ctx, "review", 0)
	require.NoError(t, err)
	require.Equal(t, 2, latest.Version)
	require.Equal(t, v2.Document, latest.Document)
	first, err := ps.ProtocolGet(ctx, "review", 1)
	require.NoError(t, err)
	require.Equal(t, got, first, "the stored document reads back byte for byte")
	_, err = ps.ProtocolGet(ctx, "review", 3)
	require.ErrorIs(t, err, debate.ErrNotFound)

	list, err := ps.ProtocolList(ctx)
	require.NoError(t, err)
	var refs []string
	for _, p := range list {
		refs = append(refs, p.Ref())
	}
	require.Equal(t, []string{"alpha@7", "review@1", "review@2"}, refs)

	_, _, err = ps.ProtocolPut(context.Background(), v1)
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = ps.ProtocolList(context.Background())
	require.ErrorIs(t, err, debate.ErrNoTenant)
}

// testProtocolDocumentsIsolated: another tenant neither sees nor blocks a
// tenant's documents.
func testProtocolDocumentsIsolated(t *testing.T, s Store) {
	ps, ok := s.(debate.ProtocolStore)
	if !ok {
		t.Skip("the store keeps no protocol documents")
	}
	ctxA, _ := NewTenant(t, s)
	ctxB, _ := NewTenant(t, s)
	_, _, err := ps.ProtocolPut(ctxA, protocolDoc("shared", 1, `{"a":1}`))
	require.NoError(t, err)
	_, err = ps.ProtocolGet(ctxB, "shared", 1)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = ps.ProtocolGet(ctxB, "shared", 0)
	require.ErrorIs(t, err, debate.ErrNotFound)
	list, err := ps.ProtocolList(ctxB)
	require.NoError(t, err)
	require.Empty(t, list)
	// The same name and version with another document is B's own.
	_, created, err := ps.ProtocolPut(ctxB, protocolDoc("shared", 1, `{"b":1}`))
	require.NoError(t, err)
	require.True(t, created)
	a, err := ps.ProtocolGet(ctxA, "shared", 1)
	require.NoError(t, err)
	require.JSONEq(t, `{"a":1}`, string(a.Document))
}

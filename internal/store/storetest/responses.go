package storetest

import (
	"context"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/stretchr/testify/require"
)

// ResponseCache is what a store offers the model-backed roles: persisted
// model responses.
type ResponseCache interface {
	ModelResponseGet(ctx context.Context, key string) ([]byte, bool, error)
	ModelResponsePut(ctx context.Context, key string, resp []byte) error
}

var responseCases = []struct {
	name string
	fn   func(t *testing.T, s Store)
}{
	{"ModelResponses", testModelResponses},
}

// testModelResponses: a response is found under its key by its tenant only;
// the first response stored under a key wins.
func testModelResponses(t *testing.T, s Store) {
	c, ok := s.(ResponseCache)
	if !ok {
		t.Skip("the store keeps no model responses")
	}
	a, _ := NewTenant(t, s)
	b, _ := NewTenant(t, s)
	_, found, err := c.ModelResponseGet(a, "debate-1/r1/advocate/0/0")
	require.NoError(t, err)
	require.False(t, found)
	require.NoError(t, c.ModelResponsePut(a, "debate-1/r1/advocate/0/0", []byte(`{"id":"first"}`)))
	require.NoError(t, c.ModelResponsePut(a, "debate-1/r1/advocate/0/0", []byte(`{"id":"second"}`)))
	got, found, err := c.ModelResponseGet(a, "debate-1/r1/advocate/0/0")
	require.NoError(t, err)
	require.True(t, found)
	require.JSONEq(t, `{"id":"first"}`, string(got))
	_, found, err = c.ModelResponseGet(b, "debate-1/r1/advocate/0/0")
	require.NoError(t, err)
	require.False(t, found, "another tenant sees nothing")
	_, _, err = c.ModelResponseGet(context.Background(), "k")
	require.ErrorIs(t, err, debate.ErrNoTenant)
}

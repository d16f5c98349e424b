package rules

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/store/storetest"
)

// TestIndexMemoised: the roles of one set index a (bundle, grading) pair
// once and share it; another grading of the same bundle gets its own
// index, and the cache stays bounded.
func TestIndexMemoised(t *testing.T) {
	t.Parallel()
	b := storetest.SampleBundle("0b7e6a52-3c1d-4f5e-8a9b-1c2d3e4f5a6b")
	g := sanad.Grade(b)
	c := &indexCache{}
	x := c.get(b, g)
	require.Same(t, x, c.get(b, g))
	require.Equal(t, len(b.Claims), len(x.claims))
	require.NotSame(t, x, c.get(b, sanad.Grade(b)), "another grading value")
	require.NotSame(t, x, c.get(b, nil))
	for i := range indexCacheLimit + 1 {
		c.get(storetest.SampleBundle(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)), nil)
	}
	require.LessOrEqual(t, len(c.m), indexCacheLimit)
}

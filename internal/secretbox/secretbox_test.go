package secretbox

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	b, err := New(bytes.Repeat([]byte("k"), 32))
	require.NoError(t, err)
	ct, err := b.Seal([]byte("sk-secret"), "tenant-model/a")
	require.NoError(t, err)
	require.NotContains(t, string(ct), "sk-secret")
	pt, err := b.Open(ct, "tenant-model/a")
	require.NoError(t, err)
	require.Equal(t, "sk-secret", string(pt))
	_, err = b.Open(ct, "tenant-model/b")
	require.ErrorIs(t, err, ErrOpen, "bound to its owner")
	ct[len(ct)-1] ^= 1
	_, err = b.Open(ct, "tenant-model/a")
	require.ErrorIs(t, err, ErrOpen, "tampering is detected")
	other, err := New(bytes.Repeat([]byte("x"), 32))
	require.NoError(t, err)
	ct2, _ := b.Seal([]byte("v"), "c")
	_, err = other.Open(ct2, "c")
	require.ErrorIs(t, err, ErrOpen)
	_, err = New([]byte("short"))
	require.Error(t, err)
	_, err = b.Open([]byte{1}, "c")
	require.ErrorIs(t, err, ErrOpen)
}

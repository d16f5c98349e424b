package ledger

import (
	"crypto/ed25519"
	"crypto/rand"
	mrand "math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignBatchMatchesEd25519: batches of every size up to 9, mixing keys
// and message lengths, sign byte for byte as crypto/ed25519 does, and the
// signatures verify.
func TestSignBatchMatchesEd25519(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	var privs []ed25519.PrivateKey
	var keys []*expandedKey
	for range 5 {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		require.NoError(t, err)
		k, err := expandKey(priv)
		require.NoError(t, err)
		privs, keys = append(privs, priv), append(keys, k)
	}
	for round := range 300 {
		n := 1 + round%9
		batchKeys := make([]*expandedKey, n)
		batchPrivs := make([]ed25519.PrivateKey, n)
		msgs := make([][]byte, n)
		for i := range n {
			j := rng.IntN(len(keys))
			batchKeys[i], batchPrivs[i] = keys[j], privs[j]
			msgs[i] = make([]byte, rng.IntN(100))
			_, _ = rand.Read(msgs[i])
		}
		sigs := signBatch(batchKeys, msgs)
		require.Len(t, sigs, n)
		for i := range n {
			require.Equal(t, ed25519.Sign(batchPrivs[i], msgs[i]), sigs[i], "round %d, signature %d of %d", round, i, n)
			require.True(t, ed25519.Verify(batchPrivs[i].Public().(ed25519.PublicKey), msgs[i], sigs[i]))
		}
	}
}

func TestExpandKeyRefusesShortKeys(t *testing.T) {
	_, err := expandKey(make([]byte, 32))
	require.Error(t, err)
}

func BenchmarkSignOneByOne(b *testing.B) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	msg := make([]byte, 32)
	for b.Loop() {
		for range 4 {
			ed25519.Sign(priv, msg)
		}
	}
}

func BenchmarkSignBatch4(b *testing.B) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	k, _ := expandKey(priv)
	keys := []*expandedKey{k, k, k, k}
	msg := make([]byte, 32)
	msgs := [][]byte{msg, msg, msg, msg}
	for b.Loop() {
		signBatch(keys, msgs)
	}
}

package ledger

import (
	"crypto/ed25519"
	"crypto/sha512"
	"fmt"

	"filippo.io/edwards25519"
	"filippo.io/edwards25519/field"
)

// expandedKey is an Ed25519 private key expanded for signing (RFC 8032
// §5.1.6 step 1): the clamped secret scalar, the nonce prefix and the
// encoded public key.
type expandedKey struct {
	s      *edwards25519.Scalar
	prefix [32]byte
	pub    [32]byte
}

func expandKey(priv ed25519.PrivateKey) (*expandedKey, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("ledger: private key of %d bytes", len(priv))
	}
	h := sha512.Sum512(priv.Seed())
	s, err := edwards25519.NewScalar().SetBytesWithClamping(h[:32])
	if err != nil {
		return nil, fmt.Errorf("ledger: expand key: %w", err)
	}
	k := &expandedKey{s: s}
	copy(k.prefix[:], h[32:])
	copy(k.pub[:], priv[32:])
	return k, nil
}

// signBatch signs msgs[i] with keys[i]: exactly the signatures
// ed25519.Sign makes (Ed25519 is deterministic), but the nonce points R
// are encoded together, with one field inversion for the batch instead of
// one per signature (Montgomery's trick), which is about a fifth of a
// signature's cost. The inversion is of public values (R is part of the
// signature), so sharing it reveals nothing.
func signBatch(keys []*expandedKey, msgs [][]byte) [][]byte {
	n := len(msgs)
	rs := make([]*edwards25519.Scalar, n)
	xs, ys, zs := make([]*field.Element, n), make([]*field.Element, n), make([]*field.Element, n)
	for i, k := range keys {
		h := sha512.New()
		h.Write(k.prefix[:])
		h.Write(msgs[i])
		var digest [64]byte
		r, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(digest[:0]))
		if err != nil {
			panic("ledger: 64-byte digest refused: " + err.Error()) // SetUniformBytes takes any 64 bytes
		}
		rs[i] = r
		R := new(edwards25519.Point).ScalarBaseMult(r)
		xs[i], ys[i], zs[i], _ = R.ExtendedCoordinates()
	}
	// acc[i] = z0·z1·…·zi; then walk back with the inverse of the product.
	acc := make([]field.Element, n)
	acc[0].Set(zs[0])
	for i := 1; i < n; i++ {
		acc[i].Multiply(&acc[i-1], zs[i])
	}
	var inv field.Element
	inv.Invert(&acc[n-1])
	sigs := make([][]byte, n)
	for i := n - 1; i >= 0; i-- {
		var zinv field.Element
		if i > 0 {
			zinv.Multiply(&inv, &acc[i-1])
			inv.Multiply(&inv, zs[i])
		} else {
			zinv.Set(&inv)
		}
		var x, y field.Element
		x.Multiply(xs[i], &zinv)
		y.Multiply(ys[i], &zinv)
		sig := make([]byte, 0, ed25519.SignatureSize)
		sig = append(sig, y.Bytes()...)
		sig[31] |= byte(x.IsNegative() << 7)

		h := sha512.New()
		h.Write(sig[:32])
		h.Write(keys[i].pub[:])
		h.Write(msgs[i])
		var digest [64]byte
		k, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(digest[:0]))
		if err != nil {
			panic("ledger: 64-byte digest refused: " + err.Error())
		}
		S := edwards25519.NewScalar().MultiplyAdd(k, keys[i].s, rs[i])
		sigs[i] = append(sig, S.Bytes()...)
	}
	return sigs
}

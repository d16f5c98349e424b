// Package secretbox encrypts small secrets at rest (tenants' model API
// keys) with AES-256-GCM under a key derived from a server secret, binding
// each ciphertext to its purpose and owner so it cannot be moved elsewhere.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// ErrOpen is returned for a ciphertext that does not decrypt under this
// box with the given context (wrong key, owner or tampering).
var ErrOpen = errors.New("secretbox: cannot open")

// Box seals and opens secrets.
type Box struct{ aead cipher.AEAD }

// New derives the box's key from secret (at least 32 bytes).
func New(secret []byte) (*Box, error) {
	if len(secret) < 32 {
		return nil, errors.New("secretbox: the secret must have at least 32 bytes")
	}
	key, err := hkdf.Key(sha256.New, secret, []byte("debated/secretbox/v1"), "tenant secrets", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext bound to context (e.g. "tenant-model/<tenant>").
func (b *Box) Seal(plaintext []byte, context string) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return b.aead.Seal(nonce, nonce, plaintext, []byte(context)), nil
}

// Open decrypts what Seal made for the same context. Returns ErrOpen
// otherwise.
func (b *Box) Open(ciphertext []byte, context string) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(ciphertext) < n+b.aead.Overhead() {
		return nil, ErrOpen
	}
	out, err := b.aead.Open(nil, ciphertext[:n], ciphertext[n:], []byte(context))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOpen, err) //nolint:errorlint // the cause is for logs only
	}
	return out, nil
}

package ledger

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// hkdfSalt separates ledger keys from any other use of the server secret.
// Changing it changes every key.
const hkdfSalt = "debated/ledger/v1"

// MinSecretLen is the shortest server secret NewKeyring accepts, in bytes.
const MinSecretLen = 32

// Sentinel errors of the keyring.
var (
	// ErrInvalidKeyring: NewKeyring was given no secret, a bad version name,
	// a short secret or a current version it does not hold.
	ErrInvalidKeyring = errors.New("ledger: invalid keyring")
	// ErrUnknownVersion: no secret of that version is in the keyring.
	ErrUnknownVersion = errors.New("ledger: unknown key version")
	// ErrInvalidName: a tenant id or an actor is empty, not UTF-8 or holds
	// a NUL byte, so no key is derived for it.
	ErrInvalidName = errors.New("ledger: invalid tenant or actor for a key")
)

// PublicKeyInfo is a public key and whom it belongs to. Its JSON form is
// {"public_key": base64, "tenant_id": …, "actor": …}.
type PublicKeyInfo struct {
	Key      ed25519.PublicKey `json:"public_key"`
	TenantID string            `json:"tenant_id"`
	Actor    string            `json:"actor"`
}

// Signer signs ledger events for one tenant and actor. Keyring.Signer
// returns one; tests and other key stores may provide their own.
type Signer interface {
	// KeyID names the key: "<version>:<fingerprint>".
	KeyID() string
	// PublicKeyInfo returns the public key and its tenant and actor.
	PublicKeyInfo() PublicKeyInfo
	// Sign returns the Ed25519 signature of digest (an event's raw hash).
	Sign(digest []byte) ([]byte, error)
}

// Keyring derives the ledger keys of every tenant and actor from versioned
// server secrets. The current version signs; every version verifies. It is
// safe for concurrent use, and it never prints, logs or returns a secret or
// a private key.
type Keyring struct {
	secrets  map[string][]byte
	current  string
	versions []string // sorted
}

// NewKeyring returns a keyring over secrets (version name → secret) that
// signs with the version current. Version names are 1 to 64 characters of
// [A-Za-z0-9._-]; secrets are at least MinSecretLen bytes and are copied.
// It returns an error wrapping ErrInvalidKeyring otherwise, or if current is
// not one of the versions.
func NewKeyring(secrets map[string][]byte, current string) (*Keyring, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: no secret", ErrInvalidKeyring)
	}
	k := &Keyring{secrets: make(map[string][]byte, len(secrets)), current: current}
	for v, s := range secrets {
		if !debate.IsKeyVersion(v) {
			return nil, fmt.Errorf("%w: version name %q: want 1-64 characters of [A-Za-z0-9._-]", ErrInvalidKeyring, v)
		}
		if len(s) < MinSecretLen {
			// The length of a secret is not secret enough to hide, its bytes are.
			return nil, fmt.Errorf("%w: secret of version %q has %d bytes, want at least %d", ErrInvalidKeyring, v, len(s), MinSecretLen)
		}
		k.secrets[v] = slices.Clone(s)
	}
	if _, ok := k.secrets[current]; !ok {
		return nil, fmt.Errorf("%w: current version %q has no secret", ErrInvalidKeyring, current)
	}
	k.versions = slices.Sorted(maps.Keys(k.secrets))
	return k, nil
}

// Current returns the version that signs.
func (k *Keyring) Current() string { return k.current }

// Versions returns every version, sorted.
func (k *Keyring) Versions() []string { return slices.Clone(k.versions) }

// Signer returns the signer of (tenantID, actor) under the current version.
// For a tenant or actor that no key can be derived for (see ErrInvalidName)
// the signer's Sign fails with ErrInvalidName; Seal refuses such events
// before signing anyway.
func (k *Keyring) Signer(tenantID, actor string) Signer {
	priv, err := k.derive(k.current, tenantID, actor)
	s := &keySigner{priv: priv, err: err, info: PublicKeyInfo{TenantID: tenantID, Actor: actor}}
	if err == nil {
		s.info.Key = priv.Public().(ed25519.PublicKey)
		s.id = keyID(k.current, s.info.Key)
		s.exp, s.err = expandKey(priv)
	}
	return s
}

// PublicKey returns the key id and public key of (tenantID, actor) under
// version. It returns ErrUnknownVersion for a version the keyring lacks and
// ErrInvalidName for an unusable tenant or actor.
func (k *Keyring) PublicKey(tenantID, actor, version string) (string, PublicKeyInfo, error) {
	priv, err := k.derive(version, tenantID, actor)
	if err != nil {
		return "", PublicKeyInfo{}, err
	}
	pub := priv.Public().(ed25519.PublicKey)
	return keyID(version, pub), PublicKeyInfo{Key: pub, TenantID: tenantID, Actor: actor}, nil
}

// PublicKeys returns the public keys of every version for the tenant's
// actors, by key id: what an export bundles so that events signed before a
// rotation still verify. Actors no key can be derived for are skipped (no
// event can have been signed by them).
func (k *Keyring) PublicKeys(tenantID string, actors []string) map[string]PublicKeyInfo {
	out := make(map[string]PublicKeyInfo, len(actors)*len(k.versions))
	for _, a := range actors {
		for _, v := range k.versions {
			id, info, err := k.PublicKey(tenantID, a, v)
			if err != nil {
				continue
			}
			out[id] = info
		}
	}
	return out
}

// String redacts the keyring: only the version names are shown. The
// formatting methods have value receivers so that a copied Keyring is
// redacted too.
func (k Keyring) String() string {
	return fmt.Sprintf("ledger.Keyring{current: %s, versions: %s}", k.current, strings.Join(k.versions, ","))
}

// GoString redacts the keyring for %#v.
func (k Keyring) GoString() string { return k.String() }

// Format redacts the keyring for every verb, so that no formatting of a
// Keyring can print its secrets.
func (k Keyring) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// LogValue redacts the keyring in slog records.
func (k Keyring) LogValue() slog.Value {
	return slog.GroupValue(slog.String("current", k.current), slog.Any("versions", k.versions))
}

func (k *Keyring) derive(version, tenantID, actor string) (ed25519.PrivateKey, error) {
	secret, ok := k.secrets[version]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownVersion, version)
	}
	if checkName(tenantID, true) != nil || checkName(actor, true) != nil {
		return nil, fmt.Errorf("%w: tenant %q actor %q", ErrInvalidName, tenantID, actor)
	}
	seed, err := hkdf.Key(sha256.New, secret, []byte(hkdfSalt), tenantID+"\x00"+actor, ed25519.SeedSize)
	if err != nil {
		// Unreachable: 32 bytes is far below HKDF-SHA256's output limit.
		return nil, fmt.Errorf("ledger: derive key: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// keyID is "<version>:<first 16 hex digits of SHA-256(public key)>".
func keyID(version string, pub ed25519.PublicKey) string {
	return version + ":" + fingerprint(pub)
}

func fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// keySigner is the Signer of a Keyring. It holds the private key and redacts
// it from every formatting.
type keySigner struct {
	id   string
	info PublicKeyInfo
	priv ed25519.PrivateKey
	exp  *expandedKey // priv expanded, for signBatch
	err  error
}

func (s *keySigner) KeyID() string { return s.id }

func (s *keySigner) PublicKeyInfo() PublicKeyInfo {
	info := s.info
	info.Key = slices.Clone(info.Key)
	return info
}

func (s *keySigner) Sign(digest []byte) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	return ed25519.Sign(s.priv, digest), nil
}

func (s *keySigner) String() string {
	return fmt.Sprintf("ledger.Signer{key_id: %s, tenant_id: %s, actor: %s}", s.id, s.info.TenantID, s.info.Actor)
}

func (s *keySigner) GoString() string { return s.String() }

func (s *keySigner) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

func (s *keySigner) LogValue() slog.Value {
	return slog.GroupValue(slog.String("key_id", s.id), slog.String("tenant_id", s.info.TenantID), slog.String("actor", s.info.Actor))
}

package tlog

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/transparency-dev/formats/log"
	"golang.org/x/mod/sumdb/note"

	"github.com/debated/debated/internal/debate"
)

// Sentinel errors of checkpoints and their keys.
var (
	// ErrInvalidKeyring: NewKeyring was given no secret, a bad version or
	// key name, a short secret or a current version it does not hold.
	ErrInvalidKeyring = errors.New("tlog: invalid checkpoint keyring")
	// ErrInvalidCheckpoint: a checkpoint that does not parse, is signed by
	// no trusted key, or names another log.
	ErrInvalidCheckpoint = errors.New("tlog: invalid checkpoint")
)

// MinSecretLen is the shortest checkpoint secret NewKeyring accepts.
const MinSecretLen = 32

// hkdfSalt separates checkpoint keys from any other use of the secrets.
const hkdfSalt = "debated/checkpoint/v1"

// TenantOrigin returns the origin line of a tenant's log:
// "<base>/tenants/<tenant id>".
func TenantOrigin(base, tenantID string) string { return base + "/tenants/" + tenantID }

// Checkpoint is a tenant's log at a size: the body of a C2SP
// tlog-checkpoint ("<origin>\n<size>\n<base64 root>\n").
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   []byte
}

// Body returns the checkpoint's note text.
func (c Checkpoint) Body() []byte {
	return log.Checkpoint{Origin: c.Origin, Size: c.Size, Hash: c.Root}.Marshal()
}

// Keyring signs checkpoints with Ed25519 keys derived from versioned
// secrets (as ledger.Keyring derives the ledger's): the current version
// signs, every version verifies. It never prints or returns a secret.
type Keyring struct {
	name     string
	current  string
	versions []string // sorted
	signers  map[string]note.Signer
	vkeys    map[string]string // version → verifier key
	pubs     map[string]ed25519.PublicKey
}

// NewKeyring returns a keyring whose keys are named name (the note key
// name: the deployment's log origin base, no spaces or '+') over secrets
// (version → secret of at least MinSecretLen bytes), signing with
// current. Returns an error wrapping ErrInvalidKeyring otherwise.
func NewKeyring(name string, secrets map[string][]byte, current string) (*Keyring, error) {
	if name == "" || strings.ContainsAny(name, "+ \t\n\r") {
		return nil, fmt.Errorf("%w: key name %q: want a non-empty name without spaces or '+'", ErrInvalidKeyring, name)
	}
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: no secret", ErrInvalidKeyring)
	}
	k := &Keyring{name: name, current: current, signers: map[string]note.Signer{}, vkeys: map[string]string{}, pubs: map[string]ed25519.PublicKey{}}
	for v, secret := range secrets {
		if !debate.IsKeyVersion(v) {
			return nil, fmt.Errorf("%w: version name %q: want 1-64 characters of [A-Za-z0-9._-]", ErrInvalidKeyring, v)
		}
		if len(secret) < MinSecretLen {
			return nil, fmt.Errorf("%w: secret of version %q has %d bytes, want at least %d", ErrInvalidKeyring, v, len(secret), MinSecretLen)
		}
		seed, err := hkdf.Key(sha256.New, secret, []byte(hkdfSalt), "checkpoint", ed25519.SeedSize)
		if err != nil {
			return nil, fmt.Errorf("tlog: derive key: %w", err)
		}
		priv := ed25519.NewKeyFromSeed(seed)
		pub := priv.Public().(ed25519.PublicKey)
		vkey, err := note.NewEd25519VerifierKey(name, pub)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidKeyring, err)
		}
		verifier, err := note.NewVerifier(vkey)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidKeyring, err)
		}
		skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", name, verifier.KeyHash(),
			base64.StdEncoding.EncodeToString(append([]byte{1}, seed...)))
		signer, err := note.NewSigner(skey)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidKeyring, err)
		}
		k.signers[v], k.vkeys[v], k.pubs[v] = signer, vkey, pub
	}
	if _, ok := k.signers[current]; !ok {
		return nil, fmt.Errorf("%w: current version %q has no secret", ErrInvalidKeyring, current)
	}
	k.versions = slices.Sorted(maps.Keys(k.signers))
	return k, nil
}

// Name returns the keys' note name.
func (k *Keyring) Name() string { return k.name }

// Current returns the version that signs.
func (k *Keyring) Current() string { return k.current }

// VerifierKey returns the current key's C2SP verifier key,
// "<name>+<hash>+<base64 key>": what a witness pins.
func (k *Keyring) VerifierKey() string { return k.vkeys[k.current] }

// VerifierKeys returns the verifier keys of every version, sorted by
// version.
func (k *Keyring) VerifierKeys() []string {
	out := make([]string, 0, len(k.versions))
	for _, v := range k.versions {
		out = append(out, k.vkeys[v])
	}
	return out
}

// PublicKeys returns every version's public key, as the deployment
// publishes them (GetSigningKeys).
func (k *Keyring) PublicKeys() []debate.PublicKey {
	out := make([]debate.PublicKey, 0, len(k.versions))
	for _, v := range k.versions {
		s := k.signers[v]
		out = append(out, debate.PublicKey{
			Kind:            debate.KeyCheckpoint,
			KeyID:           fmt.Sprintf("%s+%08x", s.Name(), s.KeyHash()),
			Version:         v,
			Key:             slices.Clone(k.pubs[v]),
			Current:         v == k.current,
			NoteVerifierKey: k.vkeys[v],
		})
	}
	return out
}

// Sign returns c as a signed note, signed by the current key. Ed25519 is
// deterministic: the same checkpoint signs to the same bytes.
func (k *Keyring) Sign(c Checkpoint) ([]byte, error) {
	if len(c.Root) != HashSize || c.Origin == "" {
		return nil, fmt.Errorf("%w: origin %q, root of %d bytes", ErrInvalidCheckpoint, c.Origin, len(c.Root))
	}
	signed, err := note.Sign(&note.Note{Text: string(c.Body())}, k.signers[k.current])
	if err != nil {
		return nil, fmt.Errorf("tlog: sign checkpoint: %w", err)
	}
	return signed, nil
}

// Open parses a signed checkpoint of the log origin, checking that one of
// the verifier keys vkeys signed it. Returns an error wrapping
// ErrInvalidCheckpoint if it does not parse, names another origin, or
// carries no valid signature of those keys.
func Open(signed []byte, origin string, vkeys ...string) (Checkpoint, error) {
	if len(vkeys) == 0 {
		return Checkpoint{}, fmt.Errorf("%w: no verifier key", ErrInvalidCheckpoint)
	}
	var last error
	for _, vk := range vkeys {
		v, err := note.NewVerifier(vk)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("%w: verifier key %q: %w", ErrInvalidCheckpoint, vk, err)
		}
		cp, _, _, err := log.ParseCheckpoint(signed, origin, v)
		if err != nil {
			last = err
			continue
		}
		if len(cp.Hash) != HashSize {
			return Checkpoint{}, fmt.Errorf("%w: root of %d bytes", ErrInvalidCheckpoint, len(cp.Hash))
		}
		return Checkpoint{Origin: cp.Origin, Size: cp.Size, Root: cp.Hash}, nil
	}
	return Checkpoint{}, fmt.Errorf("%w: %w", ErrInvalidCheckpoint, last)
}

// ParseUnverified reads a signed checkpoint's body without checking any
// signature: only to learn its origin before choosing how to verify it.
func ParseUnverified(signed []byte) (Checkpoint, error) {
	body, _, ok := bytes.Cut(signed, []byte("\n\n"))
	if !ok {
		return Checkpoint{}, fmt.Errorf("%w: not a signed note", ErrInvalidCheckpoint)
	}
	var cp log.Checkpoint
	if _, err := cp.Unmarshal(append(body, '\n')); err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrInvalidCheckpoint, err)
	}
	return Checkpoint{Origin: cp.Origin, Size: cp.Size, Root: cp.Hash}, nil
}

// String redacts the keyring (only names and versions).
func (k Keyring) String() string {
	return fmt.Sprintf("tlog.Keyring{name: %s, current: %s, versions: %s}", k.name, k.current, strings.Join(k.versions, ","))
}

// GoString redacts the keyring for %#v.
func (k Keyring) GoString() string { return k.String() }

// Format redacts the keyring for every verb.
func (k Keyring) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// LogValue redacts the keyring in slog records.
func (k Keyring) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", k.name), slog.String("current", k.current), slog.Any("versions", k.versions))
}

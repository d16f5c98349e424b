package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// FormatV1 is the Format of a bundle of this package.
const FormatV1 = "debated.ledger.v1"

// ErrInvalidBundle: a bundle cannot be parsed or marshalled (malformed JSON,
// an unknown member, an unknown format, a missing debate or tenant id).
var ErrInvalidBundle = errors.New("ledger: invalid bundle")

// Bundle is the export of one debate's ledger: its events, the public keys
// of every key id that may have signed them, and the policy it ran under, so
// that `debatectl verify` can check it offline.
//
// A bundle proves its own consistency only: whoever rewrites the events can
// rewrite the keys too. Authenticity needs the key ids and public keys to be
// compared with the ones the server publishes for the tenant.
type Bundle struct {
	Format   string `json:"format"`
	DebateID string `json:"debate_id"`
	TenantID string `json:"tenant_id"`
	// Protocol names the protocol the debate ran (Debate.Protocol), whose
	// published policy a verifier with trusted keys compares Policy with.
	// Bundles exported before it existed omit it.
	Protocol   string                   `json:"protocol,omitempty"`
	Events     []Event                  `json:"events"`
	PublicKeys map[string]PublicKeyInfo `json:"public_keys"`
	Policy     Policy                   `json:"policy"`
	// Log, when present, proves the last event in the tenant's
	// transparency log (docs/transparency.md). Bundles exported before the
	// log existed have none; they verify, with the log unchecked.
	Log *BundleLog `json:"log,omitempty"`
}

// BundleLog is a bundle's proof that its last event is a head the tenant's
// transparency log recorded: the inclusion proof of the leaf (kind "step",
// the debate id, the last event's seq and hash) in a signed checkpoint.
// Package ledger only carries it; debatectl checks it.
type BundleLog struct {
	// Checkpoint is the signed checkpoint (a C2SP signed note) the proof is
	// against.
	Checkpoint string `json:"checkpoint"`
	// LeafIndex is the leaf's index in the log.
	LeafIndex uint64 `json:"leaf_index"`
	// InclusionProof is the RFC 9162 inclusion proof, from the leaf's
	// sibling up (base64 in JSON).
	InclusionProof [][]byte `json:"inclusion_proof"`
	// DebateStatus is the debate's status when it was exported: a bundle
	// of a terminal debate must end with its terminal event.
	DebateStatus string `json:"debate_status"`
}

// NewBundle returns a bundle of format FormatV1 over the given values (not
// copied).
func NewBundle(debateID, tenantID string, events []Event, keys map[string]PublicKeyInfo, policy Policy) *Bundle {
	return &Bundle{
		Format:     FormatV1,
		DebateID:   debateID,
		TenantID:   tenantID,
		Events:     events,
		PublicKeys: keys,
		Policy:     policy,
	}
}

// Actors returns the distinct actors of events, sorted: the actors whose
// public keys an export bundles (see Keyring.PublicKeys).
func Actors(events []Event) []string {
	var out []string
	for i := range events {
		out = append(out, events[i].Actor)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MarshalBundle returns the JSON form of b. An empty Format is written as
// FormatV1; it returns an error wrapping ErrInvalidBundle for another format
// or a missing debate or tenant id.
func MarshalBundle(b *Bundle) ([]byte, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: nil bundle", ErrInvalidBundle)
	}
	c := *b
	if c.Format == "" {
		c.Format = FormatV1
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	if c.Events == nil {
		c.Events = []Event{}
	}
	if c.PublicKeys == nil {
		c.PublicKeys = map[string]PublicKeyInfo{}
	}
	data, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidBundle, err)
	}
	return data, nil
}

// ParseBundle parses the JSON form of a bundle strictly: unknown members,
// trailing data, a format other than FormatV1 and a missing debate or tenant
// id are errors wrapping ErrInvalidBundle. It never panics; what the events
// say is left to VerifyBundle.
func ParseBundle(data []byte) (*Bundle, error) {
	return parseStrict(data, (*Bundle).check)
}

// parseStrict decodes one JSON bundle of type T from data: unknown
// members and trailing data are errors wrapping ErrInvalidBundle, and the
// result must pass check.
func parseStrict[T any](data []byte, check func(*T) error) (*T, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b T
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidBundle, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the bundle", ErrInvalidBundle)
	}
	if err := check(&b); err != nil {
		return nil, err
	}
	return &b, nil
}

func (b *Bundle) check() error {
	switch {
	case b.Format != FormatV1:
		return fmt.Errorf("%w: format %q, want %q", ErrInvalidBundle, b.Format, FormatV1)
	case b.DebateID == "":
		return fmt.Errorf("%w: no debate_id", ErrInvalidBundle)
	case b.TenantID == "":
		return fmt.Errorf("%w: no tenant_id", ErrInvalidBundle)
	}
	return nil
}

// VerifyBundle verifies the bundle's events with its public keys and policy,
// as Verify does, and checks that every event belongs to the bundle's debate
// and tenant. A nil bundle, or one ParseBundle would refuse, gives a report
// that is not OK with one RuleMalformed problem at seq 0 (FirstBadSeq 0: no
// event is to blame). It never panics.
func VerifyBundle(b *Bundle) Report {
	if b == nil {
		return Report{Problems: []Problem{{Rule: RuleMalformed, Detail: "no bundle"}}}
	}
	if err := b.check(); err != nil {
		return Report{Problems: []Problem{{Rule: RuleMalformed, Detail: err.Error()}}}
	}
	c := newChecker(b.PublicKeys, b.Policy)
	c.scope(b.DebateID, b.TenantID)
	return c.run(b.Events)
}

// HasTerminal reports whether events hold one of policy's terminal event
// types: a debate whose status is terminal must (Verify checks that only
// bookkeeping follows it).
func HasTerminal(events []Event, policy Policy) bool {
	for i := range events {
		if slices.Contains(policy.Terminal, events[i].Type) {
			return true
		}
	}
	return false
}

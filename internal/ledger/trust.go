package ledger

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/debated/debated/internal/debate"
)

// Rules of the checks against trusted keys (VerifyBundleTrusted).
const (
	// RuleUntrustedKey: an event names a key id that the trusted keys do not
	// hold, or the bundle carries a public key for an id that differs from
	// the trusted one, or the bundle is of another tenant than the keys.
	RuleUntrustedKey = "untrusted_key"
	// RulePolicy: the bundle names no protocol, a protocol the trusted file
	// has no policy for, or carries a policy other than the protocol's.
	RulePolicy = "policy"
)

// Trust is what a verifier holds from outside a bundle: the public keys the
// operator publishes for a tenant (GetSigningKeys) and the policy of every
// protocol. A bundle verified against a Trust proves its origin, not only
// its integrity.
type Trust struct {
	// TenantID is the tenant the keys belong to.
	TenantID string
	// Keys maps a key id to its public key and actor (TenantID is the
	// Trust's).
	Keys map[string]PublicKeyInfo
	// Policies maps a protocol name to its policy.
	Policies map[string]Policy
}

// Published returns the ledger public keys of tenantID for every actor
// under every version of k, sorted by actor then version: what the
// deployment publishes for the tenant. Actors no key can be derived for are
// skipped.
func (k *Keyring) Published(tenantID string, actors []string) []debate.PublicKey {
	actors = slices.Sorted(slices.Values(actors))
	actors = slices.Compact(actors)
	out := make([]debate.PublicKey, 0, len(actors)*len(k.versions))
	for _, a := range actors {
		for _, v := range k.versions {
			id, info, err := k.PublicKey(tenantID, a, v)
			if err != nil {
				continue
			}
			out = append(out, debate.PublicKey{
				Kind:    debate.KeyLedger,
				KeyID:   id,
				Version: v,
				Actor:   a,
				Key:     slices.Clone(info.Key),
				Current: v == k.current,
			})
		}
	}
	return out
}

// TrustFromPublished builds the Trust of tenantID from published keys
// (ledger keys only; checkpoint keys are skipped) and policies by protocol.
// It returns an error if a ledger key is not 32 bytes or does not match its
// key id, so that a damaged trusted file is refused rather than trusted.
func TrustFromPublished(tenantID string, keys []debate.PublicKey, policies map[string]Policy) (Trust, error) {
	t := Trust{TenantID: tenantID, Keys: map[string]PublicKeyInfo{}, Policies: maps.Clone(policies)}
	if t.Policies == nil {
		t.Policies = map[string]Policy{}
	}
	for _, k := range keys {
		if k.Kind != debate.KeyLedger {
			continue
		}
		if len(k.Key) != ed25519.PublicKeySize {
			return Trust{}, fmt.Errorf("trusted key %s has %d bytes, want %d", k.KeyID, len(k.Key), ed25519.PublicKeySize)
		}
		if keyID(k.Version, k.Key) != k.KeyID {
			return Trust{}, fmt.Errorf("trusted key %s does not match its id (want %s)", k.KeyID, keyID(k.Version, k.Key))
		}
		t.Keys[k.KeyID] = PublicKeyInfo{Key: slices.Clone(k.Key), TenantID: tenantID, Actor: k.Actor}
	}
	return t, nil
}

// VerifyBundleTrusted verifies b as VerifyBundle does, but with the trusted
// keys and the trusted policy of the bundle's protocol instead of the ones
// the bundle carries, and reports, naming the key or the protocol:
//
//   - RuleUntrustedKey at seq 0 if the bundle is of another tenant than the
//     trusted keys, or carries a public key for a key id that differs from
//     the trusted one;
//   - RuleKeyID at an event's seq if the event names a key id the trusted
//     keys do not hold (a bundle re-signed with other keys);
//   - RulePolicy at seq 0 if the bundle names no protocol or one without a
//     trusted policy, or carries a policy that differs from it.
//
// Bundle-level problems come first and leave FirstBadSeq 0 when no event is
// to blame. It never panics.
func VerifyBundleTrusted(b *Bundle, t Trust) Report {
	if b == nil {
		return Report{Problems: []Problem{{Rule: RuleMalformed, Detail: "no bundle"}}}
	}
	if err := b.check(); err != nil {
		return Report{Problems: []Problem{{Rule: RuleMalformed, Detail: err.Error()}}}
	}
	var pre []Problem
	if b.TenantID != t.TenantID {
		pre = append(pre, Problem{Rule: RuleUntrustedKey, Detail: fmt.Sprintf("the bundle is of tenant %q, the trusted keys of tenant %q", b.TenantID, t.TenantID)})
	}
	for _, id := range slices.Sorted(maps.Keys(b.PublicKeys)) {
		trusted, ok := t.Keys[id]
		if ok && !bytes.Equal(trusted.Key, b.PublicKeys[id].Key) {
			pre = append(pre, Problem{Rule: RuleUntrustedKey, Detail: fmt.Sprintf("the bundle's public key of %s differs from the trusted key", id)})
		}
	}
	policy, ok := t.Policies[b.Protocol]
	switch {
	case b.Protocol == "":
		pre = append(pre, Problem{Rule: RulePolicy, Detail: "the bundle names no protocol, so its policy cannot be checked"})
	case !ok:
		pre = append(pre, Problem{Rule: RulePolicy, Detail: fmt.Sprintf("no trusted policy for protocol %q", b.Protocol)})
	case !PolicyEqual(policy, b.Policy):
		pre = append(pre, Problem{Rule: RulePolicy, Detail: fmt.Sprintf("the bundle's policy differs from the published policy of protocol %q", b.Protocol)})
	}
	if !ok {
		policy = b.Policy // still check the events' order under something
	}
	c := newChecker(t.Keys, policy)
	c.trusted = true
	c.scope(b.DebateID, b.TenantID)
	r := c.run(b.Events)
	if len(pre) == 0 {
		return r
	}
	r.OK = false
	r.Problems = append(pre, r.Problems...)
	return r
}

// PolicyEqual reports whether a and b apply the same rules: the same role
// guard (actor lists compared as sets), strictness, bookkeeping and
// terminal types (as sets) and minimum claim executions.
func PolicyEqual(a, b Policy) bool {
	na, nb := normalPolicy(a), normalPolicy(b)
	if na.StrictRoles != nb.StrictRoles || na.MinClaimExecutions != nb.MinClaimExecutions ||
		!slices.Equal(na.Bookkeeping, nb.Bookkeeping) || !slices.Equal(na.Terminal, nb.Terminal) ||
		len(na.RoleGuard) != len(nb.RoleGuard) {
		return false
	}
	for typ, actors := range na.RoleGuard {
		other, ok := nb.RoleGuard[typ]
		if !ok || !slices.Equal(actors, other) {
			return false
		}
	}
	return true
}

// normalPolicy sorts and deduplicates p's lists.
func normalPolicy(p Policy) Policy {
	set := func(xs []string) []string {
		xs = slices.Clone(xs)
		sort.Strings(xs)
		return slices.Compact(xs)
	}
	out := Policy{StrictRoles: p.StrictRoles, MinClaimExecutions: p.MinClaimExecutions,
		Bookkeeping: set(p.Bookkeeping), Terminal: set(p.Terminal), RoleGuard: map[string][]string{}}
	for typ, actors := range p.RoleGuard {
		out.RoleGuard[typ] = set(actors)
	}
	return out
}

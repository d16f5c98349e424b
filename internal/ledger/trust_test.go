package ledger

import (
	"strings"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/stretchr/testify/require"
)

// trustedBundle returns a genuine bundle of agentFlow under agentPolicy for
// protocol "agent.protocol.v1" and the Trust the operator would publish.
func trustedBundle(t *testing.T, f *fixture) (*Bundle, Trust) {
	t.Helper()
	es := f.chain(t, agentFlow()...)
	b := NewBundle(f.debate, f.tenant, es, f.kr.PublicKeys(f.tenant, Actors(es)), agentPolicy())
	b.Protocol = "agent.protocol.v1"
	trust, err := TrustFromPublished(f.tenant, f.kr.Published(f.tenant, Actors(es)),
		map[string]Policy{"agent.protocol.v1": agentPolicy()})
	require.NoError(t, err)
	return b, trust
}

// resign seals b's events again with another keyring: a forger's bundle
// with its key ids and public keys recomputed, consistent in itself.
func resign(t *testing.T, b *Bundle) *Bundle {
	t.Helper()
	forger, err := NewKeyring(map[string][]byte{"v1": testSecret("forger")}, "v1")
	require.NoError(t, err)
	out := *b
	out.Events = make([]Event, len(b.Events))
	var prev *Event
	for i, e := range b.Events {
		out.Events[i], err = Seal(prev, e, forger.Signer(e.TenantID, e.Actor))
		require.NoError(t, err)
		prev = &out.Events[i]
	}
	out.PublicKeys = forger.PublicKeys(b.TenantID, Actors(out.Events))
	return &out
}

func problemOf(r Report, rule string) (Problem, bool) {
	for _, p := range r.Problems {
		if p.Rule == rule {
			return p, true
		}
	}
	return Problem{}, false
}

func TestVerifyBundleTrusted(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b, trust := trustedBundle(t, f)
	requireOK(t, VerifyBundle(b))
	requireOK(t, VerifyBundleTrusted(b, trust))

	t.Run("re-signed with other keys", func(t *testing.T) {
		t.Parallel()
		forged := resign(t, b)
		requireOK(t, VerifyBundle(forged)) // integrity alone cannot tell
		r := VerifyBundleTrusted(forged, trust)
		requireBad(t, r, 1, RuleKeyID)
		p, _ := problemOf(r, RuleKeyID)
		require.Contains(t, p.Detail, forged.Events[0].KeyID)
		require.Contains(t, p.Detail, "not among the trusted keys")
	})
	t.Run("bundle key differs under a trusted id", func(t *testing.T) {
		t.Parallel()
		forged := resign(t, b)
		id := b.Events[0].KeyID
		forged.PublicKeys = map[string]PublicKeyInfo{id: forged.PublicKeys[forged.Events[0].KeyID]}
		r := VerifyBundleTrusted(forged, trust)
		require.False(t, r.OK)
		p, ok := problemOf(r, RuleUntrustedKey)
		require.True(t, ok, "%+v", r.Problems)
		require.Contains(t, p.Detail, id)
	})
	t.Run("edited policy", func(t *testing.T) {
		t.Parallel()
		edited := *b
		// Anyone may now emit anything: the role guard is gone.
		edited.Policy = agentPolicy()
		edited.Policy.RoleGuard, edited.Policy.StrictRoles = nil, false
		requireOK(t, VerifyBundle(&edited))
		r := VerifyBundleTrusted(&edited, trust)
		require.False(t, r.OK)
		require.Zero(t, r.FirstBadSeq, "no event is to blame")
		p, ok := problemOf(r, RulePolicy)
		require.True(t, ok, "%+v", r.Problems)
		require.Contains(t, p.Detail, "agent.protocol.v1")
	})
	t.Run("policy of another protocol", func(t *testing.T) {
		t.Parallel()
		other := *b
		other.Protocol = "other.v1"
		_, ok := problemOf(VerifyBundleTrusted(&other, trust), RulePolicy)
		require.True(t, ok)
		other.Protocol = ""
		p, ok := problemOf(VerifyBundleTrusted(&other, trust), RulePolicy)
		require.True(t, ok)
		require.Contains(t, p.Detail, "names no protocol")
	})
	t.Run("another tenant's keys", func(t *testing.T) {
		t.Parallel()
		t2, err := TrustFromPublished("tenant-b", f.kr.Published("tenant-b", Actors(b.Events)), trust.Policies)
		require.NoError(t, err)
		r := VerifyBundleTrusted(b, t2)
		_, ok := problemOf(r, RuleUntrustedKey)
		require.True(t, ok)
		requireBad(t, r, 1, RuleKeyID)
	})
	t.Run("reordered actor lists are the same policy", func(t *testing.T) {
		t.Parallel()
		p := agentPolicy()
		for typ, actors := range p.RoleGuard {
			rev := append([]string(nil), actors...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			p.RoleGuard[typ] = rev
		}
		require.True(t, PolicyEqual(agentPolicy(), p))
		p.StrictRoles = !p.StrictRoles
		require.False(t, PolicyEqual(agentPolicy(), p))
	})
}

func TestTrustFromPublishedRefusesDamagedKeys(t *testing.T) {
	t.Parallel()
	f := setup(t)
	keys := f.kr.Published(f.tenant, []string{"advocate", "engine"})
	require.Len(t, keys, 2)
	require.True(t, keys[0].Current)
	require.Equal(t, "advocate", keys[0].Actor)
	require.True(t, strings.HasPrefix(keys[0].KeyID, "v1:"))

	bad := append([]debate.PublicKey(nil), keys...)
	bad[0].Key = append([]byte(nil), keys[1].Key...)
	_, err := TrustFromPublished(f.tenant, bad, nil)
	require.ErrorContains(t, err, keys[0].KeyID)
	bad[0].Key = bad[0].Key[:31]
	_, err = TrustFromPublished(f.tenant, bad, nil)
	require.ErrorContains(t, err, "31 bytes")
	// Checkpoint keys are not ledger keys.
	cp := append(keys, debate.PublicKey{Kind: debate.KeyCheckpoint, KeyID: "example.com/log", Key: []byte{1}})
	tr, err := TrustFromPublished(f.tenant, cp, nil)
	require.NoError(t, err)
	require.Len(t, tr.Keys, 2)
}

package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewKeyringRejects(t *testing.T) {
	t.Parallel()
	s := testSecret("s")
	cases := []struct {
		name    string
		secrets map[string][]byte
		current string
	}{
		{"no secret", nil, "v1"},
		{"current missing", map[string][]byte{"v1": s}, "v2"},
		{"short secret", map[string][]byte{"v1": s[:31]}, "v1"},
		{"short old secret", map[string][]byte{"v1": s, "v0": []byte("short")}, "v1"},
		{"empty version", map[string][]byte{"": s}, ""},
		{"version with a colon", map[string][]byte{"v:1": s}, "v:1"},
		{"version with a space", map[string][]byte{"v 1": s}, "v 1"},
		{"long version", map[string][]byte{strings.Repeat("v", 65): s}, strings.Repeat("v", 65)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewKeyring(tc.secrets, tc.current)
			require.ErrorIs(t, err, ErrInvalidKeyring)
			require.NotContains(t, err.Error(), string(s), "errors never carry a secret")
		})
	}
}

func TestKeyringDerivation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	id, info, err := f.kr.PublicKey("tenant-a", "advocate", "v1")
	require.NoError(t, err)
	require.Equal(t, PublicKeyInfo{Key: info.Key, TenantID: "tenant-a", Actor: "advocate"}, info)
	sum := sha256.Sum256(info.Key)
	require.Equal(t, "v1:"+hex.EncodeToString(sum[:8]), id)

	s := f.kr.Signer("tenant-a", "advocate")
	require.Equal(t, id, s.KeyID())
	require.Equal(t, info, s.PublicKeyInfo())

	// Every (tenant, actor) has its own key, and the NUL separator keeps
	// tenant and actor apart.
	seen := map[string]string{}
	for _, ta := range [][2]string{
		{"tenant-a", "advocate"}, {"tenant-a", "arbiter"}, {"tenant-b", "advocate"},
		{"tenant-a", "advocatex"}, {"tenant-ax", "advocate"}, {"a", "bc"}, {"ab", "c"},
	} {
		id, _, err := f.kr.PublicKey(ta[0], ta[1], "v1")
		require.NoError(t, err)
		require.NotContains(t, seen, id, "%v collides with %s", ta, seen[id])
		seen[id] = ta[0] + "/" + ta[1]
	}

	// Another secret, other keys; the same secret, the same keys.
	other, err := NewKeyring(map[string][]byte{"v1": testSecret("other")}, "v1")
	require.NoError(t, err)
	oid, _, err := other.PublicKey("tenant-a", "advocate", "v1")
	require.NoError(t, err)
	require.NotEqual(t, id, oid)
	again, err := NewKeyring(map[string][]byte{"v1": testSecret("v1")}, "v1")
	require.NoError(t, err)
	aid, _, err := again.PublicKey("tenant-a", "advocate", "v1")
	require.NoError(t, err)
	require.Equal(t, id, aid)

	_, _, err = f.kr.PublicKey("tenant-a", "advocate", "v2")
	require.ErrorIs(t, err, ErrUnknownVersion)
	_, _, err = f.kr.PublicKey("", "advocate", "v1")
	require.ErrorIs(t, err, ErrInvalidName)
	_, _, err = f.kr.PublicKey("tenant-a", "a\x00b", "v1")
	require.ErrorIs(t, err, ErrInvalidName)
	_, err = f.kr.Signer("tenant-a", "").Sign(make([]byte, 32))
	require.ErrorIs(t, err, ErrInvalidName)

	keys := f.kr.PublicKeys("tenant-a", []string{"advocate", "", "arbiter"})
	require.Len(t, keys, 2, "an unusable actor is skipped")
}

func TestKeyringCopiesSecrets(t *testing.T) {
	t.Parallel()
	secret := testSecret("v1")
	kr, err := NewKeyring(map[string][]byte{"v1": secret}, "v1")
	require.NoError(t, err)
	id, _, err := kr.PublicKey("t", "a", "v1")
	require.NoError(t, err)
	clear(secret)
	id2, _, err := kr.PublicKey("t", "a", "v1")
	require.NoError(t, err)
	require.Equal(t, id, id2)
}

// TestKeyRotation seals with v1, rotates to v2 and seals more: the whole
// ledger verifies with the keys of both versions, and not without v1.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	old := f.chain(t, plain()[:3]...)

	rotated, err := NewKeyring(map[string][]byte{"v1": testSecret("v1"), "v2": testSecret("v2")}, "v2")
	require.NoError(t, err)
	require.Equal(t, "v2", rotated.Current())
	require.Equal(t, []string{"v1", "v2"}, rotated.Versions())
	g := *f
	g.kr = rotated
	events := old
	prev := &events[len(events)-1]
	for _, s := range plain()[3:] {
		events = append(events, g.seal(t, prev, s))
		prev = &events[len(events)-1]
	}
	for _, e := range events {
		want := "v1:"
		if e.Seq > 3 {
			want = "v2:"
		}
		require.True(t, strings.HasPrefix(e.KeyID, want), "seq %d signed by %s", e.Seq, e.KeyID)
	}

	all := rotated.PublicKeys(f.tenant, Actors(events))
	require.Len(t, all, 2*len(Actors(events)))
	requireOK(t, Verify(events, all, Policy{}))

	// A verifier that knows only the new version cannot verify the old
	// events: their key id is unknown.
	onlyV2, err := NewKeyring(map[string][]byte{"v2": testSecret("v2")}, "v2")
	require.NoError(t, err)
	requireBad(t, Verify(events, onlyV2.PublicKeys(f.tenant, Actors(events)), Policy{}), 1, RuleKeyID)

	// The same version name with another secret gives other keys.
	impostor, err := NewKeyring(map[string][]byte{"v1": testSecret("xx"), "v2": testSecret("v2")}, "v2")
	require.NoError(t, err)
	requireBad(t, Verify(events, impostor.PublicKeys(f.tenant, Actors(events)), Policy{}), 1, RuleKeyID)
}

// TestKeyringNeverPrintsSecrets formats a keyring and a signer in every
// way a log line could, and looks for the secret and the private key.
func TestKeyringNeverPrintsSecrets(t *testing.T) {
	t.Parallel()
	secret := testSecret("topsecret")
	kr, err := NewKeyring(map[string][]byte{"k1": secret}, "k1")
	require.NoError(t, err)
	s := kr.Signer("tenant-a", "advocate")
	priv := s.(*keySigner).priv
	needles := []string{
		string(secret), hex.EncodeToString(secret), base64.StdEncoding.EncodeToString(secret), fmt.Sprintf("%d", secret),
		hex.EncodeToString(priv.Seed()), base64.StdEncoding.EncodeToString(priv), fmt.Sprintf("%d", priv.Seed()),
		"topsecret",
	}
	var out bytes.Buffer
	for _, v := range []any{kr, s, *kr} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%q", "%d"} {
			fmt.Fprintf(&out, verb+"\n", v)
		}
	}
	logger := slog.New(slog.NewJSONHandler(&out, nil))
	logger.Info("keys", "keyring", kr, "signer", s)
	slog.New(slog.NewTextHandler(&out, nil)).Info("keys", "keyring", kr, "signer", s)
	for _, n := range needles {
		require.NotContains(t, out.String(), n)
	}
	require.Contains(t, out.String(), "k1")
}

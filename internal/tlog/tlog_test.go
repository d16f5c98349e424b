package tlog_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tlog"
)

func hd(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// The RFC 6962 reference vectors (certificate-transparency's tests): leaf
// inputs and the roots of the trees of their first n leaves.
var (
	vectorLeaves = [][]byte{hd(""), hd("00"), hd("10"), hd("2021"), hd("3031"), hd("40414243"),
		hd("5051525354555657"), hd("606162636465666768696a6b6c6d6e6f")}
	vectorRoots = []string{
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
		"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
		"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
		"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
		"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
		"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
		"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
		"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
	}
)

// memTree is a store of nodes as a database keeps them.
type memTree struct {
	nodes map[tlog.NodeID][]byte
	heads []tlog.Head // by size
}

func newMemTree() *memTree {
	return &memTree{nodes: map[tlog.NodeID][]byte{}, heads: []tlog.Head{{Size: 0, Root: tlog.EmptyRoot()}}}
}

func (m *memTree) hashes(t *testing.T, ids []tlog.NodeID) [][]byte {
	t.Helper()
	out := make([][]byte, len(ids))
	for i, id := range ids {
		h, ok := m.nodes[id]
		require.True(t, ok, "node %+v not stored", id)
		out[i] = h
	}
	return out
}

func (m *memTree) append(t *testing.T, leafHashes ...[]byte) tlog.Head {
	t.Helper()
	size := m.heads[len(m.heads)-1].Size
	nodes, head, err := tlog.Append(size, m.hashes(t, tlog.BorderIDs(size)), leafHashes)
	require.NoError(t, err)
	for _, n := range nodes {
		_, dup := m.nodes[n.ID]
		require.False(t, dup, "node %+v made twice", n.ID)
		m.nodes[n.ID] = n.Hash
	}
	m.heads = append(m.heads, head)
	return head
}

// leafHash is RFC 6962's leaf hash, written out: SHA-256(0x00 || data).
func leafHash(data []byte) []byte {
	sum := sha256.Sum256(append([]byte{0}, data...))
	return sum[:]
}

func TestAppendMatchesRFC6962Vectors(t *testing.T) {
	t.Parallel()
	// One leaf at a time, and in uneven batches: the same roots.
	for _, batches := range [][]int{{1, 1, 1, 1, 1, 1, 1, 1}, {3, 5}, {8}, {2, 1, 4, 1}} {
		m := newMemTree()
		i := 0
		for _, n := range batches {
			var hashes [][]byte
			for range n {
				hashes = append(hashes, leafHash(vectorLeaves[i]))
				i++
			}
			head := m.append(t, hashes...)
			require.Equal(t, uint64(i), head.Size)
			require.Equal(t, vectorRoots[i], hex.EncodeToString(head.Root), "root of %d leaves (batches %v)", i, batches)
			root, err := tlog.Root(head.Size, m.hashes(t, tlog.BorderIDs(head.Size)))
			require.NoError(t, err)
			require.Equal(t, head.Root, root)
		}
	}
}

func TestProofsVerifyWithTheLibrarysVerifier(t *testing.T) {
	t.Parallel()
	m := newMemTree()
	for i := range 21 {
		m.append(t, leafHash([]byte{byte(i), 'x'}))
	}
	for size := uint64(1); size <= 21; size++ {
		root := m.heads[size].Root
		for index := range size {
			plan, err := tlog.InclusionPlan(index, size)
			require.NoError(t, err)
			p, err := plan.Proof(m.hashes(t, plan.IDs()))
			require.NoError(t, err)
			require.NoError(t, tlog.VerifyInclusion(index, size, m.nodes[tlog.NodeID{Level: 0, Index: index}], p, root))
			// Another leaf's hash, or another root, does not verify.
			other := m.nodes[tlog.NodeID{Level: 0, Index: (index + 1) % 21}]
			require.ErrorIs(t, tlog.VerifyInclusion(index, size, other, p, root), tlog.ErrInvalidProof)
		}
		for size1 := uint64(0); size1 <= size; size1++ {
			plan, err := tlog.ConsistencyPlan(size1, size)
			require.NoError(t, err)
			p, err := plan.Proof(m.hashes(t, plan.IDs()))
			require.NoError(t, err)
			require.NoError(t, tlog.VerifyConsistency(size1, size, p, m.heads[size1].Root, root), "%d → %d", size1, size)
			if size1 > 0 && size1 < size {
				forged := bytes.Clone(m.heads[size1].Root)
				forged[0] ^= 1
				require.ErrorIs(t, tlog.VerifyConsistency(size1, size, p, forged, root), tlog.ErrInvalidProof)
			}
		}
	}
	_, err := tlog.InclusionPlan(5, 5)
	require.Error(t, err)
	_, err = tlog.ConsistencyPlan(6, 5)
	require.Error(t, err)
}

func TestLeafEncoding(t *testing.T) {
	t.Parallel()
	l := tlog.Leaf{Kind: tlog.KindStep, Subject: "d-1", Seq: 42, Hash: strings.Repeat("ab", 32)}
	data, err := l.Encode()
	require.NoError(t, err)
	require.Equal(t, "debated/tlog/leaf/v1\nstep\nd-1\n42\n"+strings.Repeat("ab", 32)+"\n", string(data))
	back, err := tlog.ParseLeaf(data)
	require.NoError(t, err)
	require.Equal(t, l, back)
	h, err := l.LeafHash()
	require.NoError(t, err)
	require.Equal(t, leafHash(data), h)

	for name, bad := range map[string]tlog.Leaf{
		"kind":       {Kind: "other", Subject: "d", Seq: 1, Hash: l.Hash},
		"subject":    {Kind: tlog.KindDeal, Subject: "a\nb", Seq: 1, Hash: l.Hash},
		"empty":      {Kind: tlog.KindDeal, Seq: 1, Hash: l.Hash},
		"seq":        {Kind: tlog.KindStep, Subject: "d", Seq: 0, Hash: l.Hash},
		"upper hash": {Kind: tlog.KindStep, Subject: "d", Seq: 1, Hash: strings.Repeat("AB", 32)},
		"short hash": {Kind: tlog.KindStep, Subject: "d", Seq: 1, Hash: "ab"},
	} {
		_, err := bad.Encode()
		require.ErrorIs(t, err, tlog.ErrInvalidLeaf, name)
	}
	for _, bad := range []string{"", "debated/tlog/leaf/v1\nstep\nd\n01\n" + l.Hash + "\n", string(data) + "x", string(data[:len(data)-1])} {
		_, err := tlog.ParseLeaf([]byte(bad))
		require.ErrorIs(t, err, tlog.ErrInvalidLeaf, "%q", bad)
	}
}

func secret(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func TestCheckpointSignAndOpen(t *testing.T) {
	t.Parallel()
	old, err := tlog.NewKeyring("debated.example", map[string][]byte{"v1": secret(1)}, "v1")
	require.NoError(t, err)
	k, err := tlog.NewKeyring("debated.example", map[string][]byte{"v1": secret(1), "v2": secret(2)}, "v2")
	require.NoError(t, err)
	origin := tlog.TenantOrigin("debated.example", "t-1")
	cp := tlog.Checkpoint{Origin: origin, Size: 8, Root: hd(vectorRoots[8])}

	signed, err := k.Sign(cp)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(signed), "debated.example/tenants/t-1\n8\n"+base64.StdEncoding.EncodeToString(cp.Root)+"\n\n— debated.example "), string(signed))
	again, err := k.Sign(cp)
	require.NoError(t, err)
	require.Equal(t, signed, again, "Ed25519 signs deterministically")

	got, err := tlog.Open(signed, origin, k.VerifierKey())
	require.NoError(t, err)
	require.Equal(t, cp, got)
	// Every version verifies; the keyring's verifier keys are the library's.
	got, err = tlog.Open(signed, origin, k.VerifierKeys()...)
	require.NoError(t, err)
	require.Equal(t, cp, got)
	v, err := note.NewVerifier(k.VerifierKey())
	require.NoError(t, err)
	n, err := note.Open(signed, note.VerifierList(v))
	require.NoError(t, err)
	require.Equal(t, string(cp.Body()), n.Text)

	// The old key, another origin, a changed body: refused.
	_, err = tlog.Open(signed, origin, old.VerifierKey())
	require.ErrorIs(t, err, tlog.ErrInvalidCheckpoint)
	_, err = tlog.Open(signed, tlog.TenantOrigin("debated.example", "t-2"), k.VerifierKey())
	require.ErrorIs(t, err, tlog.ErrInvalidCheckpoint)
	forged := bytes.Replace(signed, []byte("\n8\n"), []byte("\n9\n"), 1)
	_, err = tlog.Open(forged, origin, k.VerifierKey())
	require.ErrorIs(t, err, tlog.ErrInvalidCheckpoint)
	un, err := tlog.ParseUnverified(forged)
	require.NoError(t, err)
	require.Equal(t, uint64(9), un.Size)

	// The old version's signature still verifies under the rotated keyring.
	oldSigned, err := old.Sign(cp)
	require.NoError(t, err)
	_, err = tlog.Open(oldSigned, origin, k.VerifierKeys()...)
	require.NoError(t, err)

	keys := k.PublicKeys()
	require.Len(t, keys, 2)
	for _, pk := range keys {
		require.Equal(t, debate.KeyCheckpoint, pk.Kind)
		require.Len(t, pk.Key, 32)
		require.True(t, strings.HasPrefix(pk.NoteVerifierKey, pk.KeyID+"+"), pk.NoteVerifierKey)
		require.Equal(t, pk.Version == "v2", pk.Current)
	}
	require.NotContains(t, k.String(), string(secret(2)))
}

func TestNewKeyringRefuses(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		name, current string
		secrets       map[string][]byte
	}{
		"no secret":    {"n", "v1", nil},
		"short secret": {"n", "v1", map[string][]byte{"v1": {1, 2}}},
		"bad version":  {"n", "v 1", map[string][]byte{"v 1": secret(1)}},
		"no current":   {"n", "v2", map[string][]byte{"v1": secret(1)}},
		"bad name":     {"a+b", "v1", map[string][]byte{"v1": secret(1)}},
		"empty name":   {"", "v1", map[string][]byte{"v1": secret(1)}},
	} {
		_, err := tlog.NewKeyring(c.name, c.secrets, c.current)
		require.ErrorIs(t, err, tlog.ErrInvalidKeyring, name)
	}
}

// TestDocumentedExample pins the worked example of docs/transparency.md,
// so that the document stays true to the code.
func TestDocumentedExample(t *testing.T) {
	t.Parallel()
	const debateID = "3f2b7c1e-5d6a-4e8f-9a0b-1c2d3e4f5a6b"
	l1 := tlog.Leaf{Kind: tlog.KindStep, Subject: debateID, Seq: 7, Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	l2 := tlog.Leaf{Kind: tlog.KindStep, Subject: debateID, Seq: 12, Hash: "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"}
	h1, err := l1.LeafHash()
	require.NoError(t, err)
	h2, err := l2.LeafHash()
	require.NoError(t, err)
	require.Equal(t, "0360e3ba07aa49d2a6ce04074c55e64b54178c4461d75ae8774de72556a5885f", hex.EncodeToString(h1))
	require.Equal(t, "745122165a09bb0966a5fe99e58b6f46ef9a293d2d0a226cf10eda13aaad7f32", hex.EncodeToString(h2))
	_, head, err := tlog.Append(0, nil, [][]byte{h1, h2})
	require.NoError(t, err)
	require.Equal(t, "756b98d7636ca7f02f827e640750c8fafb3cdc6b3668aab10d6c62f5def594ec", hex.EncodeToString(head.Root))
	k, err := tlog.NewKeyring("debated.example", map[string][]byte{"v1": []byte("an-example-secret-of-32-bytes-!!")}, "v1")
	require.NoError(t, err)
	require.Equal(t, "debated.example+ee3a700d+Ach2yGdSTP3VLrrqePf/Db4c0htOHHVfkqPo2bW26zgE", k.VerifierKey())
	signed, err := k.Sign(tlog.Checkpoint{Origin: tlog.TenantOrigin("debated.example", "t-0001"), Size: head.Size, Root: head.Root})
	require.NoError(t, err)
	require.Equal(t, "debated.example/tenants/t-0001\n2\ndWuY12Nsp/Avgn5kB1DI+vs83Gs2aKqxDWxi9d71lOw=\n\n"+
		"— debated.example 7jpwDeB9y/MSuIXnaT8+LRldoy9Ytz0TDxuwI/gKpddn8iRwTnbgIHn6ovY3+YBf9RsV6iAzHhLhqLi1owuTeW8ULAY=\n", string(signed))
	// Leaf 0's inclusion proof in the tree of 2 is leaf 1's hash.
	require.NoError(t, tlog.VerifyInclusion(0, 2, h1, [][]byte{h2}, head.Root))
}

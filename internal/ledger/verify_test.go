package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/require"
)

func TestVerifyEmptyLedger(t *testing.T) {
	t.Parallel()
	requireOK(t, Verify(nil, nil, Policy{}))
}

// TestVerifyTampering changes a sealed six-event ledger in every way an
// attacker or a bug could, and checks that each change is caught at the
// right event.
func TestVerifyTampering(t *testing.T) {
	t.Parallel()
	f := setup(t)
	good := f.chain(t, plain()...)
	keys := f.keys(good)
	requireOK(t, Verify(good, keys, Policy{}))

	// A ledger of another debate and one of another tenant, same keyring.
	g := *f
	g.debate = "debate-2"
	otherDebate := g.chain(t, plain()...)
	h := *f
	h.tenant = "tenant-b"
	otherTenant := h.chain(t, plain()...)
	for id, k := range h.keys(otherTenant) {
		keys[id] = k
	}

	cases := []struct {
		name   string
		tamper func(es []Event) []Event
		seq    int64
		rule   string
	}{
		{"payload value changed", func(es []Event) []Event {
			es[2].Payload = bytes.Replace(es[2].Payload, []byte("broken"), []byte("Broken"), 1)
			return es
		}, 3, RuleHash},
		{"payload member added", func(es []Event) []Event {
			es[2].Payload = json.RawMessage(`{"extra":1,` + string(es[2].Payload[1:]))
			return es
		}, 3, RuleHash},
		{"payload emptied", func(es []Event) []Event { es[1].Payload = nil; return es }, 2, RuleHash},
		{"payload not an object", func(es []Event) []Event { es[3].Payload = json.RawMessage(`[1]`); return es }, 4, RuleMalformed},
		{"payload not JSON", func(es []Event) []Event { es[3].Payload = json.RawMessage(`{"a":`); return es }, 4, RuleMalformed},
		{"hash changed", func(es []Event) []Event { es[2].Hash = flip(es[2].Hash, 10); return es }, 3, RuleHash},
		{"hash and next prev_hash changed", func(es []Event) []Event {
			es[2].Hash = flip(es[2].Hash, 0)
			es[3].PrevHash = es[2].Hash
			return es
		}, 3, RuleHash},
		{"signature changed", func(es []Event) []Event { es[2].Signature = flip(es[2].Signature, 5); return es }, 3, RuleSignature},
		{"signature of another event", func(es []Event) []Event { es[2].Signature = es[4].Signature; return es }, 3, RuleSignature},
		{"signature removed", func(es []Event) []Event { es[2].Signature = ""; return es }, 3, RuleSignature},
		{"signature not canonical base64", func(es []Event) []Event {
			es[2].Signature = es[2].Signature[:40] + "\n" + es[2].Signature[40:]
			return es
		}, 3, RuleSignature},
		{"key id of an unknown version", func(es []Event) []Event {
			es[2].KeyID = "v9" + es[2].KeyID[2:]
			return es
		}, 3, RuleKeyID},
		{"key id of another actor", func(es []Event) []Event { es[2].KeyID = es[1].KeyID; return es }, 3, RuleSigner},
		{"actor changed", func(es []Event) []Event { es[2].Actor = "arbiter"; return es }, 3, RuleSigner},
		{"type changed", func(es []Event) []Event { es[4].Type = "arbiter_close"; return es }, 5, RuleHash},
		{"node changed", func(es []Event) []Event { es[4].Node = "other"; return es }, 5, RuleHash},
		{"round changed", func(es []Event) []Event { es[4].Round++; return es }, 5, RuleHash},
		{"time changed by a microsecond", func(es []Event) []Event { es[4].Time = es[4].Time.Add(time.Microsecond); return es }, 5, RuleHash},
		{"seq changed", func(es []Event) []Event { es[4].Seq = 9; return es }, 5, RuleSeq},
		{"prev_hash changed", func(es []Event) []Event { es[4].PrevHash = es[2].Hash; return es }, 5, RulePrevHash},
		{"first event deleted", func(es []Event) []Event { return es[1:] }, 1, RuleSeq},
		{"middle event deleted", func(es []Event) []Event { return slices.Delete(es, 2, 3) }, 3, RuleSeq},
		{"events swapped", func(es []Event) []Event { es[2], es[3] = es[3], es[2]; return es }, 3, RuleSeq},
		{"first two events swapped", func(es []Event) []Event { es[0], es[1] = es[1], es[0]; return es }, 1, RulePrevHash},
		{"event duplicated", func(es []Event) []Event { return slices.Insert(es, 3, es[2]) }, 4, RuleSeq},
		{"last event duplicated", func(es []Event) []Event { return append(es, es[5]) }, 7, RuleSeq},
		{"event from another debate", func(es []Event) []Event { es[2] = otherDebate[2]; return es }, 3, RuleScope},
		{"event from another tenant", func(es []Event) []Event { es[2] = otherTenant[2]; return es }, 3, RuleScope},
		{"event re-sealed with its genuine key", func(es []Event) []Event {
			s := plain()[2]
			s.payload = `{"text":"nothing to see"}`
			es[2] = f.seal(t, &es[1], s)
			return es
		}, 4, RulePrevHash},
		{"tail re-sealed by a key holder from another debate", func(es []Event) []Event {
			return append(es[:2], otherDebate[2:]...)
		}, 3, RuleScope},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			es := tc.tamper(clone(good))
			r := Verify(es, keys, Policy{})
			requireBad(t, r, tc.seq, tc.rule)

			// The streaming verifier fails at the same event.
			v := NewVerifier(keys, Policy{})
			var err error
			for i := range es {
				if err = v.Next(es[i]); err != nil {
					require.Equal(t, tc.seq, int64(i+1))
					break
				}
			}
			require.ErrorIs(t, err, ErrVerification)
		})
	}
}

// TestVerifyTruncatedTail documents what a hash chain cannot show: a ledger
// cut after its last good event verifies. Callers compare the head (the
// last seq and hash) with the one the server reports.
func TestVerifyTruncatedTail(t *testing.T) {
	t.Parallel()
	f := setup(t)
	es := f.chain(t, plain()...)
	requireOK(t, Verify(es[:4], f.keys(es), Policy{}))
}

func TestVerifyKeyMismatch(t *testing.T) {
	t.Parallel()
	f := setup(t)
	es := f.chain(t, plain()...)
	keys := f.keys(es)

	t.Run("key id mapped to another key", func(t *testing.T) {
		t.Parallel()
		k := map[string]PublicKeyInfo{}
		for id, info := range keys {
			k[id] = info
		}
		info := k[es[0].KeyID]
		info.Key = k[es[1].KeyID].Key
		k[es[0].KeyID] = info
		requireBad(t, Verify(es, k, Policy{}), 1, RuleKeyID)
	})
	t.Run("key of the wrong size", func(t *testing.T) {
		t.Parallel()
		k := map[string]PublicKeyInfo{es[0].KeyID: {Key: []byte{1, 2, 3}, TenantID: f.tenant, Actor: "engine"}}
		requireBad(t, Verify(es[:1], k, Policy{}), 1, RuleKeyID)
	})
	t.Run("key info of another actor", func(t *testing.T) {
		t.Parallel()
		k := map[string]PublicKeyInfo{}
		for id, info := range keys {
			k[id] = info
		}
		info := k[es[0].KeyID]
		info.Actor = "arbiter"
		k[es[0].KeyID] = info
		requireBad(t, Verify(es, k, Policy{}), 1, RuleSigner)
	})
	t.Run("a signer that lies about its owner", func(t *testing.T) {
		t.Parallel()
		liar := lyingSigner{Signer: f.kr.Signer(f.tenant, "arbiter"), actor: "advocate"}
		e := Event{DebateID: f.debate, TenantID: f.tenant, Type: "agent_output", Actor: "advocate", Time: f.t0}
		forged, err := Seal(&es[5], e, liar)
		require.NoError(t, err)
		requireBad(t, Verify(append(clone(es), forged), keys, Policy{}), 7, RuleSigner)
	})
	t.Run("no keys at all", func(t *testing.T) {
		t.Parallel()
		requireBad(t, Verify(es, nil, Policy{}), 1, RuleKeyID)
	})
}

// lyingSigner signs with one actor's key but claims another's.
type lyingSigner struct {
	Signer
	actor string
}

func (s lyingSigner) PublicKeyInfo() PublicKeyInfo {
	info := s.Signer.PublicKeyInfo()
	info.Actor = s.actor
	return info
}

// TestVerifyEveryByte changes every byte of an event's hash and signature,
// and every byte of its payload: each change is caught at that event, except
// a payload change that leaves the canonical JSON as it was (which is not a
// change of content).
func TestVerifyEveryByte(t *testing.T) {
	t.Parallel()
	f := setup(t)
	good := f.chain(t, plain()...)
	good[2] = f.seal(t, &good[1], ev("agent_output", "sanad_breaker",
		`{"text":"tab\there \u001f \"q\" é","n":[0,-1.5,1e21,true,false,null],"o":{"":{}}}`))
	good = good[:3]
	keys := f.keys(good)
	requireOK(t, Verify(good, keys, Policy{}))

	for _, field := range []string{"hash", "signature", "key_id", "prev_hash"} {
		get := map[string]func(e *Event) *string{
			"hash":      func(e *Event) *string { return &e.Hash },
			"signature": func(e *Event) *string { return &e.Signature },
			"key_id":    func(e *Event) *string { return &e.KeyID },
			"prev_hash": func(e *Event) *string { return &e.PrevHash },
		}[field]
		n := len(*get(&good[2]))
		for i := range n {
			es := clone(good)
			p := get(&es[2])
			*p = flip(*p, i)
			r := Verify(es, keys, Policy{})
			require.Equalf(t, int64(3), r.FirstBadSeq, "%s byte %d changed: %+v", field, i, r.Problems)
		}
	}

	payload := good[2].Payload
	canonical, err := jcs.Transform(payload)
	require.NoError(t, err)
	caught, same := 0, 0
	for i := range payload {
		for _, b := range []byte{payload[i] ^ 1, payload[i] ^ 0x20, ' ', '0', '"', '\\', '}', 0xff} {
			if b == payload[i] {
				continue
			}
			es := clone(good)
			es[2].Payload[i] = b
			r := Verify(es, keys, Policy{})
			if r.FirstBadSeq == 3 {
				caught++
				continue
			}
			require.Truef(t, r.OK, "payload byte %d → %q: %+v", i, b, r.Problems)
			c, err := jcs.Transform(es[2].Payload)
			require.NoError(t, err)
			require.Equalf(t, canonical, c, "payload byte %d → %q changed the content unnoticed: %s", i, b, es[2].Payload)
			same++
		}
	}
	require.Positive(t, caught)
	t.Logf("payload mutations: %d caught, %d equivalent (same canonical JSON)", caught, same)
}

// TestVerifyBundleBytes flips every byte of the events of an exported
// bundle: the result does not parse, does not verify, or reads as the very
// same events (encoding/json matches member names case-insensitively).
func TestVerifyBundleBytes(t *testing.T) {
	t.Parallel()
	f := setup(t)
	es := f.chain(t, plain()[:3]...)
	b := NewBundle(f.debate, f.tenant, es, f.keys(es), Policy{})
	data, err := MarshalBundle(b)
	require.NoError(t, err)
	start := bytes.Index(data, []byte(`"events":[`))
	end := bytes.Index(data, []byte(`],"public_keys"`))
	require.Positive(t, start)
	require.Greater(t, end, start)

	for i := start; i < end; i++ {
		m := bytes.Clone(data)
		m[i] ^= 1
		got, err := ParseBundle(m)
		if err != nil {
			continue
		}
		if r := VerifyBundle(got); !r.OK {
			continue
		}
		require.Lenf(t, got.Events, len(es), "byte %d", i)
		for k := range es {
			h, err := ComputeHash(&got.Events[k])
			require.NoError(t, err)
			require.Equalf(t, es[k].Hash, h, "byte %d (%q) changed event %d unnoticed", i, data[i], k+1)
			require.Truef(t, es[k].Time.Equal(got.Events[k].Time), "byte %d", i)
		}
	}
}

func TestVerifyReportsEveryProblemInOrder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	es := f.chain(t, plain()...)
	es[1].Payload = json.RawMessage(`{"x":1}`)
	es[4].Signature = flip(es[4].Signature, 3)
	r := Verify(es, f.keys(es), Policy{})
	require.False(t, r.OK)
	require.Equal(t, int64(2), r.FirstBadSeq)
	require.Equal(t, []Problem{
		{Seq: 2, Rule: RuleHash, Detail: r.Problems[0].Detail},
		{Seq: 5, Rule: RuleSignature, Detail: "signature does not verify with the event's key"},
	}, r.Problems)
}

func TestVerifyCapsProblems(t *testing.T) {
	t.Parallel()
	f := setup(t)
	specs := make([]spec, 300)
	for i := range specs {
		specs[i] = ev("agent_output", "advocate", "")
	}
	es := f.chain(t, specs...)
	r := Verify(es, nil, Policy{})
	require.Len(t, r.Problems, MaxProblems+1)
	require.Equal(t, RuleTruncated, r.Problems[MaxProblems].Rule)
	require.Equal(t, int64(1), r.FirstBadSeq)
}

func TestVerifier(t *testing.T) {
	t.Parallel()
	f := setup(t)
	es := f.chain(t, plain()...)
	keys := f.keys(es)

	v := NewVerifier(keys, Policy{})
	seq, head := v.Head()
	require.Equal(t, int64(0), seq)
	require.Equal(t, GenesisHash, head)
	for i := range es[:4] {
		require.NoError(t, v.Next(es[i]))
	}
	seq, head = v.Head()
	require.Equal(t, int64(4), seq)
	require.Equal(t, es[3].Hash, head)

	bad := es[4]
	bad.Payload = json.RawMessage(`{"stop":true}`)
	err := v.Next(bad)
	var verr *VerificationError
	require.True(t, errors.As(err, &verr))
	require.Equal(t, []string{RuleHash}, rules(Report{Problems: verr.Problems}))
	require.Equal(t, int64(5), verr.Problems[0].Seq)
	require.Contains(t, err.Error(), "seq 5: hash")

	// The chain is broken: even the genuine event is refused from now on,
	// and the head stays at the last good event.
	require.Equal(t, err, v.Next(es[4]))
	seq, head = v.Head()
	require.Equal(t, int64(4), seq)
	require.Equal(t, es[3].Hash, head)

	// The verifier copies its keys.
	k := f.keys(es)
	w := NewVerifier(k, Policy{})
	clear(k)
	for i := range es {
		require.NoError(t, w.Next(es[i]))
	}
}

// flip returns s with the byte at i replaced by another printable byte of
// the same alphabet class, so that the change is not a syntax error.
func flip(s string, i int) string {
	b := []byte(s)
	switch c := b[i]; c {
	case 'f':
		b[i] = '0'
	case 'z':
		b[i] = 'a'
	case 'Z':
		b[i] = 'A'
	case '9':
		b[i] = 'a'
	case '=':
		b[i] = 'A'
	case '/', '+', ':':
		b[i] = 'x'
	default:
		b[i] = c + 1
	}
	return strings.Clone(string(b))
}

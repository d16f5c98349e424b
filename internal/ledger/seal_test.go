package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/require"
)

func TestSealChainsEvents(t *testing.T) {
	t.Parallel()
	f := setup(t)
	events := f.chain(t, plain()...)

	keyID := regexp.MustCompile(`^v1:[0-9a-f]{16}$`)
	for i, e := range events {
		require.Equal(t, int64(i+1), e.Seq)
		if i == 0 {
			require.Equal(t, GenesisHash, e.PrevHash)
		} else {
			require.Equal(t, events[i-1].Hash, e.PrevHash)
		}
		require.Regexp(t, keyID, e.KeyID)
		h, err := ComputeHash(&e)
		require.NoError(t, err)
		require.Equal(t, h, e.Hash)
		sig, err := base64.StdEncoding.DecodeString(e.Signature)
		require.NoError(t, err)
		raw, err := hex.DecodeString(e.Hash)
		require.NoError(t, err)
		_, info, err := f.kr.PublicKey(f.tenant, e.Actor, "v1")
		require.NoError(t, err)
		require.True(t, ed25519.Verify(info.Key, raw, sig), "the signature is over the raw hash bytes")
	}
	require.Equal(t, `{}`, string(events[5].Payload), "a nil payload is sealed as {}")
	require.Equal(t, `{"n":1500,"text":"rebuttal"}`, string(events[3].Payload), "the payload is stored canonical")
	requireOK(t, Verify(events, f.keys(events), Policy{}))
}

// TestHashedObject pins the exact object that is hashed (see the package
// documentation) and the key derivation: changing either breaks every
// stored ledger, so it must be a deliberate, versioned change.
func TestHashedObject(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := Event{
		DebateID: "debate-1",
		TenantID: "tenant-a",
		Type:     "agent_output",
		Actor:    "advocate",
		Node:     "advocate_opening",
		Round:    1,
		Payload:  json.RawMessage("{ \"z\": 1, \"a\": \"\u00e9\\n<\", \"m\": {\"y\": [true, null], \"b\": 1e2} }"),
		Time:     time.Date(2026, 11, 22, 11, 0, 0, 123456789, time.FixedZone("CET", 3600)),
	}
	e, err := Seal(nil, in, f.kr.Signer("tenant-a", "advocate"))
	require.NoError(t, err)

	want := `{"actor":"advocate","debate_id":"debate-1","key_id":"` + e.KeyID + `","node":"advocate_opening",` +
		`"payload":{"a":"` + "\u00e9" + `\n<","m":{"b":100,"y":[true,null]},"z":1},` +
		`"prev_hash":"` + GenesisHash + `","round":1,"seq":1,"tenant_id":"tenant-a",` +
		`"time":"2026-11-22T10:00:00.123456Z","type":"agent_output"}`
	sum := sha256.Sum256([]byte(want))
	require.Equal(t, hex.EncodeToString(sum[:]), e.Hash)

	// Golden values: the key derivation and the signature are deterministic.
	require.Equal(t, "v1:"+goldenFingerprint, e.KeyID)
	require.Equal(t, goldenHash, e.Hash)
	require.Equal(t, goldenSignature, e.Signature)
	require.Equal(t, time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC), e.Time, "UTC, truncated to microseconds")
}

// The golden values were computed independently of this package, with
// Python's cryptography (HKDF-SHA256, Ed25519) and json.dumps(sort_keys=True,
// separators=(",", ":"), ensure_ascii=False) over the same object.
const (
	goldenFingerprint = "f546bef4581c82fc"
	goldenHash        = "96a565814f149c7694958eb0effbb6a2b23eeecf78fa7c287cf7c4ff788582f1"
	goldenSignature   = "6yttIVqvxSKP/0+QD0njq0trzX7/DFPj4+OwvWSJmoCKUsX2S0T29uHuPqKY9Cqc6UHY9zKTLDiqsD1ZN0NPCQ=="
)

func TestSealDeterministic(t *testing.T) {
	t.Parallel()
	f := setup(t)
	seal := func(payload string) []byte {
		t.Helper()
		first := f.seal(t, nil, ev("debate_started", "engine", `{"k":"v"}`))
		e := f.seal(t, &first, ev("agent_output", "advocate", payload))
		data, err := json.Marshal(e)
		require.NoError(t, err)
		return data
	}
	a := seal(`{"b":{"y":2,"x":1},"a":[3,1,2],"c":"\u00e9"}`)
	require.Equal(t, a, seal(`{"b":{"y":2,"x":1},"a":[3,1,2],"c":"\u00e9"}`), "sealing twice gives the same bytes")
	require.Equal(t, a, seal("{\n  \"a\": [3, 1, 2],\n  \"c\": \"é\",\n  \"b\": {\"x\": 1.0, \"y\": 2e0}\n}"),
		"member order, whitespace and number spelling do not change the bytes")

	// A payload marshalled from a Go map (random iteration order) hashes
	// the same every time.
	m := map[string]any{}
	for _, k := range strings.Split("q w e r t y u i o p a s d f g h j k l", " ") {
		m[k] = map[string]any{"n": len(k), k + "x": []any{k, 1}}
	}
	want := ""
	for range 20 {
		p, err := json.Marshal(m)
		require.NoError(t, err)
		e := f.seal(t, nil, ev("agent_output", "advocate", string(p)))
		if want == "" {
			want = e.Hash
		}
		require.Equal(t, want, e.Hash)
	}
	require.NotEqual(t, a, seal(`{"b":{"y":2,"x":1},"a":[3,2,1],"c":"\u00e9"}`), "array order is content")
}

func TestSealRejects(t *testing.T) {
	t.Parallel()
	f := setup(t)
	first := f.seal(t, nil, ev("debate_started", "engine", ""))
	good := Event{DebateID: f.debate, TenantID: f.tenant, Type: "agent_output", Actor: "advocate", Time: f.t0}
	otherDebate := first
	otherDebate.DebateID = "debate-2"
	otherTenant := first
	otherTenant.TenantID = "tenant-b"
	unsealed := first
	unsealed.Hash = ""

	cases := []struct {
		name   string
		prev   *Event
		edit   func(e *Event)
		signer Signer
		want   error
	}{
		{name: "no debate", edit: func(e *Event) { e.DebateID = "" }, want: ErrInvalidEvent},
		{name: "no tenant", edit: func(e *Event) { e.TenantID = "" }, signer: f.kr.Signer("", "advocate"), want: ErrInvalidEvent},
		{name: "no type", edit: func(e *Event) { e.Type = "" }, want: ErrInvalidEvent},
		{name: "NUL in type", edit: func(e *Event) { e.Type = "a\x00b" }, want: ErrInvalidEvent},
		{name: "invalid UTF-8 node", edit: func(e *Event) { e.Node = "\xff" }, want: ErrInvalidEvent},
		{name: "negative round", edit: func(e *Event) { e.Round = -1 }, want: ErrInvalidEvent},
		{name: "zero time", edit: func(e *Event) { e.Time = time.Time{} }, want: ErrInvalidEvent},
		{name: "year 10000", edit: func(e *Event) { e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, want: ErrInvalidEvent},
		{name: "payload array", edit: func(e *Event) { e.Payload = json.RawMessage(`[1]`) }, want: ErrInvalidEvent},
		{name: "payload null", edit: func(e *Event) { e.Payload = json.RawMessage(`null`) }, want: ErrInvalidEvent},
		{name: "payload string", edit: func(e *Event) { e.Payload = json.RawMessage(`"x"`) }, want: ErrInvalidEvent},
		{name: "payload invalid JSON", edit: func(e *Event) { e.Payload = json.RawMessage(`{"a":`) }, want: ErrInvalidEvent},
		{name: "payload trailing data", edit: func(e *Event) { e.Payload = json.RawMessage(`{"a":1} {}`) }, want: ErrInvalidEvent},
		{name: "payload duplicate member", edit: func(e *Event) { e.Payload = json.RawMessage(`{"a":1,"a":2}`) }, want: ErrInvalidEvent},
		{name: "payload number overflow", edit: func(e *Event) { e.Payload = json.RawMessage(`{"a":1e400}`) }, want: ErrInvalidEvent},
		{name: "payload raw newline in a string", edit: func(e *Event) { e.Payload = json.RawMessage("{\"a\":\"x\ny\"}") }, want: ErrInvalidEvent},
		{name: "payload trailing comma", edit: func(e *Event) { e.Payload = json.RawMessage(`{"a":1,}`) }, want: ErrInvalidEvent},
		{name: "payload leading zero", edit: func(e *Event) { e.Payload = json.RawMessage(`{"a":01}`) }, want: ErrInvalidEvent},
		{name: "payload bad literal", edit: func(e *Event) { e.Payload = json.RawMessage(`{"a":tru}`) }, want: ErrInvalidEvent},
		{name: "payload lone surrogate", edit: func(e *Event) { e.Payload = json.RawMessage(`{"a":"\ud800"}`) }, want: ErrInvalidEvent},
		{name: "payload invalid UTF-8", edit: func(e *Event) { e.Payload = json.RawMessage("{\"a\":\"\xff\"}") }, want: ErrInvalidEvent},
		{name: "prev of another debate", prev: &otherDebate, want: ErrChainMismatch},
		{name: "prev of another tenant", prev: &otherTenant, want: ErrChainMismatch},
		{name: "prev not sealed", prev: &unsealed, want: ErrChainMismatch},
		{name: "signer of another actor", signer: f.kr.Signer(f.tenant, "arbiter"), want: ErrWrongSigner},
		{name: "signer of another tenant", signer: f.kr.Signer("tenant-b", "advocate"), want: ErrWrongSigner},
		{name: "actor with NUL", edit: func(e *Event) { e.Actor = "adv\x00ocate" }, signer: f.kr.Signer(f.tenant, "adv\x00ocate"), want: ErrInvalidEvent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := good
			if tc.edit != nil {
				tc.edit(&e)
			}
			s := tc.signer
			if s == nil {
				s = f.kr.Signer(f.tenant, "advocate")
			}
			_, err := Seal(tc.prev, e, s)
			require.ErrorIs(t, err, tc.want)
		})
	}

	t.Run("no signer", func(t *testing.T) {
		t.Parallel()
		_, err := Seal(nil, good, nil)
		require.ErrorIs(t, err, ErrInvalidEvent)
	})
	t.Run("signer error", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("hsm down")
		_, err := Seal(nil, good, failingSigner{f.kr.Signer(f.tenant, "advocate"), boom})
		require.ErrorIs(t, err, boom)
	})
	t.Run("seal ignores the sealed fields it is given", func(t *testing.T) {
		t.Parallel()
		e := good
		e.Seq, e.PrevHash, e.Hash, e.KeyID, e.Signature = 99, "x", "y", "z", "w"
		a, err := Seal(&first, e, f.kr.Signer(f.tenant, "advocate"))
		require.NoError(t, err)
		b, err := Seal(&first, good, f.kr.Signer(f.tenant, "advocate"))
		require.NoError(t, err)
		require.Equal(t, b, a)
	})
}

type failingSigner struct {
	Signer
	err error
}

func (s failingSigner) Sign([]byte) ([]byte, error) { return nil, s.err }

func TestComputeHashRejectsMalformed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	e := f.seal(t, nil, ev("debate_started", "engine", ""))
	e.Payload = json.RawMessage(`[]`)
	_, err := ComputeHash(&e)
	require.ErrorIs(t, err, ErrInvalidEvent)
	e.Payload = nil
	h, err := ComputeHash(&e)
	require.NoError(t, err)
	require.Equal(t, e.Hash, h, "a nil payload hashes as {}")
}

// referenceCanonical is the canonical hashed object computed the obvious
// way: encoding/json, then RFC 8785 over the whole object. canonicalEvent
// must agree with it byte for byte.
func referenceCanonical(t testing.TB, e *Event) []byte {
	t.Helper()
	payload := e.Payload
	if len(payload) == 0 {
		payload = json.RawMessage(`{}`)
	}
	raw, err := json.Marshal(map[string]any{
		"actor": e.Actor, "debate_id": e.DebateID, "key_id": e.KeyID, "node": e.Node,
		"payload": payload, "prev_hash": e.PrevHash, "round": e.Round, "seq": e.Seq,
		"tenant_id": e.TenantID, "time": e.Time.UTC().Format(time.RFC3339Nano), "type": e.Type,
	})
	require.NoError(t, err)
	c, err := jcs.Transform(raw)
	require.NoError(t, err)
	return c
}

func TestCanonicalEventMatchesJCS(t *testing.T) {
	t.Parallel()
	var weird strings.Builder
	for c := range 0x80 {
		weird.WriteByte(byte(c))
	}
	weird.WriteString("é€😀\u2028\u2029<>&'/\x7f")
	e := Event{
		DebateID: weird.String()[1:], TenantID: "t\"\\", Type: "\u00e9", Actor: "a\x1fb", Node: "",
		Seq: maxInt, Round: maxInt, KeyID: "v1:x", PrevHash: GenesisHash,
		Payload: json.RawMessage(`{"b":[1e21,1e-7,-0,0.1,123456789012345680000],"a":"\u0001\ud83d\ude00"}`),
		Time:    time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", 3600*5)),
	}
	require.NoError(t, checkFields(&e))
	payload, err := canonicalPayload(e.Payload)
	require.NoError(t, err)
	require.Equal(t, string(referenceCanonical(t, &e)), string(canonicalEvent(&e, payload)))
	require.Equal(t, sha256.Sum256(canonicalEvent(&e, payload)), sumEvent(&e, payload), "the streamed hash")
}

// FuzzCanonicalEvent checks canonicalEvent against the reference on
// arbitrary strings, numbers and payloads.
func FuzzCanonicalEvent(f *testing.F) {
	f.Add("advocate", "node", "agent_output", 3, int64(7), int64(1700000000123456789), []byte(`{"a":[1,2.5,"x\u0007"]}`))
	f.Add("\x00", "\xff", "", -1, int64(0), int64(0), []byte(`[]`))
	f.Add("é\n\"", "\\", "\x1f", 1<<53, int64(1)<<53, int64(-62135596800000000), []byte(` { "z" : {}, "a" : null } `))
	f.Fuzz(func(t *testing.T, actor, node, typ string, round int, seq, unixNano int64, payload []byte) {
		e := Event{DebateID: "d", TenantID: "t", Actor: actor, Node: node, Type: typ, Round: round, Seq: seq,
			KeyID: "v1:k", PrevHash: GenesisHash, Payload: payload, Time: time.Unix(0, unixNano)}
		if checkFields(&e) != nil {
			return
		}
		c, err := canonicalPayload(e.Payload)
		if err != nil {
			return
		}
		require.Equal(t, string(referenceCanonical(t, &e)), string(canonicalEvent(&e, c)))
		require.Equal(t, sha256.Sum256(canonicalEvent(&e, c)), sumEvent(&e, c), "the streamed hash")
	})
}

package ledger

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBundleRoundTrip(t *testing.T) {
	t.Parallel()
	f := setup(t)
	es := f.chain(t, agentFlow()...)
	keys := f.kr.PublicKeys(f.tenant, Actors(es))
	b := NewBundle(f.debate, f.tenant, es, keys, agentPolicy())
	requireOK(t, VerifyBundle(b))

	data, err := MarshalBundle(b)
	require.NoError(t, err)
	got, err := ParseBundle(data)
	require.NoError(t, err)
	requireOK(t, VerifyBundle(got))
	require.Equal(t, b.Policy, got.Policy)
	require.Equal(t, b.PublicKeys, got.PublicKeys)
	require.Len(t, got.Events, len(es))
	for i := range es {
		require.True(t, es[i].Time.Equal(got.Events[i].Time))
		got.Events[i].Time = es[i].Time
	}
	require.Equal(t, es, got.Events)

	again, err := MarshalBundle(got)
	require.NoError(t, err)
	require.Equal(t, data, again, "marshalling is stable")

	// The JSON form is the documented one.
	var raw struct {
		Format     string `json:"format"`
		PublicKeys map[string]struct {
			PublicKey string `json:"public_key"`
			TenantID  string `json:"tenant_id"`
			Actor     string `json:"actor"`
		} `json:"public_keys"`
		Events []map[string]json.RawMessage `json:"events"`
	}
	require.NoError(t, json.Unmarshal(data, &raw))
	require.Equal(t, FormatV1, raw.Format)
	for id, k := range raw.PublicKeys {
		key, err := base64.StdEncoding.DecodeString(k.PublicKey)
		require.NoError(t, err)
		require.Equal(t, []byte(keys[id].Key), key)
		require.Equal(t, f.tenant, k.TenantID)
	}
	var names []string
	for k := range raw.Events[0] {
		names = append(names, k)
	}
	require.ElementsMatch(t, []string{"debate_id", "tenant_id", "seq", "type", "actor", "node", "round",
		"payload", "time", "prev_hash", "hash", "key_id", "signature"}, names)
	require.JSONEq(t, `"2026-11-22T10:00:01Z"`, string(raw.Events[0]["time"]))
}

func TestMarshalBundle(t *testing.T) {
	t.Parallel()
	data, err := MarshalBundle(&Bundle{DebateID: "d", TenantID: "t"})
	require.NoError(t, err)
	require.JSONEq(t, `{"format":"debated.ledger.v1","debate_id":"d","tenant_id":"t","events":[],"public_keys":{},"policy":{}}`, string(data))
	b, err := ParseBundle(data)
	require.NoError(t, err)
	requireOK(t, VerifyBundle(b))

	for _, b := range []*Bundle{nil, {Format: "debated.ledger.v2", DebateID: "d", TenantID: "t"}, {TenantID: "t"}, {DebateID: "d"}} {
		_, err := MarshalBundle(b)
		require.ErrorIs(t, err, ErrInvalidBundle)
	}
}

func TestParseBundleRejects(t *testing.T) {
	t.Parallel()
	const ok = `{"format":"debated.ledger.v1","debate_id":"d","tenant_id":"t","events":[],"public_keys":{},"policy":{}}`
	_, err := ParseBundle([]byte(ok))
	require.NoError(t, err)
	for name, data := range map[string]string{
		"empty":            ``,
		"not JSON":         `format`,
		"array":            `[]`,
		"null":             `null`,
		"unknown format":   strings.Replace(ok, "v1", "v2", 1),
		"no format":        strings.Replace(ok, `"format":"debated.ledger.v1",`, ``, 1),
		"no debate":        strings.Replace(ok, `"debate_id":"d"`, `"debate_id":""`, 1),
		"no tenant":        strings.Replace(ok, `"tenant_id":"t",`, ``, 1),
		"unknown member":   strings.Replace(ok, `"policy":{}`, `"policy":{},"extra":1`, 1),
		"unknown policy":   strings.Replace(ok, `"policy":{}`, `"policy":{"allow_all":true}`, 1),
		"unknown in event": strings.Replace(ok, `"events":[]`, `"events":[{"seq":1,"owner":"x"}]`, 1),
		"trailing data":    ok + `{}`,
		"trailing garbage": ok + `x`,
		"bad key base64":   strings.Replace(ok, `"public_keys":{}`, `"public_keys":{"v1:00":{"public_key":"!!"}}`, 1),
		"bad time":         strings.Replace(ok, `"events":[]`, `"events":[{"time":"yesterday"}]`, 1),
		"seq not a number": strings.Replace(ok, `"events":[]`, `"events":[{"seq":"1"}]`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseBundle([]byte(data))
			require.ErrorIs(t, err, ErrInvalidBundle)
		})
	}
}

func TestVerifyBundleChecksItsScope(t *testing.T) {
	t.Parallel()
	f := setup(t)
	es := f.chain(t, plain()...)
	keys := f.keys(es)

	b := NewBundle("debate-other", f.tenant, es, keys, Policy{})
	requireBad(t, VerifyBundle(b), 1, RuleScope)
	b = NewBundle(f.debate, "tenant-other", es, keys, Policy{})
	requireBad(t, VerifyBundle(b), 1, RuleScope)

	// The bundle's policy is applied.
	b = NewBundle(f.debate, f.tenant, es, keys, Policy{RoleGuard: map[string][]string{"arbiter_decision": {"advocate"}}})
	requireBad(t, VerifyBundle(b), 5, RuleRoleGuard)

	for _, bad := range []*Bundle{nil, {Format: "x", DebateID: "d", TenantID: "t"}} {
		r := VerifyBundle(bad)
		require.False(t, r.OK)
		require.Zero(t, r.FirstBadSeq)
		require.Equal(t, RuleMalformed, r.Problems[0].Rule)
	}
}

func TestParseBundleTamperedFile(t *testing.T) {
	t.Parallel()
	f := setup(t)
	es := f.chain(t, plain()...)
	data, err := MarshalBundle(NewBundle(f.debate, f.tenant, es, f.keys(es), Policy{}))
	require.NoError(t, err)

	tampered := bytes.Replace(data, []byte(`"stop":false`), []byte(`"stop":true`), 1)
	require.NotEqual(t, data, tampered)
	b, err := ParseBundle(tampered)
	require.NoError(t, err)
	requireBad(t, VerifyBundle(b), 5, RuleHash)

	// Re-spacing a payload is not tampering: it canonicalises the same.
	respaced := bytes.Replace(data, []byte(`{"stop":false}`), []byte(`{ "stop" : false }`), 1)
	require.NotEqual(t, data, respaced)
	b, err = ParseBundle(respaced)
	require.NoError(t, err)
	requireOK(t, VerifyBundle(b))
}

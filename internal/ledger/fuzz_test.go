package ledger

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseBundle feeds arbitrary bytes to ParseBundle and what it accepts
// to VerifyBundle and MarshalBundle: none may panic, and an accepted bundle
// marshals to a form that parses again to the same verdict.
func FuzzParseBundle(f *testing.F) {
	fx := setup(f)
	es := fx.chain(f, agentFlow()...)
	for _, b := range []*Bundle{
		NewBundle(fx.debate, fx.tenant, es, fx.kr.PublicKeys(fx.tenant, Actors(es)), agentPolicy()),
		NewBundle(fx.debate, fx.tenant, es[:2], nil, Policy{}),
		NewBundle("d", "t", nil, nil, Policy{}),
	} {
		data, err := MarshalBundle(b)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"format":"debated.ledger.v1","debate_id":"d","tenant_id":"t","events":[{"seq":1,"payload":[1]}]}`))
	f.Add([]byte(`{"format":"debated.ledger.v1","debate_id":"d","tenant_id":"t","public_keys":{"k":{"public_key":"AAAA"}},"events":[{"seq":1,"key_id":"k","signature":"AAAA"}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"format":1}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBundle(data)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidBundle)
			require.Nil(t, b)
			return
		}
		r := VerifyBundle(b)
		require.Equal(t, r.OK, len(r.Problems) == 0)
		require.Equal(t, r.OK, r.FirstBadSeq == 0)
		again, err := MarshalBundle(b)
		if err != nil {
			// An event field that parsed but does not marshal (a time
			// beyond year 9999) is the only way here.
			return
		}
		b2, err := ParseBundle(again)
		require.NoError(t, err)
		require.Equal(t, r.OK, VerifyBundle(b2).OK)
	})
}

// FuzzVerify verifies arbitrary event lists (as JSON) with real keys and a
// strict policy: no panic, a consistent report, and the streaming Verifier
// failing at the very event Verify names first.
func FuzzVerify(f *testing.F) {
	fx := setup(f)
	good := fx.chain(f, agentFlow()...)
	keys := fx.kr.PublicKeys(fx.tenant, append(Actors(good), "advocate"))
	policy := agentPolicy()
	for _, es := range [][]Event{good, good[:1], good[3:], nil, {good[1], good[0]}} {
		data, err := json.Marshal(es)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`[{"seq":1,"payload":{"intent_id":{}},"type":"tool_execution_started"}]`))
	f.Add([]byte(`[{"seq":-1,"round":-5,"time":"0001-01-01T00:00:00Z","payload":"x"},{}]`))

	f.Fuzz(func(t *testing.T, data []byte) {
		var es []Event
		if json.Unmarshal(data, &es) != nil {
			return
		}
		r := Verify(es, keys, policy)
		require.Equal(t, r.OK, len(r.Problems) == 0)
		for _, p := range r.Problems {
			require.True(t, p.Seq >= r.FirstBadSeq && p.Seq <= int64(len(es)))
		}

		v := NewVerifier(keys, policy)
		failed := int64(0)
		for i := range es {
			if err := v.Next(es[i]); err != nil {
				require.True(t, errors.Is(err, ErrVerification))
				failed = int64(i + 1)
				break
			}
		}
		require.Equal(t, r.FirstBadSeq, failed)
	})
}

package ledger_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/ledger"
)

// TestSealAllEqualsSealingOneByOne: sealing a step's events at once gives
// the same bytes as sealing them one by one, the chain verifies, and a bad
// event anywhere fails the whole batch.
func TestSealAllEqualsSealingOneByOne(t *testing.T) {
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("a-test-signing-secret-of-32-bytes!!")}, "v1")
	require.NoError(t, err)
	s := ledger.NewSealer(keys)
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	var es []ledger.Event
	for i, actor := range []string{"engine", "advocate", "arbiter", "advocate", "engine"} {
		es = append(es, ledger.Event{DebateID: "d1", TenantID: "t1", Type: "x.happened", Actor: actor, Node: "n",
			Round: 1, Time: at.Add(time.Duration(i) * time.Millisecond),
			Payload: json.RawMessage(`{"b":1,"a":"` + actor + `","n":[3,2.50,1e2]}`)})
	}
	first, err := s.Seal(nil, es[0])
	require.NoError(t, err)

	all, err := s.SealAll(&first, es[1:])
	require.NoError(t, err)
	one := []ledger.Event{first}
	for _, e := range es[1:] {
		sealed, err := s.Seal(&one[len(one)-1], e)
		require.NoError(t, err)
		one = append(one, sealed)
	}
	require.Equal(t, one[1:], all)
	require.Equal(t, `{"a":"advocate","b":1,"n":[3,2.5,100]}`, string(all[0].Payload), "canonical form")
	for i, e := range all {
		require.Equal(t, int64(i+2), e.Seq)
	}

	bad := append([]ledger.Event{}, es[1:]...)
	bad[2].Payload = json.RawMessage(`[1]`)
	_, err = s.SealAll(&first, bad)
	require.ErrorIs(t, err, ledger.ErrInvalidEvent)
	bad[2] = es[3]
	bad[2].TenantID = "t2"
	_, err = s.SealAll(&first, bad)
	require.ErrorIs(t, err, ledger.ErrChainMismatch)
}

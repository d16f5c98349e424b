package ledger

import (
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/stretchr/testify/require"
)

func dealEvents() []debate.DealEvent {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 123456000, time.UTC)
	return []debate.DealEvent{
		{Seq: 1, DealID: "deal-1", Type: debate.EventClaimGradeChanged, Actor: debate.ActorGrader, CreatedAt: t0,
			Payload: map[string]any{"from": "C", "to": "B", "n": 2.5}},
		{Seq: 2, DealID: "deal-1", Type: debate.EventDefectWaived, Actor: "partner@fund", CreatedAt: t0.Add(time.Second)},
	}
}

func TestSealDealAndBundle(t *testing.T) {
	t.Parallel()
	f := setup(t)
	in := dealEvents()
	sealed, err := NewDealSealer(f.kr).SealDeal(f.tenant, "", in)
	require.NoError(t, err)
	require.Empty(t, in[0].Hash, "the caller's events are not changed")
	require.Equal(t, GenesisHash, sealed[0].PrevHash)
	require.Equal(t, sealed[0].Hash, sealed[1].PrevHash)
	gID, _, err := f.kr.PublicKey(f.tenant, debate.ActorGrader, "v1")
	require.NoError(t, err)
	oID, _, err := f.kr.PublicKey(f.tenant, DealActorOperator, "v1")
	require.NoError(t, err)
	require.Equal(t, []string{gID, oID}, []string{sealed[0].KeyID, sealed[1].KeyID}, "the type picks the signing key")

	var events []DealEvent
	for _, e := range sealed {
		de, err := DealEventOf(f.tenant, e)
		require.NoError(t, err)
		h, err := DealHash(&de)
		require.NoError(t, err)
		require.Equal(t, e.Hash, h)
		events = append(events, de)
	}
	b := &DealBundle{DealID: "deal-1", TenantID: f.tenant, Events: events,
		PublicKeys: f.kr.PublicKeys(f.tenant, DealActors(events)), Policy: DealPolicy()}
	data, err := MarshalDealBundle(b)
	require.NoError(t, err)
	format, err := BundleFormat(data)
	require.NoError(t, err)
	require.Equal(t, FormatDealV1, format)
	got, err := ParseDealBundle(data)
	require.NoError(t, err)
	require.Equal(t, DealProtocol, got.Protocol)
	requireOK(t, VerifyDealBundle(got))

	// Sealing continues a chain from its head.
	more, err := NewDealSealer(f.kr).SealDeal(f.tenant, sealed[1].Hash, []debate.DealEvent{{Seq: 3, DealID: "deal-1",
		Type: debate.EventDefectCreated, Actor: debate.ActorGrader, CreatedAt: time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)}})
	require.NoError(t, err)
	require.Equal(t, sealed[1].Hash, more[0].PrevHash)

	_, err = NewDealSealer(f.kr).SealDeal(f.tenant, "", []debate.DealEvent{{Seq: 1, DealID: "d", Type: "deal.unknown", CreatedAt: time.Now()}})
	require.ErrorIs(t, err, ErrInvalidEvent)
	_, err = NewDealSealer(f.kr).SealDeal(f.tenant, "", []debate.DealEvent{{Seq: 1, Type: debate.EventDefectCreated, CreatedAt: time.Now()}})
	require.ErrorIs(t, err, ErrInvalidEvent, "no deal id")
}

func TestParseDealBundleIsStrict(t *testing.T) {
	t.Parallel()
	for name, data := range map[string]string{
		"unknown member": `{"format":"debated.deal.v1","deal_id":"d","tenant_id":"t","extra":1}`,
		"debate format":  `{"format":"debated.ledger.v1","deal_id":"d","tenant_id":"t"}`,
		"no deal":        `{"format":"debated.deal.v1","tenant_id":"t"}`,
		"trailing data":  `{"format":"debated.deal.v1","deal_id":"d","tenant_id":"t"} {}`,
	} {
		_, err := ParseDealBundle([]byte(data))
		require.ErrorIs(t, err, ErrInvalidBundle, name)
	}
	for _, data := range []string{`[]`, `{}`, `{"format":1}`, `nope`} {
		_, err := BundleFormat([]byte(data))
		require.ErrorIs(t, err, ErrInvalidBundle, data)
	}
	require.False(t, VerifyDealBundle(nil).OK)
}

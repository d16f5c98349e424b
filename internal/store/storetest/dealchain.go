package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
)

// DealChainStores is what RunDealChain needs of a store implementation.
type DealChainStores struct {
	// NewDatabase gives the test an empty database of its own and returns
	// a function that opens a store over it whose deal events are sealed
	// by sealer (nil: stored unchained, as before migration 0011).
	NewDatabase func(t *testing.T) func(sealer debate.DealSealer) Store
	// Rewrite replaces the payload of deal event seq with payloadJSON, as
	// a database superuser can, past the append-only guard.
	Rewrite func(t *testing.T, s Store, tenantID, dealID string, seq int64, payloadJSON string)
}

// RunDealChain checks that a store chains and signs deal audit events with
// its sealer in the transaction that appends them: legacy (unchained)
// events stay a prefix, the first chained event starts from the genesis
// hash, later gradings continue the chain, the list returns what verifies,
// and a row rewritten below the store's API no longer verifies.
func RunDealChain(t *testing.T, st DealChainStores) {
	t.Parallel()
	kr, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("deal-chain-test-secret-0123456789abcdef")}, "v1")
	require.NoError(t, err)
	open := st.NewDatabase(t)
	plain, sealed := open(nil), open(ledger.NewDealSealer(kr))

	ctx, tenant := NewTenant(t, plain)
	b := importSample(t, ctx, plain)
	at := time.Date(2026, 11, 26, 9, 0, 0, 123456789, time.UTC)
	grade := func(s Store, when time.Time, events ...debate.DealEvent) []debate.DealEvent {
		t.Helper()
		_, appended, err := s.DealGrade(ctx, b.Deal.ID, when, recordingGrade(new([]gradeCall), &debate.DealGrading{}, nil, events, nil))
		require.NoError(t, err)
		return appended
	}
	legacy := grade(plain, at,
		debate.DealEvent{Type: debate.EventClaimGradeChanged, Actor: debate.ActorGrader, Payload: map[string]any{"from": "C", "to": "B"}},
		debate.DealEvent{Type: debate.EventDefectCreated, Actor: debate.ActorGrader})
	for _, e := range legacy {
		require.Empty(t, e.Hash, "a store without a sealer writes unchained events")
	}
	first := grade(sealed, at.Add(time.Minute),
		debate.DealEvent{Type: debate.EventClaimVerdictChanged, Actor: debate.ActorGrader, Payload: map[string]any{"n": 1.5, "list": []any{"x", 2}}},
		debate.DealEvent{Type: debate.EventDefectCured, Actor: "analyst@fund", Payload: map[string]any{"reason": "source reconciled"}})
	second := grade(sealed, at.Add(2*time.Minute),
		debate.DealEvent{Type: debate.EventDefectWaived, Actor: "partner@fund", Payload: map[string]any{"reason": "immaterial"}})
	require.Equal(t, ledger.GenesisHash, first[0].PrevHash, "the first chained event starts from the genesis hash")
	require.Equal(t, first[0].Hash, first[1].PrevHash)
	require.Equal(t, first[1].Hash, second[0].PrevHash, "the next grading continues the chain")

	list, err := sealed.DealEventList(ctx, b.Deal.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, list, 5)
	require.Equal(t, append(append(legacy, first...), second...), list, "a read returns what the grading appended")

	verify := func(list []debate.DealEvent) ledger.Report {
		t.Helper()
		old, chained := ledger.SplitLegacy(list)
		conv := make([]ledger.DealEvent, 0, len(chained))
		for _, e := range chained {
			de, err := ledger.DealEventOf(tenant, e)
			require.NoError(t, err)
			conv = append(conv, de)
		}
		return ledger.VerifyDeal(tenant, b.Deal.ID, int64(len(old)), conv,
			kr.PublicKeys(tenant, []string{debate.ActorGrader, ledger.DealActorOperator}), ledger.DealPolicy())
	}
	r := verify(list)
	require.Truef(t, r.OK, "%+v", r.Problems)

	// An event type no key signs is refused, and nothing is written.
	_, _, err = sealed.DealGrade(ctx, b.Deal.ID, at.Add(3*time.Minute),
		recordingGrade(new([]gradeCall), &debate.DealGrading{}, nil, []debate.DealEvent{{Type: "deal.unknown", Actor: "x"}}, nil))
	require.ErrorIs(t, err, ledger.ErrInvalidEvent)
	again, err := sealed.DealEventList(ctx, b.Deal.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, again, 5)

	// A rewritten row is served, but no longer verifies.
	st.Rewrite(t, sealed, tenant, b.Deal.ID, 4, `{"reason":"nothing to see"}`)
	list, err = sealed.DealEventList(ctx, b.Deal.ID, 0, 0)
	require.NoError(t, err)
	require.Equal(t, "nothing to see", list[3].Payload["reason"])
	r = verify(list)
	require.False(t, r.OK)
	require.Equal(t, int64(4), r.FirstBadSeq)
	require.Equal(t, ledger.RuleHash, r.Problems[0].Rule)
}

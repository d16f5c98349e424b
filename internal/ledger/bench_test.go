package ledger

import (
	"encoding/json"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/stretchr/testify/require"
)

// benchPayload is a typical agent output of about 300 bytes.
const benchPayload = `{"text":"ARR of 4.2M USD is supported by the audited statements (claim c-17, grade A); ` +
	`the deck's 5.1M figure is not.","claim_refs":["c-17","c-18","c-22"],"calc_refs":["calc-3"],` +
	`"confidence":0.82,"muhasabah":{"passed":true,"uncertainties":["churn cohort 2024"]},"round":2,"node":"advocate_opening"}`

func BenchmarkSeal(b *testing.B) {
	f := setup(b)
	require.InDelta(b, 300, len(benchPayload), 10)
	first := f.seal(b, nil, ev("debate_started", "engine", ""))
	s := f.kr.Signer(f.tenant, "advocate")
	e := Event{DebateID: f.debate, TenantID: f.tenant, Type: "agent_output", Actor: "advocate",
		Node: "advocate_opening", Round: 2, Payload: json.RawMessage(benchPayload), Time: f.t0}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Seal(&first, e, s); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLedger is a 1,000-event ledger of ~300-byte payloads.
func benchLedger(b *testing.B) (*fixture, []Event) {
	f := setup(b)
	specs := make([]spec, 1000)
	actors := []string{"advocate", "sanad_breaker", "contradiction_finder", "risk_officer", "arbiter"}
	for i := range specs {
		specs[i] = ev("agent_output", actors[i%len(actors)], benchPayload)
	}
	return f, f.chain(b, specs...)
}

func BenchmarkVerify(b *testing.B) {
	f, es := benchLedger(b)
	keys := f.kr.PublicKeys(f.tenant, Actors(es))
	requireOK(b, Verify(es, keys, Policy{}))
	b.ReportAllocs()
	for b.Loop() {
		if r := Verify(es, keys, Policy{}); !r.OK {
			b.Fatal(r.Problems)
		}
	}
}

// BenchmarkVerifierNext is the cost per event for a watching client.
func BenchmarkVerifierNext(b *testing.B) {
	f, es := benchLedger(b)
	keys := f.kr.PublicKeys(f.tenant, Actors(es))
	b.ReportAllocs()
	v, i := NewVerifier(keys, Policy{}), 0
	for b.Loop() {
		if i == len(es) {
			v, i = NewVerifier(keys, Policy{}), 0
		}
		if err := v.Next(es[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkKeyringSigner is the cost of deriving one actor's key.
func BenchmarkKeyringSigner(b *testing.B) {
	f := setup(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = f.kr.Signer(f.tenant, "advocate")
	}
}

// BenchmarkSealDeal seals the 1,000 events a grading of a large deal
// appends (grade and verdict changes, new defects), per grading.
func BenchmarkSealDeal(b *testing.B) {
	f := setup(b)
	types := []string{debate.EventClaimGradeChanged, debate.EventClaimVerdictChanged, debate.EventDefectCreated}
	events := make([]debate.DealEvent, 1000)
	for i := range events {
		events[i] = debate.DealEvent{Seq: int64(i + 1), DealID: "deal-bench", Type: types[i%len(types)], Actor: debate.ActorGrader,
			CreatedAt: f.t0, Payload: map[string]any{"claim_key": "C17", "from": "C", "to": "B", "reason": "two independent audited sources"}}
	}
	s := NewDealSealer(f.kr)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.SealDeal(f.tenant, "", events); err != nil {
			b.Fatal(err)
		}
	}
}

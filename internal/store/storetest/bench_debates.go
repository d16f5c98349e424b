package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// benchPayload returns an event payload of about 300 bytes, as an agent's
// output event is: canonical JSON with a claim reference and a statement.
func benchPayload(seq int64) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"claim_ids":["claim-%06d","claim-000042"],"confidence":0.82,"round":1,`+
		`"statement":"%s","tool_calls":[{"name":"get_claim","result_hash":"%064d"}]}`, seq, benchStatement, seq))
}

var benchStatement = strings.Repeat("The ARR figure is corroborated by the bank statement. ", 3)[:110]

// benchState is a checkpoint state of about 1 KB.
var benchState = json.RawMessage(`{"round":1,"node":"advocate_opening","open_challenges":[` +
	strings.TrimSuffix(strings.Repeat(`{"claim_id":"claim-000042","by":"sanad_breaker","status":"open"},`, 14), ",") + `]}`)

// benchLedger makes a debate of its own in s and a Ledger that commits
// steps of 3 events of benchPayload and a checkpoint of benchState.
func benchLedger(b *testing.B, s Store) (context.Context, *Ledger) {
	b.Helper()
	ctx, tenant, d := NewDebate(b, s)
	l := NewLedger(tenant, d, debateCreatedAt)
	l.Payload, l.State = benchPayload, benchState
	return ctx, l
}

// BenchStepCommit measures StepCommit of one step after another on one
// debate, as one worker runs it: each step appends 3 events of about 300
// bytes of payload and a checkpoint with about 1 KB of state, and moves the
// debate. Building a step (a few microseconds) is inside the timer. It
// reports steps/s beside ns/op.
func BenchStepCommit(b *testing.B, s Store) {
	ctx, l := benchLedger(b, s)
	if n := len(benchPayload(1)); n < 250 || n > 350 {
		b.Fatalf("the payload is %d bytes", n)
	}
	n := 0
	for b.Loop() {
		c := l.Next(3)
		if err := s.StepCommit(ctx, c); err != nil {
			b.Fatal(err)
		}
		l.Commit(c)
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "steps/s")
}

// BenchStepCommitParallel measures StepCommit of the steps of BenchStepCommit
// by `debates` goroutines at once, each on a debate of its own (each in a
// tenant of its own), as that many workers run that many debates; b.N steps
// in all. It reports steps/s, over all goroutines, beside ns/op (the wall
// time per step).
func BenchStepCommitParallel(b *testing.B, s Store, debates int) {
	ctxs := make([]context.Context, debates)
	ledgers := make([]*Ledger, debates)
	for i := range debates {
		ctxs[i], ledgers[i] = benchLedger(b, s)
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	var failed atomic.Pointer[error]
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range debates {
		wg.Go(func() {
			ctx, l := ctxs[i], ledgers[i]
			for left.Add(-1) >= 0 && failed.Load() == nil {
				c := l.Next(3)
				if err := s.StepCommit(ctx, c); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				l.Commit(c)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

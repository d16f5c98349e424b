package debate

import (
	"context"
	"encoding/json"
)

// TokensUsed is the model tokens (prompt and completion) recorded in
// events: every protocol records the model calls behind an event in its
// payload's top-level "model" member (a ModelCall), once; a negative count
// counts as none. A debate's ledger so gives its spend to a process that did not see it (after a
// restart, or on another replica), for its budget.
func TokensUsed(events []Event) int {
	n := 0
	for _, e := range events {
		var p struct {
			Model *ModelCall `json:"model"`
		}
		// A payload that is not an object, or whose model member is not a
		// ModelCall, records no call.
		if json.Unmarshal(e.Payload, &p) == nil && p.Model != nil {
			n += max(0, p.Model.PromptTokens) + max(0, p.Model.CompletionTokens)
		}
	}
	return n
}

// EventLister reads a debate's events after a seq (DebateStore.EventList).
type EventLister interface {
	EventList(ctx context.Context, debateID string, afterSeq int64, limit int) ([]Event, error)
}

// Ledger reads a debate's whole ledger, a page of the largest size a store
// returns at a time.
func Ledger(ctx context.Context, l EventLister, debateID string) ([]Event, error) {
	const page = 5000
	var out []Event
	for after := int64(0); ; {
		evs, err := l.EventList(ctx, debateID, after, page)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
		if len(evs) < page {
			return out, nil
		}
		after = evs[len(evs)-1].Seq
	}
}

package agentproto

import (
	"encoding/json"
	"fmt"

	"github.com/debated/debated/internal/debate"
)

// traceHead is what the committed trace says of each intent: the executor
// trusts it, not its own state, before it runs a tool.
type traceHead struct {
	signed   map[string]string // intent id → input hash
	approved map[string]bool
	blocked  map[string]bool
	executed map[string]int64 // intent id → seq of its tool_execution_started
}

func indexIntents(trace []debate.Event) *traceHead {
	h := &traceHead{signed: map[string]string{}, approved: map[string]bool{}, blocked: map[string]bool{}, executed: map[string]int64{}}
	for _, e := range trace {
		var m struct {
			IntentID  string `json:"intent_id"`
			InputHash string `json:"input_hash"`
		}
		switch e.Type {
		case EventIntentSigned, EventIntentApproved, EventIntentBlocked, EventExecutionStarted:
			if json.Unmarshal(e.Payload, &m) != nil {
				continue
			}
		default:
			continue
		}
		switch e.Type {
		case EventIntentSigned:
			h.signed[m.IntentID] = m.InputHash
		case EventIntentApproved:
			h.approved[m.IntentID] = true
		case EventIntentBlocked:
			h.blocked[m.IntentID] = true
		case EventExecutionStarted:
			h.executed[m.IntentID] = e.Seq
		}
	}
	return h
}

// authorizes says why the trace does not allow executing it ("" when it
// does): the intent must be signed with the same input hash, approved, not
// blocked and not executed yet (exactly once per intent id).
func (h *traceHead) authorizes(it *intent) string {
	hash, ok := h.signed[it.ID]
	switch {
	case !ok:
		return "not signed in the trace"
	case hash != it.InputHash:
		return fmt.Sprintf("signed with input hash %s, the checkpoint has %s", hash, it.InputHash)
	case h.blocked[it.ID]:
		return "blocked by the critic"
	case !h.approved[it.ID]:
		return "not approved by the critic"
	case h.executed[it.ID] > 0:
		return fmt.Sprintf("already executed at seq %d", h.executed[it.ID])
	}
	return ""
}

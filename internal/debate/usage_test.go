package debate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTokensUsed: the tokens of every top-level model record count, once;
// payloads without one, or whose "model" is something else, count nothing.
func TestTokensUsed(t *testing.T) {
	t.Parallel()
	ev := func(payload string) Event { return Event{Payload: json.RawMessage(payload)} }
	events := []Event{
		ev(`{"role":"advocate","model":{"model":"m","calls":2,"prompt_tokens":120,"completion_tokens":30}}`),
		ev(`{"rule":"TOKEN_BUDGET_EXCEEDED","model":{"model":"m","calls":1,"prompt_tokens":7,"completion_tokens":0}}`),
		ev(`{"status":"completed"}`),
		ev(`{"model":"gpt-x","answer":{"model":{"prompt_tokens":999}}}`),            // not a model record
		ev(`{"outputs":[{"model":{"prompt_tokens":500,"completion_tokens":500}}]}`), // nested: a copy, not a call
		ev(`{"model":{"model":"m","prompt_tokens":-5000,"completion_tokens":3}}`),   // a negative count is none
		ev(`[1,2]`),
		ev(``),
	}
	require.Equal(t, 160, TokensUsed(events))
	require.Zero(t, TokensUsed(nil))
}

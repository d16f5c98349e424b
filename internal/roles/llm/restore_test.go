package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// TestBudgetRestoredFromTheLedger: a backend that has not seen a debate
// (a restarted process, another replica) starts its budget at what the
// debate's ledger recorded, asked once; a call that would go over is not
// sent; a failed restore fails the call closed.
func TestBudgetRestoredFromTheLedger(t *testing.T) {
	t.Parallel()
	// The ledger of the first life: one output whose session used 5,000
	// tokens. A call books at least MaxTokens (10,000) before it is sent.
	ledger := []debate.Event{{Type: "agent.output", Payload: json.RawMessage(
		`{"role":"nla","model":{"model":"test-model","calls":1,"prompt_tokens":4000,"completion_tokens":1000}}`)}}
	withBudget := func(e *env, restore func(context.Context, string) (int, error)) *llm.Backend {
		e.cfg.MaxTokens, e.cfg.Budget, e.cfg.Restore = 10_000, 12_000, restore
		b, err := llm.NewBackend(e.cfg)
		require.NoError(t, err)
		return b
	}

	// Without a restore the budget starts from zero: the call is sent.
	fresh := setup(t, openaitest.ReplyJSON(map[string]any{"answer": "ok"}))
	_, err := withBudget(fresh, nil).JSON(context.Background(), jsonCall(nil))
	require.NoError(t, err)
	require.Len(t, fresh.srv.Requests(), 1)

	// With it, 5,000 already spent + 10,000 booked > 12,000: not sent, and
	// the ledger was read once for two calls.
	restarted := setup(t)
	asked := 0
	b := withBudget(restarted, func(_ context.Context, id string) (int, error) {
		asked++
		require.Equal(t, "debate-1", id)
		return debate.TokensUsed(ledger), nil
	})
	for range 2 {
		_, err = b.JSON(context.Background(), jsonCall(nil))
		require.ErrorIs(t, err, llm.ErrBudgetExceeded)
	}
	require.Empty(t, restarted.srv.Requests())
	require.Equal(t, 1, asked)
	require.Equal(t, 5000, b.Used("debate-1"))

	// A ledger that cannot be read fails the call, unsent.
	broken := setup(t)
	down := errors.New("store down")
	_, err = withBudget(broken, func(context.Context, string) (int, error) { return 0, down }).JSON(context.Background(), jsonCall(nil))
	require.ErrorIs(t, err, down)
	require.Empty(t, broken.srv.Requests())
}

// TestNegativeUsageCountsAsNone: a server that reports negative usage
// does not give a debate tokens back.
func TestNegativeUsageCountsAsNone(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, func(openaitest.Request) openaitest.Answer {
		return openaitest.Answer{Content: `{"answer":"ok"}`, PromptTokens: -1_000_000, CompletionTokens: 7}
	})
	e := setup(t)
	e.cfg.BaseURL, e.cfg.Budget = srv.URL, 1_000_000
	b, err := llm.NewBackend(e.cfg)
	require.NoError(t, err)
	res, err := b.JSON(context.Background(), jsonCall(nil))
	require.NoError(t, err)
	require.Equal(t, 7, b.Used("debate-1"))
	require.Zero(t, res.Model.PromptTokens, "the ledger records none either")
	require.Equal(t, 7, res.Model.CompletionTokens)
}

package protocol_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/roles"
)

func errorsAs[T error](err error) (T, bool) { return errors.AsType[T](err) }

// TestBudgetStop: a spent budget stops the debate for review with one
// budget.exceeded event, signed by the role and naming it under "role";
// any other error is left to the engine.
func TestBudgetStop(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("llm: %w: over by 10", roles.ErrBudgetExceeded)
	out, got := protocol.BudgetStop("critic", err, &debate.ModelCall{Calls: 1}, map[string]any{"schema": "s"})
	require.NoError(t, got)
	require.Equal(t, debate.DebateNeedsReview, out.Stop.Status)
	require.Equal(t, protocol.ReasonTokenBudget, out.Stop.Reason)
	require.Len(t, out.Events, 1)
	ev := out.Events[0]
	require.Equal(t, protocol.EventBudgetExceeded, ev.Type)
	require.Equal(t, "critic", ev.Actor)
	p := ev.Payload.(map[string]any)
	require.Equal(t, "critic", p["role"])
	require.Equal(t, "s", p["schema"])
	require.Contains(t, p["detail"], "budget")
	require.NotNil(t, p["model"])

	other := errors.New("model down")
	out, got = protocol.BudgetStop("critic", other, nil, nil)
	require.Nil(t, out)
	require.Same(t, other, got)
}

// TestRuleNames: the rules of violations, consecutive repeats once, never
// nil.
func TestRuleNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{}, protocol.RuleNames(nil))
	require.Equal(t, []string{"A", "B", "A"}, protocol.RuleNames([]debate.Violation{{Rule: "A"}, {Rule: "A"}, {Rule: "B"}, {Rule: "A"}}))
}

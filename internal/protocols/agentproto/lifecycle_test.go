package agentproto_test

import (
	"errors"
	"testing"

	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/agentproto"
	"github.com/stretchr/testify/require"
)

// allFacts meets every guard.
var allFacts = agentproto.Facts{Initialized: true, Proposals: 1, Approved: 1, Settled: true, Claims: 1,
	Verification: agentproto.VerificationPass, Integrity: true, Abort: true}

// TestLifecycleTransitions drives every allowed transition (by its
// designated role, guard met) and tries every other pair of states, which
// the state machine refuses.
func TestLifecycleTransitions(t *testing.T) {
	t.Parallel()
	nonTerminal := []string{agentproto.StateInitialized, agentproto.StatePlanning, agentproto.StateReviewing,
		agentproto.StateExecuting, agentproto.StateClaiming, agentproto.StateAuditing}
	allowed := map[[2]string]string{
		{agentproto.StateInitialized, agentproto.StatePlanning}: agentproto.RolePlanner,
		{agentproto.StatePlanning, agentproto.StateReviewing}:   agentproto.RoleCritic,
		{agentproto.StateReviewing, agentproto.StateExecuting}:  agentproto.RoleExecutor,
		{agentproto.StateExecuting, agentproto.StateClaiming}:   agentproto.RoleExecutor,
		{agentproto.StateClaiming, agentproto.StateAuditing}:    agentproto.RoleAuditor,
		{agentproto.StateAuditing, agentproto.StateCompleted}:   agentproto.RoleAuditor,
	}
	for _, from := range nonTerminal {
		allowed[[2]string{from, agentproto.StateFailed}] = agentproto.RoleAuditor
		allowed[[2]string{from, agentproto.StateAborted}] = orchestrator.ActorOperator
	}
	tried := 0
	for _, from := range agentproto.States {
		for _, to := range agentproto.States {
			role, ok := allowed[[2]string{from, to}]
			require.Equal(t, ok, agentproto.Allowed(from, to), "%s → %s", from, to)
			if ok {
				require.NoError(t, agentproto.Request(from, to, role, allFacts), "%s → %s", from, to)
				require.Equal(t, role, agentproto.DesignatedRole(from, to))
				continue
			}
			tried++
			for _, r := range []string{agentproto.RolePlanner, agentproto.RoleExecutor, agentproto.RoleCritic, agentproto.RoleAuditor, orchestrator.ActorOperator} {
				err := agentproto.Request(from, to, r, allFacts)
				var ref *agentproto.Refusal
				require.True(t, errors.As(err, &ref), "%s → %s by %s must be refused", from, to, r)
				require.Equal(t, from, ref.From)
				require.Equal(t, to, ref.To)
			}
		}
	}
	require.Equal(t, 81-len(allowed), tried)
	for _, s := range []string{agentproto.StateCompleted, agentproto.StateFailed, agentproto.StateAborted} {
		require.True(t, agentproto.Terminal(s))
	}
}

// TestLifecycleGuards: an allowed edge is refused to another role, or
// before its guard holds.
func TestLifecycleGuards(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from, to string
		unmet    agentproto.Facts
	}{
		{agentproto.StateInitialized, agentproto.StatePlanning, agentproto.Facts{}},
		{agentproto.StatePlanning, agentproto.StateReviewing, agentproto.Facts{Initialized: true}},
		{agentproto.StateReviewing, agentproto.StateExecuting, agentproto.Facts{Proposals: 2}},
		{agentproto.StateExecuting, agentproto.StateClaiming, agentproto.Facts{Approved: 1}},
		{agentproto.StateClaiming, agentproto.StateAuditing, agentproto.Facts{Settled: true}},
		{agentproto.StateAuditing, agentproto.StateCompleted, agentproto.Facts{Claims: 1, Verification: agentproto.VerificationFail}},
		{agentproto.StateExecuting, agentproto.StateFailed, agentproto.Facts{}},
		{agentproto.StatePlanning, agentproto.StateAborted, agentproto.Facts{}},
	} {
		role := agentproto.DesignatedRole(tc.from, tc.to)
		require.Error(t, agentproto.Request(tc.from, tc.to, role, tc.unmet), "%s → %s with its guard unmet", tc.from, tc.to)
		other := agentproto.RolePlanner
		if role == other {
			other = agentproto.RoleAuditor
		}
		require.Error(t, agentproto.Request(tc.from, tc.to, other, allFacts), "%s → %s by %s", tc.from, tc.to, other)
	}
	require.Error(t, agentproto.Request("nowhere", agentproto.StatePlanning, agentproto.RolePlanner, allFacts))
}

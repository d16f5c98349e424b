package tools

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// script returns a role's calls for one round: every tool, valid and not,
// past some quotas.
func (f *fixture) script(t *testing.T, role string) []debate.ToolCall {
	var calls []debate.ToolCall
	for i := range 4 {
		for _, tool := range Names {
			calls = append(calls, f.validCall(t, tool))
			if i%2 == 1 {
				calls = append(calls, debate.ToolCall{Tool: tool, Args: json.RawMessage(`{"bogus":1}`)})
			}
		}
		calls = append(calls, toolCall(t, LookupClaim, map[string]any{"claim_id": f.claim["C"+string(rune('1'+i))], "include_sanad": true}))
	}
	return calls
}

// TestInvokerConcurrent runs the five roles' scripts concurrently on one
// Invoker (as the observers of a parallel node do) and checks that the
// audits, effects and usage equal those of a sequential run. Run with
// -race.
func TestInvokerConcurrent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	derived := func(c *Config) { c.NewID = nil }

	scripts := map[string][]debate.ToolCall{}
	for _, role := range debate.IDISRoles {
		scripts[role] = f.script(t, role)
	}

	seq := f.invoker(derived)
	want := map[string][]Result{}
	for _, role := range debate.IDISRoles {
		for _, c := range scripts[role] {
			res, _ := seq.Call(ctx, role, c)
			want[role] = append(want[role], res)
		}
	}

	for range 5 {
		par := f.invoker(derived)
		got := make(map[string][]Result)
		var mu sync.Mutex
		var wg sync.WaitGroup
		// Reverse order, so that the interleaving differs from the
		// sequential run's.
		for i := len(debate.IDISRoles) - 1; i >= 0; i-- {
			role := debate.IDISRoles[i]
			wg.Go(func() {
				var rs []Result
				for _, c := range scripts[role] {
					res, _ := par.Call(ctx, role, c)
					rs = append(rs, res)
				}
				mu.Lock()
				got[role] = rs
				mu.Unlock()
			})
		}
		wg.Wait()
		require.Equal(t, want, got)
		require.Equal(t, seq.Audits(), par.Audits())
		require.Equal(t, seq.Flagged(), par.Flagged())
		require.Equal(t, seq.ReviewRequests(), par.ReviewRequests())
		require.Equal(t, seq.Usage(), par.Usage())
	}
}

// TestInvokerConcurrentQuota races many calls of one role: the quota holds
// exactly.
func TestInvokerConcurrentQuota(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker()
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[string]int{}
	for range 16 {
		wg.Go(func() {
			for range 4 {
				res, _ := inv.Bind(debate.RoleRiskOfficer).Call(ctx, f.validCall(t, SearchEvidence))
				mu.Lock()
				statuses[res.Status]++
				mu.Unlock()
				_ = inv.Usage()
				_ = inv.Audits()
			}
		})
	}
	wg.Wait()
	require.Equal(t, map[string]int{StatusSuccess: 5, StatusDenied: 59}, statuses)
	require.Len(t, inv.Audits(), 64)
	require.Equal(t, 5, inv.Usage().Count(debate.RoleRiskOfficer, SearchEvidence))
}

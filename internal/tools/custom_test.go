package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// TestProtocolTools: a protocol's own tools (Config.Tools) replace the IDIS
// tools and go through the same checks, quotas, results and audits; their
// errors map to INVALID (not found, bad arguments) or ERROR with its cause.
func TestProtocolTools(t *testing.T) {
	double := func(_ context.Context, args json.RawMessage) (any, error) {
		var in struct{ X float64 }
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, fmt.Errorf("%w: %w", tools.ErrArguments, err)
		}
		switch in.X {
		case 404:
			return nil, fmt.Errorf("%w: no such x", tools.ErrNotFound)
		case 500:
			return nil, errors.New("backend down")
		case 666:
			panic("tool bug")
		}
		return map[string]any{"y": 2 * in.X}, nil
	}
	at := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	inv := tools.NewInvoker(tools.Config{
		Matrix:   tools.Matrix{"executor": {"double"}},
		Limits:   tools.Limits{MaxCallsPerRound: map[string]int{"double": 5}, DefaultMaxCalls: 1},
		Tools:    map[string]tools.Func{"double": double},
		DebateID: "d-1", Round: 1, Now: func() time.Time { return at }, Why: "not registered here",
	})
	ctx := context.Background()
	for i, tc := range []struct {
		role, tool, args   string
		status, rule, want string
		cause              bool
	}{
		{"executor", tools.LookupClaim, `{"claim_id":"c"}`, tools.StatusInvalid, tools.RuleUnknownTool, "", false},
		{"critic", "double", `{"x":1}`, tools.StatusDenied, tools.RulePermission, "", false},
		{"executor", "double", `{"x":21}`, tools.StatusSuccess, "", `{"y":42}`, false},
		{"executor", "double", `[1]`, tools.StatusInvalid, tools.RuleArguments, "", false},
		{"executor", "double", `{"x":"a"}`, tools.StatusInvalid, tools.RuleArguments, "", false},
		{"executor", "double", `{"x":404}`, tools.StatusInvalid, tools.RuleNotFound, "", false},
		{"executor", "double", `{"x":500}`, tools.StatusError, "", "", true},
		{"executor", "double", `{"x":666}`, tools.StatusError, "", "", true},
		{"executor", "double", `{"x":2}`, tools.StatusSuccess, "", `{"y":4}`, false},
		{"executor", "double", `{"x":3}`, tools.StatusDenied, tools.RuleQuota, "", false},
	} {
		res, audit, err := inv.Invoke(ctx, tc.role, debate.ToolCall{Tool: tc.tool, Args: json.RawMessage(tc.args)})
		require.Equal(t, tc.status, res.Status, "call %d: %s", i, res.Error)
		require.Equal(t, tc.rule, res.Rule, "call %d", i)
		require.Equal(t, tc.cause, err != nil, "call %d: %v", i, err)
		if tc.cause {
			require.ErrorIs(t, err, tools.ErrToolFailed)
		}
		if tc.rule == tools.RulePermission {
			require.Contains(t, res.Error, "may not call double: not registered here")
		}
		if tc.want != "" {
			require.JSONEq(t, tc.want, string(res.Output), "call %d", i)
		}
		require.Equal(t, tc.status, audit.ResultStatus, "call %d", i)
		require.Equal(t, res.Hash(), audit.ResultHash, "call %d", i)
		require.Equal(t, at, audit.Timestamp)
	}
	require.Len(t, inv.Audits(), 10, "every call is audited")
	require.Equal(t, 5, inv.Usage().Count("executor", "double"), "errors are not counted, refusals and bad calls are")
}

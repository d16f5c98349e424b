package agentproto

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
)

// sampleRegistry is an embedded store holding the sample deal d1 (C1 is
// ARR, 12,500,000 USD), and the context acting for its tenant.
func sampleRegistry(t *testing.T) (*sqlite.Store, context.Context) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx, _ := storetest.NewTenant(t, st)
	_, err = st.DealImport(ctx, storetest.SampleBundle("d1"), "h", time.Now())
	require.NoError(t, err)
	return st, ctx
}

// closedRegistry is an embedded store that has been closed: every read
// fails as an unreachable database does.
func closedRegistry(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "closed.db"))
	require.NoError(t, err)
	st.Close()
	return st
}

// TestTools: each safe tool's results, and its runtime failures marked
// errToolFailed (recorded, never a node failure).
func TestTools(t *testing.T) {
	t.Parallel()
	reg, ctx := sampleRegistry(t)
	env := toolEnv{dealID: "d1", registry: reg}
	c1 := storetest.SampleBundle("d1").Claims[0]
	require.Equal(t, "C1", c1.Key)
	for _, tc := range []struct {
		tool, input, want string
		fails             bool
	}{
		{ToolArithmetic, `{"op":"add","operands":[1,2,3.5]}`, "6.5", false},
		{ToolArithmetic, `{"op":"sub","operands":[10,4]}`, "6", false},
		{ToolArithmetic, `{"op":"mul","operands":[2,3]}`, "6", false},
		{ToolArithmetic, `{"op":"div","operands":[12500000,650000]}`, "19.23076923076923", false},
		{ToolArithmetic, `{"op":"min","operands":[3,-1,2]}`, "-1", false},
		{ToolArithmetic, `{"op":"max","operands":[3,-1,2]}`, "3", false},
		{ToolArithmetic, `{"op":"div","operands":[1,0]}`, "", true},
		{ToolArithmetic, `{"op":"mul","operands":[1e308,1e308]}`, "", true},
		{ToolArithmetic, `{"op":"exec","operands":[1,2]}`, "", true},
		{ToolUnitConvert, `{"value":18,"from":"month","to":"year"}`, "1.5 year", false},
		{ToolUnitConvert, `{"value":50,"from":"percent","to":"fraction"}`, "0.5 fraction", false},
		{ToolUnitConvert, `{"value":1,"from":"km","to":"hour"}`, "", true},
		{ToolClaimLookup, `{"claim_key":"C1"}`, "12500000 USD", false},
		{ToolClaimLookup, `{"claim_id":"` + c1.ID + `"}`, "12500000 USD", false},
		{ToolClaimLookup, `{"claim_key":"C9"}`, "", true},
	} {
		out, err := safeTools[tc.tool].run(ctx, env, json.RawMessage(tc.input))
		if tc.fails {
			require.ErrorIs(t, err, errToolFailed, "%s %s", tc.tool, tc.input)
			continue
		}
		require.NoError(t, err, "%s %s", tc.tool, tc.input)
		require.Equal(t, tc.want, resultText(out), "%s %s", tc.tool, tc.input)
	}
	_, err := safeTools[ToolClaimLookup].run(ctx, toolEnv{dealID: "d2", registry: env.registry}, json.RawMessage(`{"claim_key":"C1"}`))
	require.ErrorIs(t, err, errToolFailed, "another deal")
	_, err = safeTools[ToolClaimLookup].run(ctx, toolEnv{dealID: "d1", registry: closedRegistry(t)}, json.RawMessage(`{"claim_key":"C1"}`))
	require.Error(t, err)
	require.False(t, errors.Is(err, errToolFailed), "an unreachable registry fails the node, not the tool")
}

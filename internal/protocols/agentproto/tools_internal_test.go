package agentproto

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/stretchr/testify/require"
)

type oneDeal struct{ b *debate.DealBundle }

func (o oneDeal) DealBundleGet(_ context.Context, id string) (*debate.DealBundle, error) {
	if id != o.b.Deal.ID {
		return nil, debate.ErrNotFound
	}
	return o.b, nil
}

// TestTools: each safe tool's results, and its runtime failures marked
// errToolFailed (recorded, never a node failure).
func TestTools(t *testing.T) {
	t.Parallel()
	env := toolEnv{dealID: "d1", registry: oneDeal{&debate.DealBundle{Deal: debate.Deal{ID: "d1"}, Claims: []debate.Claim{
		{ID: "c-1", Key: "C1", Text: "ARR is $12.5M", Value: &debate.ClaimValue{Value: 12.5e6, Unit: "USD"}},
	}}}}
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
		{ToolClaimLookup, `{"claim_id":"c-1"}`, "12500000 USD", false},
		{ToolClaimLookup, `{"claim_key":"C9"}`, "", true},
	} {
		out, err := safeTools[tc.tool].run(context.Background(), env, json.RawMessage(tc.input))
		if tc.fails {
			require.ErrorIs(t, err, errToolFailed, "%s %s", tc.tool, tc.input)
			continue
		}
		require.NoError(t, err, "%s %s", tc.tool, tc.input)
		require.Equal(t, tc.want, resultText(out), "%s %s", tc.tool, tc.input)
	}
	_, err := safeTools[ToolClaimLookup].run(context.Background(), toolEnv{dealID: "d2", registry: env.registry}, json.RawMessage(`{"claim_key":"C1"}`))
	require.ErrorIs(t, err, errToolFailed, "another deal")
	_, err = safeTools[ToolClaimLookup].run(context.Background(), toolEnv{dealID: "d1", registry: failing{}}, json.RawMessage(`{"claim_key":"C1"}`))
	require.Error(t, err)
	require.False(t, errors.Is(err, errToolFailed), "an unreachable registry fails the node, not the tool")
}

type failing struct{}

func (failing) DealBundleGet(context.Context, string) (*debate.DealBundle, error) {
	return nil, errors.New("connection refused")
}

package agentproto_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocols/agentproto"
	"github.com/stretchr/testify/require"
)

// TestOptions: defaults, and every bad field named under options.
func TestOptions(t *testing.T) {
	t.Parallel()
	p := agentproto.Protocol(agentproto.Config{})
	good := `{"task":{"objective":"o","steps":[{"id":"s1","tool":"arithmetic","input":{"op":"add","operands":[1,2]}}]}}`
	out, err := p.ValidateOptions(json.RawMessage(good))
	require.NoError(t, err)
	var o agentproto.Options
	require.NoError(t, json.Unmarshal(out, &o))
	require.Equal(t, []string{"arithmetic"}, o.Tools, "the tools the steps name")
	require.Equal(t, []string{"high"}, o.BlockRiskClasses)
	require.Equal(t, 2, o.MaxRetries)
	require.Equal(t, "low", o.Task.Steps[0].RiskClass)

	out, err = p.ValidateOptions(json.RawMessage(`{"task":{"objective":"o","steps":[{"id":"s1","tool":"arithmetic","input":{"op":"add","operands":[1,2]}}]},"max_retries":0,"block_risk_classes":[]}`))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(out, &o))
	require.Zero(t, o.MaxRetries, "an explicit 0 means no retry")
	require.Empty(t, o.BlockRiskClasses)

	for _, tc := range []struct{ raw, field string }{
		{`{}`, "options.task.objective"},
		{`{"task":{"objective":"o"}}`, "options.task.steps"},
		{`{"nope":1}`, "options"},
		{`[]`, "options"},
		{`{"task":{"objective":"o","steps":[{"id":"S 1","tool":"arithmetic","input":{"op":"add","operands":[1,2]}}]}}`, "options.task.steps[0].id"},
		{`{"task":{"objective":"o","steps":[{"id":"a","tool":"shell","input":{}}]}}`, "options.task.steps[0].tool"},
		{`{"task":{"objective":"o","steps":[{"id":"a","tool":"arithmetic","input":{"op":"pow","operands":[1,2]}}]}}`, "options.task.steps[0].input"},
		{`{"task":{"objective":"o","steps":[{"id":"a","tool":"unit_convert","input":{"value":1,"from":"km","to":"kg"}}]}}`, "options.task.steps[0].input"},
		{`{"task":{"objective":"o","steps":[{"id":"a","tool":"claim_lookup","input":{}}]}}`, "options.task.steps[0].input"},
		{`{"task":{"objective":"o","steps":[{"id":"a","tool":"arithmetic","input":{"op":"add","operands":[1,2]},"risk_class":"extreme"}]}}`, "options.task.steps[0].risk_class"},
		{`{"task":{"objective":"o","steps":[{"id":"a","tool":"arithmetic","input":{"op":"add","operands":[1,2]}},{"id":"a","tool":"arithmetic","input":{"op":"add","operands":[1,2]}}]}}`, "options.task.steps[1].id"},
		{good[:len(good)-1] + `,"tools":["eval"]}`, "options.tools[0]"},
		{good[:len(good)-1] + `,"block_risk_classes":["x"]}`, "options.block_risk_classes[0]"},
		{good[:len(good)-1] + `,"max_retries":9}`, "options.max_retries"},
	} {
		_, err := p.ValidateOptions(json.RawMessage(tc.raw))
		var ve *debate.ValidationError
		require.True(t, errors.As(err, &ve), "%s: %v", tc.raw, err)
		var fields []string
		for _, v := range ve.Violations {
			fields = append(fields, v.Field)
		}
		require.Contains(t, fields, tc.field, tc.raw)
	}
}

// FuzzOptions: no input panics the options parser.
func FuzzOptions(f *testing.F) {
	f.Add(`{"task":{"objective":"o","steps":[{"id":"s1","tool":"arithmetic","input":{"op":"div","operands":[1,0]}}]}}`)
	f.Add(`{"task":{"objective":"o","steps":[{"id":"s1","tool":"unit_convert","input":{"value":1e308,"from":"km","to":"mm"}}]}}`)
	p := agentproto.Protocol(agentproto.Config{})
	f.Fuzz(func(t *testing.T, raw string) {
		_, _ = p.ValidateOptions(json.RawMessage(raw))
	})
}

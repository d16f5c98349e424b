package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// FuzzToolArgs feeds arbitrary argument bytes to every tool: no call may
// panic, every call is audited, and a call never succeeds with an id
// outside the deal, in its arguments or its output.
func FuzzToolArgs(f *testing.F) {
	fx := setup(f)
	for i, tool := range Names {
		f.Add(uint8(i), []byte(fx.validCall(f, tool).Args))
	}
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"claim_id":"x"}`, `{"claim_id":"` + fx.claim["C1"] + `","claim_id":"x"}`,
		`{"calc_id":"` + fx.claim["C1"] + `"}`, `{"query":"ARR","deal_id":"` + testDealID + `","limit":50}`,
		`{"query":"ARR","deal_id":"` + testDealID + `","limit":-1}`, `{"query":"ARR","deal_id":"` + testDealID + `","limit":1e309}`,
		`{"claim_ids":["` + fx.claim["C1"] + `","other"],"reason":"r"}`,
		`{"entity_type":"COMPANY","entity_name":"AutoScale Commerce","data_points":["ARR",null]}`,
		"{\"claim_id\":\"\u0000\"}", `{"claim_id":"\ud800"}`, `{"a":{"b":[1,2,{"c":null}]}}`,
	} {
		for i := range Names {
			f.Add(uint8(i), []byte(s))
		}
	}

	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		tool := Names[int(which)%len(Names)]
		role := permittedRole(tool)
		inv := fx.invoker()
		res, aud := inv.Call(context.Background(), role, toolCallRaw(tool, data))
		require.Contains(t, []string{StatusSuccess, StatusInvalid}, res.Status, "%+v", res)
		require.Equal(t, []Audit{aud}, inv.Audits())
		require.Equal(t, res.Hash(), aud.ResultHash)
		require.True(t, json.Valid(aud.ToolArgs))
		if res.Status != StatusSuccess {
			require.NotEmpty(t, res.Rule)
			require.NotEmpty(t, res.Field)
			require.Empty(t, res.Output)
			return
		}
		require.True(t, json.Valid(res.Output))

		// Every id the arguments name is the deal's.
		var args map[string]any
		require.NoError(t, json.Unmarshal(data, &args))
		for _, k := range []string{"claim_id", "calc_id", "deal_id"} {
			if s, ok := args[k].(string); ok {
				require.True(t, fx.ids[s], "%s %q is not the deal's", k, s)
			}
		}
		for _, k := range []string{"evidence_refs", "claim_ids"} {
			if xs, ok := args[k].([]any); ok {
				for _, x := range xs {
					require.True(t, fx.ids[x.(string)], "%s has %q", k, x)
				}
			}
		}
		// So is every id of the output.
		var out any
		require.NoError(t, json.Unmarshal(res.Output, &out))
		walkIDs(out, "", func(key, id string) {
			require.True(t, fx.ids[id], "output %s %q is not the deal's", key, id)
		})
	})
}

func toolCallRaw(tool string, data []byte) debate.ToolCall {
	return debate.ToolCall{Tool: tool, Args: data}
}

// walkIDs calls fn for every string member of v named like a deal id.
func walkIDs(v any, key string, fn func(key, id string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			walkIDs(e, k, fn)
		}
	case []any:
		for _, e := range x {
			walkIDs(e, key, fn)
		}
	case string:
		switch {
		case key == "defect_id" || key == "review_id" || key == "record_id" || key == "debate_id":
			// ids the tool made, enrichment records, the debate
		case strings.HasSuffix(key, "_id") || strings.HasSuffix(key, "_ids") || key == "evidence_refs":
			fn(key, x)
		}
	}
}

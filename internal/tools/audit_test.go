package tools

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// TestToolAuditEmission makes a random mix of allowed, forbidden,
// over-quota, malformed and unknown-tool calls and checks that every call
// has exactly one complete audit record (seed 000 §9.2: 100% tool-call
// audit coverage).
func TestToolAuditEmission(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))

	malformed := []json.RawMessage{
		json.RawMessage(`{"claim_id":`),
		json.RawMessage(`[1,2,3]`),
		json.RawMessage(`"claim"`),
		json.RawMessage(`{"claim_id":"a","claim_id":"b"}`),
		json.RawMessage(`{"bogus":true}`),
		json.RawMessage(`{"claim_id":"claim-of-another-deal"}`),
		json.RawMessage(`{"calc_id":"calc-of-another-deal"}`),
		json.RawMessage(`{"claim_id":42}`),
		json.RawMessage("{\"claim_id\":\"\xff\xfe\"}"),
		json.RawMessage(`{"calc_id":"nope","include_inputs":"yes"}`),
		json.RawMessage(`{"query":"","deal_id":"x","limit":1e3}`),
		nil,
	}
	type made struct {
		role string
		res  Result
		aud  Audit
	}
	var calls []made
	perRole := map[string][]Audit{}
	statuses := map[string]int{}
	rules := map[string]int{}
	for range 600 {
		role := debate.IDISRoles[rng.IntN(len(debate.IDISRoles))]
		if rng.IntN(20) == 0 {
			role = "stranger"
		}
		tool := Names[rng.IntN(len(Names))]
		var call debate.ToolCall
		switch k := rng.IntN(10); {
		case k < 5:
			call = f.validCall(t, tool) // allowed, forbidden or over quota, by the role
		case k < 9:
			call = debate.ToolCall{Tool: tool, Args: malformed[rng.IntN(len(malformed))]}
		default:
			call = debate.ToolCall{Tool: "tool_" + string(rune('a'+rng.IntN(26))), Args: f.validCall(t, tool).Args}
		}
		res, aud := inv.Call(ctx, role, call)
		requireAudit(t, aud, role, auditName(call.Tool), res)
		calls = append(calls, made{role, res, aud})
		perRole[role] = append(perRole[role], aud)
		statuses[res.Status]++
		rules[res.Rule]++
	}
	// The mix covers every outcome.
	for _, s := range []string{StatusSuccess, StatusDenied, StatusInvalid} {
		require.Positive(t, statuses[s], s)
	}
	for _, r := range []string{RulePermission, RuleQuota, RuleUnknownTool, RuleArguments, RuleNotFound} {
		require.Positive(t, rules[r], r)
	}

	audits := inv.Audits()
	require.Len(t, audits, len(calls), "one audit per call")
	// Audits are ordered by role, then by call order within the role.
	var want []Audit
	for _, role := range keys(perRole) {
		want = append(want, perRole[role]...)
	}
	require.Equal(t, want, audits)

	// Usage counts exactly the admitted calls (not DENIED ones).
	usage := inv.Usage()
	admitted := map[string]map[string]int{}
	for _, c := range calls {
		if c.res.Status == StatusDenied || c.res.Rule == RuleUnknownTool {
			continue
		}
		if admitted[c.role] == nil {
			admitted[c.role] = map[string]int{}
		}
		admitted[c.role][c.aud.ToolName]++
	}
	for role, tools := range admitted {
		for tool, n := range tools {
			require.Equal(t, n, usage.Count(role, tool), "%s/%s", role, tool)
			require.LessOrEqual(t, n, DefaultLimits().MaxCalls(tool))
		}
	}
}

func TestAuditMalformedArgs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker()
	ctx := context.Background()

	// Non-JSON arguments are recorded by size, digest and excerpt.
	res, aud := inv.Call(ctx, debate.RoleAdvocate, debate.ToolCall{Tool: LookupClaim, Args: json.RawMessage("{\"claim_id\": \xff")})
	require.Equal(t, StatusInvalid, res.Status)
	require.Equal(t, RuleArguments, res.Rule)
	require.Equal(t, "args", res.Field)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(aud.ToolArgs, &rec))
	require.Equal(t, true, rec["malformed"])
	require.EqualValues(t, 14, rec["bytes"])
	require.Contains(t, rec["sha256"], "sha256:")

	// Oversized arguments too, with a bounded excerpt.
	big := append([]byte(`{"claim_id":"`), make([]byte, MaxArgsBytes)...)
	for i := 13; i < len(big); i++ {
		big[i] = 'x'
	}
	big = append(big, `"}`...)
	res, aud = inv.Call(ctx, debate.RoleAdvocate, debate.ToolCall{Tool: LookupClaim, Args: big})
	require.Equal(t, StatusInvalid, res.Status)
	require.Less(t, len(aud.ToolArgs), 1024)

	// Well-formed arguments are canonicalised: key order and spacing do
	// not change the record.
	_, a1 := inv.Call(ctx, debate.RoleAdvocate, debate.ToolCall{Tool: LookupClaim, Args: json.RawMessage(`{ "include_sanad": true, "claim_id": "` + f.claim["C2"] + `" }`)})
	_, a2 := inv.Call(ctx, debate.RoleAdvocate, debate.ToolCall{Tool: LookupClaim, Args: json.RawMessage(`{"claim_id":"` + f.claim["C2"] + `","include_sanad":true}`)})
	require.Equal(t, a1.ToolArgs, a2.ToolArgs)
	require.Equal(t, a1.ResultHash, a2.ResultHash)

	// No arguments are {}; null too.
	_, a3 := inv.Call(ctx, debate.RoleAdvocate, debate.ToolCall{Tool: LookupClaim})
	_, a4 := inv.Call(ctx, debate.RoleAdvocate, debate.ToolCall{Tool: LookupClaim, Args: json.RawMessage(`null`)})
	require.JSONEq(t, `{}`, string(a3.ToolArgs))
	require.Equal(t, a3, a4)
}

func TestResultHashDistinguishesOutcomes(t *testing.T) {
	t.Parallel()
	f := setup(t)
	inv := f.invoker()
	ctx := context.Background()
	ok, _ := inv.Call(ctx, debate.RoleAdvocate, f.validCall(t, LookupClaim))
	denied, _ := inv.Call(ctx, debate.RoleAdvocate, f.validCall(t, SearchEvidence))
	other, _ := inv.Call(ctx, debate.RoleAdvocate, toolCall(t, LookupClaim, map[string]any{"claim_id": f.claim["C2"]}))
	require.NotEqual(t, ok.Hash(), denied.Hash())
	require.NotEqual(t, ok.Hash(), other.Hash())
	again, _ := f.invoker().Call(ctx, debate.RoleAdvocate, f.validCall(t, LookupClaim))
	require.Equal(t, ok, again)
	require.Equal(t, ok.Hash(), again.Hash())
}

// TestResultHashOfCanonicalOutput: the invoker's hash of its results (a
// SUCCESS output hashed as success wrote it) is Result.Hash.
func TestResultHashOfCanonicalOutput(t *testing.T) {
	for _, out := range []any{map[string]any{"b": []any{1.50, "<é>"}, "a": nil}, "x", nil, []int{}, json.RawMessage(`{"z": 1e2, "y": "\u00e9"}`)} {
		res, err := success("tool", out)
		if err != nil {
			t.Fatal(err)
		}
		if res.hash() != res.Hash() {
			t.Fatalf("%v: hash %s, Hash %s", out, res.hash(), res.Hash())
		}
	}
	for _, res := range []Result{refusal(StatusInvalid, RuleArguments, "a[0]", "bad \"a\""), errorResult(), {Status: StatusSuccess}} {
		if res.hash() != res.Hash() {
			t.Fatalf("%+v: hash %s, Hash %s", res, res.hash(), res.Hash())
		}
	}
}

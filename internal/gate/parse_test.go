package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// validDoc is a complete agent output in its wire form, using every field.
var validDoc = `{
  "agent_id": "advocate",
  "role": "advocate",
  "round_number": 2,
  "content": "ARR of $4.5M for FY2025 (claim C1) supports the case.",
  "structured_content": {"thesis": "efficient growth", "nested": {"a": [1, 2, {"b": null}]}},
  "claim_refs": ["` + claimID(1) + `"],
  "calc_refs": ["` + calcID(3) + `"],
  "tool_calls": [{"tool": "lookup_claim", "args": {"claim_id": "` + claimID(1) + `", "include_sanad": true}}],
  "muhasabah_record": {
    "supported_claim_ids": ["` + claimID(1) + `"],
    "supported_calc_ids": ["` + calcID(3) + `"],
    "evidence_summary": "Audited ARR, three independent sources.",
    "counter_hypothesis": "ARR may include one-off services revenue.",
    "falsifiability_tests": [{"test_description": "Audit confirms ARR", "required_evidence": "FY2025 audit", "pass_fail_rule": "Fail if ARR < $4.2M"}],
    "uncertainties": [{"uncertainty": "Services mix", "impact": "ARR overstated", "mitigation": "Request revenue split"}],
    "failure_modes": ["Relying on management figures"],
    "confidence": 0.72,
    "confidence_justification": "Grade A, MUTAWATIR."
  },
  "position": {"recommendation": "INVEST", "confidence": 0.72},
  "challenges": [{"challenge_id": "ch-1", "claim_refs": ["` + claimID(2) + `"], "defect_type": "INCONSISTENCY", "severity": "MAJOR", "cure_protocol": "REQUEST_SOURCE", "evidence_refs": ["` + evID(2) + `"], "description": "The margin in the deck disagrees with the one recomputed from the model."}],
  "rulings": [{"challenge_id": "ch-0", "upheld": true, "frivolous": false, "reason": "Evidence cited."}],
  "evidence_requests": [{"query": "audited accounts", "claim_refs": ["` + claimID(1) + `"]}],
  "open_questions": ["Is the audit final?"],
  "timestamp": "2026-01-05T10:00:00Z"
}`

// minimalDoc has the required fields only.
const minimalDoc = `{"agent_id":"arbiter","role":"arbiter","content":"No ruling this turn.","claim_refs":[],"muhasabah_record":{"supported_claim_ids":[],"confidence":0.2}}`

func TestAgentOutputSchema(t *testing.T) {
	t.Parallel()

	t.Run("valid documents parse", func(t *testing.T) {
		t.Parallel()
		for _, doc := range []string{validDoc, minimalDoc} {
			out, err := ParseOutput([]byte(doc), debate.IDISRoles)
			require.NoError(t, err)
			require.NotNil(t, out.ClaimRefs, "claim_refs present, even empty")
			require.NotNil(t, out.Muhasabah.SupportedClaimIDs)
		}
		out, err := ParseOutput([]byte(validDoc), debate.IDISRoles)
		require.NoError(t, err)
		require.Equal(t, "advocate", out.AgentID)
		require.Equal(t, 2, out.RoundNumber)
		require.Equal(t, 0.72, out.Muhasabah.Confidence)
		require.Equal(t, debate.RecommendInvest, out.Position.Recommendation)
		require.Len(t, out.Challenges, 1)
		require.JSONEq(t, `{"thesis":"efficient growth","nested":{"a":[1,2,{"b":null}]}}`, string(out.StructuredContent))
		require.Equal(t, `{"claim_id":"`+claimID(1)+`","include_sanad":true}`, string(out.ToolCalls[0].Args), "args in compact form")
		// The parsed document is also valid against the deal.
		res := Validate(out, setup(t).facts, debate.IDISRoles)
		require.True(t, res.Valid, "%v", res.Violations)
	})

	t.Run("round trip", func(t *testing.T) {
		t.Parallel()
		for _, doc := range []string{validDoc, minimalDoc} {
			out, err := ParseOutput([]byte(doc), debate.IDISRoles)
			require.NoError(t, err)
			data, err := json.Marshal(out)
			require.NoError(t, err)
			again, err := ParseOutput(data, debate.IDISRoles)
			require.NoError(t, err)
			require.Equal(t, out, again)
		}
	})

	// Every bad document is rejected with a *debate.ValidationError naming
	// the field.
	set := func(path, value string) string { return setJSON(t, validDoc, path, value) }
	del := func(path string) string { return setJSON(t, validDoc, path, "") }
	cases := []struct {
		name, doc, field string
	}{
		{"missing agent_id", del("agent_id"), "agent_id"},
		{"missing role", del("role"), "role"},
		{"missing content", del("content"), "content"},
		{"missing claim_refs", del("claim_refs"), "claim_refs"},
		{"missing record", del("muhasabah_record"), "muhasabah_record"},
		{"missing confidence", del("muhasabah_record.confidence"), "muhasabah_record.confidence"},
		{"missing supported_claim_ids", del("muhasabah_record.supported_claim_ids"), "muhasabah_record.supported_claim_ids"},
		{"missing challenge field", del("challenges.0.evidence_refs"), "challenges[0].evidence_refs"},
		{"missing ruling reason", del("rulings.0.reason"), "rulings[0].reason"},
		{"missing position confidence", del("position.confidence"), "position.confidence"},
		{"missing tool args", del("tool_calls.0.args"), "tool_calls[0].args"},
		{"unknown top-level field", set("verdict", `"yes"`), "verdict"},
		{"unknown nested field", set("muhasabah_record.mood", `"calm"`), "muhasabah_record.mood"},
		{"unknown field in a test", set("muhasabah_record.falsifiability_tests.0.deadline", `"soon"`), "muhasabah_record.falsifiability_tests[0].deadline"},
		{"case-folded key", strings.Replace(validDoc, `"agent_id"`, `"Agent_ID"`, 1), "Agent_ID"},
		{"duplicate key", strings.Replace(validDoc, `"role": "advocate",`, `"role": "advocate", "role": "arbiter",`, 1), "role"},
		{"duplicate key in free object", set("structured_content", `{"a":1,"a":2}`), "structured_content.a"},
		{"null field", set("content", `null`), "content"},
		{"null list", set("claim_refs", `null`), "claim_refs"},
		{"string for number", set("muhasabah_record.confidence", `"0.7"`), "muhasabah_record.confidence"},
		{"number for string", set("content", `42`), "content"},
		{"object for list", set("claim_refs", `{}`), "claim_refs"},
		{"fractional round", set("round_number", `1.5`), "round_number"},
		{"negative round", set("round_number", `-1`), "round_number"},
		{"confidence above 1", set("muhasabah_record.confidence", `1.01`), "muhasabah_record.confidence"},
		{"confidence below 0", set("muhasabah_record.confidence", `-0.2`), "muhasabah_record.confidence"},
		{"huge confidence", set("muhasabah_record.confidence", `1e400`), "muhasabah_record.confidence"},
		{"position confidence above 1", set("position.confidence", `3`), "position.confidence"},
		{"unknown recommendation", set("position.recommendation", `"YOLO"`), "position.recommendation"},
		{"unknown role", set("role", `"intern"`), "role"},
		{"blank content", set("content", `"   "`), "content"},
		{"blank agent_id", set("agent_id", `""`), "agent_id"},
		{"id with spaces", set("claim_refs", `["a b"]`), "claim_refs[0]"},
		{"NUL in content", set("content", `"a\u0000b"`), "content"},
		{"content too long", set("content", `"`+strings.Repeat("x", MaxContentLen+1)+`"`), "content"},
		{"too many refs", set("claim_refs", jsonList(MaxRefs+1, "id-%d")), "claim_refs"},
		{"too many challenges", set("challenges", challengeList(MaxChallenges+1)), "challenges"},
		{"too many open questions", set("open_questions", jsonList(MaxOpenQuestions+1, "q %d?")), "open_questions"},
		{"too many failure modes", set("muhasabah_record.failure_modes", jsonList(MaxRecordItems+1, "mode %d")), "muhasabah_record.failure_modes"},
		{"repeated challenge id", set("challenges", `[`+challengeJSON("ch-1")+`,`+challengeJSON("ch-1")+`]`), "challenges[1].challenge_id"},
		{"structured content not an object", set("structured_content", `[1]`), "structured_content"},
		{"args not an object", set("tool_calls.0.args", `"x"`), "tool_calls[0].args"},
		{"bad timestamp", set("timestamp", `"last tuesday"`), "timestamp"},
		{"blank evidence query", set("evidence_requests.0.query", `""`), "evidence_requests[0].query"},
		{"not an object", `["agent_id"]`, rootPath},
		{"empty input", ``, rootPath},
		{"truncated", validDoc[:len(validDoc)/2], ""},
		{"trailing data", minimalDoc + ` {}`, rootPath},
		{"trailing garbage", minimalDoc + `x`, rootPath},
		{"invalid UTF-8", strings.Replace(minimalDoc, "No ruling", "No \xff ruling", 1), rootPath},
		{"too deep", set("structured_content", strings.Repeat(`{"a":`, MaxDepth+1)+`1`+strings.Repeat(`}`, MaxDepth+1)), ""},
		{"too large", `{"content":"` + strings.Repeat("x", MaxOutputBytes) + `"}`, rootPath},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := ParseOutput([]byte(tc.doc), debate.IDISRoles)
			require.Error(t, err)
			require.Nil(t, out)
			require.ErrorIs(t, err, debate.ErrInvalid)
			var ve *debate.ValidationError
			require.True(t, errors.As(err, &ve))
			require.NotEmpty(t, ve.Violations)
			if tc.field != "" {
				var fields []string
				for _, v := range ve.Violations {
					fields = append(fields, v.Field)
				}
				require.Contains(t, fields, tc.field, "%v", err)
			}
		})
	}
}

// setJSON sets (or, with value "", deletes) the member at a dotted path of
// a JSON document; numeric segments index arrays.
func setJSON(t *testing.T, doc, path, value string) string {
	t.Helper()
	var root any
	require.NoError(t, json.Unmarshal([]byte(doc), &root))
	parts := strings.Split(path, ".")
	cur := root
	for _, p := range parts[:len(parts)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			var i int
			_, err := fmt.Sscan(p, &i)
			require.NoError(t, err)
			cur = c[i]
		}
	}
	obj := cur.(map[string]any)
	last := parts[len(parts)-1]
	if value == "" {
		delete(obj, last)
	} else {
		obj[last] = json.RawMessage(value)
	}
	data, err := json.Marshal(root)
	require.NoError(t, err)
	return string(data)
}

func jsonList(n int, format string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`"`+format+`"`, i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

func challengeJSON(id string) string {
	return `{"challenge_id":"` + id + `","claim_refs":[],"defect_type":"","evidence_refs":[],"description":""}`
}

func challengeList(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = challengeJSON(fmt.Sprintf("ch-%d", i))
	}
	return "[" + strings.Join(items, ",") + "]"
}

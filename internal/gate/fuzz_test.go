package gate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// FuzzParseOutput: ParseOutput never panics, fails only with a
// *debate.ValidationError, and whatever it accepts re-marshals and
// re-parses to the same value (and the gate can judge it).
func FuzzParseOutput(f *testing.F) {
	f.Add([]byte(validDoc))
	f.Add([]byte(minimalDoc))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"agent_id":"a","role":"advocate","content":"x","claim_refs":[],"muhasabah_record":{"supported_claim_ids":[],"confidence":0},"structured_content":{"a":"<&>"},"calc_refs":[],"open_questions":[]}`))
	f.Add([]byte(`{"agent_id":"a","agent_id":"b"}`))
	f.Add([]byte(`{"AGENT_ID":"a"}`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"content":"\ud800"}`))
	for _, o := range validCorpus(8) {
		data, err := json.Marshal(o)
		require.NoError(f, err)
		f.Add(data)
	}
	fx := newFixture()
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := ParseOutput(data, debate.IDISRoles)
		if err != nil {
			require.Nil(t, out)
			var ve *debate.ValidationError
			require.True(t, errors.As(err, &ve), "error %T: %v", err, err)
			require.NotEmpty(t, ve.Violations)
			return
		}
		again, err := json.Marshal(out)
		require.NoError(t, err)
		out2, err := ParseOutput(again, debate.IDISRoles)
		require.NoError(t, err, "re-parse of %s", again)
		require.Equal(t, out, out2)
		// The gate judges whatever parses, deterministically.
		require.Equal(t, Validate(out, fx.facts, debate.IDISRoles), Validate(out2, fx.facts, debate.IDISRoles))
	})
}

// FuzzNoFreeFacts: NoFreeFacts never panics, is deterministic, and is
// monotone: adding a known ref never adds a violation.
func FuzzNoFreeFacts(f *testing.F) {
	for _, s := range []string{
		"", "ARR reached $4.5M in FY2025 (C1).", "I defer to the next round.", "Acme signed 3 LOIs.",
		"See " + claimID(3) + " and C42 and 00000000-0000-4000-8000-000000000999.", "Gross margin is 72.5%",
		"×½٪€ Q4 2025 — ١٢٣ customers", "C1's chain; C5.", "INVEST_WITH_CONDITIONS AHAD_1 BROKEN_CHAIN",
	} {
		f.Add(s, "", uint8(0))
		f.Add(s, claimID(1)+","+otherDealClaim, uint8(3))
	}
	fx := newFixture()
	known := []string{claimID(1), claimID(3), claimID(5), claimID(7), calcID(1), calcID(3)}
	set := func(vs []debate.Violation) map[debate.Violation]bool {
		m := map[debate.Violation]bool{}
		for _, v := range vs {
			m[v] = true
		}
		return m
	}
	f.Fuzz(func(t *testing.T, text, refList string, pick uint8) {
		var refs []string
		if refList != "" {
			refs = strings.Split(refList, ",")
		}
		before := NoFreeFacts(text, refs, fx.facts)
		require.Equal(t, before, NoFreeFacts(text, refs, fx.facts), "deterministic")
		after := NoFreeFacts(text, append(refs[:len(refs):len(refs)], known[int(pick)%len(known)]), fx.facts)
		was := set(before)
		for _, v := range after {
			require.True(t, was[v], "adding a known ref added %+v", v)
		}
		// With refs, a text's facts are supported: only reference problems
		// remain.
		for _, v := range after {
			if v.Rule == RuleNoFreeFacts {
				require.True(t, strings.HasPrefix(v.Detail, "cites "), "%+v", v)
			}
		}
	})
}

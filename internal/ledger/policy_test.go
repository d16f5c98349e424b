package ledger

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// agentPolicy is the policy of the agent protocol of seed 003.
func agentPolicy() Policy {
	return Policy{
		RoleGuard: map[string][]string{
			"session_initialized":        {"engine"},
			TypeProposalCreated:          {"planner"},
			"proposal_reviewed":          {"critic"},
			TypeToolIntentSigned:         {"executor"},
			TypeToolIntentBlocked:        {"critic"},
			TypeToolExecutionStarted:     {"engine"},
			TypeToolExecutionCompleted:   {"executor"},
			TypeToolExecutionFailed:      {"executor"},
			TypeClaimIssued:              {"executor"},
			TypeClaimChallenged:          {"critic"},
			TypeFinalStatementSigned:     {"planner"},
			TypeVerificationRunStarted:   {"auditor"},
			TypeVerificationRunCompleted: {"auditor"},
			"checkpoint":                 {"engine"},
			"session_completed":          {"engine"},
			"session_failed":             {"engine"},
		},
		StrictRoles: true,
		Bookkeeping: []string{"checkpoint", "session_completed", "session_failed"},
		Terminal:    []string{"session_completed", "session_failed"},
	}
}

// agentFlow is a complete, valid session of the agent protocol.
func agentFlow() []spec {
	return []spec{
		ev("session_initialized", "engine", ``),                                                 // 1
		ev(TypeProposalCreated, "planner", `{"proposal_id":"p1"}`),                              // 2
		ev("proposal_reviewed", "critic", `{"proposal_id":"p1","status":"approved"}`),           // 3
		ev(TypeToolIntentSigned, "executor", `{"intent_id":"i1","tool":"search","risk":"low"}`), // 4
		ev(TypeToolExecutionStarted, "engine", `{"intent_id":"i1","execution_id":"x1"}`),        // 5
		ev(TypeToolExecutionCompleted, "executor", `{"intent_id":"i1","execution_id":"x1"}`),    // 6
		ev(TypeToolIntentSigned, "executor", `{"intent_id":"i2","tool":"fetch"}`),               // 7
		ev(TypeToolExecutionFailed, "executor", `{"intent_id":"i2","execution_id":"x2"}`),       // 8
		ev(TypeClaimIssued, "executor", `{"claim_id":"c1","execution_ids":["x1","x2"]}`),        // 9
		ev(TypeClaimChallenged, "critic", `{"claim_id":"c1","reason":"weak"}`),                  // 10
		ev(TypeFinalStatementSigned, "planner", `{"claims":["c1"]}`),                            // 11
		ev("checkpoint", "engine", ``),                                                          // 12
		ev(TypeVerificationRunStarted, "auditor", ``),                                           // 13
		ev(TypeVerificationRunCompleted, "auditor", `{"status":"pass","report":"sha256:abc"}`),  // 14
		ev("session_completed", "engine", ``),                                                   // 15
		ev("checkpoint", "engine", ``),                                                          // 16
	}
}

// flowWith returns the agent flow with the events at the given 1-based
// positions replaced (a nil spec deletes) and extra events inserted before
// the position given in insert.
func flowWith(replace map[int]*spec, insert map[int][]spec) []spec {
	var out []spec
	for i, s := range agentFlow() {
		pos := i + 1
		out = append(out, insert[pos]...)
		if r, ok := replace[pos]; ok {
			if r != nil {
				out = append(out, *r)
			}
			continue
		}
		out = append(out, s)
	}
	return append(out, insert[len(agentFlow())+1]...)
}

func sp(typ, actor, payload string) *spec { s := ev(typ, actor, payload); return &s }

func TestPolicyRules(t *testing.T) {
	t.Parallel()
	f := setup(t)
	strict := agentPolicy()
	loose := Policy{}
	minTwo := agentPolicy()
	minTwo.MinClaimExecutions = 2
	minThree := agentPolicy()
	minThree.MinClaimExecutions = 3

	cases := []struct {
		name   string
		specs  []spec
		policy Policy
		seq    int64 // 0: the ledger verifies
		rule   string
	}{
		// Positive cases.
		{name: "the whole agent flow", specs: agentFlow(), policy: strict},
		{name: "the agent flow without engine events, no policy", specs: flowWith(map[int]*spec{12: nil, 15: nil, 16: nil}, nil), policy: loose},
		{name: "claim with the minimum number of executions", specs: agentFlow(), policy: minTwo},
		{name: "verification run twice", specs: flowWith(nil, map[int][]spec{15: {
			ev(TypeVerificationRunStarted, "auditor", ``), ev(TypeVerificationRunCompleted, "auditor", `{"status":"pass"}`),
		}}), policy: strict},
		{name: "retry signs a new intent", specs: flowWith(nil, map[int][]spec{9: {
			ev(TypeToolIntentSigned, "executor", `{"intent_id":"i3"}`),
			ev(TypeToolExecutionCompleted, "executor", `{"intent_id":"i3","execution_id":"x3"}`),
		}}), policy: strict},
		{name: "intent signed and never executed", specs: flowWith(map[int]*spec{5: nil, 6: nil, 9: sp(TypeClaimIssued, "executor", `{"claim_id":"c1","execution_ids":["x2"]}`)}, nil), policy: strict},
		{name: "claim without executions and no minimum", specs: flowWith(map[int]*spec{9: sp(TypeClaimIssued, "executor", `{"claim_id":"c1"}`)}, nil), policy: strict},
		{name: "a debate that never finalises", specs: agentFlow()[:10], policy: strict},
		{name: "bookkeeping between final statement and verification", specs: flowWith(nil, map[int][]spec{14: {ev("checkpoint", "engine", ``)}}), policy: strict},
		{name: "types outside the role guard, not strict", specs: flowWith(nil, map[int][]spec{2: {ev("note", "planner", ``)}}), policy: func() Policy { p := agentPolicy(); p.StrictRoles = false; return p }()},

		// Role guard.
		{name: "wrong actor for a guarded type", specs: flowWith(map[int]*spec{11: sp(TypeFinalStatementSigned, "executor", ``)}, nil), policy: strict, seq: 11, rule: RuleRoleGuard},
		{name: "unguarded type under strict roles", specs: flowWith(nil, map[int][]spec{2: {ev("note", "planner", ``)}}), policy: strict, seq: 2, rule: RuleRoleGuard},
		{name: "auditor completes a proposal", specs: flowWith(map[int]*spec{2: sp(TypeProposalCreated, "auditor", ``)}, nil), policy: strict, seq: 2, rule: RuleRoleGuard},

		// tool_intent_signed must precede any tool execution event.
		{name: "execution started before its intent", specs: flowWith(map[int]*spec{4: nil}, map[int][]spec{6: {ev(TypeToolIntentSigned, "executor", `{"intent_id":"i1"}`)}}), policy: strict, seq: 4, rule: RuleToolIntent},
		{name: "execution of an unknown intent", specs: flowWith(map[int]*spec{6: sp(TypeToolExecutionCompleted, "executor", `{"intent_id":"i9","execution_id":"x1"}`)}, nil), policy: strict, seq: 6, rule: RuleToolIntent},
		{name: "execution without intent_id", specs: flowWith(map[int]*spec{5: sp(TypeToolExecutionStarted, "engine", `{"execution_id":"x1"}`)}, nil), policy: strict, seq: 5, rule: RuleToolIntent},
		{name: "intent_id not a string", specs: flowWith(map[int]*spec{5: sp(TypeToolExecutionStarted, "engine", `{"intent_id":1,"execution_id":"x1"}`)}, nil), policy: strict, seq: 5, rule: RuleToolIntent},
		{name: "intent_id differs in case", specs: flowWith(map[int]*spec{5: sp(TypeToolExecutionStarted, "engine", `{"Intent_ID":"i1","execution_id":"x1"}`)}, nil), policy: strict, seq: 5, rule: RuleToolIntent},
		{name: "execution without execution_id", specs: flowWith(map[int]*spec{6: sp(TypeToolExecutionCompleted, "executor", `{"intent_id":"i1"}`)}, nil), policy: strict, seq: 6, rule: RuleToolIntent},
		{name: "intent without intent_id", specs: flowWith(map[int]*spec{4: sp(TypeToolIntentSigned, "executor", `{}`)}, nil), policy: strict, seq: 4, rule: RuleToolIntent},
		{name: "intent signed twice", specs: flowWith(map[int]*spec{7: sp(TypeToolIntentSigned, "executor", `{"intent_id":"i1"}`)}, nil), policy: strict, seq: 7, rule: RuleToolIntent},
		{name: "execution of a blocked intent", specs: flowWith(nil, map[int][]spec{5: {ev(TypeToolIntentBlocked, "critic", `{"intent_id":"i1"}`)}}), policy: strict, seq: 6, rule: RuleToolIntent},
		{name: "block of an unknown intent", specs: flowWith(nil, map[int][]spec{5: {ev(TypeToolIntentBlocked, "critic", `{"intent_id":"i7"}`)}}), policy: strict, seq: 5, rule: RuleToolIntent},
		{name: "retry without a new intent", specs: flowWith(nil, map[int][]spec{7: {ev(TypeToolExecutionStarted, "engine", `{"intent_id":"i1","execution_id":"x9"}`)}}), policy: strict, seq: 7, rule: RuleToolIntent},
		{name: "execution started twice", specs: flowWith(nil, map[int][]spec{6: {ev(TypeToolExecutionStarted, "engine", `{"intent_id":"i1","execution_id":"x1"}`)}}), policy: strict, seq: 6, rule: RuleToolIntent},
		{name: "execution finishes twice", specs: flowWith(map[int]*spec{8: sp(TypeToolExecutionFailed, "executor", `{"intent_id":"i2","execution_id":"x1"}`)}, nil), policy: strict, seq: 8, rule: RuleToolIntent},
		{name: "execution finishes under another intent", specs: flowWith(map[int]*spec{6: sp(TypeToolExecutionCompleted, "executor", `{"intent_id":"i2","execution_id":"x1"}`), 7: nil}, map[int][]spec{5: {ev(TypeToolIntentSigned, "executor", `{"intent_id":"i2"}`)}}), policy: strict, seq: 7, rule: RuleToolIntent},

		// tool_execution_completed or _failed must precede the claim.
		{name: "claim before its execution finishes", specs: flowWith(map[int]*spec{9: nil}, map[int][]spec{6: {ev(TypeClaimIssued, "executor", `{"claim_id":"c1","execution_ids":["x1"]}`)}}), policy: strict, seq: 6, rule: RuleClaimEvidence},
		{name: "claim of an unknown execution", specs: flowWith(map[int]*spec{9: sp(TypeClaimIssued, "executor", `{"claim_id":"c1","execution_ids":["x1","x7"]}`)}, nil), policy: strict, seq: 9, rule: RuleClaimEvidence},
		{name: "claim naming an intent, not an execution", specs: flowWith(map[int]*spec{9: sp(TypeClaimIssued, "executor", `{"claim_id":"c1","execution_ids":["i1"]}`)}, nil), policy: strict, seq: 9, rule: RuleClaimEvidence},
		{name: "execution_ids not a list of strings", specs: flowWith(map[int]*spec{9: sp(TypeClaimIssued, "executor", `{"claim_id":"c1","execution_ids":"x1"}`)}, nil), policy: strict, seq: 9, rule: RuleClaimEvidence},
		{name: "claim below the minimum evidence", specs: agentFlow(), policy: minThree, seq: 9, rule: RuleClaimEvidence},
		{name: "duplicate execution ids count once", specs: flowWith(map[int]*spec{9: sp(TypeClaimIssued, "executor", `{"claim_id":"c1","execution_ids":["x1","x1"]}`)}, nil), policy: minTwo, seq: 9, rule: RuleClaimEvidence},

		// Challenges name earlier claims.
		{name: "challenge of an unknown claim", specs: flowWith(map[int]*spec{10: sp(TypeClaimChallenged, "critic", `{"claim_id":"c2"}`)}, nil), policy: strict, seq: 10, rule: RuleClaimChallenge},
		{name: "challenge without claim_id", specs: flowWith(map[int]*spec{10: sp(TypeClaimChallenged, "critic", ``)}, nil), policy: strict, seq: 10, rule: RuleClaimChallenge},

		// final_statement_signed is the last role event before verification completion.
		{name: "two final statements", specs: flowWith(nil, map[int][]spec{12: {ev(TypeFinalStatementSigned, "planner", ``)}}), policy: strict, seq: 12, rule: RuleFinalStatement},
		{name: "role event after the final statement", specs: flowWith(nil, map[int][]spec{12: {ev(TypeClaimChallenged, "critic", `{"claim_id":"c1"}`)}}), policy: strict, seq: 12, rule: RuleFinalStatement},
		{name: "verification completed without a final statement", specs: flowWith(map[int]*spec{11: nil}, nil), policy: strict, seq: 13, rule: RuleFinalStatement},
		{name: "final statement after the verification", specs: flowWith(map[int]*spec{11: nil}, map[int][]spec{15: {ev(TypeFinalStatementSigned, "planner", ``)}}), policy: loose, seq: 13, rule: RuleFinalStatement},
		{name: "final statement rules apply with no policy", specs: flowWith(nil, map[int][]spec{12: {ev("note", "planner", ``)}}), policy: loose, seq: 12, rule: RuleFinalStatement},

		// Terminal events end the ledger but for bookkeeping.
		{name: "role event after the terminal event", specs: flowWith(nil, map[int][]spec{17: {ev(TypeProposalCreated, "planner", ``)}}), policy: strict, seq: 17, rule: RuleTerminal},
		{name: "second verification after the terminal event", specs: flowWith(nil, map[int][]spec{17: {ev(TypeVerificationRunStarted, "auditor", ``)}}), policy: strict, seq: 17, rule: RuleTerminal},
		{name: "terminal failure early", specs: flowWith(nil, map[int][]spec{5: {ev("session_failed", "engine", ``)}}), policy: strict, seq: 6, rule: RuleTerminal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			es := f.chain(t, tc.specs...)
			keys := f.kr.PublicKeys(f.tenant, Actors(es))
			r := Verify(es, keys, tc.policy)
			if tc.seq == 0 {
				requireOK(t, r)
				return
			}
			requireBad(t, r, tc.seq, tc.rule)
			// Integrity is intact: only policy rules fail.
			for _, p := range r.Problems {
				require.NotContains(t, []string{RuleSeq, RuleScope, RulePrevHash, RuleHash, RuleKeyID, RuleSigner, RuleSignature, RuleMalformed}, p.Rule)
			}
		})
	}
}

func TestPolicyJSON(t *testing.T) {
	t.Parallel()
	p := agentPolicy()
	p.MinClaimExecutions = 1
	data, err := json.Marshal(p)
	require.NoError(t, err)
	var back Policy
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, p, back)
	require.Contains(t, string(data), `"role_guard":{`)
	require.Contains(t, string(data), `"bookkeeping":["checkpoint"`)

	empty, err := json.Marshal(Policy{})
	require.NoError(t, err)
	require.JSONEq(t, `{}`, string(empty))
}

func TestActors(t *testing.T) {
	t.Parallel()
	f := setup(t)
	es := f.chain(t, plain()...)
	require.Equal(t, []string{"advocate", "arbiter", "engine", "sanad_breaker"}, Actors(es))
	require.True(t, slices.IsSorted(Actors(es)))
	require.Empty(t, Actors(nil))
}

package agentproto_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocols/agentproto"
	"github.com/stretchr/testify/require"
)

// edit returns a copy of evs with the payload of the first event of type
// typ changed by f (or the event removed when f returns nil).
func edit(t *testing.T, evs []debate.Event, typ string, f func(m map[string]any) map[string]any) []debate.Event {
	t.Helper()
	out := slices.Clone(evs)
	for i, e := range out {
		if e.Type != typ {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(e.Payload, &m))
		m = f(m)
		if m == nil {
			return slices.Delete(out, i, i+1)
		}
		raw, err := json.Marshal(m)
		require.NoError(t, err)
		out[i].Payload = raw
		return out
	}
	t.Fatalf("no %s event", typ)
	return nil
}

// TestInvariantsCatchViolations: a finished session's trace passes the
// invariants; each kind of violation, made by editing it, is found with
// its rule.
func TestInvariantsCatchViolations(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	_, evs := b.finish(t, b.create(t, runwayTask()))
	ps, _ := agentproto.CheckInvariants(evs)
	require.Empty(t, ps)

	for name, tc := range map[string]struct {
		typ  string
		f    func(m map[string]any) map[string]any
		rule string
	}{
		"execution without the critic's approval": {agentproto.EventIntentApproved, func(map[string]any) map[string]any { return nil }, agentproto.RuleApproval},
		"intent for a rejected proposal": {agentproto.EventProposalReviewed, func(m map[string]any) map[string]any {
			m["status"] = agentproto.ReviewRejected
			return m
		}, agentproto.RuleApproval},
		"artifact content changed": {agentproto.EventArtifact, func(m map[string]any) map[string]any {
			m["content"] = map[string]any{"claim_key": "C9"}
			return m
		}, agentproto.RuleArtifact},
		"execution without artifacts": {agentproto.EventExecutionCompleted, func(m map[string]any) map[string]any {
			m["artifact_hashes"] = []any{}
			return m
		}, agentproto.RuleArtifact},
		"execution without its tool call audit": {agentproto.EventToolCall, func(map[string]any) map[string]any { return nil }, agentproto.RuleToolAudit},
		"completion of a refused tool call": {agentproto.EventToolCall, func(m map[string]any) map[string]any {
			m["result_status"] = "DENIED"
			return m
		}, agentproto.RuleToolAudit},
		"tool call audit naming no execution": {agentproto.EventToolCall, func(m map[string]any) map[string]any {
			delete(m, "execution_id")
			return m
		}, agentproto.RuleToolAudit},
		"claim without evidence": {agentproto.EventClaimIssued, func(m map[string]any) map[string]any {
			m["evidence_refs"] = []any{}
			return m
		}, agentproto.RuleEvidence},
		"claim on an unknown execution": {agentproto.EventClaimIssued, func(m map[string]any) map[string]any {
			m["execution_ids"] = []any{"x-none"}
			return m
		}, agentproto.RuleEvidence},
		"final statement leaves out a claim": {agentproto.EventFinalStatement, func(m map[string]any) map[string]any {
			m["claims"] = []any{}
			return m
		}, agentproto.RuleFinalBundle},
		"transition skipping a state": {agentproto.EventTransition, func(m map[string]any) map[string]any {
			m["to"] = agentproto.StateExecuting
			return m
		}, agentproto.RuleLifecycle},
		"report naming another head": {agentproto.EventVerificationComplete, func(m map[string]any) map[string]any {
			m["head_hash"] = "00"
			return m
		}, agentproto.RuleTraceRef},
		"completion without a passing verifier": {agentproto.EventVerificationComplete, func(m map[string]any) map[string]any {
			m["status"] = agentproto.VerificationFail
			return m
		}, agentproto.RuleLifecycle},
	} {
		ps, _ := agentproto.CheckInvariants(edit(t, evs, tc.typ, tc.f))
		var rules []string
		for _, p := range ps {
			rules = append(rules, p.Rule)
		}
		require.Contains(t, rules, tc.rule, name)
	}
}

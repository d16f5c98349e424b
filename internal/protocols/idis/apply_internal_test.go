package idis

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// TestForMergeKeepsWhatApplyReads: a branch's cut-down result, through
// the encoding merge decodes, changes a state as the full result does.
func TestForMergeKeepsWhatApplyReads(t *testing.T) {
	full := debate.AgentOutput{
		AgentID: debate.RoleRiskOfficer, Role: debate.RoleRiskOfficer, RoundNumber: 2, Content: "runway is short",
		ClaimRefs: []string{"c1"}, StructuredContent: json.RawMessage(`{"k":"v"}`),
		Muhasabah: debate.Muhasabah{SupportedClaimIDs: []string{"c1"}, Confidence: 0.67, EvidenceSummary: "s",
			Uncertainties: []debate.Uncertainty{{Uncertainty: "u", Impact: "i", Mitigation: "m"}}},
		Position:         &debate.Position{Recommendation: "DECLINE", Confidence: 0.71},
		EvidenceRequests: []debate.EvidenceRequest{{Query: "burn rate", ClaimRefs: []string{"c1"}}, {Query: ""}},
		OpenQuestions:    []string{"who audits?", "who audits?", "churn?"},
	}
	noPosition := full
	noPosition.Position = nil
	for _, res := range []turnResult{
		{Role: debate.RoleRiskOfficer, Round: 2, Accepted: &full, Usage: tools.Usage{debate.RoleRiskOfficer: {tools.LookupClaim: 2}},
			Flagged: []debate.Defect{{ID: "d1", ClaimID: "c1"}}, Reviews: []reviewRequest{{ClaimIDs: []string{"c1"}, Reason: "r", Round: 2}}, Breaches: 1},
		{Role: debate.RoleContradictionFinder, Round: 2, Accepted: &noPosition},
		{Role: debate.RoleContradictionFinder, Round: 2, Rejected: true},
	} {
		want, got := newState(), newState()
		want.apply(res, 2)
		raw, err := json.Marshal(res.forMerge())
		require.NoError(t, err)
		var back turnResult
		require.NoError(t, json.Unmarshal(raw, &back))
		got.apply(back, 2)
		require.Equal(t, want, got)
	}
}

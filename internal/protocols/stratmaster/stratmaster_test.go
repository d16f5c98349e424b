package stratmaster_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/stratmaster"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/tools"
)

// TestRevisionSatisfiesConstitution: the first pass breaks the
// constitution (hypotheses on one evidence item), the critic sends the work
// back to research with actionable feedback, and the second pass satisfies
// it; on both backends the task completes with the same hypotheses.
func TestRevisionSatisfiesConstitution(t *testing.T) {
	t.Parallel()
	model, calls := modelServer(t, false)
	var fingerprints [][]string
	for _, backend := range []string{"rules", "llm"} {
		var b *bench
		if backend == "llm" {
			b = setup(t, model)
		} else {
			b = setup(t, nil)
		}
		b.importDeal(t, storetest.SampleBundle("deal-s"))
		d, evs := b.task(t, "deal-s", map[string]any{"question": question, "constitution": twoSources})
		require.Equal(t, debate.DebateCompleted, d.Status, backend)
		require.Equal(t, stratmaster.ReasonSatisfied, d.StopReason, backend)
		require.Equal(t, []string{stratmaster.StatusInProgress, stratmaster.StatusComplete}, statuses(t, evs), backend)

		reviews := ofType(evs, stratmaster.EventReview)
		require.Len(t, reviews, 2, backend)
		var first, second stratmaster.Review
		require.NoError(t, json.Unmarshal(reviews[0].Payload, &first))
		require.NoError(t, json.Unmarshal(reviews[1].Payload, &second))
		require.False(t, first.Passed)
		require.False(t, first.Principles[0].Passed, "P1 fails on the first pass")
		require.Equal(t, stratmaster.ActionGatherEvidence, first.Feedback[0].Action)
		require.NotEmpty(t, first.Feedback[0].ClaimIDs, "the feedback names the claims to look up")
		require.True(t, second.Passed)
		require.Len(t, ofType(evs, stratmaster.EventRevision), 1)

		// The second pass looked the named claims up: lookup_claim calls,
		// audited like every call.
		lookups := 0
		for _, e := range ofType(evs, stratmaster.EventToolCall) {
			var a tools.Audit
			require.NoError(t, json.Unmarshal(e.Payload, &a))
			require.Equal(t, stratmaster.RoleResearcher, e.Actor)
			require.Equal(t, tools.StatusSuccess, a.ResultStatus)
			if a.ToolName == tools.LookupClaim {
				require.Equal(t, 2, e.Round, "lookups come with the revision")
				lookups++
			}
		}
		require.Equal(t, len(first.Feedback[0].ClaimIDs), lookups)

		var del stratmaster.Deliverables
		require.NoError(t, json.Unmarshal(ofType(evs, stratmaster.EventDeliverables)[0].Payload, &del))
		require.Equal(t, stratmaster.StatusComplete, del.Status)
		require.Equal(t, 2, del.Passes)
		require.Equal(t, 1, del.Revisions)
		require.NotEmpty(t, del.Hypotheses)
		require.Contains(t, del.Markdown, "# StratMaster task")
		var fps []string
		for _, h := range del.Hypotheses {
			require.GreaterOrEqual(t, len(h.EvidenceIDs), 2, "P1 holds for %s", h.ID)
			require.Equal(t, stratmaster.Fingerprint(h.Statement, h.EvidenceIDs), h.Fingerprint)
			require.Len(t, h.Provenance, len(h.EvidenceIDs), "every cited item has its provenance")
			for _, p := range h.Provenance {
				require.Contains(t, []string{tools.SearchEvidence, tools.LookupClaim}, p.Tool)
				require.NotEmpty(t, p.ResultHash)
			}
			fps = append(fps, h.Fingerprint)
		}
		fingerprints = append(fingerprints, fps)
		require.NotEmpty(t, del.SetAside, "a claim with a single source is set aside on the second pass")

		names := map[string]bool{}
		for _, e := range ofType(evs, stratmaster.EventArtifact) {
			var a struct {
				Name string `json:"name"`
			}
			require.NoError(t, json.Unmarshal(e.Payload, &a))
			names[a.Name] = true
		}
		for _, n := range []string{stratmaster.ReviewArtifact(1), stratmaster.ReviewArtifact(2), stratmaster.ArtifactAgentState,
			stratmaster.ArtifactPlan, stratmaster.ArtifactDebateLog} {
			require.True(t, names[n], "%s: artifact %s", backend, n)
		}
	}
	require.Equal(t, fingerprints[0], fingerprints[1], "both backends reach the same hypotheses")
	require.Positive(t, calls.Load())
}

// TestRevisionsAreBounded: a constitution the work can never satisfy ends
// the task in needs_review once max_revisions are spent.
func TestRevisionsAreBounded(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.importDeal(t, storetest.SampleBundle("deal-u"))
	for _, revisions := range []int{0, 1} {
		d, evs := b.task(t, "deal-u", map[string]any{"question": question, "constitution": unreachable, "max_revisions": revisions})
		require.Equal(t, debate.DebateNeedsReview, d.Status)
		require.Equal(t, stratmaster.ReasonUnsatisfied, d.StopReason)
		require.Len(t, ofType(evs, stratmaster.EventReview), revisions+1)
		require.Len(t, ofType(evs, stratmaster.EventRevision), revisions)
		st := statuses(t, evs)
		require.Equal(t, stratmaster.StatusNeedsReview, st[len(st)-1])
		var del stratmaster.Deliverables
		require.NoError(t, json.Unmarshal(ofType(evs, stratmaster.EventDeliverables)[0].Payload, &del))
		require.Equal(t, stratmaster.StatusNeedsReview, del.Status)
		require.Equal(t, "needs_review", del.DebateStatus)
	}
}

// TestFailingWorkEndsInNeedsReview: a model that never answers in JSON has
// its answers rejected; after max_attempts failed attempts (the engine
// retrying in between) the task ends in needs_review with the rejection on
// record.
func TestFailingWorkEndsInNeedsReview(t *testing.T) {
	t.Parallel()
	model, _ := modelServer(t, true)
	b := setup(t, model)
	b.importDeal(t, storetest.SampleBundle("deal-f"))
	for _, attempts := range []int{3, 1} {
		d, evs := b.task(t, "deal-f", map[string]any{"question": question, "constitution": twoSources, "max_attempts": attempts})
		require.Equal(t, debate.DebateNeedsReview, d.Status)
		require.Equal(t, stratmaster.ReasonAttemptsExhausted, d.StopReason)
		require.Len(t, ofType(evs, orchestrator.EventNodeRetry), attempts-1, "the engine retried the node")
		rej := ofType(evs, stratmaster.EventOutputRejected)
		require.Len(t, rej, 1)
		require.Equal(t, stratmaster.RoleResearcher, rej[0].Actor)
		require.Equal(t, []string{stratmaster.StatusNeedsReview}, statuses(t, evs))
		require.Empty(t, ofType(evs, stratmaster.EventToolCall), "a rejected plan runs no tool")
		var del stratmaster.Deliverables
		require.NoError(t, json.Unmarshal(ofType(evs, stratmaster.EventDeliverables)[0].Payload, &del))
		require.Equal(t, stratmaster.ReasonAttemptsExhausted, del.StopReason)
		require.Contains(t, del.StopWhy, "researcher failed")
	}
}

// TestDebateRunsOnlyWhenNeeded: on a deal graded C the hypotheses are below
// the confidence threshold and the strategist and adversary debate them; on
// a deal whose evidence is all graded A and corroborated they are not
// debated.
func TestDebateRunsOnlyWhenNeeded(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	weak := storetest.SampleBundle("deal-weak")
	strong := storetest.SampleBundle("deal-strong")
	for i := range strong.Evidence {
		strong.Evidence[i].SourceGrade = debate.GradeA
	}
	b.importDeal(t, weak)
	b.importDeal(t, strong)
	const easy = "id: easy\nversion: \"1\"\nprinciples:\n  - id: P1\n    description: one source is enough\n    rule:\n      min_evidence_per_hypothesis: 1\n"
	for _, tc := range []struct {
		deal   string
		debate bool
	}{{"deal-weak", true}, {"deal-strong", false}} {
		d, evs := b.task(t, tc.deal, map[string]any{"question": "What gross margin does the model show?", "constitution": easy})
		require.Equal(t, debate.DebateCompleted, d.Status, tc.deal)
		var h struct {
			Required   bool                     `json:"debate_required"`
			Reasons    []string                 `json:"debate_reasons"`
			Hypotheses []stratmaster.Hypothesis `json:"hypotheses"`
		}
		require.NoError(t, json.Unmarshal(ofType(evs, stratmaster.EventHypotheses)[0].Payload, &h))
		require.NotEmpty(t, h.Hypotheses, tc.deal)
		require.Equal(t, tc.debate, h.Required, "%s: %v", tc.deal, h.Reasons)
		turns := ofType(evs, stratmaster.EventDebateTurn)
		if !tc.debate {
			require.Empty(t, turns, tc.deal)
			for _, x := range h.Hypotheses {
				require.GreaterOrEqual(t, x.Confidence, stratmaster.DebateConfidenceThreshold)
			}
			continue
		}
		require.Len(t, turns, 2, "a challenge and a rebuttal")
		require.Equal(t, stratmaster.RoleAdversary, turns[0].Actor)
		require.Equal(t, stratmaster.RoleStrategist, turns[1].Actor)
	}
}

// TestNoEvidenceFails: a question the deal has no evidence for ends the
// task failed, with its deliverables.
func TestNoEvidenceFails(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.importDeal(t, storetest.SampleBundle("deal-n"))
	d, evs := b.task(t, "deal-n", map[string]any{"question": "zebra quokka pangolin", "constitution": twoSources})
	require.Equal(t, debate.DebateFailed, d.Status)
	require.Equal(t, stratmaster.ReasonNoEvidence, d.StopReason)
	require.Equal(t, []string{stratmaster.StatusInProgress, stratmaster.StatusFailed}, statuses(t, evs))
	require.Len(t, ofType(evs, stratmaster.EventDeliverables), 1)
}

// TestOnlyTheResearcherCallsTools: the permission matrix gives tools to the
// researcher alone; the invoker refuses and audits any other role's call.
func TestOnlyTheResearcherCallsTools(t *testing.T) {
	t.Parallel()
	p := stratmaster.Protocol(stratmaster.Config{})
	require.NoError(t, p.Validate())
	require.ElementsMatch(t, []string{tools.SearchEvidence, tools.LookupClaim}, p.Tools[stratmaster.RoleResearcher])
	b := storetest.SampleBundle("deal-p")
	inv := tools.NewInvoker(tools.Config{Matrix: stratmaster.Matrix, Deal: &tools.Deal{Bundle: b}})
	args := json.RawMessage(`{"query":"runway","deal_id":"deal-p"}`)
	for _, role := range stratmaster.Roles {
		res, audit := inv.Call(t.Context(), role, debate.ToolCall{Tool: tools.SearchEvidence, Args: args})
		if role == stratmaster.RoleResearcher {
			require.Equal(t, tools.StatusSuccess, res.Status)
			continue
		}
		require.Equal(t, tools.StatusDenied, res.Status, role)
		require.Equal(t, tools.RulePermission, audit.Rule, role)
	}
	require.Len(t, inv.Audits(), len(stratmaster.Roles))
}

package stratmaster_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/stratmaster"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/openaitest"
	"github.com/debated/debated/internal/tools"
)

// TestRevisionSatisfiesConstitution: the first pass breaks the
// constitution (hypotheses on one evidence item), the critic sends the work
// back to research with actionable feedback, and the second pass satisfies
// it; on both backends the task completes with the same hypotheses.
func TestRevisionSatisfiesConstitution(t *testing.T) {
	t.Parallel()
	model, srv := modelServer(t, nil)
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
	require.Positive(t, srv.Calls())
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
	model, _ := modelServer(t, always)
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

// TestOnlyTheResearcherCallsTools: in a real task on a model, every tool
// call on the ledger is the researcher's, made in the research node and
// audited with the tools' clock, and no role's model is offered a tool:
// the server runs the researcher's plan. The protocol has no tool path for
// any other role (its matrix and role guard give tools and their audit
// events to the researcher alone), so no other role can attempt one.
func TestOnlyTheResearcherCallsTools(t *testing.T) {
	t.Parallel()
	p := stratmaster.Protocol(stratmaster.Config{})
	require.NoError(t, p.Validate())
	require.Equal(t, map[string][]string{stratmaster.RoleResearcher: {tools.SearchEvidence, tools.LookupClaim}}, p.Tools)
	require.Equal(t, []string{stratmaster.RoleResearcher}, p.RoleGuard[stratmaster.EventToolCall])

	model, srv := modelServer(t, nil)
	b := setup(t, model)
	b.importDeal(t, storetest.SampleBundle("deal-p"))
	d, evs := b.task(t, "deal-p", map[string]any{"question": question, "constitution": twoSources})
	require.Equal(t, debate.DebateCompleted, d.Status)
	calls := ofType(evs, stratmaster.EventToolCall)
	used := map[string]int{}
	for _, e := range calls {
		require.Equal(t, stratmaster.RoleResearcher, e.Actor)
		require.Equal(t, stratmaster.NodeResearch, e.Node)
		var a tools.Audit
		require.NoError(t, json.Unmarshal(e.Payload, &a))
		require.Equal(t, stratmaster.RoleResearcher, a.AgentID)
		require.Equal(t, tools.StatusSuccess, a.ResultStatus)
		require.True(t, auditClock.Equal(a.Timestamp), "the audit time is the injected clock's, not the wall clock's")
		used[a.ToolName]++
	}
	require.Positive(t, used[tools.SearchEvidence])
	require.Positive(t, used[tools.LookupClaim])
	schemas := map[string]bool{}
	for _, r := range srv.Requests() {
		require.Empty(t, r.Tools, "%s: no model is offered a tool", r.SchemaName)
		schemas[r.SchemaName] = true
	}
	require.Len(t, schemas, 5, "every role's model was asked: %v", schemas)
}

// TestExhaustedAttemptsKeepTheLastPass: when the second pass's research
// fails its last attempt, the task closes in needs_review with the first
// pass's work (its hypotheses and plan), not the empty pass that failed.
func TestExhaustedAttemptsKeepTheLastPass(t *testing.T) {
	t.Parallel()
	model, _ := modelServer(t, func(r openaitest.Request) bool {
		var d struct {
			Pass int `json:"pass"`
		}
		return r.SchemaName == stratmaster.SchemaResearchPlan && json.Unmarshal(r.Data, &d) == nil && d.Pass == 2
	})
	b := setup(t, model)
	b.importDeal(t, storetest.SampleBundle("deal-x"))
	d, evs := b.task(t, "deal-x", map[string]any{"question": question, "constitution": twoSources, "max_attempts": 2})
	require.Equal(t, debate.DebateNeedsReview, d.Status)
	require.Equal(t, stratmaster.ReasonAttemptsExhausted, d.StopReason)
	require.Len(t, ofType(evs, stratmaster.EventRevision), 1, "the critic sent the first pass back")

	var proposed struct {
		Pass       int                      `json:"pass"`
		Hypotheses []stratmaster.Hypothesis `json:"hypotheses"`
	}
	hyps := ofType(evs, stratmaster.EventHypotheses)
	require.Len(t, hyps, 1, "only the first pass got to synthesis")
	require.NoError(t, json.Unmarshal(hyps[0].Payload, &proposed))
	require.NotEmpty(t, proposed.Hypotheses)
	var drafted struct {
		Plan *stratmaster.Plan `json:"plan"`
	}
	plans := ofType(evs, stratmaster.EventPlan)
	require.Len(t, plans, 1)
	require.NoError(t, json.Unmarshal(plans[0].Payload, &drafted))

	var del stratmaster.Deliverables
	require.NoError(t, json.Unmarshal(ofType(evs, stratmaster.EventDeliverables)[0].Payload, &del))
	require.Equal(t, stratmaster.StatusNeedsReview, del.Status)
	require.Equal(t, 1, del.Passes, "the last completed pass")
	require.Equal(t, 1, del.Revisions)
	fingerprints := func(hs []stratmaster.Hypothesis) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Fingerprint)
		}
		return out
	}
	// The debate of the first pass may have contested some since.
	require.Equal(t, fingerprints(proposed.Hypotheses), fingerprints(del.Hypotheses))
	require.Equal(t, drafted.Plan, del.Plan)
	require.Contains(t, del.StopWhy, "researcher failed 2 attempt(s)")
	require.Equal(t, stratmaster.RoleResearcher, ofType(evs, stratmaster.EventOutputRejected)[0].Actor)
}

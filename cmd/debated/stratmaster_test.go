package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/protocols/stratmaster"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// stratmasterConstitution fails its first pass (some hypotheses rest on one
// evidence item) and is satisfied once the critic's feedback has the
// researcher look the claims' evidence up.
const stratmasterConstitution = `
id: two-sources
version: "1.0"
principles:
  - id: P1
    description: Every hypothesis rests on at least two evidence items.
    rule:
      min_evidence_per_hypothesis: 2
review_metrics:
  - name: hypothesis_count
    threshold: 1
`

const stratmasterQuestion = "Do the ARR, gross margin, burn and runway support the Series B?"

// stratmasterModelServer is the test double of the model API
// (openaitest): it answers like a model, composing its answer with the
// protocol's rules backend over the request's DATA block, for the schema
// the request asks for. With garbage it answers prose that is not JSON.
func stratmasterModelServer(t *testing.T, garbage bool) *openaitest.Server {
	t.Helper()
	return openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		if garbage {
			return openaitest.Answer{Content: "Here is my analysis, in prose.", PromptTokens: 300, CompletionTokens: 60}
		}
		out, err := stratmaster.Rules(r.SchemaName, r.Data)
		if err != nil {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: err.Error()}
		}
		return openaitest.Answer{Content: string(out), PromptTokens: 300, CompletionTokens: 60}
	})
}

func stratmasterRequest(t *testing.T, opts map[string]any) *debatedv1.CreateDebateRequest {
	return &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: stratmaster.Name, Options: mustStruct(t, opts)}
}

func stratmasterArtifacts(t *testing.T, del *debatedv1.GetDeliverablesResponse) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, a := range del.GetArtifacts() {
		require.True(t, json.Valid([]byte(a.GetContentJson())), a.GetName())
		names[a.GetName()] = true
	}
	return names
}

// TestStratmasterEndToEnd runs a StratMaster task through the gRPC API on
// both stores with both backends: it is listed, its first pass breaks the
// constitution and is sent back to research, the second pass satisfies it,
// the stream is contiguous and chained, the ledger verifies and the
// deliverables carry every artifact.
func TestStratmasterEndToEnd(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		for _, backend := range []string{"rules", "llm"} {
			t.Run(kind+"/"+backend, func(t *testing.T) {
				t.Parallel()
				var env map[string]string
				var srv *openaitest.Server
				if backend == "llm" {
					srv = stratmasterModelServer(t, false)
					env = map[string]string{"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "test-strategist"}
				}
				s := startStack(t, kind, env)
				listed := s.protocol(t, stratmaster.Name)
				require.ElementsMatch(t, []string{"lookup_claim", "search_evidence"}, listed.GetTools()[stratmaster.RoleResearcher].GetTools())

				resp, err := s.debate.CreateDebate(s.a, stratmasterRequest(t, map[string]any{
					"question": stratmasterQuestion, "constitution": stratmasterConstitution}))
				require.NoError(t, err)
				id := resp.GetDebate().GetDebateId()
				msgs := s.watch(t, s.a, id, 0, nil)
				requireChain(t, msgs, 1)
				last := msgs[len(msgs)-1]
				require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, last.GetStatus())
				require.Equal(t, "debate.stopped", last.GetEvent().GetEventType())
				ts := strings.Join(types(msgs), " ")
				require.Equal(t, 2, strings.Count(ts, stratmaster.EventReview), "two passes")
				require.Equal(t, 1, strings.Count(ts, stratmaster.EventRevision), "one revision")
				require.Contains(t, ts, stratmaster.EventToolCall)
				require.Contains(t, ts, stratmaster.EventDebateTurn)

				got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
				require.NoError(t, err)
				require.Equal(t, stratmaster.ReasonSatisfied, got.GetDebate().GetStopReason())
				if backend == "llm" {
					require.Positive(t, srv.Calls(), "the roles asked the model")
				}

				v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: id})
				require.NoError(t, err)
				require.True(t, v.GetOk(), "problems: %v", v.GetProblems())
				require.EqualValues(t, len(msgs), v.GetEventCount())

				del, err := s.debate.GetDeliverables(s.a, &debatedv1.GetDeliverablesRequest{DebateId: id})
				require.NoError(t, err)
				require.True(t, del.GetVerification().GetOk())
				require.Contains(t, del.GetMarkdown(), "# StratMaster task "+id)
				names := stratmasterArtifacts(t, del)
				for _, n := range []string{stratmaster.ReviewArtifact(1), stratmaster.ReviewArtifact(2), stratmaster.ArtifactAgentState,
					stratmaster.ArtifactPlan, stratmaster.ArtifactDebateLog} {
					require.True(t, names[n], "artifact %s in %v", n, names)
				}
				var d stratmaster.Deliverables
				require.NoError(t, json.Unmarshal([]byte(del.GetDeliverablesJson()), &d))
				require.Equal(t, stratmaster.StatusComplete, d.Status)
				require.Equal(t, 1, d.Revisions)
				require.NotEmpty(t, d.Hypotheses)
				for _, h := range d.Hypotheses {
					require.GreaterOrEqual(t, len(h.EvidenceIDs), 2, "the second pass satisfies P1")
					require.Equal(t, stratmaster.Fingerprint(h.Statement, h.EvidenceIDs), h.Fingerprint)
				}

				_, err = s.debate.GetDeliverables(s.b, &debatedv1.GetDeliverablesRequest{DebateId: id})
				require.Equal(t, codes.NotFound, status.Code(err), "another tenant sees nothing")
			})
		}
	}
}

// TestStratmasterNeedsReview: a constitution the work can never satisfy
// ends in needs_review once max_revisions are spent; a model that never
// answers in JSON ends in needs_review after 3 failed attempts; bad options
// are refused with their field paths.
func TestStratmasterNeedsReview(t *testing.T) {
	t.Parallel()
	t.Run("constitution", func(t *testing.T) {
		t.Parallel()
		s := startStack(t, "sqlite", nil)
		const unreachable = "id: unreachable\nversion: \"1\"\nprinciples:\n  - id: P1\n    description: fifty hypotheses\n    rule: {min_hypotheses: 50}\n"
		resp, err := s.debate.CreateDebate(s.a, stratmasterRequest(t, map[string]any{
			"question": stratmasterQuestion, "constitution": unreachable, "max_revisions": 1}))
		require.NoError(t, err)
		id := resp.GetDebate().GetDebateId()
		msgs := s.watch(t, s.a, id, 0, nil)
		requireChain(t, msgs, 1)
		require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_NEEDS_REVIEW, msgs[len(msgs)-1].GetStatus())
		require.Equal(t, 2, strings.Count(strings.Join(types(msgs), " "), stratmaster.EventReview))
		got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
		require.NoError(t, err)
		require.Equal(t, stratmaster.ReasonUnsatisfied, got.GetDebate().GetStopReason())
		del, err := s.debate.GetDeliverables(s.a, &debatedv1.GetDeliverablesRequest{DebateId: id})
		require.NoError(t, err)
		require.True(t, del.GetVerification().GetOk())
		require.True(t, stratmasterArtifacts(t, del)[stratmaster.ArtifactAgentState])

		for _, tc := range []struct {
			opts  map[string]any
			field string
		}{
			{map[string]any{"question": "q", "constitution": "id: c\nversion: \"1\"\nprinciples:\n" +
				"  - {id: P1, description: d, rule: {min_hypotheses: 1}}\n  - {id: P2, description: d, rule: {min_hypotheses: 2}}\n" +
				"  - {id: P3, description: d, rule: {sound_convincing: true}}\n"}, "options.constitution.principles[2].rule"},
			{map[string]any{"question": "q", "constitution": "id: ["}, "options.constitution"},
			{map[string]any{"constitution": stratmasterConstitution}, "options.question"},
			{map[string]any{"question": "q", "constitution": stratmasterConstitution, "max_attempts": 7}, "options.max_attempts"},
		} {
			_, err := s.debate.CreateDebate(s.a, stratmasterRequest(t, tc.opts))
			require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			var fields []string
			for _, d := range status.Convert(err).Details() {
				if br, ok := d.(*errdetails.BadRequest); ok {
					for _, v := range br.GetFieldViolations() {
						fields = append(fields, v.GetField())
					}
				}
			}
			require.Contains(t, fields, tc.field)
		}
	})
	t.Run("attempts", func(t *testing.T) {
		t.Parallel()
		srv := stratmasterModelServer(t, true)
		s := startStack(t, "sqlite", map[string]string{"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "m"})
		resp, err := s.debate.CreateDebate(s.a, stratmasterRequest(t, map[string]any{
			"question": stratmasterQuestion, "constitution": stratmasterConstitution}))
		require.NoError(t, err)
		id := resp.GetDebate().GetDebateId()
		msgs := s.watch(t, s.a, id, 0, nil)
		requireChain(t, msgs, 1)
		require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_NEEDS_REVIEW, msgs[len(msgs)-1].GetStatus())
		ts := strings.Join(types(msgs), " ")
		require.Equal(t, 2, strings.Count(ts, "node.retry"), "attempts 1 and 2 are retried, the 3rd gives up")
		require.Equal(t, 1, strings.Count(ts, stratmaster.EventOutputRejected))
		require.Positive(t, srv.Calls())
		got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
		require.NoError(t, err)
		require.Equal(t, stratmaster.ReasonAttemptsExhausted, got.GetDebate().GetStopReason())
		del, err := s.debate.GetDeliverables(s.a, &debatedv1.GetDeliverablesRequest{DebateId: id})
		require.NoError(t, err)
		require.True(t, del.GetVerification().GetOk(), "problems: %v", del.GetVerification().GetProblems())
		names := stratmasterArtifacts(t, del)
		require.True(t, names[stratmaster.ArtifactAgentState], "%v", names)
		require.True(t, names[stratmaster.ArtifactDebateLog], "%v", names)
		require.Contains(t, del.GetMarkdown(), stratmaster.ReasonAttemptsExhausted)
	})
}

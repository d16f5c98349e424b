package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/protocols/legal"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// legalModelServer is the test double of the model API (openaitest): it
// answers like a model, composing each answer with the legal rules backend
// over the DATA block of the request. It holds the answers to revision
// requests until release is closed (or the test ends), so a test can prove
// its watch is live.
func legalModelServer(t *testing.T, release <-chan struct{}) *openaitest.Server {
	t.Helper()
	stop := make(chan struct{})
	srv := openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		answer, err := legal.ComposeByRules(r.Data)
		if err != nil {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: err.Error()}
		}
		var kind struct{ Kind string }
		_ = json.Unmarshal(r.Data, &kind)
		if kind.Kind == legal.KindRevision {
			select {
			case <-release:
			case <-stop:
			}
		}
		return openaitest.Answer{Content: string(answer), PromptTokens: 800, CompletionTokens: 300}
	})
	// Cleanups run last registered first: this one before the server's
	// Close, which waits for held requests, so a failing test ends.
	t.Cleanup(func() { close(stop) })
	return srv
}

// legalCase reads a fixture case of the legal package as options.
func legalCase(t *testing.T, name string, maxRounds int) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "protocols", "legal", "testdata", name+".json"))
	require.NoError(t, err)
	var o map[string]any
	require.NoError(t, json.Unmarshal(data, &o))
	o["max_rounds"] = maxRounds
	return o
}

// legalArtifactNames are the artifacts of a two-round debate whose
// revisions were critiqued again (seed §7).
var legalArtifactNames = []string{
	"debate_round1_nla.json", "debate_round1_ala.json",
	"critique_round1_nla_on_ala.json", "critique_round1_ala_on_nla.json",
	"debate_round2_nla.json", "debate_round2_ala.json",
	"critique_round2_nla_on_ala.json", "critique_round2_ala_on_nla.json",
	"debate_summary.json",
}

// TestLegalEndToEnd runs the Minangkabau inheritance case through the gRPC
// API on both stores with both backends: the protocol is listed, the
// stream is live, contiguous and chained, the debate converges in round 2,
// the ledger verifies, and the deliverables carry the seed's artifacts.
func TestLegalEndToEnd(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		for _, backend := range []string{"rules", "llm"} {
			t.Run(kind+"/"+backend, func(t *testing.T) {
				t.Parallel()
				var env map[string]string
				var srv *openaitest.Server
				release := make(chan struct{})
				var once sync.Once
				if backend == "llm" {
					srv = legalModelServer(t, release)
					env = map[string]string{"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "test-jurist"}
				} else {
					once.Do(func() { close(release) })
				}
				s := startStack(t, kind, env)
				listed := s.protocol(t, legal.Name)
				require.Equal(t, []string{legal.RoleNLA, legal.RoleALA, legal.RoleSupervisor}, listed.GetRoles())
				require.Equal(t, legal.NodeAnswers, listed.GetStart())

				resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: legal.Name,
					Options: mustStruct(t, legalCase(t, "minangkabau_pusaka", 2))})
				require.NoError(t, err)
				id := resp.GetDebate().GetDebateId()
				live := false
				msgs := s.watch(t, s.a, id, 0, func(m *debatedv1.WatchDebateResponse) bool {
					if backend == "llm" && m.GetEvent().GetEventType() == legal.EventDecision {
						// The revisions' model calls are held until now:
						// round 1's decision reached the watcher while the
						// debate was running.
						live = true
						once.Do(func() { close(release) })
					}
					return false
				})
				requireChain(t, msgs, 1)
				last := msgs[len(msgs)-1]
				require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, last.GetStatus())
				require.Equal(t, "debate.stopped", last.GetEvent().GetEventType())
				if backend == "llm" {
					require.True(t, live, "the stream delivered events while the debate was running")
					require.Positive(t, srv.Calls(), "the agents asked the model")
				}
				ts := strings.Join(types(msgs), " ")
				require.Equal(t, 2, strings.Count(ts, legal.EventDecision), "two rounds")
				require.Equal(t, 1, strings.Count(ts, legal.EventSynthesis))
				require.NotContains(t, ts, legal.EventRejected)

				got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
				require.NoError(t, err)
				require.Equal(t, legal.ReasonConverged, got.GetDebate().GetStopReason())
				v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: id})
				require.NoError(t, err)
				require.True(t, v.GetOk(), "problems: %v", v.GetProblems())
				require.EqualValues(t, len(msgs), v.GetEventCount())

				del, err := s.debate.GetDeliverables(s.a, &debatedv1.GetDeliverablesRequest{DebateId: id})
				require.NoError(t, err)
				require.True(t, del.GetVerification().GetOk())
				var names []string
				for _, a := range del.GetArtifacts() {
					names = append(names, a.GetName())
				}
				require.Equal(t, legalArtifactNames, names)
				require.Contains(t, del.GetMarkdown(), "# Legal debate:")
				var d legal.Deliverables
				require.NoError(t, json.Unmarshal([]byte(del.GetDeliverablesJson()), &d))
				require.False(t, d.NeedsHumanReview)
				require.Equal(t, legal.OutcomeConverged, d.Summary.Outcome)
				require.NotEmpty(t, d.Summary.AgreedClaims)
				require.Len(t, d.Summary.Conflicts, 1)
				require.True(t, d.Summary.Conflicts[0].Resolved, "the formal rule settles the pusaka tinggi conflict")
				require.NotNil(t, d.Synthesis)

				_, err = s.debate.GetDeliverables(s.b, &debatedv1.GetDeliverablesRequest{DebateId: id})
				require.Equal(t, codes.NotFound, status.Code(err), "another tenant sees nothing")
			})
		}
	}
}

// TestLegalEscalationAndBadOptions: the Balinese case escalates for human
// review after its default two rounds and runs round 3 when allowed; bad
// options are refused with their field paths.
func TestLegalEscalationAndBadOptions(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	run := func(rounds int) (*debatedv1.Debate, legal.Deliverables, []string) {
		resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: legal.Name,
			Options: mustStruct(t, legalCase(t, "bali_purusa", rounds))})
		require.NoError(t, err)
		id := resp.GetDebate().GetDebateId()
		msgs := s.watch(t, s.a, id, 0, nil)
		requireChain(t, msgs, 1)
		got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
		require.NoError(t, err)
		del, err := s.debate.GetDeliverables(s.a, &debatedv1.GetDeliverablesRequest{DebateId: id})
		require.NoError(t, err)
		require.True(t, del.GetVerification().GetOk())
		var d legal.Deliverables
		require.NoError(t, json.Unmarshal([]byte(del.GetDeliverablesJson()), &d))
		var names []string
		for _, a := range del.GetArtifacts() {
			names = append(names, a.GetName())
		}
		return got.GetDebate(), d, names
	}
	two, d, _ := run(2)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_NEEDS_REVIEW, two.GetStatus())
	require.Equal(t, legal.ReasonEscalated, two.GetStopReason())
	require.True(t, d.NeedsHumanReview)
	require.Equal(t, []string{legal.EscalateNotConverged}, d.Summary.EscalationRules)

	three, d, names := run(3)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, three.GetStatus())
	require.Equal(t, 3, d.Summary.Rounds)
	require.Contains(t, names, "debate_round3_ala.json")
	require.Contains(t, names, "critique_round3_nla_on_ala.json")

	bad := legalCase(t, "jawa_gonogini", 2)
	bad["max_rounds"] = 4
	ctx := bad["context"].([]any)
	ctx[1].(map[string]any)["source_id"] = ctx[0].(map[string]any)["source_id"]
	ctx[2].(map[string]any)["domain"] = "adat_sunda"
	_, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: legal.Name, Options: mustStruct(t, bad)})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	var fields []string
	for _, det := range status.Convert(err).Details() {
		if br, ok := det.(*errdetails.BadRequest); ok {
			for _, fv := range br.GetFieldViolations() {
				fields = append(fields, fv.GetField())
			}
		}
	}
	require.Equal(t, []string{"options.context[1].source_id", "options.context[2].domain", "options.max_rounds"}, fields)
}

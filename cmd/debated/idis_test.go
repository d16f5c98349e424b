package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/testutil/gdbs"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// criticalKeys are the material claims an expected outcome grades D.
func criticalKeys(t *testing.T, root, name string) []string {
	t.Helper()
	b, err := dealfile.Load(filepath.Join(root, "deals", name))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "expected", name+".json"))
	require.NoError(t, err)
	var exp struct {
		Claims map[string]struct {
			Grade string `json:"grade"`
		} `json:"claims"`
	}
	require.NoError(t, json.Unmarshal(data, &exp))
	var out []string
	for _, c := range b.Claims {
		if c.Material() && exp.Claims[c.Key].Grade == "D" {
			out = append(out, c.Key)
		}
	}
	slices.Sort(out)
	return out
}

// TestGDBSDebateCompletion runs the IDIS debate over every benchmark deal
// through the gRPC API on both stores: deals with a defective material claim
// stop CRITICAL_DEFECT and name it; the others end by CONSENSUS,
// STABLE_DISSENT or MAX_ROUNDS; every deliverable is complete and every
// ledger verifies.
func TestGDBSDebateCompletion(t *testing.T) {
	t.Parallel()
	root := gdbs.Dir(t)
	dirs, err := filepath.Glob(filepath.Join(root, "deals", "deal_*"))
	require.NoError(t, err)
	require.Len(t, dirs, 10)
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := startStack(t, kind, nil)
			reg := debatedv1.NewRegistryServiceClient(s.conn)
			for _, dir := range dirs {
				name := filepath.Base(dir)
				b, err := dealfile.Load(dir)
				require.NoError(t, err)
				req, err := apiconv.BundleToProto(b)
				require.NoError(t, err)
				_, err = reg.ImportDeal(s.a, req)
				require.NoError(t, err)
				resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: b.Deal.ID, Protocol: "idis.vc.v1"})
				require.NoError(t, err)
				id := resp.GetDebate().GetDebateId()
				msgs := s.watch(t, s.a, id, 0, nil)
				requireChain(t, msgs, 1)
				require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus(), name)

				del, err := s.debate.GetDeliverables(s.a, &debatedv1.GetDeliverablesRequest{DebateId: id})
				require.NoError(t, err, name)
				require.True(t, del.GetVerification().GetOk(), "%s: %v", name, del.GetVerification().GetProblems())
				var d struct {
					StopReason     string             `json:"stop_reason"`
					ClaimTable     []json.RawMessage  `json:"claim_table"`
					Utility        map[string]float64 `json:"utility"`
					CriticalClaims []struct {
						Key string `json:"claim_key"`
					} `json:"critical_claims"`
					Summary string `json:"consensus_summary"`
				}
				require.NoError(t, json.Unmarshal([]byte(del.GetDeliverablesJson()), &d))
				require.NotEmpty(t, d.ClaimTable, name)
				require.Len(t, d.Utility, 5, name)
				require.NotEmpty(t, d.Summary, name)
				require.NotEmpty(t, del.GetMarkdown(), name)
				require.NotEmpty(t, del.GetArtifacts(), name)
				want := criticalKeys(t, root, name)
				if len(want) > 0 {
					require.Equal(t, "CRITICAL_DEFECT", d.StopReason, name)
					var got []string
					for _, c := range d.CriticalClaims {
						got = append(got, c.Key)
					}
					for _, k := range want {
						require.Contains(t, got, k, "%s: the deliverables name the critical claim", name)
					}
				} else {
					require.Contains(t, []string{"CONSENSUS", "STABLE_DISSENT", "MAX_ROUNDS"}, d.StopReason, name)
				}
				t.Logf("%s: %s, critical %v", name, d.StopReason, want)
			}
		})
	}
}

// TestValidateOutputAndDeliverables: the gates as a service, and a finished
// debate's deliverables with their artifacts.
func TestValidateOutputAndDeliverables(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "idis.vc.v1",
		Options: mustStruct(t, map[string]any{"max_rounds": 2})})
	require.NoError(t, err)
	id := resp.GetDebate().GetDebateId()
	s.watch(t, s.a, id, 0, nil)
	del, err := s.debate.GetDeliverables(s.a, &debatedv1.GetDeliverablesRequest{DebateId: id})
	require.NoError(t, err)
	require.True(t, del.GetVerification().GetOk())
	require.Contains(t, del.GetMarkdown(), "# Investment committee brief")
	names := map[string]string{}
	for _, a := range del.GetArtifacts() {
		names[a.GetName()] = a.GetContentJson()
	}
	require.Contains(t, names, "debate_round1_advocate.json")
	require.Contains(t, names, "debate_round1_advocate_2.json", "the rebuttal")
	require.Contains(t, names, "debate_round1_sanad_breaker.json")
	require.Contains(t, names, "debate_summary.json")

	// An output the debate accepted passes; the same output made
	// overconfident and unsupported does not.
	good := names["debate_round1_risk_officer.json"]
	require.NotEmpty(t, good)
	v, err := s.debate.ValidateOutput(s.a, &debatedv1.ValidateOutputRequest{DealId: "deal-a", OutputJson: good})
	require.NoError(t, err)
	require.True(t, v.GetValid(), "%v", v.GetViolations())

	var o map[string]any
	require.NoError(t, json.Unmarshal([]byte(good), &o))
	o["content"] = "Revenue grew 250% to $12,000,000 in FY2025."
	o["claim_refs"] = []any{}
	m := o["muhasabah_record"].(map[string]any)
	m["supported_claim_ids"] = []any{}
	m["confidence"] = 0.95
	delete(m, "uncertainties")
	delete(m, "counter_hypothesis")
	bad, err := json.Marshal(o)
	require.NoError(t, err)
	v, err = s.debate.ValidateOutput(s.a, &debatedv1.ValidateOutputRequest{DealId: "deal-a", OutputJson: string(bad)})
	require.NoError(t, err)
	require.False(t, v.GetValid())
	ruleSet := map[string]bool{}
	for _, x := range v.GetViolations() {
		ruleSet[x.GetRule()] = true
	}
	require.True(t, ruleSet["NO_FREE_FACTS"], "%v", v.GetViolations())
	require.True(t, ruleSet["OVERCONFIDENCE"], "%v", v.GetViolations())

	v, err = s.debate.ValidateOutput(s.a, &debatedv1.ValidateOutputRequest{DealId: "deal-a", OutputJson: `{"agent_id": 7}`})
	require.NoError(t, err)
	require.False(t, v.GetValid())
	_, err = s.debate.ValidateOutput(s.b, &debatedv1.ValidateOutputRequest{DealId: "deal-a", OutputJson: good})
	require.Error(t, err, "tenant B cannot validate against A's deal")
	_, err = s.debate.GetDeliverables(s.b, &debatedv1.GetDeliverablesRequest{DebateId: id})
	require.Error(t, err)
}

func idisRequest(deal string) *debatedv1.CreateDebateRequest {
	return &debatedv1.CreateDebateRequest{DealId: deal, Protocol: "idis.vc.v1"}
}

func listAll() *debatedv1.ListDebatesRequest { return &debatedv1.ListDebatesRequest{PageSize: 1000} }

// TestIDISBadOptions: options the IDIS protocol does not take are refused
// with InvalidArgument before anything runs, in the kit's words: every
// unknown member is named by its path (not a JSON library's message), and a
// value out of range names its field.
func TestIDISBadOptions(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	create := func(opts map[string]any) error {
		_, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: idis.Name, Options: mustStruct(t, opts)})
		return err
	}

	err := create(map[string]any{"bogus": 1, "colour": "red", "max_rounds": 2})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Equal(t, []string{"options"}, fieldsOf(err))
	msg := status.Convert(err).Message()
	for _, want := range []string{`"options.bogus"`, `"options.colour"`, "max_rounds, pause_for_review"} {
		require.Contains(t, msg, want, "every unknown member is named, and the members there are")
	}
	require.NotContains(t, msg, "json:", "the kit's words, not encoding/json's")

	for _, rounds := range []int{0, 6} {
		err = create(map[string]any{"max_rounds": rounds})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		require.Equal(t, []string{"options.max_rounds"}, fieldsOf(err))
	}
}

package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/protocols/agentproto"
	"github.com/debated/debated/internal/testutil/openaitest"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// agentprotoModelServer is the tenant's model for the agent protocol: an
// OpenAI-compatible server in the test process (openaitest) that answers
// each structured call the way a model would, composing its answer with
// the protocol's rules backend (agentproto.Answer) over the DATA block
// the request carries, for the schema it names.
func agentprotoModelServer(t *testing.T) *openaitest.Server {
	t.Helper()
	return openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		answer, err := agentproto.Answer(r.SchemaName, r.Data)
		if err != nil {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: err.Error()}
		}
		return openaitest.Answer{Content: string(answer), PromptTokens: 300, CompletionTokens: 100}
	})
}

// agentprotoTask computes a runway from the registry of deal (the sample
// deal every test tenant imports) with each safe tool.
func agentprotoTask() map[string]any {
	step := func(id, tool string, input map[string]any, risk string) map[string]any {
		return map[string]any{"id": id, "tool": tool, "input": input, "risk_class": risk, "expected_evidence": "the " + id}
	}
	return map[string]any{"task": map[string]any{
		"objective": "Check the months of runway the company's figures imply",
		"steps": []any{
			step("arr", "claim_lookup", map[string]any{"claim_key": "C1"}, "low"),
			step("burn", "claim_lookup", map[string]any{"claim_key": "C3"}, "low"),
			step("ratio", "arithmetic", map[string]any{"op": "div", "operands": []any{12500000, 650000}}, "medium"),
			step("years", "unit_convert", map[string]any{"value": 18, "from": "month", "to": "year"}, "low"),
		},
	}}
}

// TestAgentProtoEndToEnd runs agent.protocol.v1 sessions through the gRPC
// API on both stores, tenant A with the rules backend and tenant B with
// its own model (the in-process OpenAI-compatible server): each session
// streams live and contiguously to its end, completes VERIFIED, verifies,
// returns the tool artifacts and deliverables, and its exported trace
// passes the protocol's verifier (ledger checks with signatures, and the
// seed's invariants).
func TestAgentProtoEndToEnd(t *testing.T) {
	t.Parallel()
	srv := agentprotoModelServer(t)
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			// A key to seal tenant B's model settings with (PostgreSQL has none by default).
			s := startStack(t, kind, map[string]string{"DEBATED_ENCRYPTION_KEY": base64.StdEncoding.EncodeToString([]byte("agentproto-e2e-sealing-key-32-b!")),
				"DEBATED_LLM_ALLOW_PRIVATE": "true"}) // the test double listens on loopback
			listed := s.protocol(t, agentproto.Name)
			require.ElementsMatch(t, []string{"planner", "executor", "critic", "auditor"}, listed.GetRoles())
			require.ElementsMatch(t, agentproto.SafeTools(), listed.GetTools()["executor"].GetTools())
			setTenantModel(t, s, "b", srv.URL)

			for _, tc := range []struct {
				backend string
				deal    string
			}{{"rules", "deal-a"}, {"llm", "deal-b"}} {
				ctx := s.a
				if tc.backend == "llm" {
					ctx = s.b
				}
				before := srv.Calls()
				resp, err := s.debate.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: tc.deal, Protocol: agentproto.Name,
					Options: mustStruct(t, agentprotoTask())})
				require.NoError(t, err)
				id := resp.GetDebate().GetDebateId()
				msgs := s.watch(t, ctx, id, 0, nil)
				requireChain(t, msgs, 1)
				last := msgs[len(msgs)-1]
				require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, last.GetStatus(), tc.backend)
				got, err := s.debate.GetDebate(ctx, &debatedv1.GetDebateRequest{DebateId: id})
				require.NoError(t, err)
				require.Equal(t, agentproto.ReasonVerified, got.GetDebate().GetStopReason())
				if tc.backend == "llm" {
					require.Equal(t, before+3, srv.Calls(), "the tenant's model planned, reviewed and claimed")
				} else {
					require.Equal(t, before, srv.Calls(), "tenant A keeps the rules backend")
				}
				other := s.a
				if tc.backend == "rules" {
					other = s.b
				}
				_, err = s.debate.GetDebate(other, &debatedv1.GetDebateRequest{DebateId: id})
				require.Equal(t, codes.NotFound, status.Code(err), "another tenant cannot read the session: %v", err)
				_, err = s.debate.GetDeliverables(other, &debatedv1.GetDeliverablesRequest{DebateId: id})
				require.Equal(t, codes.NotFound, status.Code(err), "another tenant cannot read its deliverables: %v", err)

				v, err := s.debate.VerifyDebate(ctx, &debatedv1.VerifyDebateRequest{DebateId: id})
				require.NoError(t, err)
				require.True(t, v.GetOk(), "%v", v.GetProblems())

				del, err := s.debate.GetDeliverables(ctx, &debatedv1.GetDeliverablesRequest{DebateId: id})
				require.NoError(t, err)
				names := map[string]bool{}
				for _, a := range del.GetArtifacts() {
					names[a.GetName()] = true
				}
				for _, step := range []string{"arr", "burn", "ratio", "years"} {
					require.True(t, names["tool_input_p-"+step+"-i1-x.json"], "%s input artifact in %v", step, names)
					require.True(t, names["tool_output_p-"+step+"-i1-x.json"], "%s output artifact", step)
				}
				require.Contains(t, del.GetMarkdown(), "# Agent session")
				require.Contains(t, del.GetDeliverablesJson(), "12500000 USD")

				b, err := ledger.ParseBundle(exportBundle(t, ctx, s.debate, id))
				require.NoError(t, err)
				// The auditor's own run, in the ledger, checked the signatures too.
				var audited bool
				for _, e := range b.Events {
					if e.Type == agentproto.EventVerificationComplete {
						var p struct {
							Status string `json:"status"`
							Report struct {
								SignaturesChecked bool `json:"signatures_checked"`
							} `json:"report"`
						}
						require.NoError(t, json.Unmarshal(e.Payload, &p))
						require.Equal(t, agentproto.VerificationPass, p.Status)
						require.True(t, p.Report.SignaturesChecked, "the service gives the auditor the public keys")
						audited = true
					}
				}
				require.True(t, audited)
				rep := agentproto.Verify(b.Events, b.PublicKeys)
				require.Equal(t, agentproto.VerificationPass, rep.Status, "%s: %v %v", tc.backend, rep.Problems, rep.Warnings)
				require.True(t, rep.SignaturesChecked)
			}
		})
	}
}

// setTenantModel points tenant name's model at baseURL.
func setTenantModel(t *testing.T, s *stack, name, baseURL string) {
	t.Helper()
	admin := debatedv1.NewAdminServiceClient(s.conn)
	tenants, err := admin.ListTenants(metadataAdmin(), &debatedv1.ListTenantsRequest{})
	require.NoError(t, err)
	for _, tn := range tenants.GetTenants() {
		if tn.GetName() == name {
			_, err := admin.SetTenantModel(metadataAdmin(), &debatedv1.SetTenantModelRequest{TenantId: tn.GetTenantId(), BaseUrl: baseURL, Model: "ap-model"})
			require.NoError(t, err)
			return
		}
	}
	t.Fatalf("no tenant %q", name)
}

// TestAgentProtoBadOptions: a task naming a tool outside the safe set, or
// bad input for a safe tool, is refused with the field named.
func TestAgentProtoBadOptions(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	for field, opts := range map[string]map[string]any{
		"options.task.steps[0].tool":  {"task": map[string]any{"objective": "o", "steps": []any{map[string]any{"id": "a", "tool": "shell", "input": map[string]any{"cmd": "rm -rf /"}}}}},
		"options.task.steps[0].input": {"task": map[string]any{"objective": "o", "steps": []any{map[string]any{"id": "a", "tool": "arithmetic", "input": map[string]any{"op": "eval"}}}}},
		"options.task.objective":      {"task": map[string]any{"steps": []any{}}},
	} {
		_, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: agentproto.Name, Options: mustStruct(t, opts)})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		var fields []string
		for _, d := range status.Convert(err).Details() {
			if br, ok := d.(*errdetails.BadRequest); ok {
				for _, v := range br.GetFieldViolations() {
					fields = append(fields, v.GetField())
				}
			}
		}
		require.Contains(t, fields, field)
	}
}

// TestAgentProtoSIGKILLAfterIntents: the service is killed as soon as a
// watcher sees the intents committed; after a restart the session resumes
// from its trace head, completes, executes every intent exactly once and
// verifies.
func TestAgentProtoSIGKILLAfterIntents(t *testing.T) {
	t.Parallel()
	env := []string{"DEBATED_DATA_DIR=" + t.TempDir(), "DEBATED_ADMIN_TOKEN=e2e-admin"}
	addr := freeAddr(t)
	c := startChild(t, addr, env)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	waitServing(t, conn)
	s := &stack{conn: conn, debate: debatedv1.NewDebateServiceClient(conn)}
	ctx := s.login(t, "kill")
	resp, err := s.debate.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: "deal-kill", Protocol: agentproto.Name,
		Options: mustStruct(t, agentprotoTask())})
	require.NoError(t, err)
	id := resp.GetDebate().GetDebateId()
	s.watch(t, ctx, id, 0, func(m *debatedv1.WatchDebateResponse) bool {
		return m.GetEvent().GetEventType() == agentproto.EventIntentSigned
	})
	c.kill()
	startChild(t, addr, env)
	waitServing(t, conn)

	msgs := s.watch(t, ctx, id, 0, nil)
	requireChain(t, msgs, 1)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus())
	intents, started := map[string]bool{}, map[string]int{}
	for _, m := range msgs {
		var p struct {
			IntentID string `json:"intent_id"`
		}
		switch m.GetEvent().GetEventType() {
		case agentproto.EventIntentSigned:
			require.NoError(t, json.Unmarshal([]byte(m.GetEvent().GetPayloadJson()), &p))
			intents[p.IntentID] = true
		case agentproto.EventExecutionStarted:
			require.NoError(t, json.Unmarshal([]byte(m.GetEvent().GetPayloadJson()), &p))
			started[p.IntentID]++
		}
	}
	require.Len(t, intents, 4)
	for in := range intents {
		require.Equal(t, 1, started[in], "intent %s executes exactly once", in)
	}
	v, err := s.debate.VerifyDebate(ctx, &debatedv1.VerifyDebateRequest{DebateId: id})
	require.NoError(t, err)
	require.True(t, v.GetOk(), "%v", v.GetProblems())
}

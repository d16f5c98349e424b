package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// dataModel is the model of the data-defined protocols' tests (openaitest).
// It answers every structured call from the request alone: the schema it is
// given (every property filled by its type and enum) and the DATA block
// (the deal's claims, the round, the other roles' answers, tool results).
//   - Texts cite the claim they are about by key and list it in refs, so
//     No-Free-Facts holds; the Muḥāsabah record accounts for the same
//     claims.
//   - A role offered tools asks, before any tool result is in its DATA,
//     for its first tool and for request_human_review, which the example
//     documents give no role: the server must refuse and audit that one.
//   - The attacker attacks the round's claim (claims sorted by key); the
//     defender concedes an attack only on a claim not in the deal.
//   - A judge (a role that sees a "verdict" or "ruling" field) continues in
//     round 1 and then rules: PASS when no attack was conceded (red team);
//     the agreed position, or UNDECIDED while the sides disagree (pros and
//     cons).
//   - A side argues INVEST when its task argues "for", PASS otherwise.
func dataModel(t *testing.T) *openaitest.Server {
	t.Helper()
	return openaitest.New(t, dataAnswer)
}

// dataAnswer is dataModel's answer to one request.
func dataAnswer(r openaitest.Request) openaitest.Answer {
	{
		var data struct {
			Role  string `json:"role"`
			Round int    `json:"round"`
			Deal  struct {
				Claims []struct {
					ID  string `json:"claim_id"`
					Key string `json:"key"`
				} `json:"claims"`
			} `json:"deal"`
			Outputs     map[string]json.RawMessage `json:"outputs"`
			Tools       []string                   `json:"tools"`
			ToolResults []any                      `json:"tool_results"`
		}
		if err := json.Unmarshal(r.Data, &data); err != nil || len(data.Deal.Claims) == 0 {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: "no deal in the DATA block"}
		}
		claims := data.Deal.Claims
		sort.Slice(claims, func(i, j int) bool { return claims[i].Key < claims[j].Key })
		claim := claims[(data.Round-1)%len(claims)]
		var schema struct {
			Properties map[string]struct {
				Type  string   `json:"type"`
				Enum  []string `json:"enum"`
				Items struct {
					Type       string                     `json:"type"`
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"items"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(r.Schema, &schema); err != nil {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: "no schema"}
		}
		if len(data.Tools) > 0 && len(data.ToolResults) == 0 {
			calls := []map[string]any{
				{"tool": data.Tools[0], "args": map[string]any{"claim_id": claim.ID}},
				{"tool": "request_human_review", "args": map[string]any{"reason": "escalate", "claim_ids": []string{claim.ID}}},
			}
			b, _ := json.Marshal(map[string]any{"tool_calls": calls})
			return openaitest.Answer{Content: string(b)}
		}
		text := "the position on " + claim.Key + " rests on the registry"
		var attacks []struct {
			ClaimID string `json:"claim_id"`
		}
		if raw, ok := data.Outputs["attack"]; ok {
			var a struct {
				Attacks []struct {
					ClaimID string `json:"claim_id"`
				} `json:"attacks"`
			}
			_ = json.Unmarshal(raw, &a)
			attacks = a.Attacks
		}
		known := func(id string) bool {
			return slices.ContainsFunc(claims, func(c struct {
				ID  string `json:"claim_id"`
				Key string `json:"key"`
			}) bool {
				return c.ID == id
			})
		}
		positions := map[string]bool{}
		if raw, ok := data.Outputs["collect"]; ok {
			var c map[string]map[string]struct {
				Position string `json:"position"`
			}
			_ = json.Unmarshal(raw, &c)
			for _, side := range c["argue"] {
				positions[side.Position] = true
			}
		}
		answer := map[string]any{}
		for name, p := range schema.Properties {
			switch {
			case name == "refs":
				answer[name] = []string{claim.ID}
			case name == "muhasabah_record":
				answer[name] = map[string]any{
					"supported_claim_ids": []string{claim.ID}, "confidence": 0.5,
					"confidence_justification": "one claim of the registry supports it",
					"falsifiability_tests": []map[string]any{{"test_description": "check " + claim.Key + " against its source",
						"required_evidence": "the source document of " + claim.Key, "pass_fail_rule": "fails if the source disagrees"}},
					"uncertainties": []map[string]any{{"uncertainty": "the source of " + claim.Key + " may be stale",
						"impact": "medium", "mitigation": "ask for the latest document"}},
				}
			case name == "tool_calls":
			case name == "verdict":
				v := "CONTINUE"
				if data.Round > 1 {
					v = "PASS"
					if raw, ok := data.Outputs["defend"]; ok && strings.Contains(string(raw), `"concede":true`) {
						v = "FAIL"
					}
				}
				answer[name] = v
			case name == "ruling":
				v := "UNDECIDED"
				if data.Round > 1 && len(positions) == 1 {
					for p := range positions {
						v = p
					}
				}
				answer[name] = v
			case name == "position":
				v := "PASS"
				if strings.Contains(r.Task, " for ") {
					v = "INVEST"
				}
				answer[name] = v
			case name == "attacks":
				answer[name] = []map[string]any{{"claim_id": claim.ID, "attack": "the evidence for " + claim.Key + " is thin"}}
			case name == "responses":
				var rs []map[string]any
				for _, a := range attacks {
					rs = append(rs, map[string]any{"claim_id": a.ClaimID, "response": "the registry holds " + claim.Key, "concede": !known(a.ClaimID)})
				}
				answer[name] = rs
			case p.Type == "string" && len(p.Enum) > 0:
				answer[name] = p.Enum[0]
			case p.Type == "string":
				answer[name] = text
			case p.Type == "array":
				answer[name] = []string{text}
			case p.Type == "boolean":
				answer[name] = false
			case p.Type == "number" || p.Type == "integer":
				answer[name] = 1
			}
		}
		b, err := json.Marshal(answer)
		if err != nil {
			return openaitest.Answer{Status: http.StatusInternalServerError, Content: err.Error()}
		}
		return openaitest.Answer{Content: string(b), PromptTokens: 400, CompletionTokens: 100}
	}
}

func exampleDocument(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocols", name))
	require.NoError(t, err)
	return string(raw)
}

func payloadOf(t *testing.T, m *debatedv1.WatchDebateResponse) map[string]any {
	t.Helper()
	var p map[string]any
	require.NoError(t, json.Unmarshal([]byte(m.GetEvent().GetPayloadJson()), &p))
	return p
}

// TestDataProtocolEndToEnd registers the red-team example through gRPC on
// both stores and runs it with model-backed roles: it is listed like the
// built-in protocols, runs by its name, stops on the judge's verdict,
// audits the tool call its matrix refuses, verifies, and is invisible to
// another tenant.
func TestDataProtocolEndToEnd(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := dataModel(t)
			s := startStack(t, kind, map[string]string{"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "test-model"})
			pc := debatedv1.NewProtocolServiceClient(s.conn)
			doc := exampleDocument(t, "redteam-review.yaml")
			reg, err := pc.RegisterProtocol(s.a, &debatedv1.RegisterProtocolRequest{Document: doc})
			require.NoError(t, err)
			require.True(t, reg.GetCreated())
			require.Equal(t, "redteam.review@1", reg.GetProtocol().GetRef())
			again, err := pc.RegisterProtocol(s.a, &debatedv1.RegisterProtocolRequest{Document: doc})
			require.NoError(t, err)
			require.False(t, again.GetCreated(), "the same document again is no new version")
			_, err = pc.RegisterProtocol(s.a, &debatedv1.RegisterProtocolRequest{Document: strings.Replace(doc, "up to 3 rounds", "up to three rounds", 1)})
			require.Equal(t, codes.AlreadyExists, status.Code(err), "a version never changes: %v", err)
			require.Contains(t, status.Convert(err).Message(), "register a new version")

			listed := s.protocol(t, "redteam.review@1")
			require.Equal(t, []string{"attacker", "defender", "judge"}, listed.GetRoles())
			require.Equal(t, []string{"lookup_claim", "search_evidence"}, listed.GetTools()["attacker"].GetTools())
			others, err := s.debate.ListProtocols(s.b, &debatedv1.ListProtocolsRequest{})
			require.NoError(t, err)
			for _, p := range others.GetProtocols() {
				require.NotContains(t, p.GetName(), "redteam", "another tenant does not see it")
			}
			_, err = pc.GetProtocol(s.b, &debatedv1.GetProtocolRequest{Name: "redteam.review"})
			require.Equal(t, codes.NotFound, status.Code(err))
			_, err = s.debate.CreateDebate(s.b, &debatedv1.CreateDebateRequest{DealId: "deal-b", Protocol: "redteam.review@1"})
			require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
			require.Contains(t, status.Convert(err).Message(), "not registered by this tenant")

			resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "redteam.review"})
			require.NoError(t, err)
			require.Equal(t, "redteam.review@1", resp.GetDebate().GetProtocol(), "a plain name runs the latest version")
			id := resp.GetDebate().GetDebateId()
			msgs := s.watch(t, s.a, id, 0, nil)
			requireChain(t, msgs, 1)
			last := msgs[len(msgs)-1]
			require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, last.GetStatus())

			got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
			require.NoError(t, err)
			require.Equal(t, "JUDGE_VERDICT", got.GetDebate().GetStopReason())
			v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: id})
			require.NoError(t, err)
			require.True(t, v.GetOk(), "problems: %v", v.GetProblems())

			var denied, allowed, answers int
			var deliverables map[string]any
			for _, m := range msgs {
				switch m.GetEvent().GetEventType() {
				case "agent.tool_call":
					p := payloadOf(t, m)
					require.Equal(t, m.GetEvent().GetActor(), p["agent_id"], "a role signs its own tool calls")
					if p["tool_name"] == "request_human_review" {
						require.Equal(t, "DENIED", p["result_status"])
						require.Equal(t, "permission", p["rule"])
						denied++
					} else {
						require.Equal(t, "SUCCESS", p["result_status"])
						allowed++
					}
				case "role.answer":
					answers++
				case "output.rejected":
					require.FailNow(t, "an answer was rejected", "%s", m.GetEvent().GetPayloadJson())
				case "deliverables.created":
					deliverables = payloadOf(t, m)
				}
			}
			require.Positive(t, denied, "the refused call is audited")
			require.Positive(t, allowed)
			require.Equal(t, 6, answers, "attacker, defender and judge in each of two rounds")
			require.NotNil(t, deliverables)
			fields := deliverables["fields"].(map[string]any)
			require.Equal(t, "PASS", fields["verdict"])
			require.Equal(t, "JUDGE_VERDICT", deliverables["stop_reason"])
			require.EqualValues(t, 2, deliverables["rounds"])
			require.Positive(t, srv.Calls())
			del, err := s.debate.GetDeliverables(s.a, &debatedv1.GetDeliverablesRequest{DebateId: id})
			require.NoError(t, err)
			require.True(t, del.GetVerification().GetOk())
			require.Contains(t, del.GetDeliverablesJson(), `"stop_reason":"JUDGE_VERDICT"`)
			require.Contains(t, del.GetMarkdown(), "# redteam.review@1")
			require.Contains(t, del.GetMarkdown(), "## verdict\n\n```json\n\"PASS\"")

			_, err = s.debate.VerifyDebate(s.b, &debatedv1.VerifyDebateRequest{DebateId: id})
			require.Equal(t, codes.NotFound, status.Code(err))

			// The published keys and policies cover the tenant's protocol,
			// and only the tenant's.
			keys := debatedv1.NewKeyServiceClient(s.conn)
			ka, err := keys.GetSigningKeys(s.a, &debatedv1.GetSigningKeysRequest{})
			require.NoError(t, err)
			var policies, actors []string
			for _, p := range ka.GetPolicies() {
				policies = append(policies, p.GetProtocol())
			}
			for _, k := range ka.GetKeys() {
				actors = append(actors, k.GetActor())
			}
			require.Contains(t, policies, "redteam.review@1")
			require.Contains(t, actors, "attacker")
			kb, err := keys.GetSigningKeys(s.b, &debatedv1.GetSigningKeysRequest{})
			require.NoError(t, err)
			for _, p := range kb.GetPolicies() {
				require.NotEqual(t, "redteam.review@1", p.GetProtocol())
			}
		})
	}
}

// TestDataProtocolProsCons runs the two-sided example: the sides argue in
// parallel, keep the same dissent, and the debate stops on it in round 2.
func TestDataProtocolProsCons(t *testing.T) {
	t.Parallel()
	srv := dataModel(t)
	s := startStack(t, "sqlite", map[string]string{"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "test-model"})
	pc := debatedv1.NewProtocolServiceClient(s.conn)
	_, err := pc.RegisterProtocol(s.a, &debatedv1.RegisterProtocolRequest{Document: exampleDocument(t, "pros-cons.yaml")})
	require.NoError(t, err)
	resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "proscons.debate@1"})
	require.NoError(t, err)
	id := resp.GetDebate().GetDebateId()
	msgs := s.watch(t, s.a, id, 0, nil)
	requireChain(t, msgs, 1)
	got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
	require.NoError(t, err)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, got.GetDebate().GetStatus())
	require.Equal(t, "STABLE_DISSENT", got.GetDebate().GetStopReason())
	var deliverables map[string]any
	for _, m := range msgs {
		if m.GetEvent().GetEventType() == "deliverables.created" {
			deliverables = payloadOf(t, m)
		}
	}
	require.NotNil(t, deliverables)
	require.Equal(t, map[string]any{"pro": "INVEST", "con": "PASS"}, deliverables["fields"].(map[string]any)["positions"])
	v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: id})
	require.NoError(t, err)
	require.True(t, v.GetOk(), "problems: %v", v.GetProblems())
}

// TestDataProtocolRefusals: a bad document is INVALID_ARGUMENT with its
// paths; without a model a registered protocol cannot run, and a tenant's
// own model runs it.
func TestDataProtocolRefusals(t *testing.T) {
	t.Parallel()
	// The test double listens on loopback, which a tenant's model may use
	// only when the operator allows private endpoints (on a server that
	// checks them).
	s := startStack(t, "sqlite", map[string]string{"DEBATED_LLM_ALLOW_PRIVATE": "true"})
	setTenantModel(t, s, "a", dataModel(t).URL)
	pc := debatedv1.NewProtocolServiceClient(s.conn)
	doc := exampleDocument(t, "pros-cons.yaml")
	bad := strings.Replace(doc, "next: decide}", "next: nowhere}", 1)
	bad = strings.Replace(bad, "gates: [schema, no_free_facts]\n  - id: con", "gates: [schema, no_free_facts]\n    tools: [fetch_url]\n  - id: con", 1)
	_, err := pc.RegisterProtocol(s.a, &debatedv1.RegisterProtocolRequest{Document: bad})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	var fields []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	require.Contains(t, fields, "document.graph.nodes[1].next")
	require.Contains(t, fields, "document.roles[0].tools[0]")

	_, err = pc.RegisterProtocol(s.a, &debatedv1.RegisterProtocolRequest{Document: strings.Replace(doc, "name: proscons.debate", "name: synthetic.v1", 1)})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "a built-in name is taken: %v", err)

	// Tenant b has no model and the deployment none: its registered
	// protocol cannot run. Tenant a's own model is enough.
	_, err = pc.RegisterProtocol(s.b, &debatedv1.RegisterProtocolRequest{Document: doc})
	require.NoError(t, err)
	_, err = s.debate.CreateDebate(s.b, &debatedv1.CreateDebateRequest{DealId: "deal-b", Protocol: "proscons.debate@1"})
	require.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
	require.Contains(t, status.Convert(err).Message(), "no model is configured")

	_, err = pc.RegisterProtocol(s.a, &debatedv1.RegisterProtocolRequest{Document: doc})
	require.NoError(t, err, "each tenant has its own namespace")
	s.protocol(t, "proscons.debate@1")
	resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "proscons.debate@1"})
	require.NoError(t, err)
	s.watch(t, s.a, resp.GetDebate().GetDebateId(), 0, nil)
	got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: resp.GetDebate().GetDebateId()})
	require.NoError(t, err)
	require.Equal(t, "STABLE_DISSENT", got.GetDebate().GetStopReason())
}

// TestDataProtocolRejectionsAndBudget: an answer that fails its schema even
// after the repair requests is recorded as output.rejected and never enters
// the debate; a spent token budget ends the debate before the next call.
func TestDataProtocolRejectionsAndBudget(t *testing.T) {
	t.Parallel()
	srv := dataModel(t)
	s := startStack(t, "sqlite", map[string]string{"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "test-model"})
	pc := debatedv1.NewProtocolServiceClient(s.conn)
	run := func(doc, ref string) (*debatedv1.Debate, []*debatedv1.WatchDebateResponse) {
		_, err := pc.RegisterProtocol(s.a, &debatedv1.RegisterProtocolRequest{Document: doc})
		require.NoError(t, err)
		resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: ref})
		require.NoError(t, err)
		msgs := s.watch(t, s.a, resp.GetDebate().GetDebateId(), 0, nil)
		requireChain(t, msgs, 1)
		got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: resp.GetDebate().GetDebateId()})
		require.NoError(t, err)
		v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: resp.GetDebate().GetDebateId()})
		require.NoError(t, err)
		require.True(t, v.GetOk(), "problems: %v", v.GetProblems())
		return got.GetDebate(), msgs
	}

	// The proponent's arguments must be longer than the model writes them.
	doc := exampleDocument(t, "pros-cons.yaml")
	strict := strings.Replace(doc, "version: 1", "version: 2", 1)
	strict = strings.Replace(strict, "arguments: {type: array, minItems: 1, maxItems: 5, items: {type: string, maxLength: 500}}",
		"arguments: {type: array, minItems: 1, maxItems: 5, items: {type: string, minLength: 400}}", 1)
	require.NotEqual(t, doc, strict)
	d, msgs := run(strict, "proscons.debate@2")
	// Without the proponent's answer neither consensus nor dissent holds
	// (consensus comes first in the document); the judge sees one side in
	// round 2 and rules for it.
	require.Equal(t, "JUDGE_VERDICT", d.GetStopReason())
	var rejected int
	var deliverables map[string]any
	for _, m := range msgs {
		switch m.GetEvent().GetEventType() {
		case "output.rejected":
			rejected++
			require.Equal(t, "pro", m.GetEvent().GetActor())
			require.Contains(t, m.GetEvent().GetPayloadJson(), `"rule":"SCHEMA"`)
		case "role.answer":
			require.NotEqual(t, "pro", m.GetEvent().GetActor())
		case "deliverables.created":
			deliverables = payloadOf(t, m)
		}
	}
	require.Equal(t, 2, rejected, "one rejection per round")
	fields := deliverables["fields"].(map[string]any)
	require.Equal(t, map[string]any{"con": "PASS"}, fields["positions"], "a rejected answer never enters the debate")
	require.Equal(t, "PASS", fields["ruling"])

	// A budget the first two turns spend: the judge never runs.
	budget := strings.Replace(exampleDocument(t, "redteam-review.yaml"), "{rule: budget, tokens: 200000}", "{rule: budget, tokens: 1000}", 1)
	d, msgs = run(budget, "redteam.review@1")
	require.Equal(t, "BUDGET_EXCEEDED", d.GetStopReason())
	ts := strings.Join(types(msgs), " ")
	require.Contains(t, ts, "budget.exceeded")
	require.Equal(t, 2, strings.Count(ts, "role.answer"), "attacker and defender answered, then the budget was spent")
	require.Contains(t, ts, "deliverables.created")
}

// TestDataProtocolResumesAfterRestart: a debate of a registered protocol
// stopped in the middle of a model call (the server shut down) resumes on
// the next start from its last checkpoint, finding its protocol again in
// the store, and ends as it would have.
func TestDataProtocolResumesAfterRestart(t *testing.T) {
	t.Parallel()
	hold, held := make(chan struct{}), make(chan struct{}, 1)
	var holding atomic.Bool
	holding.Store(true)
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	srv := openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		if holding.Load() && strings.Contains(string(r.Data), `"role":"defender"`) {
			select {
			case held <- struct{}{}:
			default:
			}
			<-hold
			return openaitest.Answer{Status: http.StatusServiceUnavailable, Content: "shutting down"}
		}
		return dataAnswer(r)
	})
	t.Cleanup(release) // before the model server's Close, which waits for held calls
	env := map[string]string{"DEBATED_ADMIN_TOKEN": "e2e-admin", "DEBATED_LOG_LEVEL": "warn",
		"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "test-model"}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}
	conn, stop, _ := start(t, args, env)
	s := &stack{conn: conn, stop: stop, debate: debatedv1.NewDebateServiceClient(conn)}
	s.a = s.login(t, "a")
	_, err := debatedv1.NewProtocolServiceClient(conn).RegisterProtocol(s.a, &debatedv1.RegisterProtocolRequest{Document: exampleDocument(t, "redteam-review.yaml")})
	require.NoError(t, err)
	resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "redteam.review@1"})
	require.NoError(t, err)
	id := resp.GetDebate().GetDebateId()
	<-held // the attacker has answered; the defender is in its model call
	holding.Store(false)
	// The shutdown cancels the call in flight; the model's handler is
	// released only after, so the defender's turn never completes before
	// the restart.
	require.NoError(t, stop())
	release()

	conn2, _, _ := start(t, args, env)
	s2 := &stack{conn: conn2, debate: debatedv1.NewDebateServiceClient(conn2)}
	msgs := s2.watch(t, s.a, id, 0, nil)
	requireChain(t, msgs, 1)
	got, err := s2.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
	require.NoError(t, err)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, got.GetDebate().GetStatus())
	require.Equal(t, "JUDGE_VERDICT", got.GetDebate().GetStopReason())
	v, err := s2.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: id})
	require.NoError(t, err)
	require.True(t, v.GetOk(), "problems: %v", v.GetProblems())
	ts := strings.Join(types(msgs), " ")
	require.Equal(t, 6, strings.Count(ts, "role.answer"), "no turn lost or repeated")
}

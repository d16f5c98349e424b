package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/openaitest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// okTools answers every tool call of the scripted model's reasoning.
type okTools struct{}

func (okTools) Call(context.Context, debate.ToolCall) (debate.ToolResult, error) {
	return debate.ToolResult{Status: "SUCCESS", Output: json.RawMessage(`{}`)}, nil
}

// modelServer is an OpenAI-compatible chat completions server in the test
// process (openaitest). It answers each turn the way a model would, with an
// AgentOutput as JSON content, composed by the rules backend for the role
// and round the request names; it never calls tools.
func modelServer(t *testing.T, b *debate.DealBundle) *openaitest.Server {
	return slowModelServer(t, b, nil)
}

// slowModelServer is modelServer taking delay[role] before answering a role.
func slowModelServer(t *testing.T, b *debate.DealBundle, delay map[string]time.Duration) *openaitest.Server {
	t.Helper()
	g := sanad.Grade(b)
	set := rules.New()
	task := regexp.MustCompile(`Task: play (\w+) in round (\d+)`)
	return openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		var role string
		round := 1
		for _, m := range r.Messages {
			if s := task.FindStringSubmatch(m.Content); s != nil {
				role = s[1]
				round, _ = strconv.Atoi(s[2])
			}
		}
		if d := delay[role]; d > 0 {
			time.Sleep(d) // the model thinking
		}
		r0, ok := set[role]
		if !ok || r.SchemaName == "" {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: "bad request"}
		}
		out, err := r0.Turn(context.Background(), &roles.Input{Round: round, MaxRounds: 5, Deal: b, Grading: g, Tools: okTools{}})
		if err != nil {
			return openaitest.Answer{Status: http.StatusInternalServerError, Content: err.Error()}
		}
		out.ToolCalls = nil
		content, _ := json.Marshal(out)
		return openaitest.Answer{Content: string(content), PromptTokens: 1000, CompletionTokens: 200}
	})
}

// TestIDISWithModelBackedRoles runs a whole IDIS debate through the gRPC API
// with the roles argued by a model behind an OpenAI-compatible server: every
// output is gated, every tool call checked and audited, the ledger verifies.
func TestIDISWithModelBackedRoles(t *testing.T) {
	t.Parallel()
	srv := modelServer(t, storetest.SampleBundle("deal-a"))
	metricsAddr := freeAddr(t)
	s := startStack(t, "sqlite", map[string]string{
		"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "test-reasoner", "DEBATED_LLM_API_KEY": "sk-test-secret",
		"DEBATED_METRICS_ADDR": metricsAddr,
	})
	resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "idis.vc.v1",
		Options: mustStruct(t, map[string]any{"max_rounds": 2})})
	require.NoError(t, err)
	id := resp.GetDebate().GetDebateId()
	msgs := s.watch(t, s.a, id, 0, nil)
	requireChain(t, msgs, 1)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus())
	require.Positive(t, srv.Calls(), "the roles asked the model")
	outputs := 0
	for _, m := range msgs {
		if m.GetEvent().GetEventType() == "agent.output" {
			outputs++
		}
	}
	require.Positive(t, outputs)
	del, err := s.debate.GetDeliverables(s.a, &debatedv1.GetDeliverablesRequest{DebateId: id})
	require.NoError(t, err)
	require.True(t, del.GetVerification().GetOk(), "%v", del.GetVerification().GetProblems())
	require.Positive(t, scrape(t, metricsAddr, `debated_model_tokens_total\{kind="prompt",role="advocate",tenant="[^"]+"\}`))
}

// TestObserversCallTheModelConcurrently: with each observer's model call
// taking a fixed delay, the parallel node takes about one delay, not two.
func TestObserversCallTheModelConcurrently(t *testing.T) {
	t.Parallel()
	const delay = time.Second
	srv := slowModelServer(t, storetest.SampleBundle("deal-a"), map[string]time.Duration{
		debate.RoleContradictionFinder: delay, debate.RoleRiskOfficer: delay,
	})
	s := startStack(t, "sqlite", map[string]string{"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "m"})
	resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "idis.vc.v1",
		Options: mustStruct(t, map[string]any{"max_rounds": 1})})
	require.NoError(t, err)
	msgs := s.watch(t, s.a, resp.GetDebate().GetDebateId(), 0, nil)
	var started, completed time.Time
	for _, m := range msgs {
		e := m.GetEvent()
		if e.GetNode() != "observer_critiques_parallel" {
			continue
		}
		switch e.GetEventType() {
		case "node.started":
			started = e.GetTime().AsTime()
		case "node.completed":
			completed = e.GetTime().AsTime()
		}
	}
	took := completed.Sub(started)
	t.Logf("parallel observer node took %s with %s per observer", took, delay)
	require.GreaterOrEqual(t, took, delay)
	require.Less(t, took, delay*17/10, "the observers must call the model concurrently")
}

// TestModelResponseSurvivesACrash: the service is killed right after the
// model answered a call; after the restart the node completes without asking
// the model that call again.
func TestModelResponseSurvivesACrash(t *testing.T) {
	t.Parallel()
	b := storetest.SampleBundle("deal-crash")
	g := sanad.Grade(b)
	set := rules.New()
	task := regexp.MustCompile(`Task: play (\w+) in round (\d+)`)
	var mu sync.Mutex
	seen := map[string]int{} // request body hash → requests
	first := ""
	answered := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		var role string
		round := 1
		for _, m := range req.Messages {
			if s := task.FindStringSubmatch(m.Content); s != nil {
				role = s[1]
				round, _ = strconv.Atoi(s[2])
			}
		}
		hasTool := false
		for _, m := range req.Messages {
			hasTool = hasTool || m.Role == "tool"
		}
		mu.Lock()
		seen[h]++
		isFirst := first == "" && role == debate.RoleSanadBreaker && !hasTool
		if isFirst {
			first = h
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if isFirst {
			// The first call asks for a tool: the turn needs a second call.
			args, _ := json.Marshal(map[string]string{"claim_id": b.Claims[0].ID})
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
				"choices": []map[string]any{{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant",
					"tool_calls": []map[string]any{{"id": "call-1", "type": "function", "function": map[string]any{"name": "lookup_claim", "arguments": string(args)}}}}}},
				"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
			answered <- struct{}{}
			return
		}
		if role == debate.RoleSanadBreaker && hasTool {
			<-release // the follow-up of the first life waits for the kill
		}
		out, err := set[role].Turn(r.Context(), &roles.Input{Round: round, MaxRounds: 5, Deal: b, Grading: g, Tools: okTools{}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out.ToolCalls = nil
		content, _ := json.Marshal(out)
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(content)}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	defer srv.Close()

	url := migratedDatabase(t)
	env := []string{"DEBATED_DATABASE_URL=" + url, "DEBATED_MIGRATE_ON_START=false", "DEBATED_SIGNING_KEYS=" + testSigningKeys, "DEBATED_CHECKPOINT_KEYS=" + testCheckpointKeys,
		"DEBATED_ADMIN_TOKEN=e2e-admin", "DEBATED_JOB_SLICE=300ms", "DEBATED_RESCUE_AFTER=700ms",
		"DEBATED_LLM_BASE_URL=" + srv.URL + "/v1", "DEBATED_LLM_MODEL=m"}
	addr := freeAddr(t)
	c := startChild(t, addr, env)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	waitServing(t, conn)
	s := &stack{conn: conn, debate: debatedv1.NewDebateServiceClient(conn)}
	ctx := s.login(t, "crash")
	// The sample deal is imported as "deal-crash" by login: use it.
	resp, err := s.debate.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: "deal-crash", Protocol: "idis.vc.v1",
		Options: mustStruct(t, map[string]any{"max_rounds": 1})})
	require.NoError(t, err)

	// Kill the service as soon as the model's first sanad_breaker answer is
	// persisted.
	<-answered
	db, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer db.Close(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		require.NoError(t, db.QueryRow(context.Background(), `SELECT count(*) FROM model_responses WHERE cache_key LIKE '%/sanad_breaker/%'`).Scan(&n))
		if n > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the response was never persisted")
		time.Sleep(2 * time.Millisecond)
	}
	c.kill()
	close(release)
	startChild(t, addr, env)
	waitServing(t, conn)
	msgs := s.watch(t, ctx, resp.GetDebate().GetDebateId(), 0, nil)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus())
	mu.Lock()
	require.Equal(t, 1, seen[first], "the answered call was not asked again after the restart")
	mu.Unlock()
	var reused bool
	for _, m := range msgs {
		if m.GetEvent().GetEventType() == "agent.output" && m.GetEvent().GetActor() == debate.RoleSanadBreaker {
			var o debate.AgentOutput
			require.NoError(t, json.Unmarshal([]byte(m.GetEvent().GetPayloadJson()), &o))
			require.NotNil(t, o.Model, "the output records its model calls")
			reused = o.Model.CachedCalls == 1
		}
	}
	require.True(t, reused, "the re-run node took the first answer from the store")
}

// TestTokenBudgetStopsTheDebate: a debate whose next model call would go
// over its token budget stops for review with a clear reason, before the
// call.
func TestTokenBudgetStopsTheDebate(t *testing.T) {
	t.Parallel()
	srv := modelServer(t, storetest.SampleBundle("deal-a"))
	s := startStack(t, "sqlite", map[string]string{"DEBATED_LLM_BASE_URL": srv.URL, "DEBATED_LLM_MODEL": "m",
		"DEBATED_LLM_TOKEN_BUDGET": "100"})
	resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "idis.vc.v1"})
	require.NoError(t, err)
	msgs := s.watch(t, s.a, resp.GetDebate().GetDebateId(), 0, nil)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_NEEDS_REVIEW, msgs[len(msgs)-1].GetStatus())
	got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: resp.GetDebate().GetDebateId()})
	require.NoError(t, err)
	require.Equal(t, "TOKEN_BUDGET_EXCEEDED", got.GetDebate().GetStopReason())
	require.Zero(t, srv.Calls(), "no call was made over the budget")
	v, err := s.debate.VerifyDebate(s.a, &debatedv1.VerifyDebateRequest{DebateId: resp.GetDebate().GetDebateId()})
	require.NoError(t, err)
	require.True(t, v.GetOk(), "%v", v.GetProblems())
}

// TestTenantModelOverride: a tenant that sets its own model endpoint and
// key has its debates argued there, with its key; another tenant keeps the
// deployment's rules backend; the key is never returned.
func TestTenantModelOverride(t *testing.T) {
	t.Parallel()
	srv := modelServer(t, storetest.SampleBundle("deal-a"))
	calls := func() int { return srv.Calls() }
	authz := func() string {
		reqs := srv.Requests()
		return reqs[len(reqs)-1].Authorization
	}
	s := startStack(t, "sqlite", map[string]string{"DEBATED_LLM_ALLOW_PRIVATE": "true"}) // the test double listens on loopback
	actx := metadataAdmin()
	admin := debatedv1.NewAdminServiceClient(s.conn)
	tenants, err := admin.ListTenants(actx, &debatedv1.ListTenantsRequest{})
	require.NoError(t, err)
	var tenantA string
	for _, tn := range tenants.GetTenants() {
		if tn.GetName() == "a" {
			tenantA = tn.GetTenantId()
		}
	}
	require.NotEmpty(t, tenantA)
	_, err = admin.SetTenantModel(actx, &debatedv1.SetTenantModelRequest{TenantId: tenantA, BaseUrl: "not a url", Model: "m"})
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	set1, err := admin.SetTenantModel(actx, &debatedv1.SetTenantModelRequest{TenantId: tenantA, BaseUrl: srv.URL, Model: "byo", ApiKey: "sk-tenant-a"})
	require.NoError(t, err)
	require.True(t, set1.GetModel().GetHasApiKey())
	got, err := admin.GetTenantModel(actx, &debatedv1.GetTenantModelRequest{TenantId: tenantA})
	require.NoError(t, err)
	require.Equal(t, "byo", got.GetModel().GetModel())
	require.NotContains(t, got.String(), "sk-tenant-a", "the key is never returned")

	run := func(ctx context.Context, deal string) {
		resp, err := s.debate.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: deal, Protocol: "idis.vc.v1",
			Options: mustStruct(t, map[string]any{"max_rounds": 1})})
		require.NoError(t, err)
		msgs := s.watch(t, ctx, resp.GetDebate().GetDebateId(), 0, nil)
		require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus())
	}
	run(s.a, "deal-a")
	require.Positive(t, calls(), "tenant A's debate used its own model")
	require.Equal(t, "Bearer sk-tenant-a", authz())
	before := calls()
	run(s.b, "deal-b")
	require.Equal(t, before, calls(), "tenant B keeps the deployment's rules backend")

	_, err = admin.SetTenantModel(actx, &debatedv1.SetTenantModelRequest{TenantId: tenantA})
	require.NoError(t, err, "an empty base URL clears the override")
	got, err = admin.GetTenantModel(actx, &debatedv1.GetTenantModelRequest{TenantId: tenantA})
	require.NoError(t, err)
	require.Empty(t, got.GetModel().GetBaseUrl())
	_, err = admin.GetTenantModel(actx, &debatedv1.GetTenantModelRequest{TenantId: "6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30"})
	require.Equal(t, codes.NotFound, status.Code(err))
}

func metadataAdmin() context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer e2e-admin")
}

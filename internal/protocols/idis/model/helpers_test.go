package model_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/idis/model"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/tools"
)

const (
	dealID = "0b7e6a52-3c1d-4f5e-8a9b-1c2d3e4f5a6b"
	apiKey = "sk-test-SECRET-do-not-log"
)

// ---- the wire format the fake server reads ----

type wireMsg struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	Name       string `json:"name"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type wireReq struct {
	Model     string    `json:"model"`
	Messages  []wireMsg `json:"messages"`
	MaxTokens int       `json:"max_completion_tokens"`
	Tools     []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	auth string
}

func (r wireReq) toolNames() []string {
	var ns []string
	for _, t := range r.Tools {
		ns = append(ns, t.Function.Name)
	}
	return ns
}

func (r wireReq) last() wireMsg { return r.Messages[len(r.Messages)-1] }

// step answers one request.
type step func(w http.ResponseWriter, r *http.Request)

// fakeServer speaks /v1/chat/completions and answers each request with the
// next step of its script.
type fakeServer struct {
	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []wireReq
	script []step
	loop   step // answers every request once the script is spent
}

func newFakeServer(t testing.TB, script ...step) *fakeServer {
	f := &fakeServer{t: t, script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req wireReq
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req.auth = r.Header.Get("Authorization")
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	var s step
	if len(f.script) > 0 {
		s, f.script = f.script[0], f.script[1:]
	} else {
		s = f.loop
	}
	f.mu.Unlock()
	if s == nil {
		f.t.Errorf("unexpected request %d", len(f.reqs))
		http.Error(w, `{"error":{"message":"script spent","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	s(w, r)
}

func (f *fakeServer) requests() []wireReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

var usage = map[string]int{"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// answer replies with content (finish_reason stop).
func answer(content string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": usage,
		})
	}
}

// answerJSON replies with v marshalled as the content.
func answerJSON(v any) step {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return answer(string(b))
}

type call struct {
	name string
	args string
}

// callTools replies with tool calls (finish_reason tool_calls).
func callTools(calls ...call) step {
	return func(w http.ResponseWriter, r *http.Request) {
		var tcs []any
		for i, c := range calls {
			tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
				"function": map[string]any{"name": c.name, "arguments": c.args}})
		}
		writeJSON(w, map[string]any{
			"id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls",
				"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": tcs}}},
			"usage": usage,
		})
	}
}

// fail replies with an OpenAI error body.
func fail(code int, headers ...string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"status %d","type":"server_error","code":null}}`, code)
	}
}

// block never answers: it waits for the request to end.
func block(entered chan<- struct{}) step {
	return func(w http.ResponseWriter, r *http.Request) {
		if entered != nil {
			entered <- struct{}{}
		}
		<-r.Context().Done()
	}
}

// ---- the fake tools: the server's permission check ----

type fakeTools struct {
	role  string
	mu    sync.Mutex
	calls []debate.ToolCall
	res   []debate.ToolResult
}

func (f *fakeTools) Call(ctx context.Context, c debate.ToolCall) (debate.ToolResult, error) {
	res := debate.ToolResult{Status: tools.StatusSuccess, Output: json.RawMessage(`{"claim":{"claim_id":"x"}}`)}
	if !idis.Matrix.Allows(f.role, c.Tool) {
		res = debate.ToolResult{Status: tools.StatusDenied, Error: tools.RulePermission + ": " + f.role + " may not call " + c.Tool}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
	f.res = append(f.res, res)
	return res, nil
}

// ---- the test bundle ----

type env struct {
	srv    *fakeServer
	cfg    llm.Config
	sleeps *[]time.Duration
	usage  *[]llm.Usage
	logs   *bytes.Buffer
	deal   *debate.DealBundle
	grade  *debate.DealGrading
	claim  map[string]string // key → id
	mu     *sync.Mutex
}

func setup(t testing.TB, script ...step) *env {
	t.Helper()
	srv := newFakeServer(t, script...)
	deal := storetest.SampleBundle(dealID)
	e := &env{srv: srv, deal: deal, grade: sanad.Grade(deal), claim: map[string]string{},
		sleeps: new([]time.Duration), usage: new([]llm.Usage), logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
	for _, c := range deal.Claims {
		e.claim[c.Key] = c.ID
	}
	e.cfg = llm.Config{
		BaseURL: srv.srv.URL + "/v1", APIKey: apiKey, Model: "test-model", MaxTokens: 1000,
		CallTimeout: 5 * time.Second,
		Sleep: func(ctx context.Context, d time.Duration) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			*e.sleeps = append(*e.sleeps, d)
			return ctx.Err()
		},
		Rand:    func() float64 { return 0.5 },
		OnUsage: func(u llm.Usage) { e.mu.Lock(); defer e.mu.Unlock(); *e.usage = append(*e.usage, u) },
		Logger:  slog.New(slog.NewTextHandler(&lockedWriter{mu: e.mu, w: e.logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	return e
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (e *env) role(t *testing.T, name string) roles.Role {
	t.Helper()
	rs, err := model.New(e.cfg)
	require.NoError(t, err)
	return rs[name]
}

func (e *env) input(role string) (*roles.Input, *fakeTools) {
	ft := &fakeTools{role: role}
	return &roles.Input{DebateID: "debate-1", Round: 1, MaxRounds: 3, Deal: e.deal, Grading: e.grade, Tools: ft}, ft
}

func (e *env) sleepsSeen() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(*e.sleeps)
}

// valid returns an advocate output that passes the gates for the sample
// deal.
func (e *env) valid() map[string]any {
	c1, c5 := e.claim["C1"], e.claim["C5"]
	return map[string]any{
		"agent_id": "advocate", "role": "advocate", "round_number": 1,
		"content":    "Revenue traction and acquisition efficiency support an investment with conditions.",
		"claim_refs": []string{c1, c5},
		"muhasabah_record": map[string]any{
			"supported_claim_ids": []string{c1, c5},
			"confidence":          0.6,
			"counter_hypothesis":  "Growth may be bought with unsustainable spend.",
			"falsifiability_tests": []any{map[string]any{
				"test_description": "Audited revenue differs from the deck", "required_evidence": "Audited accounts",
				"pass_fail_rule": "Fail when audited revenue is materially lower",
			}},
			"uncertainties": []any{map[string]any{
				"uncertainty": "Single primary source", "impact": "Thesis rests on management figures",
				"mitigation": "Obtain audited accounts",
			}},
		},
		"position": map[string]any{"recommendation": debate.RecommendConditional, "confidence": 0.6},
	}
}

func requireValid(t *testing.T, e *env, out *debate.AgentOutput) {
	t.Helper()
	require.NotNil(t, out)
	res := gate.Validate(out, gate.NewFacts(e.deal, e.grade), debate.IDISRoles)
	require.True(t, res.Valid, "violations: %+v", res.Violations)
}

func rules(vs []debate.Violation) []string {
	var rs []string
	for _, v := range vs {
		rs = append(rs, v.Rule)
	}
	return rs
}

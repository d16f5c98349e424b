package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/debated/debated/internal/roles/llm"
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

// ---- the test bundle ----

type env struct {
	srv    *fakeServer
	cfg    llm.Config
	sleeps *[]time.Duration
	mu     *sync.Mutex
}

func setup(t testing.TB, script ...step) *env {
	t.Helper()
	srv := newFakeServer(t, script...)
	e := &env{srv: srv, sleeps: new([]time.Duration), mu: &sync.Mutex{}}
	e.cfg = llm.Config{
		BaseURL: srv.srv.URL + "/v1", APIKey: "sk-test-SECRET-do-not-log", Model: "test-model", MaxTokens: 1000,
		CallTimeout: 5 * time.Second,
		Sleep: func(ctx context.Context, d time.Duration) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			*e.sleeps = append(*e.sleeps, d)
			return ctx.Err()
		},
		Rand: func() float64 { return 0.5 },
	}
	return e
}

func (e *env) sleepsSeen() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(*e.sleeps)
}

package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// WireMessage is one chat message of a request as the client sent it,
// tool calls and tool results included.
type WireMessage struct {
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

// WireRequest is a chat-completions request as the client sent it: the
// fields a client test asserts on, which Request (the model's view)
// leaves out.
type WireRequest struct {
	Model     string        `json:"model"`
	Messages  []WireMessage `json:"messages"`
	MaxTokens int           `json:"max_completion_tokens"`
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
	// Auth is the request's Authorization header.
	Auth string `json:"-"`
}

// Last returns the request's last message. It panics if there is none.
func (r WireRequest) Last() WireMessage { return r.Messages[len(r.Messages)-1] }

// ToolNames returns the names of the tools offered, in order.
func (r WireRequest) ToolNames() []string {
	var ns []string
	for _, t := range r.Tools {
		ns = append(ns, t.Function.Name)
	}
	return ns
}

// Step answers one request of a Scripted server's script. The steps below
// build the usual ones; a test may write its own to answer any way HTTP
// allows.
type Step func(w http.ResponseWriter, r *http.Request)

// Scripted is a chat-completions server for client tests (retries, repairs,
// tool rounds, cancellation): it answers each request with the next Step of
// its script and records the requests as sent. Unlike Server it reads the
// whole wire format and may answer with tool calls, errors or not at all.
type Scripted struct {
	// URL is the base URL to configure (…/v1).
	URL string

	t      testing.TB
	mu     sync.Mutex
	reqs   []WireRequest
	script []Step
	loop   Step
}

// NewScripted starts a server that answers its requests with script, in
// order. A request beyond the script is answered by the Step given to
// SetLoop, or else fails the test with a 500. The server is closed when the
// test ends.
func NewScripted(t testing.TB, script ...Step) *Scripted {
	t.Helper()
	s := &Scripted{t: t, script: script}
	srv := httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

// SetScript replaces the steps not yet used.
func (s *Scripted) SetScript(script ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// SetLoop sets the Step that answers every request once the script is
// spent (nil: such a request fails the test).
func (s *Scripted) SetLoop(loop Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loop = loop
}

func (s *Scripted) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req WireRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req.Auth = r.Header.Get("Authorization")
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	var st Step
	if len(s.script) > 0 {
		st, s.script = s.script[0], s.script[1:]
	} else {
		st = s.loop
	}
	s.mu.Unlock()
	if st == nil {
		s.t.Errorf("unexpected request %d", n)
		http.Error(w, `{"error":{"message":"script spent","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	st(w, r)
}

// Requests returns the requests received so far, in order.
func (s *Scripted) Requests() []WireRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Usage is the token usage every scripted reply reports.
var Usage = map[string]int{"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}

// WriteJSON writes v as a JSON response body.
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Reply answers with content as the assistant message (finish_reason
// stop).
func Reply(content string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": Usage,
		})
	}
}

// ReplyJSON answers with v marshalled as the content. It panics if v does
// not marshal: fixtures are constants, so that is a bug in the test.
func ReplyJSON(v any) Step {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return Reply(string(b))
}

// ToolCall is one tool call of a ReplyTools answer: the tool's name and its
// arguments as JSON text.
type ToolCall struct {
	Name string
	Args string
}

// ReplyTools answers with tool calls (finish_reason tool_calls), their ids
// call_0, call_1, … in order.
func ReplyTools(calls ...ToolCall) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		var tcs []any
		for i, c := range calls {
			tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Args}})
		}
		WriteJSON(w, map[string]any{
			"id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls",
				"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": tcs}}},
			"usage": Usage,
		})
	}
}

// Fail answers with HTTP status code and an OpenAI error body; headers are
// name, value pairs set on the response (e.g. "Retry-After", "7").
func Fail(code int, headers ...string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"status %d","type":"server_error","code":null}}`, code)
	}
}

// Block never answers: it signals entered (if not nil) and waits for the
// request to end (the client's cancellation or timeout).
func Block(entered chan<- struct{}) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		if entered != nil {
			entered <- struct{}{}
		}
		<-r.Context().Done()
	}
}

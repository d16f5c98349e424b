// Package openaitest is the one test double the project allows: an
// OpenAI-compatible chat-completions server in the test process, speaking
// the real wire format over HTTP. Tests give it a function that answers
// each request the way a model would, usually by running a protocol's
// rules backend over the DATA block the request carries, never with a
// canned answer.
//
// Scripted is its variant for tests of the model client itself (package
// llm and the protocols' model roles): it answers each request with the
// next Step of a script (a reply, tool calls, an HTTP error, no answer at
// all) and records the whole wire request, so that retries, repairs, tool
// rounds and cancellation can be asserted.
package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The markers around the DATA block of the service's structured calls
// (package llm).
const (
	dataOpen  = "<<<DATA>>>\n```json\n"
	dataClose = "\n```\n<<<END DATA>>>"
)

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is what the server read of one chat-completions request.
type Request struct {
	Model    string
	Messages []Message
	// SchemaName and Schema are the response_format's JSON schema, if any.
	SchemaName string
	Schema     json.RawMessage
	// Tools are the names of the tools offered.
	Tools []string
	// Data is the DATA block of the first message that has one (nil if
	// none); Task is the text of that message before the block.
	Data json.RawMessage
	Task string
	// Authorization is the request's Authorization header.
	Authorization string
}

// Answer is a model's reply: Content as the assistant message, or an HTTP
// error Status (with Content as the error message) when Status is set.
type Answer struct {
	Content string
	Status  int
	// RawBody, with an error Status, is sent verbatim as a text/plain body
	// instead of an OpenAI-style JSON error (as a proxy or a misconfigured
	// endpoint answers).
	RawBody string
	// PromptTokens and CompletionTokens are reported as usage (defaults
	// 100 and 50).
	PromptTokens, CompletionTokens int
}

// Server is a running fake model.
type Server struct {
	// URL is the base URL to configure (…/v1).
	URL string

	mu   sync.Mutex
	reqs []Request
}

// New starts a server that answers every request with answer(request). It
// is closed when the test ends.
func New(t testing.TB, answer func(r Request) Answer) *Server {
	t.Helper()
	s := &Server{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		if hr.URL.Path != "/v1/chat/completions" || hr.Method != http.MethodPost {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		var wire struct {
			Model    string    `json:"model"`
			Messages []Message `json:"messages"`
			Tools    []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
			ResponseFormat *struct {
				JSONSchema struct {
					Name   string          `json:"name"`
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.NewDecoder(hr.Body).Decode(&wire); err != nil {
			writeError(w, http.StatusBadRequest, "bad json: "+err.Error())
			return
		}
		r := Request{Model: wire.Model, Messages: wire.Messages, Authorization: hr.Header.Get("Authorization")}
		if rf := wire.ResponseFormat; rf != nil {
			r.SchemaName, r.Schema = rf.JSONSchema.Name, rf.JSONSchema.Schema
		}
		for _, tl := range wire.Tools {
			r.Tools = append(r.Tools, tl.Function.Name)
		}
		for _, m := range wire.Messages {
			if before, rest, ok := strings.Cut(m.Content, dataOpen); ok {
				if doc, _, ok := strings.Cut(rest, dataClose); ok {
					r.Data, r.Task = json.RawMessage(doc), before
					break
				}
			}
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		n := len(s.reqs)
		s.mu.Unlock()
		a := answer(r)
		if a.Status != 0 && a.Status != http.StatusOK {
			if a.RawBody != "" {
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(a.Status)
				_, _ = w.Write([]byte(a.RawBody))
				return
			}
			writeError(w, a.Status, a.Content)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1, "model": wire.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": a.Content}}},
			"usage": map[string]int{"prompt_tokens": or(a.PromptTokens, 100), "completion_tokens": or(a.CompletionTokens, 50),
				"total_tokens": or(a.PromptTokens, 100) + or(a.CompletionTokens, 50)},
		})
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

func or(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "server_error"}})
	_, _ = w.Write(b)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Calls is how many requests the server received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

package openaitest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// TestServerSpeaksTheWireFormat: the service's model client, pointed at
// the server, sends its DATA block and schema and reads the answer the
// test computes from them; an error status reaches the client as one.
func TestServerSpeaksTheWireFormat(t *testing.T) {
	s := openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		var d struct{ Question string }
		if err := json.Unmarshal(r.Data, &d); err != nil || d.Question == "" {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: "no question"}
		}
		b, _ := json.Marshal(map[string]string{"answer": "echo: " + d.Question})
		return openaitest.Answer{Content: string(b)}
	})
	b, err := llm.NewBackend(llm.Config{BaseURL: s.URL, APIKey: "k", Model: "m", CallTimeout: 5 * time.Second,
		Retry: llm.Retry{Attempts: 1}})
	require.NoError(t, err)
	call := llm.JSONCall{Role: "r", System: "sys", SchemaName: "answer",
		Schema: json.RawMessage(`{"type":"object"}`), Data: map[string]string{"question": "why?"}}
	res, err := b.JSON(context.Background(), call)
	require.NoError(t, err)
	require.JSONEq(t, `{"answer":"echo: why?"}`, string(res.Answer))
	reqs := s.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "answer", reqs[0].SchemaName)
	require.Equal(t, "Bearer k", reqs[0].Authorization)

	call.Data = map[string]string{}
	_, err = b.JSON(context.Background(), call)
	require.ErrorIs(t, err, llm.ErrModel)
	require.Equal(t, 2, s.Calls())
}

// TestScriptedAnswersInOrder: the scripted server answers with its steps in
// order, then with its loop step, and records each request as sent.
func TestScriptedAnswersInOrder(t *testing.T) {
	s := openaitest.NewScripted(t, openaitest.Fail(http.StatusServiceUnavailable), openaitest.ReplyJSON(map[string]string{"answer": "first"}))
	b, err := llm.NewBackend(llm.Config{BaseURL: s.URL, APIKey: "k", Model: "m", CallTimeout: 5 * time.Second,
		Retry: llm.Retry{Attempts: 2}, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	require.NoError(t, err)
	call := llm.JSONCall{Role: "r", System: "sys", SchemaName: "answer",
		Schema: json.RawMessage(`{"type":"object"}`), Data: map[string]string{"question": "why?"}}
	res, err := b.JSON(context.Background(), call)
	require.NoError(t, err)
	require.JSONEq(t, `{"answer":"first"}`, string(res.Answer))

	s.SetLoop(openaitest.ReplyJSON(map[string]string{"answer": "again"}))
	for range 2 {
		res, err = b.JSON(context.Background(), call)
		require.NoError(t, err)
		require.JSONEq(t, `{"answer":"again"}`, string(res.Answer))
	}
	reqs := s.Requests()
	require.Len(t, reqs, 4, "the 503 was retried once")
	for _, r := range reqs {
		require.Equal(t, "Bearer k", r.Auth)
		require.Equal(t, "m", r.Model)
		require.Equal(t, "answer", r.ResponseFormat.JSONSchema.Name)
		require.Equal(t, "user", r.Last().Role)
	}
}

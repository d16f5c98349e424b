package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/redact"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// lockedBuffer is a bytes.Buffer safe for a logger's writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// echoBackend returns a backend whose key is tenantKey, sharing a redactor
// that also knows the deployment's key, over a server answering with
// answer; and the buffer its logs go to.
func echoBackend(t *testing.T, tenantKey, deploymentKey string, answer func(r openaitest.Request) openaitest.Answer) (*llm.Backend, *lockedBuffer) {
	t.Helper()
	srv := openaitest.New(t, answer)
	logs := &lockedBuffer{}
	b, err := llm.NewBackend(llm.Config{
		BaseURL: srv.URL, APIKey: tenantKey, Model: "m", Redactor: redact.New(deploymentKey),
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sleep:  func(context.Context, time.Duration) error { return nil },
	})
	require.NoError(t, err)
	return b, logs
}

func echoCall() llm.JSONCall {
	return llm.JSONCall{Role: "analyst", System: "Answer.", SchemaName: "answer",
		Schema: json.RawMessage(`{"type":"object"}`), Data: map[string]any{"x": 1}}
}

// TestUpstreamBodyNeverKeptVerbatim: an endpoint that echoes the request's
// bearer key (and the deployment's key) in its error bodies, JSON or raw,
// leaves no trace of either in the error or the logs; the error keeps the
// status, a class and a redacted excerpt.
func TestUpstreamBodyNeverKeptVerbatim(t *testing.T) {
	t.Parallel()
	const tenantKey = "sk-tenant-ECHOED-0123456789"
	const deploymentKey = "deployment-key-Zx81QmT"
	cases := []struct {
		name     string
		answer   openaitest.Answer
		status   int
		class    string
		attempts int
	}{
		{"401 json", openaitest.Answer{Status: http.StatusUnauthorized}, 401, llm.ClassUnauthorized, 1},
		{"500 raw", openaitest.Answer{Status: http.StatusInternalServerError, RawBody: "x"}, 500, llm.ClassServer, 3},
		{"403 raw", openaitest.Answer{Status: http.StatusForbidden, RawBody: "x"}, 403, llm.ClassForbidden, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			var mu sync.Mutex
			b, logs := echoBackend(t, tenantKey, deploymentKey, func(r openaitest.Request) openaitest.Answer {
				mu.Lock()
				calls++
				mu.Unlock()
				a := c.answer
				body := "Incorrect API key provided: " + strings.TrimPrefix(r.Authorization, "Bearer ") +
					" (header was " + r.Authorization + "; also seen " + deploymentKey + ")"
				if a.RawBody != "" {
					a.RawBody = body
				} else {
					a.Content = body
				}
				return a
			})
			_, err := b.JSON(t.Context(), echoCall())
			require.ErrorIs(t, err, llm.ErrModel)
			var uerr *llm.UpstreamError
			require.True(t, errors.As(err, &uerr))
			require.Equal(t, c.status, uerr.Status)
			require.Equal(t, c.class, uerr.Class)
			require.Contains(t, uerr.Excerpt, "Incorrect API key provided", "the excerpt still says what went wrong")
			require.LessOrEqual(t, len(uerr.Excerpt), llm.ExcerptBytes+len("…"))
			mu.Lock()
			require.Equal(t, c.attempts, calls)
			mu.Unlock()
			for _, secret := range []string{tenantKey, deploymentKey, "ECHOED-0123456789"} {
				require.NotContains(t, err.Error(), secret)
				require.NotContains(t, logs.String(), secret)
			}
			require.Contains(t, logs.String(), `"class":"`+c.class+`"`)
		})
	}
}

// TestEchoedKeyMaskedInAnswers: a 200 answer that quotes the key has it
// masked before the answer is parsed, cached or returned.
func TestEchoedKeyMaskedInAnswers(t *testing.T) {
	t.Parallel()
	const tenantKey = "tenant-plain-key-not-shaped"
	b, logs := echoBackend(t, tenantKey, "", func(r openaitest.Request) openaitest.Answer {
		content, _ := json.Marshal(map[string]string{"note": "your key is " + strings.TrimPrefix(r.Authorization, "Bearer ")})
		return openaitest.Answer{Content: string(content)}
	})
	res, err := b.JSON(t.Context(), echoCall())
	require.NoError(t, err)
	require.NotContains(t, string(res.Answer), tenantKey)
	require.Contains(t, string(res.Answer), redact.Mask)
	require.NotContains(t, logs.String(), tenantKey)
}

// TestTimeoutIsClassified: a call that times out is a timeout, still
// errors.Is context.DeadlineExceeded.
func TestTimeoutIsClassified(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		time.Sleep(200 * time.Millisecond)
		return openaitest.Answer{Content: "{}"}
	})
	b, err := llm.NewBackend(llm.Config{BaseURL: srv.URL, APIKey: "k-1234567890", Model: "m", CallTimeout: 20 * time.Millisecond,
		Retry: llm.Retry{Attempts: 1}, Sleep: func(context.Context, time.Duration) error { return nil }, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	_, err = b.JSON(t.Context(), echoCall())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var uerr *llm.UpstreamError
	require.True(t, errors.As(err, &uerr))
	require.Equal(t, llm.ClassTimeout, uerr.Class)
}

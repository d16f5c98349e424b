package llm_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/testutil/openaitest"
)

// ---- the test bundle ----

type env struct {
	srv    *openaitest.Scripted
	cfg    llm.Config
	sleeps *[]time.Duration
	mu     *sync.Mutex
}

func setup(t testing.TB, script ...openaitest.Step) *env {
	t.Helper()
	srv := openaitest.NewScripted(t, script...)
	e := &env{srv: srv, sleeps: new([]time.Duration), mu: &sync.Mutex{}}
	e.cfg = llm.Config{
		BaseURL: srv.URL, APIKey: "sk-test-SECRET-do-not-log", Model: "test-model", MaxTokens: 1000,
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

package model_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
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
	"github.com/debated/debated/internal/testutil/openaitest"
	"github.com/debated/debated/internal/tools"
)

const (
	dealID = "0b7e6a52-3c1d-4f5e-8a9b-1c2d3e4f5a6b"
	apiKey = "sk-test-SECRET-do-not-log"
)

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
	srv    *openaitest.Scripted
	cfg    llm.Config
	sleeps *[]time.Duration
	usage  *[]llm.Usage
	logs   *bytes.Buffer
	deal   *debate.DealBundle
	grade  *debate.DealGrading
	claim  map[string]string // key → id
	mu     *sync.Mutex
}

func setup(t testing.TB, script ...openaitest.Step) *env {
	t.Helper()
	srv := openaitest.NewScripted(t, script...)
	deal := storetest.SampleBundle(dealID)
	e := &env{srv: srv, deal: deal, grade: sanad.Grade(deal), claim: map[string]string{},
		sleeps: new([]time.Duration), usage: new([]llm.Usage), logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
	for _, c := range deal.Claims {
		e.claim[c.Key] = c.ID
	}
	e.cfg = llm.Config{
		BaseURL: srv.URL, APIKey: apiKey, Model: "test-model", MaxTokens: 1000,
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

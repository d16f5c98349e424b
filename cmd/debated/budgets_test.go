package main

import (
	"log/slog"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/stretchr/testify/require"
)

// TestBudgetsForgetEndedDebates: every backend the replica made drops a
// debate's token count when the debate stops or is aborted, and keeps it
// while it runs.
func TestBudgetsForgetEndedDebates(t *testing.T) {
	spent := &budgets{}
	var bs []*llm.Backend
	for range 2 {
		b, err := llm.NewBackend(llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Budget: 1000, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		spent.add(b)
		bs = append(bs, b)
	}
	for _, b := range bs {
		b.AddUsage("d1", 100)
		b.AddUsage("d2", 50)
	}
	spent.Publish("t", "d1", []debate.Event{{Type: "agent.output"}})
	require.Equal(t, 100, bs[0].Used("d1"), "a running debate keeps its count")
	spent.Publish("t", "d1", []debate.Event{{Type: "agent.output"}, {Type: orchestrator.EventDebateStopped}})
	spent.Publish("t", "d2", []debate.Event{{Type: orchestrator.EventDebateAborted}})
	for _, b := range bs {
		require.Zero(t, b.Used("d1"))
		require.Zero(t, b.Used("d2"))
	}
}

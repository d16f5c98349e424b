package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
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

// TestLedgerUsageSumsTheDebatesModelCalls: the usage a backend restores is
// the sum of the model records over the whole ledger (read in pages), for
// the debate of ctx's tenant only.
func TestLedgerUsageSumsTheDebatesModelCalls(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx, tenant, d := storetest.NewDebate(t, st)
	l := storetest.NewLedger(tenant, d, time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	l.Payload = func(seq int64) json.RawMessage {
		if seq%2 == 0 {
			return json.RawMessage(`{"status":"running"}`)
		}
		return json.RawMessage(fmt.Sprintf(`{"role":"r","model":{"model":"m","calls":1,"prompt_tokens":%d,"completion_tokens":1}}`, seq))
	}
	for range 6 {
		c := l.Next(999) // 5,994 events: two pages of debate.Ledger
		require.NoError(t, st.StepCommit(ctx, c))
		l.Commit(c)
	}
	want := 0
	for seq := 1; seq <= 5994; seq += 2 {
		want += seq + 1
	}
	got, err := ledgerUsage(st)(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, want, got)

	other, _ := storetest.NewTenant(t, st)
	_, err = ledgerUsage(st)(other, d.ID)
	require.ErrorIs(t, err, debate.ErrNotFound, "another tenant's debate")
}

// Package enginetest runs protocols the way the service does, for the
// protocols' own tests: an embedded store with a tenant, a keyring, the
// engine and the runner, all real.
package enginetest

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
)

// Env is a store, its tenant and a runner over the protocols.
type Env struct {
	Store  *sqlite.Store
	Ctx    context.Context // acts for Tenant
	Tenant string
	Keys   *ledger.Keyring
	Runner *runner.Runner
}

// Options tune the engine and runner of an Env.
type Options struct {
	// BaseBackoff and MaxBackoff bound the engine's retry backoff (the
	// engine's defaults when zero).
	BaseBackoff, MaxBackoff time.Duration
	// Publisher, if set, receives the committed events.
	Publisher runner.Publisher
	// Tracer, if set, makes the runner's spans.
	Tracer trace.Tracer
}

// New opens a store in a temporary folder, makes a tenant and runs the
// protocols protocols(store, keys) returns (they may read the store).
func New(t testing.TB, protocols func(st *sqlite.Store, keys *ledger.Keyring) []*orchestrator.Protocol, o Options) *Env {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx, tenant := storetest.NewTenant(t, st)
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("enginetest-signing-secret-32-bytes!")}, "v1")
	require.NoError(t, err)
	reg, err := orchestrator.NewRegistry(protocols(st, keys)...)
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys),
		BaseBackoff: o.BaseBackoff, MaxBackoff: o.MaxBackoff})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{Store: st, Engine: eng, Publisher: o.Publisher, Tracer: o.Tracer,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return &Env{Store: st, Ctx: ctx, Tenant: tenant, Keys: keys, Runner: r}
}

// ImportDeal imports bundle for the tenant.
func (e *Env) ImportDeal(t testing.TB, bundle *debate.DealBundle) {
	t.Helper()
	_, err := e.Store.DealImport(e.Ctx, bundle, bundle.Deal.ID+"-hash", time.Now())
	require.NoError(t, err)
}

// Create makes a queued debate of protocol over dealID with options.
func (e *Env) Create(t testing.TB, dealID, protocol string, options json.RawMessage) string {
	t.Helper()
	id := uuid.NewString()
	_, _, err := e.Store.DebateCreate(e.Ctx, debate.Debate{ID: id, TenantID: e.Tenant, DealID: dealID, Protocol: protocol,
		Options: options, Status: debate.DebateQueued, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	require.NoError(t, err)
	return id
}

// Result reads a debate and its whole ledger.
func (e *Env) Result(t testing.TB, id string) (debate.Debate, []debate.Event) {
	t.Helper()
	d, err := e.Store.DebateGet(e.Ctx, id)
	require.NoError(t, err)
	evs, err := e.Store.EventList(e.Ctx, id, 0, 10000)
	require.NoError(t, err)
	return d, evs
}

// Run creates a debate, runs it until it stops or waits, and returns it
// with its ledger.
func (e *Env) Run(t testing.TB, dealID, protocol string, options json.RawMessage) (debate.Debate, []debate.Event) {
	t.Helper()
	id := e.Create(t, dealID, protocol, options)
	require.NoError(t, e.Runner.Run(context.Background(), e.Tenant, id))
	return e.Result(t, id)
}

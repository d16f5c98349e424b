package idis_test

import (
	"testing"

	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/enginetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// TestNodeSpans: a debate's run span parents one span per node step, tagged
// agent.node, tenant_id, debate_id and round; tool calls are spans under
// their node's span.
func TestNodeSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	e := enginetest.New(t, func(st *sqlite.Store, _ *ledger.Keyring) []*orchestrator.Protocol {
		return []*orchestrator.Protocol{idis.Protocol(idis.Config{Registry: st, Ledger: st, Roles: rules.New(), Tracer: tp.Tracer("idis")})}
	}, enginetest.Options{Tracer: tp.Tracer("runner")})
	b := &bench{Env: e, st: e.Store, ctx: e.Ctx, tenant: e.Tenant, run: e.Runner}
	b.importDeal(t, storetest.SampleBundle("deal-trace"))
	d, _ := b.debate(t, "deal-trace", `{"max_rounds":1}`)

	spans := rec.Ended()
	var run sdktrace.ReadOnlySpan
	nodes := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		switch a := attrs(s); {
		case s.Name() == "debate.run":
			run = s
		case a["agent.node"].AsString() != "":
			nodes[s.SpanContext().SpanID().String()] = s
			require.Equal(t, b.tenant, a["tenant_id"].AsString())
			require.Equal(t, d.ID, a["debate_id"].AsString())
			require.True(t, a["round"].Type() == attribute.INT64, "round attribute")
		}
	}
	require.NotNil(t, run)
	require.NotEmpty(t, nodes)
	for _, n := range nodes {
		require.Equal(t, run.SpanContext().SpanID(), n.Parent().SpanID(), "node spans are children of the run")
		require.Equal(t, run.SpanContext().TraceID(), n.SpanContext().TraceID())
	}
	tools := 0
	for _, s := range spans {
		if attrs(s)["tool.name"].AsString() == "" {
			continue
		}
		tools++
		parent, ok := nodes[s.Parent().SpanID().String()]
		require.True(t, ok, "tool span %s is under a node span", s.Name())
		require.NotEmpty(t, attrs(parent)["agent.node"].AsString())
	}
	require.Positive(t, tools)
}

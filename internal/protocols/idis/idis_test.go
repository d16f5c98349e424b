package idis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/enginetest"
	"github.com/debated/debated/internal/testutil/gdbs"
	"github.com/debated/debated/internal/tools"
	"github.com/stretchr/testify/require"
)

// bench is an embedded store with a tenant and an engine running the IDIS
// protocol over the given roles.
type bench struct {
	*enginetest.Env
	st     *sqlite.Store
	ctx    context.Context
	tenant string
	run    *runner.Runner
}

func setup(t testing.TB, roleSet map[string]roles.Role) *bench {
	t.Helper()
	e := enginetest.New(t, func(st *sqlite.Store, _ *ledger.Keyring) []*orchestrator.Protocol {
		return []*orchestrator.Protocol{idis.Protocol(idis.Config{Registry: st, Ledger: st, Roles: roleSet})}
	}, enginetest.Options{})
	return &bench{Env: e, st: e.Store, ctx: e.Ctx, tenant: e.Tenant, run: e.Runner}
}

func (b *bench) importDeal(t testing.TB, bundle *debate.DealBundle) { b.ImportDeal(t, bundle) }

// debate runs one debate to its end and returns its events.
func (b *bench) debate(t testing.TB, dealID string, opts string) (debate.Debate, []debate.Event) {
	t.Helper()
	return b.Run(t, dealID, idis.Name, json.RawMessage(opts))
}

func count(evs []debate.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// TestDebateRoundE2E runs one round with the rules backend and checks the
// seed 001 graph's order, the outputs, the stop decision and the
// deliverables.
func TestDebateRoundE2E(t *testing.T) {
	t.Parallel()
	b := setup(t, rules.New())
	b.importDeal(t, storetest.SampleBundle("deal-round"))
	d, evs := b.debate(t, "deal-round", `{"max_rounds":1}`)
	require.Equal(t, debate.DebateCompleted, d.Status)

	var nodes []string
	for _, e := range evs {
		if e.Type == orchestrator.EventNodeStarted && (len(nodes) == 0 || nodes[len(nodes)-1] != e.Node) {
			nodes = append(nodes, e.Node)
		}
	}
	require.Equal(t, idis.NodeOpening, nodes[0])
	require.Equal(t, idis.NodeChallenge, nodes[1])
	require.Equal(t, idis.NodeObservers, nodes[2])
	require.Equal(t, idis.NodeRebuttal, nodes[3])
	require.Contains(t, nodes, idis.NodeClose)
	require.Equal(t, idis.NodeFinalize, nodes[len(nodes)-1])

	speakers := map[string]int{}
	for _, e := range evs {
		if e.Type == idis.EventAgentOutput {
			speakers[e.Actor]++
		}
	}
	require.Equal(t, 2, speakers[debate.RoleAdvocate], "opening and rebuttal")
	for _, role := range []string{debate.RoleSanadBreaker, debate.RoleContradictionFinder, debate.RoleRiskOfficer, debate.RoleArbiter} {
		require.Equal(t, 1, speakers[role], role)
	}
	require.Equal(t, 1, count(evs, idis.EventStopDecision))
	require.Equal(t, 1, count(evs, idis.EventDeliverables))
	var del idis.Deliverables
	for _, e := range evs {
		if e.Type == idis.EventDeliverables {
			require.NoError(t, json.Unmarshal(e.Payload, &del))
		}
	}
	require.Equal(t, d.StopReason, del.StopReason)
	require.NotEmpty(t, del.ClaimTable)
	require.Len(t, del.Utility, 5)
	require.NotEmpty(t, del.Markdown())
}

// brokenAdvocate speaks with a high confidence and no falsifiability test,
// uncertainty or counter-hypothesis, and states a figure without a claim.
type brokenAdvocate struct{}

func (brokenAdvocate) Name() string { return debate.RoleAdvocate }
func (brokenAdvocate) Turn(_ context.Context, in *roles.Input) (*debate.AgentOutput, error) {
	return &debate.AgentOutput{
		AgentID: debate.RoleAdvocate, Role: debate.RoleAdvocate, RoundNumber: in.Round,
		Content:   "ARR is $9,900,000 and growing 300% a year, so we should invest.",
		ClaimRefs: []string{},
		Muhasabah: debate.Muhasabah{SupportedClaimIDs: []string{}, Confidence: 0.95},
		Position:  &debate.Position{Recommendation: debate.RecommendInvest, Confidence: 0.95},
	}, nil
}

// TestMuhasabahGateRejection: an output that breaks the Muhasabah rules is
// recorded as muhasabah.rejected with its violations, never enters the
// transcript, and costs its agent utility.
func TestMuhasabahGateRejection(t *testing.T) {
	t.Parallel()
	set := rules.New()
	set[debate.RoleAdvocate] = brokenAdvocate{}
	b := setup(t, set)
	b.importDeal(t, storetest.SampleBundle("deal-gate"))
	d, evs := b.debate(t, "deal-gate", `{"max_rounds":1}`)
	require.Equal(t, debate.DebateCompleted, d.Status)
	rejected := 0
	for _, e := range evs {
		switch e.Type {
		case idis.EventMuhasabahRejected:
			rejected++
			var p struct {
				Violations []debate.Violation `json:"violations"`
			}
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			rules := map[string]bool{}
			for _, v := range p.Violations {
				rules[v.Rule] = true
			}
			require.True(t, rules["NO_FREE_FACTS"], "%v", p.Violations)
			require.True(t, rules["FALSIFIABILITY_MISSING"], "%v", p.Violations)
		case idis.EventAgentOutput:
			require.NotEqual(t, debate.RoleAdvocate, e.Actor, "a rejected output entered the transcript")
		}
	}
	require.Equal(t, 2, rejected, "opening and rebuttal are both rejected")
	var del idis.Deliverables
	for _, e := range evs {
		if e.Type == idis.EventDeliverables {
			require.NoError(t, json.Unmarshal(e.Payload, &del))
		}
	}
	require.Equal(t, 2, del.Gate.Rejected)
	require.Less(t, del.Utility[debate.RoleAdvocate], del.Utility[debate.RoleRiskOfficer])
}

// countingTools counts the calls a role makes.
type countingRole struct {
	roles.Role
	calls *int
}

type countingTools struct {
	roles.Tools
	calls *int
}

func (c countingTools) Call(ctx context.Context, call debate.ToolCall) (debate.ToolResult, error) {
	*c.calls++
	return c.Tools.Call(ctx, call)
}

func (c countingRole) Turn(ctx context.Context, in *roles.Input) (*debate.AgentOutput, error) {
	in.Tools = countingTools{in.Tools, c.calls}
	return c.Role.Turn(ctx, in)
}

// TestToolCallAuditCoverage: every tool call the agents make is in the
// ledger as agent.tool_call (100% audit coverage).
func TestToolCallAuditCoverage(t *testing.T) {
	t.Parallel()
	calls := map[string]*int{}
	set := map[string]roles.Role{}
	for name, r := range rules.New() {
		n := 0
		calls[name] = &n
		set[name] = countingRole{r, &n}
	}
	b := setup(t, set)
	b.importDeal(t, storetest.SampleBundle("deal-audit"))
	_, evs := b.debate(t, "deal-audit", `{"max_rounds":2}`)
	audited := map[string]int{}
	for _, e := range evs {
		if e.Type == idis.EventToolCall {
			audited[e.Actor]++
		}
	}
	total := 0
	for name, n := range calls {
		require.Equal(t, *n, audited[name], "role %s", name)
		total += *n
	}
	require.Positive(t, total, "the roles call tools")
}

// TestGDBSMuhasabahPassRate: over the benchmark deals the rules backend's
// outputs pass the gate at least 98% of the time.
func TestGDBSMuhasabahPassRate(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join(gdbs.Dir(t), "deals", "deal_*"))
	require.NoError(t, err)
	b := setup(t, rules.New())
	accepted, rejected := 0, 0
	for _, dir := range dirs {
		bundle, err := dealfile.Load(dir)
		require.NoError(t, err)
		b.importDeal(t, bundle)
		_, evs := b.debate(t, bundle.Deal.ID, `{}`)
		accepted += count(evs, idis.EventAgentOutput)
		rejected += count(evs, idis.EventMuhasabahRejected)
	}
	rate := float64(accepted) / float64(accepted+rejected)
	t.Logf("%d outputs accepted, %d rejected: pass rate %.1f%%", accepted, rejected, 100*rate)
	require.GreaterOrEqual(t, rate, 0.98)
}

// TestQueryEnrichmentReadsTenantRecords: the contradiction finder's
// query_enrichment call returns the deal's enrichment records, as grade C
// or D, with their source.
func TestQueryEnrichmentReadsTenantRecords(t *testing.T) {
	t.Parallel()
	e := enginetest.New(t, func(st *sqlite.Store, _ *ledger.Keyring) []*orchestrator.Protocol {
		enrich := func(ctx context.Context, dealID string) ([]tools.Enrichment, error) {
			recs, err := st.EnrichmentList(ctx, dealID)
			var out []tools.Enrichment
			for _, r := range recs {
				out = append(out, tools.Enrichment{ID: r.ID, EntityType: r.EntityType, EntityName: r.EntityName, DataPoint: r.DataPoint,
					Value: r.Value, Source: r.Source, AsOf: r.AsOf, SourceGrade: r.SourceGrade})
			}
			return out, err
		}
		return []*orchestrator.Protocol{idis.Protocol(idis.Config{Registry: st, Ledger: st, Roles: rules.New(), Enrichment: enrich})}
	}, enginetest.Options{})
	bundle := storetest.SampleBundle("deal-enrich")
	bundle.Enrichment = storetest.SampleEnrichment("deal-enrich")
	e.ImportDeal(t, bundle)
	b := &bench{Env: e, st: e.Store, ctx: e.Ctx, tenant: e.Tenant, run: e.Runner}
	_, evs := b.debate(t, "deal-enrich", `{"max_rounds":1}`)
	var found bool
	for _, e := range evs {
		if e.Type != idis.EventToolCall {
			continue
		}
		var a struct {
			Tool   string `json:"tool_name"`
			Status string `json:"result_status"`
		}
		require.NoError(t, json.Unmarshal(e.Payload, &a))
		if a.Tool == tools.QueryEnrichment {
			require.Equal(t, "SUCCESS", a.Status)
			require.Equal(t, debate.RoleContradictionFinder, e.Actor)
			found = true
		}
	}
	require.True(t, found, "the contradiction finder queries enrichment")
}

// spentRole is a role whose model budget is spent: every turn fails with
// roles.ErrBudgetExceeded.
type spentRole struct{ name string }

func (r spentRole) Name() string { return r.name }

func (r spentRole) Turn(context.Context, *roles.Input) (*debate.AgentOutput, error) {
	return nil, fmt.Errorf("llm: %w: 1000 of 1000 tokens", roles.ErrBudgetExceeded)
}

// TestBudgetSpentByAnObserver: a budget spent in a parallel branch stops the
// debate for review with the kit's budget.exceeded (the role under "role",
// signed by it), as at a task node; the other branch's output still
// commits.
func TestBudgetSpentByAnObserver(t *testing.T) {
	t.Parallel()
	set := rules.New()
	set[debate.RoleRiskOfficer] = spentRole{debate.RoleRiskOfficer}
	b := setup(t, set)
	b.importDeal(t, storetest.SampleBundle("deal-spent"))
	d, evs := b.debate(t, "deal-spent", `{"max_rounds":2}`)
	require.Equal(t, debate.DebateNeedsReview, d.Status)
	require.Equal(t, idis.ReasonTokenBudget, d.StopReason)
	require.Equal(t, 1, count(evs, idis.EventBudgetExceeded))
	for _, e := range evs {
		switch e.Type {
		case idis.EventBudgetExceeded:
			require.Equal(t, debate.RoleRiskOfficer, e.Actor)
			var p map[string]any
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			require.Equal(t, debate.RoleRiskOfficer, p["role"])
			require.Contains(t, p["detail"], "token budget exceeded")
		case idis.EventAgentOutput:
			require.NotEqual(t, debate.RoleRiskOfficer, e.Actor)
		}
	}
	require.Equal(t, 3, count(evs, idis.EventAgentOutput), "advocate, sanad breaker and the contradiction finder spoke")
	require.Zero(t, count(evs, idis.EventDeliverables), "the debate stopped for review")
}

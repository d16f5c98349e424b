package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/store/storetest"
)

const (
	testDealID   = "deal-7f3a"
	testDebateID = "debate-0001"
)

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 3, 2, 10, 30, 0, 123456000, time.UTC)

// fixture is the sample deal (storetest.SampleBundle) graded by sanad,
// with enrichment records, and handy ids.
type fixture struct {
	deal     *Deal
	bundle   *debate.DealBundle
	claim    map[string]string // claim key → id
	evidence map[string]string // claim key → primary evidence id; "B12"… → model cell evidence
	calcID   string
	// ids holds every id of the deal (claims, evidence, spans, documents,
	// calcs, calc sanads, sanads, chain nodes) and the deal id.
	ids map[string]bool
}

func setup(t testing.TB) *fixture {
	t.Helper()
	b := storetest.SampleBundle(testDealID)
	require.NoError(t, b.Validate())
	f := &fixture{bundle: b, claim: map[string]string{}, evidence: map[string]string{}, ids: map[string]bool{testDealID: true}}
	spanEvidence := map[string]string{}
	for _, e := range b.Evidence {
		spanEvidence[e.SourceSpanID] = e.ID
		f.ids[e.ID] = true
	}
	for _, c := range b.Claims {
		f.claim[c.Key] = c.ID
		f.evidence[c.Key] = spanEvidence[c.PrimarySpanID]
		f.ids[c.ID] = true
	}
	for _, s := range b.Spans {
		f.ids[s.ID] = true
		if s.Locator.Cell != "" {
			f.evidence[s.Locator.Cell] = spanEvidence[s.ID]
		}
	}
	for _, d := range b.Documents {
		f.ids[d.ID] = true
	}
	for _, s := range b.Sanads {
		f.ids[s.ID] = true
		for _, n := range s.Chain {
			f.ids[n.ID] = true
		}
	}
	for _, c := range b.Calcs {
		f.ids[c.ID], f.ids[c.CalcSanadID] = true, true
	}
	f.calcID = b.Calcs[0].ID
	f.deal = &Deal{Bundle: b, Grading: sanad.Grade(b), Enrichment: testEnrichment()}
	return f
}

func testEnrichment() []Enrichment {
	return []Enrichment{
		{ID: "enr-01", EntityType: EntityCompany, EntityName: "AutoScale Commerce", DataPoint: "ARR", Value: "$11,900,000", Source: "Crunchbase", AsOf: "2025-11-30", SourceGrade: debate.GradeB},
		{ID: "enr-02", EntityType: EntityCompany, EntityName: "autoscale commerce", DataPoint: "Headcount", Value: "140", Source: "LinkedIn", AsOf: "2026-01-15", SourceGrade: debate.GradeA},
		{ID: "enr-03", EntityType: EntityCompany, EntityName: "AutoScale Commerce, ", DataPoint: "Total funding", Value: "$48,000,000", Source: "PitchBook", SourceGrade: debate.GradeD},
		{ID: "enr-04", EntityType: EntityMarket, EntityName: "Mid-market e-commerce automation", DataPoint: "Total Addressable Market", Value: "$6.1B", Source: "Gartner", AsOf: "2025-06-30", SourceGrade: debate.GradeC},
		{ID: "enr-05", EntityType: EntityPerson, EntityName: "Jane Doe", DataPoint: "prior exits", Value: "1", Source: "press"},
		{ID: "enr-06", EntityType: EntityCompany, EntityName: "Other Co", DataPoint: "ARR", Value: "$3,000,000", Source: "Crunchbase", SourceGrade: debate.GradeC},
		{ID: "enr-00", EntityType: "company", EntityName: "AutoScale Commerce", DataPoint: "annual recurring revenue", Value: "$12,000,000", Source: "Dealroom", SourceGrade: "Z"},
	}
}

// config returns the tests' Config: the IDIS matrix, default limits,
// deterministic ids and clock.
func (f *fixture) config() Config {
	n := 0
	return Config{
		Matrix:   testMatrix,
		Limits:   DefaultLimits(),
		Deal:     f.deal,
		DealID:   testDealID,
		DebateID: testDebateID,
		Round:    2,
		NewID: func() string {
			n++
			return fmt.Sprintf("id-%03d", n)
		},
		Now: func() time.Time { return testNow },
	}
}

// unlimited lifts every quota, for tests that make many calls.
func unlimited(c *Config) {
	for _, tool := range Names {
		c.Limits.MaxCallsPerRound[tool] = 1000
	}
}

func (f *fixture) invoker(edit ...func(*Config)) *Invoker {
	cfg := f.config()
	for _, e := range edit {
		e(&cfg)
	}
	return NewInvoker(cfg)
}

// argsJSON encodes a tool's arguments.
func argsJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func toolCall(t testing.TB, tool string, args any) debate.ToolCall {
	t.Helper()
	return debate.ToolCall{Tool: tool, Args: argsJSON(t, args)}
}

const longDescription = "The ARR figure rests on a single pitch-deck slide with no bank statement or audited revenue behind it."

// validCall returns a call of tool that succeeds for a permitted role.
func (f *fixture) validCall(t testing.TB, tool string) debate.ToolCall {
	t.Helper()
	switch tool {
	case LookupClaim:
		return toolCall(t, tool, map[string]any{"claim_id": f.claim["C1"], "include_sanad": true, "include_evidence": true})
	case LookupCalc:
		return toolCall(t, tool, map[string]any{"calc_id": f.calcID})
	case SearchEvidence:
		return toolCall(t, tool, map[string]any{"query": "ARR revenue", "deal_id": testDealID})
	case FlagDefect:
		return toolCall(t, tool, map[string]any{
			"claim_id": f.claim["C1"], "defect_type": "UNKNOWN_SOURCE", "description": longDescription,
			"evidence_refs": []string{f.evidence["C1"]},
		})
	case RequestHumanReview:
		return toolCall(t, tool, map[string]any{"claim_ids": []string{f.claim["C1"]}, "reason": "ARR is uncorroborated by a primary source"})
	case QueryEnrichment:
		return toolCall(t, tool, map[string]any{"entity_type": "COMPANY", "entity_name": "AutoScale Commerce", "data_points": []string{"ARR"}})
	}
	t.Fatalf("no valid call for %q", tool)
	return debate.ToolCall{}
}

// permittedRole returns a role of the IDIS matrix that may call tool.
func permittedRole(tool string) string {
	for _, r := range debate.IDISRoles {
		if testMatrix.Allows(r, tool) {
			return r
		}
	}
	return ""
}

// output decodes a SUCCESS result's output.
func output[T any](t testing.TB, r Result) T {
	t.Helper()
	require.Equal(t, StatusSuccess, r.Status, "%+v", r)
	var v T
	require.NoError(t, json.Unmarshal(r.Output, &v))
	return v
}

// auditFields are seed 000 §6.1's fields.
var auditFields = []string{"event_type", "agent_id", "tool_name", "tool_args", "result_status", "result_hash", "debate_id", "round_number", "timestamp"}

// requireAudit checks that a is the complete audit record of result r of a
// call of tool by role.
func requireAudit(t testing.TB, a Audit, role, tool string, r Result) {
	t.Helper()
	raw, err := json.Marshal(a)
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	want := slices.Clone(auditFields)
	if r.Status == StatusDenied || r.Status == StatusInvalid {
		want = append(want, "rule")
		require.NotEmpty(t, a.Rule)
		require.Equal(t, r.Rule, a.Rule)
	}
	require.ElementsMatch(t, want, keys(m))

	require.Equal(t, EventToolCall, a.EventType)
	require.Equal(t, role, a.AgentID)
	require.Equal(t, tool, a.ToolName)
	require.Equal(t, r.Status, a.ResultStatus)
	require.Equal(t, testDebateID, a.DebateID)
	require.Equal(t, 2, a.RoundNumber)
	require.True(t, a.Timestamp.Equal(testNow))
	// tool_args is RFC 8785 JSON.
	c, err := jcs.Transform(a.ToolArgs)
	require.NoError(t, err)
	require.Equal(t, string(c), string(a.ToolArgs))
	// result_hash is the SHA-256 of the result's canonical JSON.
	rj, err := json.Marshal(r)
	require.NoError(t, err)
	rc, err := jcs.Transform(rj)
	require.NoError(t, err)
	sum := sha256.Sum256(rc)
	require.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), a.ResultHash)
	require.Equal(t, r.Hash(), a.ResultHash)
}

// testMatrix is seed 000 §5's permission matrix (the IDIS debate's, which
// protocols/idis declares), the fixture of these tests.
var testMatrix = Matrix{
	debate.RoleAdvocate:            {LookupClaim, LookupCalc},
	debate.RoleSanadBreaker:        {LookupClaim, LookupCalc, SearchEvidence, FlagDefect},
	debate.RoleContradictionFinder: {LookupClaim, LookupCalc, SearchEvidence, QueryEnrichment},
	debate.RoleRiskOfficer:         {LookupClaim, LookupCalc, SearchEvidence, QueryEnrichment},
	debate.RoleArbiter:             {LookupClaim, LookupCalc, SearchEvidence, RequestHumanReview},
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// fakeSearcher returns fixed hits or an error, and records its calls.
type fakeSearcher struct {
	hits  []Hit
	total int
	err   error
	calls []string
}

func (s *fakeSearcher) SearchEvidence(_ context.Context, dealID, query string, class debate.ClaimClass, minGrade debate.SourceGrade, limit int) ([]Hit, int, error) {
	s.calls = append(s.calls, strings.Join([]string{dealID, query, string(class), string(minGrade), fmt.Sprint(limit)}, "|"))
	return s.hits, s.total, s.err
}

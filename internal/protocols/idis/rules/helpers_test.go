package rules_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/testutil/dectest"
)

// ---------------------------------------------------------------------
// Authored deals

// claimSpec is one claim of an authored deal.
type claimSpec struct {
	key, text, pred, excerpt string
	class                    debate.ClaimClass
	mat                      debate.Materiality
	value                    float64
	unit                     string
	window                   *debate.TimeWindow
	grade                    debate.SourceGrade // primary source grade
	system                   string             // primary source system, "Deck" by default
	cells                    []cellSpec         // corroborating model cells
	noSpan                   bool               // no primary span and no primary evidence: MISSING_LINK
}

// cellSpec is a corroborating cell of the financial model.
type cellSpec struct {
	text  string
	grade debate.SourceGrade
}

// dealBuilder assembles an authored deal with UUID-shaped ids derived
// from its name.
type dealBuilder struct {
	b     debate.DealBundle
	seed  uint32
	seq   int
	t0    time.Time
	deck  string
	model string
	claim map[string]string
}

func (bl *dealBuilder) id() string {
	bl.seq++
	return fmt.Sprintf("%08x-7e57-4c1a-9d2e-%012x", bl.seed, bl.seq)
}

var fy2025 = &debate.TimeWindow{Label: "FY2025", StartDate: "2025-01-01", EndDate: "2025-12-31"}

// buildDeal makes a deal of the given claims: a deck (grade C unless the
// spec says otherwise) behind each claim, the model cells as
// corroborations with their own origins.
func buildDeal(name, company string, specs []claimSpec) *debate.DealBundle {
	h := fnv.New32a()
	h.Write([]byte(name))
	bl := &dealBuilder{seed: h.Sum32(), t0: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), claim: map[string]string{}}
	bl.b.Deal = debate.Deal{ID: bl.id(), ExternalRef: "RULES-" + name, CompanyName: company, Stage: "SERIES_A",
		Sector: "SaaS", Status: "IN_REVIEW", MaterialityThreshold: debate.MustDecimal("0.5"), CreatedAt: bl.t0, UpdatedAt: bl.t0}
	bl.deck, bl.model = bl.id(), bl.id()
	bl.b.Documents = []debate.Document{
		{ID: bl.deck, ArtifactType: debate.ArtifactPitchDeck, VersionLabel: "v1", IngestedAt: bl.t0},
		{ID: bl.model, ArtifactType: debate.ArtifactFinModel, VersionLabel: "v1", IngestedAt: bl.t0.Add(time.Minute)},
	}
	for i, s := range specs {
		cid := bl.id()
		bl.claim[s.key] = cid
		cur := ""
		if strings.HasPrefix(s.unit, "USD") {
			cur = "USD"
		}
		c := debate.Claim{ID: cid, DealID: bl.b.Deal.ID, Key: s.key, Class: s.class, Text: s.text, Predicate: s.pred,
			Value:       &debate.ClaimValue{Value: dectest.F(s.value), Unit: s.unit, Currency: cur, AsOf: "2025-12-31", TimeWindow: s.window},
			Materiality: s.mat, ICBound: s.mat != debate.MaterialityMedium, CreatedBy: "analyst-1", CreatedAt: bl.t0, UpdatedAt: bl.t0}
		sn := debate.Sanad{ID: bl.id(), ClaimID: cid, ExtractionConfidence: 0.95, DhabtScore: 0.9, CreatedAt: bl.t0, UpdatedAt: bl.t0}
		if !s.noSpan {
			span := bl.id()
			bl.b.Spans = append(bl.b.Spans, debate.Span{ID: span, DocumentID: bl.deck, Type: debate.SpanTypePageText,
				Locator: debate.Locator{Page: int32(1 + i), BBox: []float64{80, 100, 420, 140}}, TextExcerpt: s.excerpt, CreatedAt: bl.t0})
			ev := bl.id()
			bl.b.Evidence = append(bl.b.Evidence, debate.EvidenceItem{ID: ev, SourceSpanID: span, SourceSystem: cmpOr(s.system, "Deck"),
				UpstreamOriginID: "origin-" + ev, RetrievalTimestamp: bl.t0, SourceGrade: cmpOr(s.grade, debate.GradeC), CreatedAt: bl.t0, UpdatedAt: bl.t0})
			c.PrimarySpanID = span
			sn.PrimaryEvidenceID = ev
			sn.Chain = []debate.ChainNode{{ID: bl.id(), Type: debate.ChainNodeSource, InputRefs: []string{}, OutputRef: ev}}
		}
		for j, cell := range s.cells {
			span, ev := bl.id(), bl.id()
			bl.b.Spans = append(bl.b.Spans, debate.Span{ID: span, DocumentID: bl.model, Type: debate.SpanTypeCell,
				Locator: debate.Locator{Sheet: "Summary", Cell: fmt.Sprintf("B%d", 10*i+j)}, TextExcerpt: cell.text, CreatedAt: bl.t0})
			bl.b.Evidence = append(bl.b.Evidence, debate.EvidenceItem{ID: ev, SourceSpanID: span, SourceSystem: "FinModel",
				UpstreamOriginID: "origin-" + ev, RetrievalTimestamp: bl.t0, SourceGrade: cell.grade, CreatedAt: bl.t0, UpdatedAt: bl.t0})
			sn.CorroboratingEvidenceIDs = append(sn.CorroboratingEvidenceIDs, ev)
			sn.Chain = append(sn.Chain, debate.ChainNode{ID: bl.id(), Type: debate.ChainNodeCorroboration, InputRefs: []string{ev}, OutputRef: cid})
		}
		bl.b.Claims = append(bl.b.Claims, c)
		bl.b.Sanads = append(bl.b.Sanads, sn)
	}
	return &bl.b
}

func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// figures are the seven headline numbers of a standard authored deal.
type figures struct {
	arr, gm, burn, runway, cac, nrr, tam float64
}

// standardSpecs returns the seven standard claims (ARR, gross margin,
// burn, runway, CAC, NRR, TAM) for the figures, deck-sourced at grade
// primary.
func standardSpecs(company string, f figures, primary debate.SourceGrade) []claimSpec {
	n := func(x float64) string { return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".") }
	money := func(x float64) string {
		s := fmt.Sprintf("%.0f", x)
		var b strings.Builder
		for i, r := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	return []claimSpec{
		{key: "C1", class: debate.ClaimClassFinancial, mat: debate.MaterialityCritical, value: f.arr, unit: "USD", window: fy2025, grade: primary,
			text: "ARR is $" + money(f.arr), pred: fmt.Sprintf("ARR(%s, FY2025) = %.0f USD", company, f.arr), excerpt: "ARR: $" + money(f.arr) + " (FY2025)"},
		{key: "C2", class: debate.ClaimClassFinancial, mat: debate.MaterialityHigh, value: f.gm, unit: "percent", window: fy2025, grade: primary,
			text: "Gross margin is " + n(f.gm) + "%", pred: fmt.Sprintf("GrossMargin(%s, FY2025) = %s%%", company, n(f.gm)), excerpt: "Gross margin: " + n(f.gm) + "%"},
		{key: "C3", class: debate.ClaimClassFinancial, mat: debate.MaterialityHigh, value: f.burn, unit: "USD/month", grade: primary,
			window: &debate.TimeWindow{Label: "Dec 2025", StartDate: "2025-12-01", EndDate: "2025-12-31"},
			text:   "Monthly burn is $" + money(f.burn), pred: fmt.Sprintf("MonthlyBurn(%s, 2025-12) = %.0f USD", company, f.burn), excerpt: "Monthly burn: $" + money(f.burn)},
		{key: "C4", class: debate.ClaimClassFinancial, mat: debate.MaterialityCritical, value: f.runway, unit: "months", grade: primary,
			text: "Runway is " + n(f.runway) + " months", pred: fmt.Sprintf("Runway(%s, 2025-12) = %s months", company, n(f.runway)), excerpt: "Runway: " + n(f.runway) + " months"},
		{key: "C5", class: debate.ClaimClassTraction, mat: debate.MaterialityMedium, value: f.cac, unit: "USD", grade: primary,
			window: &debate.TimeWindow{Label: "Q4 2025", StartDate: "2025-10-01", EndDate: "2025-12-31"},
			text:   "CAC is $" + money(f.cac), pred: fmt.Sprintf("CAC(%s, Q4 2025) = %.0f USD", company, f.cac), excerpt: "CAC: $" + money(f.cac)},
		{key: "C6", class: debate.ClaimClassTraction, mat: debate.MaterialityHigh, value: f.nrr, unit: "percent", window: fy2025, grade: primary,
			text: "Net revenue retention is " + n(f.nrr) + "%", pred: fmt.Sprintf("NRR(%s, FY2025) = %s%%", company, n(f.nrr)), excerpt: "NRR: " + n(f.nrr) + "%"},
		{key: "C7", class: debate.ClaimClassMarketSize, mat: debate.MaterialityMedium, value: f.tam, unit: "USD", grade: primary,
			text: "TAM is $" + money(f.tam), pred: fmt.Sprintf("TAM(%s market, 2025) = %.0f USD", company, f.tam), excerpt: "TAM: $" + money(f.tam)},
	}
}

// The four authored deals of the table tests.
func cleanDeal() *debate.DealBundle {
	specs := standardSpecs("Clearwater Analytics", figures{4_500_000, 72.5, 350_000, 30, 2500, 118, 25e9}, debate.GradeB)
	specs[0].cells = []cellSpec{{"4,500,000", debate.GradeA}}
	specs[1].cells = []cellSpec{{"72.5%", debate.GradeA}}
	specs[2].cells = []cellSpec{{"350,000", debate.GradeA}}
	specs[3].cells = []cellSpec{{"30 months", debate.GradeA}}
	specs[5].cells = []cellSpec{{"118%", debate.GradeA}}
	return buildDeal("clean", "Clearwater Analytics", specs)
}

// inconsistentDeal: the model's ARR cell disagrees with the deck's ARR
// (a CRITICAL claim).
func inconsistentDeal() *debate.DealBundle {
	specs := standardSpecs("Driftwood Data", figures{5_200_000, 68, 420_000, 24, 3200, 112, 18e9}, debate.GradeC)
	specs[0].cells = []cellSpec{{"4,800,000", debate.GradeB}}
	specs[1].cells = []cellSpec{{"68%", debate.GradeB}}
	return buildDeal("inconsistency", "Driftwood Data", specs)
}

// missingLinkDeal: the NRR claim has no evidence span at all.
func missingLinkDeal() *debate.DealBundle {
	specs := standardSpecs("Harbor Health", figures{3_200_000, 78, 280_000, 21, 5200, 122, 42e9}, debate.GradeC)
	specs[5].noSpan = true
	return buildDeal("missing_link", "Harbor Health", specs)
}

// shortRunwayDeal: 9 months of runway, burn three times ARR, thin margin.
func shortRunwayDeal() *debate.DealBundle {
	specs := standardSpecs("Kestrel Freight", figures{2_000_000, 48, 500_000, 9, 6100, 94, 7e9}, debate.GradeC)
	specs[0].cells = []cellSpec{{"2,000,000", debate.GradeB}}
	return buildDeal("short_runway", "Kestrel Freight", specs)
}

// unknownSourceDeal: the CRITICAL ARR claim's only source is graded D.
func unknownSourceDeal() *debate.DealBundle {
	specs := standardSpecs("Osprey Labs", figures{6_000_000, 70, 300_000, 28, 1500, 110, 9e9}, debate.GradeC)
	specs[0].grade, specs[0].system = debate.GradeD, "Newsletter"
	return buildDeal("unknown_source", "Osprey Labs", specs)
}

// ---------------------------------------------------------------------
// Fake tools

// permitted is seed 000 §5's matrix (the arbiter may search, as §5 says).
var permitted = map[string][]string{
	debate.RoleAdvocate:            {"lookup_claim", "lookup_calc"},
	debate.RoleSanadBreaker:        {"lookup_claim", "lookup_calc", "search_evidence", "flag_defect"},
	debate.RoleContradictionFinder: {"lookup_claim", "lookup_calc", "search_evidence", "query_enrichment"},
	debate.RoleRiskOfficer:         {"lookup_claim", "lookup_calc", "search_evidence", "query_enrichment"},
	debate.RoleArbiter:             {"lookup_claim", "lookup_calc", "search_evidence", "request_human_review"},
}

// limits are seed 000 §6.2's quotas per role and round (and the server's
// for the two tools the seed leaves open).
var limits = map[string]int{"lookup_claim": 20, "lookup_calc": 10, "search_evidence": 5, "flag_defect": 3, "query_enrichment": 5, "request_human_review": 2}

// call is one recorded tool call.
type call struct {
	Role   string
	Round  int
	Tool   string
	Args   json.RawMessage
	Status string
	Why    string
}

// toolLog records every call of a debate and answers like the server:
// DENIED outside the matrix or the quota, INVALID for bad arguments,
// SUCCESS with plausible JSON otherwise.
type toolLog struct {
	mu    sync.Mutex
	deal  *debate.DealBundle
	refs  map[string]bool
	calls []call
}

func newToolLog(b *debate.DealBundle) *toolLog {
	l := &toolLog{deal: b, refs: map[string]bool{}}
	for _, c := range b.Claims {
		l.refs[c.ID] = true
	}
	for _, e := range b.Evidence {
		l.refs[e.ID] = true
	}
	for _, s := range b.Spans {
		l.refs[s.ID] = true
	}
	for _, c := range b.Calcs {
		l.refs[c.ID] = true
	}
	for _, d := range b.Documents {
		l.refs[d.ID] = true
	}
	return l
}

// forTurn returns the roles.Tools of one role's turn.
func (l *toolLog) forTurn(role string, round int) roles.Tools { return turnTools{l, role, round} }

func (l *toolLog) byStatus(status string) []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []call
	for _, c := range l.calls {
		if c.Status == status {
			out = append(out, c)
		}
	}
	return out
}

func (l *toolLog) count(role, tool string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.calls {
		if c.Role == role && c.Tool == tool && c.Status == "SUCCESS" {
			n++
		}
	}
	return n
}

type turnTools struct {
	l     *toolLog
	role  string
	round int
}

func (t turnTools) Call(_ context.Context, tc debate.ToolCall) (debate.ToolResult, error) {
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	status, why, out := l.answer(t.role, t.round, tc)
	l.calls = append(l.calls, call{Role: t.role, Round: t.round, Tool: tc.Tool, Args: tc.Args, Status: status, Why: why})
	return debate.ToolResult{Status: status, Output: out, Error: why}, nil
}

func (l *toolLog) answer(role string, round int, tc debate.ToolCall) (string, string, json.RawMessage) {
	if !slices.Contains(permitted[role], tc.Tool) {
		return "DENIED", "permission", nil
	}
	used := 0
	for _, c := range l.calls {
		if c.Role == role && c.Round == round && c.Tool == tc.Tool {
			used++
		}
	}
	if used >= limits[tc.Tool] {
		return "DENIED", "quota", nil
	}
	var a map[string]any
	dec := json.NewDecoder(strings.NewReader(string(tc.Args)))
	if err := dec.Decode(&a); err != nil {
		return "INVALID", "arguments: " + err.Error(), nil
	}
	known := map[string][]string{
		"lookup_claim":         {"claim_id", "include_sanad", "include_evidence"},
		"lookup_calc":          {"calc_id", "include_inputs"},
		"search_evidence":      {"query", "deal_id", "claim_class", "min_grade", "limit"},
		"flag_defect":          {"claim_id", "defect_type", "severity", "description", "evidence_refs", "cure_protocol"},
		"request_human_review": {"claim_ids", "reason", "priority", "required_role"},
		"query_enrichment":     {"entity_type", "entity_name", "data_points"},
	}
	for k := range a {
		if !slices.Contains(known[tc.Tool], k) {
			return "INVALID", "unknown field " + k, nil
		}
	}
	str := func(k string) string { s, _ := a[k].(string); return s }
	list := func(k string) []string {
		var out []string
		xs, _ := a[k].([]any)
		for _, x := range xs {
			s, _ := x.(string)
			out = append(out, s)
		}
		return out
	}
	claimOK := func(id string) bool {
		return slices.ContainsFunc(l.deal.Claims, func(c debate.Claim) bool { return c.ID == id })
	}
	switch tc.Tool {
	case "lookup_claim":
		if !claimOK(str("claim_id")) {
			return "INVALID", "not_found", nil
		}
		return "SUCCESS", "", json.RawMessage(fmt.Sprintf(`{"claim":{"claim_id":%q,"claim_class":"FINANCIAL","claim_grade":"C","claim_verdict":"VERIFIED"},"sanad":{},"evidence":[]}`, str("claim_id")))
	case "lookup_calc":
		if !slices.ContainsFunc(l.deal.Calcs, func(c debate.Calc) bool { return c.ID == str("calc_id") }) {
			return "INVALID", "not_found", nil
		}
		return "SUCCESS", "", json.RawMessage(fmt.Sprintf(`{"calc":{"calc_id":%q,"output":{}},"inputs":[]}`, str("calc_id")))
	case "search_evidence":
		if str("query") == "" || str("deal_id") != l.deal.Deal.ID {
			return "INVALID", "query and this deal's id required", nil
		}
		return "SUCCESS", "", json.RawMessage(`{"results":[],"total_count":0}`)
	case "flag_defect":
		refs := list("evidence_refs")
		if !claimOK(str("claim_id")) || len(refs) == 0 || len([]rune(strings.TrimSpace(str("description")))) < 50 {
			return "INVALID", "requirement", nil
		}
		for _, r := range refs {
			if !l.refs[r] {
				return "INVALID", "not_found " + r, nil
			}
		}
		return "SUCCESS", "", json.RawMessage(`{"defect_id":"dfl_test","status":"OPEN"}`)
	case "request_human_review":
		ids := list("claim_ids")
		if len(ids) == 0 || str("reason") == "" {
			return "INVALID", "claim_ids and reason required", nil
		}
		for _, id := range ids {
			if !claimOK(id) {
				return "INVALID", "not_found", nil
			}
		}
		return "SUCCESS", "", json.RawMessage(`{"gate_id":"hg_test","status":"PENDING"}`)
	case "query_enrichment":
		if str("entity_name") == "" || len(list("data_points")) == 0 {
			return "INVALID", "entity_name and data_points required", nil
		}
		return "SUCCESS", "", json.RawMessage(`{"results":[{"data_point":"ARR","value":"unknown","source_grade":"D"}]}`)
	}
	return "INVALID", "unknown tool", nil
}

// ---------------------------------------------------------------------
// Running turns and debates

// input builds one turn's input.
func input(b *debate.DealBundle, g *debate.DealGrading, round int, tr []debate.AgentOutput, tools roles.Tools) *roles.Input {
	return &roles.Input{DebateID: "debate-1", Round: round, MaxRounds: 5, Deal: b, Grading: g, Transcript: tr, Tools: tools}
}

// turn runs one role and returns its output.
func turn(t *testing.T, role string, b *debate.DealBundle, g *debate.DealGrading, round int, tr []debate.AgentOutput, l *toolLog) debate.AgentOutput {
	t.Helper()
	var tools roles.Tools
	if l != nil {
		tools = l.forTurn(role, round)
	}
	out, err := rules.New()[role].Turn(context.Background(), input(b, g, round, tr, tools))
	require.NoError(t, err)
	require.NotNil(t, out)
	return *out
}

// debateRun is a simulated IDIS debate: the outputs in transcript order
// and the tool log.
type debateRun struct {
	outputs []debate.AgentOutput
	log     *toolLog
	grading *debate.DealGrading // the last grading
	// gradings[i] is the grading outputs[i] was produced from.
	gradings []*debate.DealGrading
}

// simulate runs rounds of the IDIS graph (seed 001 §1): advocate opening,
// sanad breaker, contradiction finder ‖ risk officer (same input),
// advocate rebuttal, arbiter. Flagged defects are recorded with sanad.Flag
// and the deal re-graded after each turn, as the server does.
func simulate(t *testing.T, b *debate.DealBundle, rounds int) debateRun {
	t.Helper()
	run := debateRun{log: newToolLog(b), grading: sanad.Grade(b)}
	var records []debate.Defect
	now := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	apply := func(outs ...debate.AgentOutput) {
		for _, o := range outs {
			run.outputs = append(run.outputs, o)
			run.gradings = append(run.gradings, run.grading)
			for _, c := range o.ToolCalls {
				if c.Tool != "flag_defect" {
					continue
				}
				var a struct {
					ClaimID      string   `json:"claim_id"`
					DefectType   string   `json:"defect_type"`
					Severity     string   `json:"severity"`
					Description  string   `json:"description"`
					EvidenceRefs []string `json:"evidence_refs"`
					CureProtocol string   `json:"cure_protocol"`
				}
				require.NoError(t, json.Unmarshal(c.Args, &a))
				d, _, err := sanad.Flag(b, sanad.FlagParams{ID: fmt.Sprintf("dfl_%d", len(records)+1), ClaimID: a.ClaimID,
					Type: debate.DefectType(a.DefectType), Severity: debate.Severity(a.Severity), CureProtocol: debate.CureProtocol(a.CureProtocol),
					Description: a.Description, EvidenceRefs: a.EvidenceRefs, Actor: o.Role}, now)
				require.NoError(t, err, "flag_defect arguments the server would refuse")
				records = append(records, d)
				run.grading = sanad.GradeWithOptions(b, sanad.Options{Records: records})
			}
		}
	}
	for r := 1; r <= rounds; r++ {
		apply(turn(t, debate.RoleAdvocate, b, run.grading, r, run.outputs, run.log))
		apply(turn(t, debate.RoleSanadBreaker, b, run.grading, r, run.outputs, run.log))
		cf := turn(t, debate.RoleContradictionFinder, b, run.grading, r, run.outputs, run.log)
		ro := turn(t, debate.RoleRiskOfficer, b, run.grading, r, run.outputs, run.log)
		apply(cf, ro)
		apply(turn(t, debate.RoleAdvocate, b, run.grading, r, run.outputs, run.log))
		apply(turn(t, debate.RoleArbiter, b, run.grading, r, run.outputs, run.log))
	}
	return run
}

// ---------------------------------------------------------------------
// Local Muhasabah checker (seed 000 §7, plus the stricter reference checks
// of DESIGN.md §3.10)

var (
	numberRe   = regexp.MustCompile(`\d`)
	claimKeyRe = regexp.MustCompile(`\bclaims? ([A-Za-z0-9_-]+)`)
	calcIDRe   = regexp.MustCompile(`\bcalc [A-Z_]+ ([^\s,;:)]+)`)
)

// violations lists every rule the output breaks against the deal and its
// grading.
func violations(b *debate.DealBundle, g *debate.DealGrading, o debate.AgentOutput) []string {
	var v []string
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	claims := map[string]debate.Claim{}
	keys := map[string]string{}
	for _, c := range b.Claims {
		claims[c.ID] = c
		keys[c.Key] = c.ID
	}
	calcs := map[string]bool{}
	for _, c := range b.Calcs {
		calcs[c.ID] = true
	}
	refs := newToolLog(b).refs
	m := o.Muhasabah

	if o.AgentID == "" || o.Role == "" || o.RoundNumber < 1 {
		add("agent_id, role and round_number are required")
	}
	if strings.TrimSpace(o.Content) == "" {
		add("content is empty")
	}
	// Rule 1, No-Free-Facts: facts need supported ids; every id exists; the
	// refs and the supported ids agree; every claim key and calc id the
	// content names is referenced.
	if numberRe.MatchString(o.Content) && len(m.SupportedClaimIDs) == 0 && len(m.SupportedCalcIDs) == 0 {
		add("NO_FREE_FACTS: content states figures without supported ids")
	}
	for _, id := range slices.Concat(o.ClaimRefs, m.SupportedClaimIDs) {
		if _, ok := claims[id]; !ok {
			add("NO_FREE_FACTS: claim id %q is not in the deal", id)
		}
	}
	for _, id := range slices.Concat(o.CalcRefs, m.SupportedCalcIDs) {
		if !calcs[id] {
			add("NO_FREE_FACTS: calc id %q is not in the deal", id)
		}
	}
	if !slices.Equal(o.ClaimRefs, m.SupportedClaimIDs) || !slices.Equal(o.CalcRefs, m.SupportedCalcIDs) {
		add("claim_refs/calc_refs differ from the supported ids")
	}
	for _, texts := range [][]string{{o.Content}, o.OpenQuestions} {
		for _, text := range texts {
			for _, mm := range claimKeyRe.FindAllStringSubmatch(text, -1) {
				if id, ok := keys[mm[1]]; ok && !slices.Contains(o.ClaimRefs, id) {
					add("NO_FREE_FACTS: text names claim %s but claim_refs lacks it", mm[1])
				}
			}
			for _, mm := range calcIDRe.FindAllStringSubmatch(text, -1) {
				if !slices.Contains(o.CalcRefs, mm[1]) {
					add("NO_FREE_FACTS: text names calc %s but calc_refs lacks it", mm[1])
				}
			}
		}
	}
	// Rule 2, falsifiability.
	if m.Confidence > 0.5 || o.Position != nil {
		if len(m.FalsifiabilityTests) == 0 {
			add("FALSIFIABILITY_MISSING")
		}
	}
	for _, ft := range m.FalsifiabilityTests {
		if ft.TestDescription == "" || ft.RequiredEvidence == "" || ft.PassFailRule == "" {
			add("FALSIFIABILITY_MISSING: a test lacks a field")
		}
	}
	// Rule 3, uncertainties for weak sources.
	grades := map[string]debate.ClaimGrade{}
	for _, c := range g.Claims {
		grades[c.ClaimID] = c
	}
	for _, id := range m.SupportedClaimIDs {
		cg := grades[id]
		if (cg.Grade != debate.GradeA || cg.Corroboration != debate.CorroborationMutawatir) && len(m.Uncertainties) == 0 {
			add("UNCERTAINTIES_MISSING: claim %s is weak", cg.ClaimKey)
		}
	}
	for _, u := range m.Uncertainties {
		if u.Uncertainty == "" || u.Impact == "" || u.Mitigation == "" {
			add("an uncertainty lacks a field")
		}
	}
	// Rule 4, overconfidence (the brief asks for both).
	if m.Confidence > 0.8 && (len(m.Uncertainties) == 0 || m.CounterHypothesis == "") {
		add("OVERCONFIDENCE")
	}
	if strings.TrimSpace(m.CounterHypothesis) == "" {
		add("counter_hypothesis is empty")
	}
	if m.Confidence < 0 || m.Confidence > 1 {
		add("confidence %v outside [0, 1]", m.Confidence)
	}
	if o.Position != nil {
		if !slices.Contains([]string{debate.RecommendInvest, debate.RecommendConditional, debate.RecommendPass}, o.Position.Recommendation) {
			add("unknown recommendation %q", o.Position.Recommendation)
		}
		if o.Position.Confidence != m.Confidence {
			add("position confidence differs from the record's")
		}
	}
	// Challenges: seed 000 §6.3 with ids of the deal.
	ids := map[string]bool{}
	for _, ch := range o.Challenges {
		if ids[ch.ChallengeID] || ch.ChallengeID == "" {
			add("challenge id %q empty or repeated", ch.ChallengeID)
		}
		ids[ch.ChallengeID] = true
		if len(ch.ClaimRefs) == 0 || ch.DefectType == "" || len(ch.EvidenceRefs) == 0 || ch.Description == "" || ch.CureProtocol == "" {
			add("challenge %s incomplete", ch.ChallengeID)
		}
		if !slices.Contains(debate.DefectTypes, debate.DefectType(ch.DefectType)) {
			add("challenge %s: unknown defect type", ch.ChallengeID)
		}
		for _, id := range ch.ClaimRefs {
			if _, ok := claims[id]; !ok || !slices.Contains(o.ClaimRefs, id) {
				add("challenge %s: claim %s not in the deal or not referenced", ch.ChallengeID, id)
			}
		}
		for _, id := range ch.EvidenceRefs {
			if !refs[id] {
				add("challenge %s: evidence ref %s not in the deal", ch.ChallengeID, id)
			}
			if slices.Contains(ch.ClaimRefs, id) {
				add("challenge %s cites the claim it attacks as its evidence", ch.ChallengeID)
			}
		}
	}
	for _, r := range o.EvidenceRequests {
		for _, id := range r.ClaimRefs {
			if _, ok := claims[id]; !ok {
				add("evidence request names unknown claim %s", id)
			}
		}
	}
	return v
}

// requireValid fails the test on any violation of any output, by the local
// checker and by internal/gate's Validate.
func requireValid(t *testing.T, b *debate.DealBundle, g *debate.DealGrading, outs ...debate.AgentOutput) {
	t.Helper()
	for _, o := range outs {
		require.Empty(t, violations(b, g, o), "%s round %d:\n%s", o.Role, o.RoundNumber, o.Content)
		res := gate.Validate(&o, gate.NewFacts(b, g), debate.IDISRoles)
		require.True(t, res.Valid, "%s round %d: %v", o.Role, o.RoundNumber, res.Violations)
	}
}

package sanad

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/testutil/dectest"
)

// mini builds small one-deal bundles for table tests.
type mini struct {
	b  debate.DealBundle
	n  int
	t0 time.Time
	// deck and model are the default documents.
	deck, model string
}

func newMini() *mini {
	m := &mini{t0: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}
	m.b.Deal = debate.Deal{ID: "deal-1", CompanyName: "Testco"}
	m.deck = m.doc(debate.ArtifactPitchDeck, "v1", m.t0)
	m.model = m.doc(debate.ArtifactFinModel, "v1", m.t0.Add(time.Minute))
	return m
}

func (m *mini) id(kind string) string {
	m.n++
	return fmt.Sprintf("%s-%03d", kind, m.n)
}

func (m *mini) doc(t debate.ArtifactType, version string, at time.Time) string {
	id := m.id("doc")
	m.b.Documents = append(m.b.Documents, debate.Document{ID: id, ArtifactType: t, VersionLabel: version, IngestedAt: at})
	return id
}

// ev adds a span in doc with text and an evidence item quoting it.
func (m *mini) ev(doc, text string, grade debate.SourceGrade, origin string) string {
	span := m.id("span")
	m.b.Spans = append(m.b.Spans, debate.Span{ID: span, DocumentID: doc, Type: debate.SpanTypePageText, TextExcerpt: text})
	id := m.id("ev")
	if origin == "" {
		origin = m.id("origin")
	}
	m.b.Evidence = append(m.b.Evidence, debate.EvidenceItem{ID: id, SourceSpanID: span, UpstreamOriginID: origin, SourceGrade: grade})
	return id
}

func (m *mini) item(id string) *debate.EvidenceItem {
	for i := range m.b.Evidence {
		if m.b.Evidence[i].ID == id {
			return &m.b.Evidence[i]
		}
	}
	return nil
}

var fy2025 = &debate.TimeWindow{Label: "FY2025", StartDate: "2025-01-01", EndDate: "2025-12-31"}

// arrClaim adds an ARR claim of value with primary evidence primary (may
// be "") and the corroborations corr, chained as GDBS does.
func (m *mini) claim(key, predicate string, value float64, unit string, w *debate.TimeWindow, primary string, corr ...string) string {
	id := m.id("claim")
	span := ""
	if e := m.item(primary); e != nil {
		span = e.SourceSpanID
	}
	m.b.Claims = append(m.b.Claims, debate.Claim{
		ID: id, DealID: m.b.Deal.ID, Key: key, Class: debate.ClaimClassFinancial, Text: "The company states " + predicate + ".", Predicate: predicate,
		Value:       &debate.ClaimValue{Value: dectest.F(value), Unit: unit, AsOf: "2025-12-31", TimeWindow: w},
		Materiality: debate.MaterialityHigh, PrimarySpanID: span,
	})
	s := debate.Sanad{ID: m.id("sanad"), ClaimID: id, PrimaryEvidenceID: primary, CorroboratingEvidenceIDs: corr}
	if primary != "" {
		s.Chain = append(s.Chain, debate.ChainNode{ID: m.id("node"), Type: debate.ChainNodeSource, OutputRef: primary})
	}
	for _, c := range corr {
		s.Chain = append(s.Chain, debate.ChainNode{ID: m.id("node"), Type: debate.ChainNodeCorroboration, InputRefs: []string{c}, OutputRef: id})
	}
	m.b.Sanads = append(m.b.Sanads, s)
	return id
}

func (m *mini) arr(primary string, corr ...string) string {
	return m.claim("K1", "ARR(Testco, FY2025) = 4500000 USD", 4500000, "USD", fy2025, primary, corr...)
}

func (m *mini) grade(t *testing.T) debate.ClaimGrade {
	t.Helper()
	require.NoError(t, m.b.Validate())
	g := Grade(&m.b)
	c, ok := g.Claim("K1")
	require.True(t, ok)
	return c
}

func defectTypes(c debate.ClaimGrade) []debate.DefectType {
	var out []debate.DefectType
	for _, d := range c.Defects {
		out = append(out, d.Type)
	}
	return out
}

// TestClaimSanadGradeAlgorithm is seed 001 §6.2: the grade algorithm for
// grades A, B, C and D (SANAD.md "Grade").
func TestClaimSanadGradeAlgorithm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(m *mini)
		grade   debate.Grade
		verdict debate.Verdict
		action  debate.Action
		defects []debate.DefectType
		status  debate.CorroborationStatus
	}{
		{"A primary stays A", func(m *mini) {
			m.arr(m.ev(m.model, "ARR: $4.5M", debate.GradeA, ""))
		}, debate.GradeA, debate.VerdictVerified, debate.ActionNone, nil, debate.CorroborationAhad1},
		{"A is the ceiling", func(m *mini) {
			m.arr(m.ev(m.model, "ARR: $4.5M", debate.GradeA, ""), m.ev(m.model, "4,500,000", debate.GradeA, ""))
		}, debate.GradeA, debate.VerdictVerified, debate.ActionNone, nil, debate.CorroborationAhad2},
		{"B upgraded to A by an A corroboration", func(m *mini) {
			m.arr(m.ev(m.model, "ARR: $4.5M", debate.GradeB, ""), m.ev(m.model, "4.5 million", debate.GradeA, ""))
		}, debate.GradeA, debate.VerdictVerified, debate.ActionNone, nil, debate.CorroborationAhad2},
		{"C upgraded to B", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4,500,000", debate.GradeC, ""), m.ev(m.model, "4500000", debate.GradeB, ""))
		}, debate.GradeB, debate.VerdictVerified, debate.ActionNone, nil, debate.CorroborationAhad2},
		{"C with an equal-grade corroboration stays C", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4,500,000", debate.GradeC, ""), m.ev(m.deck, "ARR $4.5M", debate.GradeC, ""))
		}, debate.GradeC, debate.VerdictVerified, debate.ActionNone, nil, debate.CorroborationAhad2},
		{"C without corroboration stays C", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4,500,000", debate.GradeC, ""))
		}, debate.GradeC, debate.VerdictVerified, debate.ActionNone, nil, debate.CorroborationAhad1},
		{"MUTAWATIR upgrades C to B", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.deck, "ARR 4,500,000", debate.GradeC, ""), m.ev(m.deck, "ARR of $4.5 million", debate.GradeC, ""))
		}, debate.GradeB, debate.VerdictVerified, debate.ActionNone, nil, debate.CorroborationMutawatir},
		{"MAJOR blocks the upgrade and lowers one step: C to D", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "4,500,000", debate.GradeB, ""))
			m.ev(m.model, "ARR: $4.9M", debate.GradeB, "") // uncited, contradicts
		}, debate.GradeD, debate.VerdictContradicted, debate.ActionRedFlag, []debate.DefectType{debate.DefectInconsistency}, debate.CorroborationAhad2},
		{"MAJOR lowers B to C, not to D", func(m *mini) {
			m.arr(m.ev(m.model, "ARR: $4.5M", debate.GradeB, ""))
			m.ev(m.deck, "ARR: $4.9M", debate.GradeC, "")
		}, debate.GradeC, debate.VerdictContradicted, debate.ActionRedFlag, []debate.DefectType{debate.DefectInconsistency}, debate.CorroborationAhad1},
		{"two MAJOR defects lower A two steps", func(m *mini) {
			m.arr(m.ev(m.model, "ARR: $4.5M", debate.GradeA, ""))
			m.ev(m.deck, "ARR: $4.9M", debate.GradeC, "")
			m.ev(m.deck, "LTM revenue (Dec 2024 - Nov 2025): $4.4M", debate.GradeC, "")
		}, debate.GradeC, debate.VerdictContradicted, debate.ActionRedFlag, []debate.DefectType{debate.DefectInconsistency, debate.DefectTimeWindow}, debate.CorroborationAhad1},
		{"FATAL gives D from A", func(m *mini) {
			m.arr(m.ev(m.model, "ARR: $4.5M", debate.GradeA, ""), "ev-missing")
		}, debate.GradeD, debate.VerdictUnverified, debate.ActionPartnerOverrideRequired, []debate.DefectType{debate.DefectBrokenChain}, debate.CorroborationAhad1},
		{"no primary evidence: D, blocked", func(m *mini) {
			m.arr("")
		}, debate.GradeD, debate.VerdictBlocked, debate.ActionRejectNoFreeFacts, []debate.DefectType{debate.DefectMissingLink}, debate.CorroborationNone},
		{"a grade D source without defect: D, never action NONE", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeD, ""))
		}, debate.GradeD, debate.VerdictUnverified, debate.ActionRequestData, nil, debate.CorroborationAhad1},
		{"D upgraded to C by a better corroboration", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeD, ""), m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""))
		}, debate.GradeC, debate.VerdictVerified, debate.ActionNone, nil, debate.CorroborationAhad2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMini()
			tt.setup(m)
			c := m.grade(t)
			require.Equal(t, tt.grade, c.Grade, "%v", c.Steps)
			require.Equal(t, tt.verdict, c.Verdict, "%v", c.Steps)
			require.Equal(t, tt.action, c.Action)
			require.Equal(t, tt.defects, defectTypes(c), "%v", c.Steps)
			require.Equal(t, tt.status, c.Corroboration, "%v", c.Steps)
			require.NotEmpty(t, c.Steps)
			require.Equal(t, "verdict", c.Steps[len(c.Steps)-1].Rule, "the verdict is the last step")
		})
	}
}

// TestIndependenceComputation is seed 001 §6.5: upstream_origin_id plus
// chain-segment overlap.
func TestIndependenceComputation(t *testing.T) {
	t.Parallel()
	a := &debate.EvidenceItem{ID: "ev-a", UpstreamOriginID: "o1"}
	b := &debate.EvidenceItem{ID: "ev-b", UpstreamOriginID: "o2"}
	sameOrigin := &debate.EvidenceItem{ID: "ev-c", UpstreamOriginID: "o1"}
	src := func(id, out string, in ...string) debate.ChainNode {
		return debate.ChainNode{ID: id, Type: debate.ChainNodeSource, InputRefs: in, OutputRef: out}
	}
	tests := []struct {
		name  string
		x, y  *debate.EvidenceItem
		nodes []debate.ChainNode
		indep bool
	}{
		{"different origins, no chain", a, b, nil, true},
		{"same origin", a, sameOrigin, nil, false},
		{"separate chains", a, b, []debate.ChainNode{src("n1", "ev-a"), src("n2", "ev-b")}, true},
		{"a node consuming both is downstream of both", a, b, []debate.ChainNode{
			src("n1", "ev-a"), src("n2", "ev-b"),
			{ID: "n3", Type: debate.ChainNodeCorroboration, InputRefs: []string{"ev-a", "ev-b"}, OutputRef: "claim"},
		}, true},
		{"shared upstream node", a, b, []debate.ChainNode{
			{ID: "x", Type: debate.ChainNodeExtraction, OutputRef: "raw"},
			{ID: "n1", Type: debate.ChainNodeTransform, InputRefs: []string{"x"}, OutputRef: "ev-a"},
			{ID: "n2", Type: debate.ChainNodeTransform, InputRefs: []string{"x"}, OutputRef: "ev-b"},
		}, false},
		{"common input reference", a, b, []debate.ChainNode{src("n1", "ev-a", "ev-raw"), src("n2", "ev-b", "ev-raw")}, false},
		{"one derived from the other", a, b, []debate.ChainNode{{ID: "n2", Type: debate.ChainNodeTransform, InputRefs: []string{"ev-a"}, OutputRef: "ev-b"}}, false},
	}
	for _, tt := range tests {
		c := newChain([]*debate.Sanad{{Chain: tt.nodes}})
		got, why := c.independent(tt.x, tt.y)
		require.Equal(t, tt.indep, got, "%s: %s", tt.name, why)
		got2, _ := c.independent(tt.y, tt.x)
		require.Equal(t, got, got2, "%s: independence is symmetric", tt.name)
	}

	// Groups: a, b, d independent; c shares a's origin: three groups.
	d := &debate.EvidenceItem{ID: "ev-d", UpstreamOriginID: "o3"}
	c := newChain(nil)
	require.Equal(t, 3, c.groups([]*debate.EvidenceItem{a, b, sameOrigin, d}))
	require.Equal(t, debate.CorroborationMutawatir, debate.CorroborationOf(3))
	require.Equal(t, debate.CorroborationAhad2, debate.CorroborationOf(2))
	require.Equal(t, debate.CorroborationAhad1, debate.CorroborationOf(1))
	require.Equal(t, debate.CorroborationNone, debate.CorroborationOf(0))
	// Transitive: b shares a node with a, d shares an input with b.
	c = newChain([]*debate.Sanad{{Chain: []debate.ChainNode{
		{ID: "x", Type: debate.ChainNodeExtraction, OutputRef: "raw"},
		{ID: "n1", Type: debate.ChainNodeTransform, InputRefs: []string{"x"}, OutputRef: "ev-a"},
		{ID: "n2", Type: debate.ChainNodeTransform, InputRefs: []string{"x", "ev-raw"}, OutputRef: "ev-b"},
		{ID: "n3", Type: debate.ChainNodeSource, InputRefs: []string{"ev-raw"}, OutputRef: "ev-d"},
	}}})
	require.Equal(t, 1, c.groups([]*debate.EvidenceItem{a, b, d}))
}

// TestChainIntegrity checks every BROKEN_CHAIN detector, positive and
// negative.
func TestChainIntegrity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		edit    func(m *mini, s *debate.Sanad, claim, primary, corr string)
		broken  bool
		mention string
	}{
		{"clean chain", func(*mini, *debate.Sanad, string, string, string) {}, false, ""},
		{"empty chain with a primary is not broken", func(_ *mini, s *debate.Sanad, _, _, _ string) { s.Chain = nil }, false, ""},
		{"dangling corroborating id", func(_ *mini, s *debate.Sanad, _, _, _ string) {
			s.CorroboratingEvidenceIDs = append(s.CorroboratingEvidenceIDs, "ev-ghost")
		}, true, "ev-ghost"},
		{"dangling primary evidence", func(_ *mini, s *debate.Sanad, _, _, _ string) { s.PrimaryEvidenceID = "ev-ghost" }, true, "ev-ghost"},
		{"dangling node input", func(_ *mini, s *debate.Sanad, _, _, _ string) {
			s.Chain[1].InputRefs = append(s.Chain[1].InputRefs, "node-ghost")
		}, true, "node-ghost"},
		{"dangling node output", func(_ *mini, s *debate.Sanad, _, _, _ string) { s.Chain[0].OutputRef = "ev-ghost" }, true, "ev-ghost"},
		{"node input naming another node is fine", func(_ *mini, s *debate.Sanad, _, _, _ string) {
			s.Chain[1].InputRefs = append(s.Chain[1].InputRefs, s.Chain[0].ID)
		}, false, ""},
		{"cycle", func(_ *mini, s *debate.Sanad, claim, _, _ string) {
			s.Chain = append(s.Chain,
				debate.ChainNode{ID: "t1", Type: debate.ChainNodeTransform, InputRefs: []string{"t2"}, OutputRef: claim},
				debate.ChainNode{ID: "t2", Type: debate.ChainNodeTransform, InputRefs: []string{"t1"}, OutputRef: claim})
		}, true, "cycle"},
		{"self loop", func(_ *mini, s *debate.Sanad, _, primary, _ string) {
			s.Chain[0].InputRefs = []string{primary}
		}, true, "cycle"},
		{"orphan node", func(m *mini, s *debate.Sanad, _, _, _ string) {
			stray := m.ev(m.deck, "footnote", debate.GradeC, "")
			s.Chain = append(s.Chain, debate.ChainNode{ID: "stray", Type: debate.ChainNodeSource, OutputRef: stray})
		}, true, "orphan"},
		{"no root", func(_ *mini, s *debate.Sanad, _, _, _ string) { s.Chain = s.Chain[1:] }, true, "no root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMini()
			primary := m.ev(m.deck, "ARR: $4.5M", debate.GradeC, "")
			corr := m.ev(m.model, "4500000", debate.GradeB, "")
			claim := m.arr(primary, corr)
			tt.edit(m, &m.b.Sanads[0], claim, primary, corr)
			c := m.grade(t)
			has := slices.Contains(defectTypes(c), debate.DefectBrokenChain)
			require.Equal(t, tt.broken, has, "%v", c.Steps)
			if tt.broken {
				require.Equal(t, debate.GradeD, c.Grade)
				require.Equal(t, debate.ActionPartnerOverrideRequired, c.Action)
				require.Contains(t, c.Defects[0].Description+fmt.Sprint(c.Defects[0].EvidenceRefs), tt.mention)
				require.Equal(t, debate.SeverityFatal, c.Defects[0].Severity)
				require.Equal(t, debate.CureReconstructChain, c.Defects[0].CureProtocol)
			}
		})
	}
}

// TestDefectDetectors checks each defect detector on a positive and a
// negative case.
func TestDefectDetectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(m *mini)
		defect debate.DefectType // "" for none
	}{
		{"INCONSISTENCY: corroboration states another value", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "4,800,000", debate.GradeB, ""))
		}, debate.DefectInconsistency},
		{"no INCONSISTENCY: same value in another spelling", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "USD 4,500,000", debate.GradeB, ""))
		}, ""},
		{"no INCONSISTENCY: within the claim's precision", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "4,500,400", debate.GradeB, ""))
		}, ""},
		{"no INCONSISTENCY: uncited text about another metric", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""))
			m.ev(m.model, "Net revenue retention: 4,800,000", debate.GradeB, "")
			m.ev(m.model, "Cost of revenue: $1.2M", debate.GradeB, "")
		}, ""},
		{"UNIT_MISMATCH: the claim is 12 × MRR", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""))
			m.ev(m.model, "MRR: $375,000", debate.GradeB, "")
		}, debate.DefectUnitMismatch},
		{"UNIT_MISMATCH: thousands read as units", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "4,500", debate.GradeB, ""))
		}, debate.DefectUnitMismatch},
		{"no UNIT_MISMATCH: MRR × 12 with the annual figure stated elsewhere", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "ARR: 4,500,000", debate.GradeB, ""))
			m.ev(m.model, "MRR: $375,000", debate.GradeB, "")
		}, ""},
		{"no UNIT_MISMATCH: a scale note makes the cell agree", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "ARR ($000): 4,500", debate.GradeB, ""))
		}, ""},
		{"TIME_WINDOW_MISMATCH: LTM header vs FY", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""))
			m.ev(m.model, "LTM Revenue (Dec 2024 - Nov 2025)", debate.GradeB, "")
		}, debate.DefectTimeWindow},
		{"TIME_WINDOW_MISMATCH: another fiscal year", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "FY2024 ARR: $4.5M", debate.GradeB, ""))
		}, debate.DefectTimeWindow},
		{"no TIME_WINDOW_MISMATCH: as of the FY's last month", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M (as of Dec 2025)", debate.GradeC, ""), m.ev(m.model, "ARR FY2025: 4.5M", debate.GradeB, ""))
		}, ""},
		{"STALENESS: a newer deck version states another value", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""))
			v2 := m.doc(debate.ArtifactPitchDeck, "v2", m.t0.Add(time.Hour))
			m.ev(v2, "ARR: $4.8M", debate.GradeC, "")
		}, debate.DefectStaleness},
		{"no STALENESS: the newer version states the same value", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""))
			v2 := m.doc(debate.ArtifactPitchDeck, "v2", m.t0.Add(time.Hour))
			m.ev(v2, "ARR: 4,500,000", debate.GradeC, "")
		}, ""},
		{"no STALENESS: an older version is superseded, not a contradiction", func(m *mini) {
			v0 := m.doc(debate.ArtifactPitchDeck, "v0", m.t0.Add(-time.Hour))
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""))
			m.ev(v0, "ARR: $3.9M", debate.GradeC, "")
		}, ""},
		{"MISSING_LINK: no span, no evidence", func(m *mini) { m.arr("") }, debate.DefectMissingLink},
		{"no MISSING_LINK: a primary span without a sanad primary", func(m *mini) {
			e := m.ev(m.deck, "ARR: $4.5M", debate.GradeC, "")
			m.arr(e)
			m.b.Sanads[0].PrimaryEvidenceID = ""
			m.b.Sanads[0].Chain = nil
		}, ""},
		{"BROKEN_CHAIN: a corroboration that does not exist", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), "ev-ghost")
		}, debate.DefectBrokenChain},
		{"no BROKEN_CHAIN: every reference resolves", func(m *mini) {
			m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "4500000", debate.GradeB, ""))
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMini()
			tt.setup(m)
			c := m.grade(t)
			if tt.defect == "" {
				require.Empty(t, c.Defects, "%v", c.Steps)
				require.Equal(t, debate.VerdictVerified, c.Verdict)
				return
			}
			require.Equal(t, []debate.DefectType{tt.defect}, defectTypes(c), "%v", c.Steps)
			d := c.Defects[0]
			require.Equal(t, tt.defect.DefaultSeverity(), d.Severity)
			require.Equal(t, tt.defect.DefaultCure(), d.CureProtocol)
			require.Equal(t, debate.DefectOpen, d.Status)
			require.NotEmpty(t, d.EvidenceRefs)
			require.NotEmpty(t, d.Description)
			require.NotEqual(t, debate.ActionNone, c.Action)
		})
	}
}

// TestCalcRecomputation checks the calc detector: recomputation,
// rounding, the INCONSISTENCY on the claim stating the metric, and the
// calc grade.
func TestCalcRecomputation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		calc    debate.Calc
		claim   float64 // the gross margin or runway the claim states
		runway  bool
		output  map[string]float64
		grade   debate.Grade
		inconst bool
	}{
		{"gross margin agrees", debate.Calc{Type: debate.CalcGrossMargin, Inputs: dectest.Map(map[string]float64{"revenue": 12500000, "cogs": 3937500})}, 68.5, false,
			map[string]float64{"gross_margin_percent": 68.5}, debate.GradeD, false},
		{"gross margin disagrees", debate.Calc{Type: debate.CalcGrossMargin, Inputs: dectest.Map(map[string]float64{"revenue": 12500000, "cogs": 3937500})}, 71, false,
			map[string]float64{"gross_margin_percent": 68.5}, debate.GradeD, true},
		{"gross margin from gross profit, other input spellings", debate.Calc{Type: debate.CalcGrossMargin, Inputs: dectest.Map(map[string]float64{"Total Revenue": 2000000, "Gross Profit": 1370100})}, 68.51, false,
			map[string]float64{"gross_margin_percent": 68.51}, debate.GradeD, false},
		{"runway half-up", debate.Calc{Type: debate.CalcRunway, Inputs: dectest.Map(map[string]float64{"cash_balance": 4930000, "monthly_burn": -200000})}, 24.7, true,
			map[string]float64{"runway_months": 24.7}, debate.GradeD, false},
		{"runway disagrees", debate.Calc{Type: debate.CalcRunway, Inputs: dectest.Map(map[string]float64{"cash": 9000000, "burn": 410000})}, 20.5, true,
			map[string]float64{"runway_months": 22}, debate.GradeD, true},
		{"runway without burn", debate.Calc{Type: debate.CalcRunway, Inputs: dectest.Map(map[string]float64{"cash": 9000000})}, 20.5, true,
			map[string]float64{}, debate.GradeD, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMini()
			if tt.runway {
				m.claim("K1", "Runway(Testco, 2025-12) = x months", tt.claim, "months", nil, m.ev(m.deck, fmt.Sprintf("Runway: %v months", tt.claim), debate.GradeC, ""))
			} else {
				m.claim("K1", "GrossMargin(Testco, FY2025) = x%", tt.claim, "percent", fy2025, m.ev(m.deck, fmt.Sprintf("Gross margin: %v%%", tt.claim), debate.GradeC, ""))
			}
			c := tt.calc
			c.ID = "calc-1"
			m.b.Calcs = []debate.Calc{c}
			require.NoError(t, m.b.Validate())
			g := Grade(&m.b)
			require.Len(t, g.Calcs, 1)
			require.Equal(t, tt.output, g.Calcs[0].Output)
			require.Equal(t, tt.grade, g.Calcs[0].Grade, "no graded input: D")
			cl, _ := g.Claim("K1")
			require.Equal(t, tt.inconst, slices.Contains(defectTypes(cl), debate.DefectInconsistency), "%v", cl.Steps)
		})
	}

	// Calc grade: the worst of input claims and the evidence behind cells.
	m := newMini()
	gm := m.claim("K1", "GrossMargin(Testco, FY2025) = 68.5%", 68.5, "percent", fy2025, m.ev(m.model, "Gross margin: 68.5%", debate.GradeB, ""),
		m.ev(m.model, "0.685", debate.GradeA, ""))
	rev := m.ev(m.model, "Revenue: 12500000", debate.GradeA, "")
	cogs := m.ev(m.model, "COGS: 3937500", debate.GradeB, "")
	m.b.Calcs = []debate.Calc{{ID: "calc-1", Type: debate.CalcGrossMargin, InputClaimIDs: []string{gm},
		Inputs:       dectest.Map(map[string]float64{"revenue": 12500000, "cogs": 3937500}),
		InputSpanIDs: map[string]string{"revenue": m.item(rev).SourceSpanID, "cogs": m.item(cogs).SourceSpanID}}}
	g := Grade(&m.b)
	cl, _ := g.Claim("K1")
	require.Equal(t, debate.GradeA, cl.Grade)
	require.Equal(t, debate.GradeB, g.Calcs[0].Grade, "worst of claim A, cells A and B")
}

func TestSanadCoverageAndBlocked(t *testing.T) {
	t.Parallel()
	m := newMini()
	for i := range 6 {
		m.claim(fmt.Sprintf("K%d", i+1), "ARR(Testco, FY2025) = 1 USD", 1000, "USD", fy2025, m.ev(m.deck, "ARR: $1,000", debate.GradeC, ""))
	}
	m.claim("K7", "NRR(Testco, 2025) = 115%", 115, "percent", fy2025, "")
	g := Grade(&m.b)
	require.Equal(t, 0.857, g.SanadCoverage)
	require.Equal(t, []string{"K7"}, g.BlockedClaimKeys)
	require.Equal(t, 1, g.GradeDCount)

	require.Equal(t, 0.0, Grade(&debate.DealBundle{}).SanadCoverage)
}

func TestDefectIDsAreStable(t *testing.T) {
	t.Parallel()
	build := func() *debate.DealBundle {
		m := newMini()
		m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""), m.ev(m.model, "4,800,000", debate.GradeB, ""))
		return &m.b
	}
	a, b := Grade(build()), Grade(build())
	require.Equal(t, a, b)
	require.Len(t, a.Defects, 1)
	require.NotEmpty(t, a.Defects[0].ID)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	c := GradeWithOptions(build(), Options{Now: now})
	require.Equal(t, a.Defects[0].ID, c.Defects[0].ID)
	require.Equal(t, now, c.Defects[0].CreatedAt)
	require.Equal(t, Actor, c.Defects[0].Actor)
	require.NoError(t, c.Defects[0].Validate())
}

// TestUncitedEvidenceOfAnotherClaim: an uncited item about another claim
// of the same metric (its period, or its value) is that claim's evidence,
// not a defect of this one.
func TestUncitedEvidenceOfAnotherClaim(t *testing.T) {
	t.Parallel()
	m := newMini()
	fy2024 := &debate.TimeWindow{Label: "FY2024", StartDate: "2024-01-01", EndDate: "2024-12-31"}
	m.arr(m.ev(m.deck, "ARR: $4.5M", debate.GradeC, ""))
	m.claim("K2", "ARR(Testco, FY2024) = 3000000 USD", 3000000, "USD", fy2024, m.ev(m.deck, "FY2024 ARR: $3M", debate.GradeC, ""))
	m.ev(m.model, "ARR FY2024: 3,000,000", debate.GradeB, "")
	m.ev(m.model, "ARR FY2024: 3,300,000", debate.GradeB, "")
	m.claim("K3", "TAM(Segment A, 2025) = 25000000000 USD", 25e9, "USD", nil, m.ev(m.deck, "TAM (segment A): $25B", debate.GradeC, ""))
	m.claim("K4", "TAM(Segment B, 2025) = 8000000000 USD", 8e9, "USD", nil, m.ev(m.deck, "TAM (segment B): $8B", debate.GradeC, ""))
	m.ev(m.model, "TAM: $8,000,000,000", debate.GradeB, "")
	require.NoError(t, m.b.Validate())
	g := Grade(&m.b)
	for key, want := range map[string][]debate.DefectType{
		"K1": nil,                          // the FY2024 items are K2's
		"K2": {debate.DefectInconsistency}, // 3.3M contradicts K2
		"K3": nil,                          // the $8B item is K4's
		"K4": nil,
	} {
		c, ok := g.Claim(key)
		require.True(t, ok)
		require.Equal(t, want, defectTypes(c), "%s: %v", key, c.Steps)
	}
}

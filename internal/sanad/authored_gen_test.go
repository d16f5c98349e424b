package sanad

// The repository's own test deals (testdata/deals/<name>/ with
// testdata/expected/<name>.json). They are built here, in code, so that each
// rule's scenario reads in one place; the expected outcomes are written by
// hand next to each scenario (want/defect calls), never computed by the
// grader. TestAuthoredDealsUpToDate checks that the files on disk are what
// this code builds; regenerate them with
//
//	SANAD_WRITE_DEALS=1 go test ./internal/sanad -run TestWriteAuthoredDeals

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/testutil/dectest"
)

// dealValues are the seven headline figures of an authored deal and how its
// deck spells them.
type dealValues struct {
	arr, gm, burn, runway, cac, nrr, tam                             float64
	arrText, gmText, burnText, runwayText, cacText, nrrText, tamText string
}

// builder assembles one authored deal and its expected outcome.
type builder struct {
	name    string
	company string
	b       debate.DealBundle
	seed    uint32
	seq     int
	t0      time.Time
	deck    string // document ids
	model   string
	claim   map[string]string // claim key -> claim id
	span    map[string]string // claim key -> primary span id
	prim    map[string]string // claim key -> primary evidence id
	want    map[string]ClaimOutcome
	defects []DefectOutcome
	calcs   []CalcOutcome
}

// keys of the seven standard claims. Deliberately not GDBS's C1..C7.
var stdKeys = []string{"F1", "F2", "F3", "F4", "F5", "F6", "F7"}

func newBuilder(name, company string, v dealValues) *builder {
	h := fnv.New32a()
	h.Write([]byte(name))
	bl := &builder{
		name: name, company: company, seed: h.Sum32(),
		t0:    time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC),
		claim: map[string]string{}, span: map[string]string{}, prim: map[string]string{},
		want: map[string]ClaimOutcome{},
	}
	bl.b.Deal = debate.Deal{
		ID: bl.id(), ExternalRef: "AUTH-" + name, CompanyName: company, Stage: "SERIES_A",
		Sector: "SaaS", Status: "IN_REVIEW", MaterialityThreshold: debate.MustDecimal("0.5"), CreatedAt: bl.t0, UpdatedAt: bl.t0,
	}
	bl.deck = bl.doc(debate.ArtifactPitchDeck, "v1", bl.t0)
	bl.model = bl.doc(debate.ArtifactFinModel, "v1", bl.t0.Add(5*time.Minute))
	fy := &debate.TimeWindow{Label: "FY2025", StartDate: "2025-01-01", EndDate: "2025-12-31"}
	type std struct {
		class      debate.ClaimClass
		text, pred string
		value      float64
		unit       string
		window     *debate.TimeWindow
		span       string
		mat        debate.Materiality
	}
	c := company
	stds := []std{
		{debate.ClaimClassFinancial, fmt.Sprintf("ARR is $%s for FY2025", fmtNum(v.arr)), fmt.Sprintf("ARR(%s, FY2025) = %.0f USD", c, v.arr), v.arr, "USD", fy, v.arrText, debate.MaterialityCritical},
		{debate.ClaimClassFinancial, fmt.Sprintf("Gross margin is %s%%", fmtNum(v.gm)), fmt.Sprintf("GrossMargin(%s, FY2025) = %s%%", c, fmtNum(v.gm)), v.gm, "percent", fy, v.gmText, debate.MaterialityHigh},
		{debate.ClaimClassFinancial, fmt.Sprintf("Monthly burn is $%s", fmtNum(v.burn)), fmt.Sprintf("MonthlyBurn(%s, 2025-12) = %.0f USD", c, v.burn), v.burn, "USD/month", &debate.TimeWindow{Label: "Dec 2025", StartDate: "2025-12-01", EndDate: "2025-12-31"}, v.burnText, debate.MaterialityHigh},
		{debate.ClaimClassFinancial, fmt.Sprintf("Runway is %s months", fmtNum(v.runway)), fmt.Sprintf("Runway(%s, 2025-12) = %s months", c, fmtNum(v.runway)), v.runway, "months", nil, v.runwayText, debate.MaterialityCritical},
		{debate.ClaimClassTraction, fmt.Sprintf("CAC is $%s", fmtNum(v.cac)), fmt.Sprintf("CAC(%s, Q4 2025) = %.0f USD", c, v.cac), v.cac, "USD", &debate.TimeWindow{Label: "Q4 2025", StartDate: "2025-10-01", EndDate: "2025-12-31"}, v.cacText, debate.MaterialityMedium},
		{debate.ClaimClassTraction, fmt.Sprintf("Net revenue retention is %s%%", fmtNum(v.nrr)), fmt.Sprintf("NRR(%s, 2025) = %s%%", c, fmtNum(v.nrr)), v.nrr, "percent", fy, v.nrrText, debate.MaterialityHigh},
		{debate.ClaimClassMarketSize, fmt.Sprintf("TAM is $%s", fmtNum(v.tam)), fmt.Sprintf("TAM(%s market, 2025) = %.0f USD", c, v.tam), v.tam, "USD", nil, v.tamText, debate.MaterialityMedium},
	}
	for i, s := range stds {
		key := stdKeys[i]
		id := bl.id()
		sp := bl.addSpan(bl.deck, s.span, false)
		ev := bl.addEvidence(sp, "Deck", debate.GradeC, bl.origin())
		cur := ""
		if s.unit == "USD" || s.unit == "USD/month" {
			cur = "USD"
		}
		bl.b.Claims = append(bl.b.Claims, debate.Claim{
			ID: id, DealID: bl.b.Deal.ID, Key: key, Class: s.class, Text: s.text, Predicate: s.pred,
			Value:       &debate.ClaimValue{Value: dectest.F(s.value), Unit: s.unit, Currency: cur, AsOf: "2025-12-31", TimeWindow: s.window},
			Materiality: s.mat, ICBound: true, PrimarySpanID: sp, CreatedBy: "analyst-1", CreatedAt: bl.t0, UpdatedAt: bl.t0,
		})
		bl.claim[key], bl.span[key], bl.prim[key] = id, sp, ev
		bl.b.Sanads = append(bl.b.Sanads, debate.Sanad{
			ID: bl.id(), ClaimID: id, PrimaryEvidenceID: ev, ExtractionConfidence: 0.95, DhabtScore: 0.9,
			Chain:     []debate.ChainNode{{ID: bl.id(), Type: debate.ChainNodeSource, InputRefs: []string{}, OutputRef: ev}},
			CreatedAt: bl.t0, UpdatedAt: bl.t0,
		})
		bl.want[key] = ClaimOutcome{ClaimID: id, Grade: "C", Verdict: "VERIFIED", Action: "NONE"}
	}
	return bl
}

// id returns a fresh UUID-shaped id unique to this deal.
func (bl *builder) id() string {
	bl.seq++
	return fmt.Sprintf("%08x-5a1d-4d0c-8e1f-%012x", bl.seed, bl.seq)
}

// origin returns a fresh opaque upstream origin token.
func (bl *builder) origin() string {
	bl.seq++
	return fmt.Sprintf("orig-%06x%04x", bl.seed&0xffffff, bl.seq)
}

func (bl *builder) doc(t debate.ArtifactType, version string, at time.Time) string {
	id := bl.id()
	bl.b.Documents = append(bl.b.Documents, debate.Document{ID: id, ArtifactType: t, VersionLabel: version, IngestedAt: at})
	return id
}

func (bl *builder) addSpan(doc, text string, cell bool) string {
	id := bl.id()
	s := debate.Span{ID: id, DocumentID: doc, TextExcerpt: text, CreatedAt: bl.t0.Add(10 * time.Minute)}
	if cell {
		s.Type = debate.SpanTypeCell
		s.Locator = debate.Locator{Sheet: "Summary", Cell: fmt.Sprintf("C%d", bl.seq)}
	} else {
		s.Type = debate.SpanTypePageText
		s.Locator = debate.Locator{Page: int32(1 + bl.seq%3), BBox: []float64{80, float64(100 + bl.seq*10), 420, float64(140 + bl.seq*10)}}
	}
	bl.b.Spans = append(bl.b.Spans, s)
	return id
}

func (bl *builder) addEvidence(span, system string, grade debate.SourceGrade, origin string) string {
	id := bl.id()
	bl.b.Evidence = append(bl.b.Evidence, debate.EvidenceItem{
		ID: id, SourceSpanID: span, SourceSystem: system, UpstreamOriginID: origin,
		RetrievalTimestamp: bl.t0.Add(15 * time.Minute), SourceGrade: grade,
		CreatedAt: bl.t0.Add(15 * time.Minute), UpdatedAt: bl.t0.Add(15 * time.Minute),
	})
	return id
}

// cell adds a financial-model cell with an evidence item (grade B, its own
// origin) and returns the evidence id.
func (bl *builder) cell(text string) string {
	return bl.addEvidence(bl.addSpan(bl.model, text, true), "FinModel", debate.GradeB, bl.origin())
}

func (bl *builder) sanadOf(key string) *debate.Sanad {
	for i := range bl.b.Sanads {
		if bl.b.Sanads[i].ClaimID == bl.claim[key] {
			return &bl.b.Sanads[i]
		}
	}
	panic("no sanad for " + key)
}

// corroborate lists ev as a corroboration of the claim, as GDBS does: in
// corroborating_evidence_ids and as a CORROBORATION node.
func (bl *builder) corroborate(key string, ev ...string) {
	s := bl.sanadOf(key)
	for _, e := range ev {
		s.CorroboratingEvidenceIDs = append(s.CorroboratingEvidenceIDs, e)
		s.Chain = append(s.Chain, debate.ChainNode{ID: bl.id(), Type: debate.ChainNodeCorroboration, InputRefs: []string{e}, OutputRef: bl.claim[key]})
	}
}

// want sets the expected outcome of a claim; defects lists its open defect
// types (severity and cure per SANAD.md, written out here).
func (bl *builder) expect(key, grade, verdict, action string, defects ...string) {
	w := bl.want[key]
	w.Grade, w.Verdict, w.Action, w.DefectCount = grade, verdict, action, len(defects)
	bl.want[key] = w
	for _, d := range defects {
		sev, cure := "MAJOR", "REQUEST_SOURCE"
		if d == "BROKEN_CHAIN" {
			sev, cure = "FATAL", "RECONSTRUCT_CHAIN"
		}
		bl.defects = append(bl.defects, DefectOutcome{DefectType: d, Severity: sev, ClaimKey: key, CureProtocol: cure})
	}
}

func (bl *builder) expectCalc(id string, t debate.CalcType, grade string, output map[string]float64) {
	bl.calcs = append(bl.calcs, CalcOutcome{CalcID: id, CalcType: string(t), Grade: grade, Output: output})
}

func (bl *builder) addCalc(t debate.CalcType, claimKeys []string, inputs map[string]float64, spans map[string]string) string {
	id := bl.id()
	ids := []string{}
	for _, k := range claimKeys {
		ids = append(ids, bl.claim[k])
	}
	bl.b.Calcs = append(bl.b.Calcs, debate.Calc{
		ID: id, CalcSanadID: bl.id(), Type: t, InputClaimIDs: ids, Inputs: dectest.Map(inputs), InputSpanIDs: spans,
		FormulaHash: "sha256:authored-" + string(t), CodeVersion: "authored@1", CreatedAt: bl.t0.Add(2 * time.Hour),
	})
	return id
}

// outcome is the hand-written expectation of the deal.
func (bl *builder) outcome() Outcome {
	o := Outcome{DealID: bl.b.Deal.ID, Claims: bl.want, Defects: slices.Clone(bl.defects), BlockedClaimKeys: []string{}, Calcs: bl.calcs}
	if o.Defects == nil {
		o.Defects = []DefectOutcome{}
	}
	slices.SortFunc(o.Defects, compareDefects)
	spans := map[string]bool{}
	for _, s := range bl.b.Spans {
		spans[s.ID] = true
	}
	covered := 0
	for _, c := range bl.b.Claims {
		if spans[c.PrimarySpanID] {
			covered++
		}
	}
	o.SanadCoverage = float64(int(float64(covered)/float64(len(bl.b.Claims))*1000+0.5)) / 1000
	for k, w := range bl.want {
		if w.Grade == "D" {
			o.GradeDCount++
		}
		for _, d := range bl.defects {
			if d.ClaimKey == k && d.DefectType == "MISSING_LINK" {
				o.BlockedClaimKeys = append(o.BlockedClaimKeys, k)
			}
		}
	}
	slices.Sort(o.BlockedClaimKeys)
	return o
}

// authored builds every authored deal. Each scenario names the rule of
// SANAD.md it exercises.
func authored() []*builder {
	var out []*builder
	add := func(bl *builder) { out = append(out, bl) }

	// Clean deal, B upgrade: model cells (grade B, independent origins)
	// agree with the deck in other spellings ("4.2 million" for $4.2M,
	// "0.615" for 61.5%).
	{
		bl := newBuilder("clean_upgrade", "Northwind Ledger", dealValues{
			arr: 4200000, gm: 61.5, burn: 380000, runway: 22, cac: 1900, nrr: 118, tam: 12e9,
			arrText: "ARR: $4.2M (as of Dec 2025)", gmText: "Gross margin 61.5%", burnText: "Monthly burn: $380K",
			runwayText: "Runway: 22 months", cacText: "CAC: $1,900", nrrText: "NRR: 118%", tamText: "TAM: $12B (SMB accounting)",
		})
		bl.corroborate("F1", bl.cell("4.2 million"))
		bl.corroborate("F2", bl.cell("0.615"))
		bl.corroborate("F3", bl.cell("380,000"))
		bl.expect("F1", "B", "VERIFIED", "NONE")
		bl.expect("F2", "B", "VERIFIED", "NONE")
		bl.expect("F3", "B", "VERIFIED", "NONE")
		add(bl)
	}
	// Clean deal, C: no better-graded corroboration. A second deck-grade
	// source agreeing (grade C, not strictly better) does not upgrade.
	{
		bl := newBuilder("clean_no_corroborator", "Bluefin Robotics", dealValues{
			arr: 7350000, gm: 58, burn: 410000, runway: 20.5, cac: 2100, nrr: 112, tam: 30e9,
			arrText: "Annual recurring revenue of $7,350,000 at Dec 2025", gmText: "GM: 58 percent",
			burnText: "Net burn of $410,000 per month", runwayText: "Cash runway of 20.5 months",
			cacText: "Blended CAC $2.1K", nrrText: "Net revenue retention 1.12", tamText: "Total addressable market of $30 billion",
		})
		second := bl.addEvidence(bl.addSpan(bl.deck, "ARR $7.35M", false), "Deck", debate.GradeC, bl.origin())
		bl.corroborate("F1", second)
		add(bl)
	}
	// INCONSISTENCY: the model's burn cell disagrees with the claim; an
	// uncited model cell naming CAC disagrees too.
	{
		bl := newBuilder("inconsistency", "Quillstone Health", dealValues{
			arr: 3150000, gm: 66.25, burn: 275000, runway: 18.4, cac: 3400, nrr: 104, tam: 9.5e9,
			arrText: "ARR: USD 3.15 million", gmText: "Gross Margin: 66.25%", burnText: "Burn: $275,000/mo",
			runwayText: "Runway: 18.4 mo", cacText: "CAC (Q4 2025): $3,400", nrrText: "NRR 104%", tamText: "TAM: $9.5bn",
		})
		bl.corroborate("F3", bl.cell("$295,000"))
		bl.cell("Customer acquisition cost: $3,900")
		bl.expect("F3", "D", "CONTRADICTED", "RED_FLAG", "INCONSISTENCY")
		bl.expect("F5", "D", "CONTRADICTED", "RED_FLAG", "INCONSISTENCY")
		add(bl)
	}
	// Calc INCONSISTENCY, gross margin: revenue and COGS cells recompute
	// 70.25%, the claim says 73%. The calc names no input claim (as GDBS
	// deal 6): its grade is the cells' evidence, B.
	{
		bl := newBuilder("calc_gross_margin", "Harborlight AI", dealValues{
			arr: 8000000, gm: 73, burn: 520000, runway: 26, cac: 5200, nrr: 131, tam: 44e9,
			arrText: "ARR: $8,000,000 (as of Dec 2025)", gmText: "Gross margin: 73.00%", burnText: "Monthly burn: $520K",
			runwayText: "Runway: 26 months", cacText: "CAC: $5.2K", nrrText: "NRR: 131.00%", tamText: "TAM: $44B",
		})
		rev := bl.addSpan(bl.model, "Revenue: 8,000,000", true)
		cogs := bl.addSpan(bl.model, "COGS: 2,380,000", true)
		bl.addEvidence(rev, "FinModel", debate.GradeB, bl.origin())
		bl.addEvidence(cogs, "FinModel", debate.GradeB, bl.origin())
		calc := bl.addCalc(debate.CalcGrossMargin, nil, map[string]float64{"revenue": 8000000, "cogs": 2380000}, map[string]string{"revenue": rev, "cogs": cogs})
		bl.expect("F2", "D", "CONTRADICTED", "RED_FLAG", "INCONSISTENCY")
		bl.expectCalc(calc, debate.CalcGrossMargin, "B", map[string]float64{"gross_margin_percent": 70.25})
		add(bl)
	}
	// Calc INCONSISTENCY, runway: cash 9,000,000 / burn 410,000 = 21.95,
	// 22.0 months; the claim says 20.5. The calc reads the burn and runway
	// claims: its grade is the worst of them, D.
	{
		bl := newBuilder("calc_runway", "Cobalt Freight", dealValues{
			arr: 5600000, gm: 54.5, burn: 410000, runway: 20.5, cac: 800, nrr: 99.5, tam: 70e9,
			arrText: "ARR: $5.6M", gmText: "Gross margin 54.50%", burnText: "Monthly net burn: $410,000",
			runwayText: "Runway: 20.5 months", cacText: "CAC: $800", nrrText: "NRR: 99.5%", tamText: "TAM: $70,000,000,000",
		})
		calc := bl.addCalc(debate.CalcRunway, []string{"F3", "F4"}, map[string]float64{"cash_balance": 9000000, "monthly_burn": 410000}, map[string]string{})
		bl.expect("F4", "D", "CONTRADICTED", "RED_FLAG", "INCONSISTENCY")
		bl.expectCalc(calc, debate.CalcRunway, "D", map[string]float64{"runway_months": 22.0})
		add(bl)
	}
	// Calcs that agree, with half-up rounding on the boundary: gross margin
	// (2,000,000 - 629,900) / 2,000,000 = 68.505% → 68.51; runway
	// 4,930,000 / 200,000 = 24.65 → 24.7 (half-even would give 24.6).
	{
		bl := newBuilder("calc_agree_half_up", "Meadowlark Bio", dealValues{
			arr: 2000000, gm: 68.51, burn: 200000, runway: 24.7, cac: 1250, nrr: 108, tam: 6e9,
			arrText: "ARR: $2M", gmText: "Gross margin: 68.51%", burnText: "Monthly burn: $200,000",
			runwayText: "Runway: 24.7 months", cacText: "CAC: $1,250", nrrText: "NRR: 108%", tamText: "TAM: $6B",
		})
		rev := bl.addSpan(bl.model, "Revenue: $2,000,000", true)
		cogs := bl.addSpan(bl.model, "COGS: $629,900", true)
		bl.addEvidence(rev, "FinModel", debate.GradeB, bl.origin())
		bl.addEvidence(cogs, "FinModel", debate.GradeB, bl.origin())
		gm := bl.addCalc(debate.CalcGrossMargin, []string{"F2"}, map[string]float64{"revenue": 2000000, "cogs": 629900}, map[string]string{"revenue": rev, "cogs": cogs})
		rw := bl.addCalc(debate.CalcRunway, []string{"F3", "F4"}, map[string]float64{"cash_balance": 4930000, "monthly_burn": 200000}, map[string]string{})
		bl.expectCalc(gm, debate.CalcGrossMargin, "C", map[string]float64{"gross_margin_percent": 68.51})
		bl.expectCalc(rw, debate.CalcRunway, "C", map[string]float64{"runway_months": 24.7})
		add(bl)
	}
	// UNIT_MISMATCH: the only model figure is MRR; the ARR claim is 12 ×
	// MRR presented as annual.
	{
		bl := newBuilder("unit_mismatch", "Tidewater Payments", dealValues{
			arr: 2400000, gm: 49, burn: 150000, runway: 30, cac: 650, nrr: 121, tam: 15e9,
			arrText: "ARR: $2,400,000 (as of Dec 2025)", gmText: "Gross margin: 49%", burnText: "Monthly burn: $150K",
			runwayText: "Runway: 30 months", cacText: "CAC: $650", nrrText: "NRR: 121%", tamText: "TAM: $15B",
		})
		bl.cell("Monthly Recurring Revenue: $200K")
		bl.expect("F1", "D", "INFLATED", "RED_FLAG", "UNIT_MISMATCH")
		add(bl)
	}
	// TIME_WINDOW_MISMATCH, LTM vs FY: the model states revenue for the
	// twelve months to September 2025; the claim is FY2025.
	{
		bl := newBuilder("time_window_ltm", "Orchard Security", dealValues{
			arr: 9900000, gm: 77.5, burn: 600000, runway: 19, cac: 6100, nrr: 126, tam: 21e9,
			arrText: "FY2025 ARR: $9.9M", gmText: "Gross margin: 77.5%", burnText: "Monthly burn: $600,000",
			runwayText: "Runway: 19 months", cacText: "CAC: $6,100", nrrText: "NRR: 126%", tamText: "TAM: $21B",
		})
		bl.cell("TTM Revenue (Oct 2024 - Sep 2025): $9,100,000")
		bl.expect("F1", "D", "UNVERIFIED", "REQUEST_DATA", "TIME_WINDOW_MISMATCH")
		add(bl)
	}
	// TIME_WINDOW_MISMATCH, another quarter: the corroboration the sanad
	// cites for the Q4 CAC is the Q3 figure. It never upgrades.
	{
		bl := newBuilder("time_window_quarter", "Saltmarsh Energy", dealValues{
			arr: 1750000, gm: 38, burn: 95000, runway: 31.5, cac: 2750, nrr: 101, tam: 4e9,
			arrText: "ARR: $1.75M", gmText: "Gross margin 38%", burnText: "Monthly burn: $95,000",
			runwayText: "Runway: 31.5 months", cacText: "CAC: $2,750", nrrText: "NRR: 101%", tamText: "TAM: $4B",
		})
		bl.corroborate("F5", bl.cell("CAC Q3 2025: $2,750"))
		bl.expect("F5", "D", "UNVERIFIED", "REQUEST_DATA", "TIME_WINDOW_MISMATCH")
		add(bl)
	}
	// STALENESS: a later deck version states another ARR.
	{
		bl := newBuilder("staleness", "Kestrel Analytics", dealValues{
			arr: 3100000, gm: 71.25, burn: 240000, runway: 25, cac: 1400, nrr: 115.5, tam: 18e9,
			arrText: "ARR: $3,100,000 (as of Dec 2025)", gmText: "Gross margin: 71.25%", burnText: "Monthly burn: $240K",
			runwayText: "Runway: 25 months", cacText: "CAC: $1.4K", nrrText: "NRR: 115.5%", tamText: "TAM: $18B",
		})
		v2 := bl.doc(debate.ArtifactPitchDeck, "v2", bl.t0.Add(72*time.Hour))
		bl.addEvidence(bl.addSpan(v2, "ARR: $3.4M (as of Dec 2025)", false), "Deck", debate.GradeC, bl.origin())
		bl.expect("F1", "D", "UNVERIFIED", "REQUEST_DATA", "STALENESS")
		add(bl)
	}
	// No STALENESS: the later deck version states the same ARR, spelled
	// differently.
	{
		bl := newBuilder("staleness_unchanged", "Juniper Grid", dealValues{
			arr: 3100000, gm: 71.25, burn: 240000, runway: 25, cac: 1400, nrr: 115.5, tam: 18e9,
			arrText: "ARR: $3,100,000 (as of Dec 2025)", gmText: "Gross margin: 71.25%", burnText: "Monthly burn: $240K",
			runwayText: "Runway: 25 months", cacText: "CAC: $1.4K", nrrText: "NRR: 115.5%", tamText: "TAM: $18B",
		})
		v2 := bl.doc(debate.ArtifactPitchDeck, "v2", bl.t0.Add(72*time.Hour))
		bl.addEvidence(bl.addSpan(v2, "ARR of 3.1 million dollars as of December 2025", false), "Deck", debate.GradeC, bl.origin())
		add(bl)
	}
	// MISSING_LINK: the NRR claim has no span and its sanad no evidence.
	{
		bl := newBuilder("missing_link", "Lanternfish Media", dealValues{
			arr: 6400000, gm: 63, burn: 450000, runway: 21.5, cac: 950, nrr: 109, tam: 27e9,
			arrText: "ARR: $6.4M (Dec 2025)", gmText: "Gross margin: 63%", burnText: "Monthly burn: $450,000",
			runwayText: "Runway: 21.5 months", cacText: "CAC: $950", nrrText: "NRR: 109%", tamText: "TAM: $27B",
		})
		for i := range bl.b.Claims {
			if bl.b.Claims[i].Key == "F6" {
				bl.b.Claims[i].PrimarySpanID = ""
			}
		}
		s := bl.sanadOf("F6")
		s.PrimaryEvidenceID, s.Chain = "", []debate.ChainNode{}
		// The deck item that quoted the span is gone with it.
		bl.b.Evidence = slices.DeleteFunc(bl.b.Evidence, func(e debate.EvidenceItem) bool { return e.ID == bl.prim["F6"] })
		bl.b.Spans = slices.DeleteFunc(bl.b.Spans, func(s debate.Span) bool { return s.ID == bl.span["F6"] })
		bl.expect("F6", "D", "BLOCKED", "REJECT_NO_FREE_FACTS", "MISSING_LINK")
		add(bl)
	}
	// BROKEN_CHAIN, one claim per way to break a chain: F1 a corroboration
	// that does not exist, F2 a cycle, F3 an orphan node, F5 no root.
	{
		bl := newBuilder("broken_chain", "Pinecrest Labs", dealValues{
			arr: 11200000, gm: 80.5, burn: 900000, runway: 17, cac: 7300, nrr: 135, tam: 52e9,
			arrText: "ARR: $11.2M (as of Dec 2025)", gmText: "Gross margin: 80.5%", burnText: "Monthly burn: $900K",
			runwayText: "Runway: 17 months", cacText: "CAC: $7,300", nrrText: "NRR: 135%", tamText: "TAM: $52B",
		})
		bl.corroborate("F1", bl.id()) // an evidence id no file defines
		s := bl.sanadOf("F2")
		a, b := bl.id(), bl.id()
		s.Chain = append(s.Chain,
			debate.ChainNode{ID: a, Type: debate.ChainNodeTransform, InputRefs: []string{b}, OutputRef: bl.claim["F2"]},
			debate.ChainNode{ID: b, Type: debate.ChainNodeTransform, InputRefs: []string{a}, OutputRef: bl.claim["F2"]})
		stray := bl.addEvidence(bl.addSpan(bl.deck, "Appendix: unaudited figures", false), "Deck", debate.GradeC, bl.origin())
		s3 := bl.sanadOf("F3")
		s3.Chain = append(s3.Chain, debate.ChainNode{ID: bl.id(), Type: debate.ChainNodeSource, InputRefs: []string{}, OutputRef: stray})
		s5 := bl.sanadOf("F5")
		s5.Chain = []debate.ChainNode{{ID: bl.id(), Type: debate.ChainNodeCorroboration, InputRefs: []string{bl.prim["F5"]}, OutputRef: bl.claim["F5"]}}
		for _, k := range []string{"F1", "F2", "F3", "F5"} {
			bl.expect(k, "D", "UNVERIFIED", "PARTNER_OVERRIDE_REQUIRED", "BROKEN_CHAIN")
		}
		add(bl)
	}
	// Corroborations that are not independent give no upgrade: F1's model
	// cell shares the deck's upstream origin; F2's model cell is produced by
	// a chain node downstream of the node that extracted the primary.
	{
		bl := newBuilder("not_independent", "Foxglove Retail", dealValues{
			arr: 4750000, gm: 44.5, burn: 330000, runway: 23, cac: 120, nrr: 97, tam: 140e9,
			arrText: "ARR: $4.75M (as of Dec 2025)", gmText: "Gross margin: 44.5%", burnText: "Monthly burn: $330K",
			runwayText: "Runway: 23 months", cacText: "CAC: $120", nrrText: "NRR: 97%", tamText: "TAM: $140B",
		})
		var deckOrigin string
		for _, e := range bl.b.Evidence {
			if e.ID == bl.prim["F1"] {
				deckOrigin = e.UpstreamOriginID
			}
		}
		same := bl.addEvidence(bl.addSpan(bl.model, "4,750,000", true), "FinModel", debate.GradeB, deckOrigin)
		bl.corroborate("F1", same)
		derived := bl.cell("44.50%")
		s := bl.sanadOf("F2")
		extract, transform := bl.id(), bl.id()
		s.Chain = []debate.ChainNode{
			{ID: extract, Type: debate.ChainNodeExtraction, InputRefs: []string{}, OutputRef: bl.prim["F2"]},
			{ID: transform, Type: debate.ChainNodeTransform, InputRefs: []string{extract}, OutputRef: derived},
			{ID: bl.id(), Type: debate.ChainNodeCorroboration, InputRefs: []string{derived}, OutputRef: bl.claim["F2"]},
		}
		s.CorroboratingEvidenceIDs = []string{derived}
		add(bl)
	}
	// MUTAWATIR: the CAC claim has three independent deck-grade sources
	// (primary and two corroborations, none better graded): upgrade C → B.
	// NRR has two (AHAD_2): no upgrade.
	{
		bl := newBuilder("mutawatir", "Granite Peak Data", dealValues{
			arr: 2950000, gm: 69, burn: 210000, runway: 28, cac: 1100, nrr: 113, tam: 8e9,
			arrText: "ARR: $2.95M", gmText: "Gross margin: 69%", burnText: "Monthly burn: $210,000",
			runwayText: "Runway: 28 months", cacText: "CAC: $1,100", nrrText: "NRR: 113%", tamText: "TAM: $8B",
		})
		for _, text := range []string{"Q4 2025 blended CAC: $1.1K", "CAC of 1,100 USD"} {
			bl.corroborate("F5", bl.addEvidence(bl.addSpan(bl.deck, text, false), "Deck", debate.GradeC, bl.origin()))
		}
		bl.corroborate("F6", bl.addEvidence(bl.addSpan(bl.deck, "Net dollar retention: 113%", false), "Deck", debate.GradeC, bl.origin()))
		bl.expect("F5", "B", "VERIFIED", "NONE")
		add(bl)
	}
	// Evidence no sanad cites reveals defects but never upgrades: a model
	// cell agreeing with the ARR (grade B) leaves it C; one contradicting
	// the gross margin makes an INCONSISTENCY.
	{
		bl := newBuilder("uncited_evidence", "Silverline Logistics", dealValues{
			arr: 5250000, gm: 61, burn: 395000, runway: 22.8, cac: 4100, nrr: 117, tam: 33e9,
			arrText: "ARR: $5,250,000", gmText: "Gross margin: 61.00%", burnText: "Monthly burn: $395,000",
			runwayText: "Runway: 22.8 months", cacText: "CAC: $4,100", nrrText: "NRR: 117%", tamText: "TAM: $33B",
		})
		bl.cell("ARR: $5.25M")
		bl.cell("Gross Margin: 0.58")
		bl.expect("F2", "D", "CONTRADICTED", "RED_FLAG", "INCONSISTENCY")
		add(bl)
	}
	// Ratios written as decimals whose digits look like years ("NRR:
	// 1.2092", "Gross margin: 0.2019") are values, never periods: no
	// TIME_WINDOW_MISMATCH against the FY2025 claims. A model cell (grade
	// B) with the same decimal and its own FY2025 label corroborates the
	// NRR: upgrade C → B.
	{
		bl := newBuilder("decimal_ratios", "Larchmont Analytics", dealValues{
			arr: 6100000, gm: 20.19, burn: 450000, runway: 19, cac: 2500, nrr: 120.92, tam: 15e9,
			arrText: "ARR: $6.1M", gmText: "Gross margin: 0.2019", burnText: "Monthly burn: $450K",
			runwayText: "Runway: 19 months", cacText: "CAC: $2,500", nrrText: "NRR: 1.2092", tamText: "TAM: $15B",
		})
		bl.corroborate("F6", bl.cell("NRR (FY2025): 1.2092"))
		bl.expect("F6", "B", "VERIFIED", "NONE")
		add(bl)
	}
	return out
}

// TestWriteAuthoredDeals regenerates testdata/ when SANAD_WRITE_DEALS=1.
func TestWriteAuthoredDeals(t *testing.T) {
	if os.Getenv("SANAD_WRITE_DEALS") != "1" {
		t.Skip("set SANAD_WRITE_DEALS=1 to regenerate testdata/deals and testdata/expected")
	}
	require.NoError(t, os.MkdirAll(filepath.Join("testdata", "expected"), 0o755))
	for _, bl := range authored() {
		require.NoError(t, dealfile.Write(filepath.Join("testdata", "deals", bl.name), &bl.b))
		data, err := json.MarshalIndent(bl.outcome(), "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "expected", bl.name+".json"), append(data, '\n'), 0o644))
	}
}

// TestAuthoredDealsUpToDate checks that the files in testdata are what
// authored() builds, so the scenarios above stay the documentation of the
// data.
func TestAuthoredDealsUpToDate(t *testing.T) {
	t.Parallel()
	for _, bl := range authored() {
		files, err := dealfile.Encode(&bl.b)
		require.NoError(t, err)
		for name, want := range files {
			got, err := os.ReadFile(filepath.Join("testdata", "deals", bl.name, name))
			require.NoError(t, err, "run SANAD_WRITE_DEALS=1 go test -run TestWriteAuthoredDeals")
			require.Equal(t, string(want), string(got), "%s/%s is stale; regenerate", bl.name, name)
		}
		want, err := json.MarshalIndent(bl.outcome(), "", "  ")
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join("testdata", "expected", bl.name+".json"))
		require.NoError(t, err)
		require.Equal(t, string(want)+"\n", string(got), "expected/%s.json is stale; regenerate", bl.name)
	}
}

// TestAuthoredDeals grades each authored deal from its files and compares
// with its expected outcome.
func TestAuthoredDeals(t *testing.T) {
	t.Parallel()
	for _, d := range authoredDeals(t) {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			g := Grade(loadDeal(t, d.dir))
			if diffs := diffOutcome(OutcomeOf(g), loadExpected(t, d.expected)); len(diffs) > 0 {
				t.Errorf("%s differs from expected:\n%v\n\nexplanation:\n%s", d.name, diffs, explain(g))
			}
		})
	}
}

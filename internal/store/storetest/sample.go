package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/debated/debated/internal/debate"
)

// idSpace makes the ids of the sample deals: UUIDv5 of the deal id and the
// resource, as the benchmark layout's ids are UUIDs. Two deals get disjoint
// ids, so a tenant can hold many sample deals (claim ids are unique per
// tenant), and one deal id always gets the same ids.
var idSpace = uuid.MustParse("6f1c2a4e-5b7d-4e0f-9a3b-2c8d1e7f0a95")

func sampleID(dealID, kind string, n int) string {
	return uuid.NewSHA1(idSpace, fmt.Appendf(nil, "%s/%s/%d", dealID, kind, n)).String()
}

// SampleBundle returns a small, realistic deal registry with id dealID:
// a Series B marketplace with seven claims C1..C7 (ARR, gross margin, monthly
// burn, runway, CAC, net revenue retention, TAM), two documents (a pitch deck
// and a financial model), a span and an evidence item behind each claim plus
// three model cells, one sanad per claim with its transmission chain (some
// corroborated by the model), and a gross-margin calc over the model cells.
// Every time is in UTC; claim DealIDs are set; lists are in no particular
// order. Every call returns a fresh bundle the caller may change; it passes
// Validate.
func SampleBundle(dealID string) *debate.DealBundle {
	id := func(kind string, n int) string { return sampleID(dealID, kind, n) }
	day := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	analyst := id("user", 1)

	deck, model := id("document", 1), id("document", 2)
	b := &debate.DealBundle{
		Deal: debate.Deal{
			ID: dealID, ExternalRef: "QAV-2026-" + dealID, CompanyName: "AutoScale Commerce",
			Stage: "SERIES_B", Sector: "Marketplace", Status: "IN_REVIEW", MaterialityThreshold: debate.MustDecimal("0.5"),
			CreatedAt: at(14, 0), UpdatedAt: at(14, 0),
		},
		Documents: []debate.Document{
			{ID: deck, ArtifactType: debate.ArtifactPitchDeck, VersionLabel: "v1", IngestedAt: at(9, 0)},
			{ID: model, ArtifactType: debate.ArtifactFinModel, VersionLabel: "v1", IngestedAt: at(9, 5)},
		},
	}

	fy := &debate.TimeWindow{Label: "FY2025", StartDate: "2025-01-01", EndDate: "2025-12-31"}
	type spec struct {
		key, text, predicate, excerpt string
		class                         debate.ClaimClass
		materiality                   debate.Materiality
		icBound                       bool
		value                         *debate.ClaimValue
		grade                         debate.SourceGrade
	}
	specs := []spec{
		{"C1", "ARR is $12,500,000 as of December 2025", "ARR(AutoScale Commerce, 2025-12) = 12500000 USD",
			"ARR: $12,500,000 (as of Dec 2025)", debate.ClaimClassFinancial, debate.MaterialityCritical, true,
			&debate.ClaimValue{Value: debate.MustDecimal("12500000"), Unit: "USD", Currency: "USD", AsOf: "2025-12-31", TimeWindow: fy}, debate.GradeC},
		{"C2", "Gross Margin is 68.50%", "GrossMargin(AutoScale Commerce, FY2025) = 68.50%",
			"Gross Margin: 68.50%", debate.ClaimClassFinancial, debate.MaterialityHigh, true,
			&debate.ClaimValue{Value: debate.MustDecimal("68.5"), Unit: "percent", AsOf: "2025-12-31", TimeWindow: fy}, debate.GradeC},
		{"C3", "Monthly burn is $650,000", "Burn(AutoScale Commerce, 2025-12) = 650000 USD/month",
			"Monthly Burn: $650,000", debate.ClaimClassFinancial, debate.MaterialityHigh, false,
			&debate.ClaimValue{Value: debate.MustDecimal("650000"), Unit: "USD/month", Currency: "USD", AsOf: "2025-12-31"}, debate.GradeC},
		{"C4", "Runway is 18 months", "Runway(AutoScale Commerce, 2025-12) = 18 months",
			"Runway: 18 months at current burn", debate.ClaimClassFinancial, debate.MaterialityHigh, true,
			&debate.ClaimValue{Value: debate.MustDecimal("18"), Unit: "months", AsOf: "2025-12-31"}, debate.GradeC},
		{"C5", "Blended CAC is $1,150", "CAC(AutoScale Commerce, FY2025) = 1150 USD",
			"Blended CAC: $1,150", debate.ClaimClassTraction, debate.MaterialityMedium, false,
			&debate.ClaimValue{Value: debate.MustDecimal("1150"), Unit: "USD", Currency: "USD", TimeWindow: fy}, debate.GradeB},
		{"C6", "Net revenue retention is 118%", "NRR(AutoScale Commerce, FY2025) = 118%",
			"NRR: 118% (FY2025 cohorts)", debate.ClaimClassTraction, debate.MaterialityHigh, false,
			&debate.ClaimValue{Value: debate.MustDecimal("118"), Unit: "percent", TimeWindow: &debate.TimeWindow{Label: "FY2025 cohorts"}}, debate.GradeC},
		{"C7", "The addressable market is $8.2B", "TAM(mid-market e-commerce automation, 2025) = 8.2e9 USD",
			"TAM: $8.2B (mid-market e-commerce automation)", debate.ClaimClassMarketSize, debate.MaterialityMedium, false,
			nil, debate.GradeD},
	}
	for i, sp := range specs {
		n := i + 1
		span, ev, claim := id("span", n), id("evidence", n), id("claim", n)
		b.Spans = append(b.Spans, debate.Span{
			ID: span, DocumentID: deck, Type: debate.SpanTypePageText,
			Locator:     debate.Locator{Page: int32(1 + i/3), BBox: []float64{100, float64(200 + 60*(i%3)), 400, float64(250 + 60*(i%3))}},
			TextExcerpt: sp.excerpt, CreatedAt: at(14, 10), UpdatedAt: at(14, 10),
		})
		b.Evidence = append(b.Evidence, debate.EvidenceItem{
			ID: ev, SourceSpanID: span, SourceSystem: "Deck", UpstreamOriginID: "origin-deck-" + sp.key,
			RetrievalTimestamp: at(14, 10), SourceGrade: sp.grade, CreatedAt: at(14, 10), UpdatedAt: at(14, 10),
		})
		b.Claims = append(b.Claims, debate.Claim{
			ID: claim, DealID: dealID, Key: sp.key, Class: sp.class, Text: sp.text, Predicate: sp.predicate,
			Value: sp.value, Materiality: sp.materiality, ICBound: sp.icBound, PrimarySpanID: span,
			CreatedBy: analyst, CreatedAt: at(15, 0), UpdatedAt: at(15, 0),
		})
		b.Sanads = append(b.Sanads, debate.Sanad{
			ID: id("sanad", n), ClaimID: claim, PrimaryEvidenceID: ev, ExtractionConfidence: 0.95, DhabtScore: 0.91,
			Chain: []debate.ChainNode{
				{ID: id("node", 10*n+1), Type: debate.ChainNodeSource, OutputRef: ev},
				{ID: id("node", 10*n+2), Type: debate.ChainNodeExtraction, InputRefs: []string{id("node", 10*n+1)}, OutputRef: claim},
			},
			CreatedAt: at(15, 30), UpdatedAt: at(15, 30),
		})
	}

	// The financial model: revenue, COGS and cash cells, graded B.
	cells := []struct{ cell, excerpt string }{
		{"B12", "Revenue FY2025: 12,500,000"},
		{"B13", "COGS FY2025: 3,937,500"},
		{"B20", "Cash at 2025-12-31: 11,700,000"},
	}
	var cellEvidence []string
	for i, c := range cells {
		n := 100 + i
		span, ev := id("span", n), id("evidence", n)
		b.Spans = append(b.Spans, debate.Span{
			ID: span, DocumentID: model, Type: debate.SpanTypeCell,
			Locator:     debate.Locator{Sheet: "P&L", Cell: c.cell},
			TextExcerpt: c.excerpt, CreatedAt: at(14, 15), UpdatedAt: at(14, 15),
		})
		b.Evidence = append(b.Evidence, debate.EvidenceItem{
			ID: ev, SourceSpanID: span, SourceSystem: "FinModel", UpstreamOriginID: "origin-model-" + c.cell,
			RetrievalTimestamp: at(14, 15), SourceGrade: debate.GradeB, CreatedAt: at(14, 15), UpdatedAt: at(14, 15),
		})
		cellEvidence = append(cellEvidence, ev)
	}
	// The ARR claim is corroborated by the model's revenue cell, the
	// runway claim by the cash cell; the gross-margin claim is corroborated
	// by both revenue and COGS through a transform node.
	corroborate := func(claimIdx int, evs ...string) {
		s := &b.Sanads[claimIdx]
		n := claimIdx + 1
		s.CorroboratingEvidenceIDs = evs
		node := debate.ChainNode{ID: id("node", 10*n+3), Type: debate.ChainNodeCorroboration, InputRefs: slices.Clone(evs), OutputRef: b.Claims[claimIdx].ID}
		if len(evs) > 1 {
			node.Type = debate.ChainNodeTransform
		}
		s.Chain = append(s.Chain, node)
		s.DhabtScore = 0.93
	}
	corroborate(0, cellEvidence[0])
	corroborate(1, cellEvidence[0], cellEvidence[1])
	corroborate(3, cellEvidence[2])

	b.Calcs = []debate.Calc{{
		ID: id("calc", 1), CalcSanadID: id("calc-sanad", 1), Type: debate.CalcGrossMargin,
		InputClaimIDs: []string{b.Claims[1].ID},
		Inputs:        map[string]debate.Decimal{"revenue": debate.MustDecimal("12500000"), "cogs": debate.MustDecimal("3937500")},
		InputSpanIDs:  map[string]string{"revenue": b.Spans[7].ID, "cogs": b.Spans[8].ID},
		FormulaHash:   "sha256:gm_formula_v1_8a7b6c5d4e3f2a1b", CodeVersion: "idis-calc-engine@1.0.0",
		CreatedAt: at(15, 30),
	}}
	return b
}

// LargeBundle returns a deal with the given number of claims, each with its
// own span, evidence item and sanad, over one document, for tests and
// benchmarks of big imports. Claim classes and materialities cycle through
// every value; claim keys are C00001, C00002, …
func LargeBundle(dealID string, claims int) *debate.DealBundle {
	id := func(kind string, n int) string { return sampleID(dealID, kind, n) }
	t0 := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	doc := id("document", 1)
	b := &debate.DealBundle{
		Deal: debate.Deal{
			ID: dealID, ExternalRef: "LARGE-" + dealID, CompanyName: "Bulk Holdings", Stage: "GROWTH",
			Sector: "Logistics", Status: "IN_REVIEW", MaterialityThreshold: debate.MustDecimal("0.25"), CreatedAt: t0, UpdatedAt: t0,
		},
		Documents: []debate.Document{{ID: doc, ArtifactType: debate.ArtifactDataRoom, VersionLabel: "v3", IngestedAt: t0}},
	}
	for i := range claims {
		n := i + 1
		span, ev, claim := id("span", n), id("evidence", n), id("claim", n)
		b.Spans = append(b.Spans, debate.Span{
			ID: span, DocumentID: doc, Type: debate.SpanTypePageText,
			Locator:     debate.Locator{Page: int32(1 + i/40), BBox: []float64{72, float64(i%40) * 18, 540, float64(i%40)*18 + 16}},
			TextExcerpt: fmt.Sprintf("Line %d: metric %d is %d units", n, n, n*37), CreatedAt: t0, UpdatedAt: t0,
		})
		b.Evidence = append(b.Evidence, debate.EvidenceItem{
			ID: ev, SourceSpanID: span, SourceSystem: "DataRoom", UpstreamOriginID: fmt.Sprintf("origin-%d", n),
			RetrievalTimestamp: t0, SourceGrade: debate.SourceGrades[i%len(debate.SourceGrades)], CreatedAt: t0, UpdatedAt: t0,
		})
		b.Claims = append(b.Claims, debate.Claim{
			ID: claim, DealID: dealID, Key: fmt.Sprintf("C%05d", n),
			Class:       debate.ClaimClasses[i%len(debate.ClaimClasses)],
			Text:        fmt.Sprintf("Metric %d is %d units", n, n*37),
			Predicate:   fmt.Sprintf("Metric%d = %d", n, n*37),
			Value:       &debate.ClaimValue{Value: debate.MustDecimal(strconv.Itoa(n * 37)), Unit: "units"},
			Materiality: debate.Materialities[i%len(debate.Materialities)], ICBound: i%5 == 0,
			PrimarySpanID: span, CreatedAt: t0, UpdatedAt: t0,
		})
		b.Sanads = append(b.Sanads, debate.Sanad{
			ID: id("sanad", n), ClaimID: claim, PrimaryEvidenceID: ev, ExtractionConfidence: 0.9, DhabtScore: 0.8,
			Chain:     []debate.ChainNode{{ID: id("node", n), Type: debate.ChainNodeSource, OutputRef: ev}},
			CreatedAt: t0, UpdatedAt: t0,
		})
	}
	return b
}

// Canonical returns a copy of b as a store returns it from DealBundleGet:
// every list sorted by id, every claim's DealID set to the deal, every time
// in UTC, empty lists of resources nil. Tests compare a stored bundle with
// Canonical of the imported one.
func Canonical(b *debate.DealBundle) *debate.DealBundle {
	c := *b
	c.Deal.CreatedAt, c.Deal.UpdatedAt = c.Deal.CreatedAt.UTC(), c.Deal.UpdatedAt.UTC()
	c.Claims = sortedClone(b.Claims, func(x debate.Claim) string { return x.ID })
	for i := range c.Claims {
		x := &c.Claims[i]
		x.DealID = b.Deal.ID
		x.CreatedAt, x.UpdatedAt = x.CreatedAt.UTC(), x.UpdatedAt.UTC()
	}
	c.Evidence = sortedClone(b.Evidence, func(x debate.EvidenceItem) string { return x.ID })
	for i := range c.Evidence {
		x := &c.Evidence[i]
		x.RetrievalTimestamp, x.CreatedAt, x.UpdatedAt = x.RetrievalTimestamp.UTC(), x.CreatedAt.UTC(), x.UpdatedAt.UTC()
	}
	c.Spans = sortedClone(b.Spans, func(x debate.Span) string { return x.ID })
	for i := range c.Spans {
		x := &c.Spans[i]
		x.CreatedAt, x.UpdatedAt = x.CreatedAt.UTC(), x.UpdatedAt.UTC()
	}
	c.Sanads = sortedClone(b.Sanads, func(x debate.Sanad) string { return x.ID })
	for i := range c.Sanads {
		x := &c.Sanads[i]
		x.CreatedAt, x.UpdatedAt = x.CreatedAt.UTC(), x.UpdatedAt.UTC()
	}
	c.Documents = sortedClone(b.Documents, func(x debate.Document) string { return x.ID })
	for i := range c.Documents {
		c.Documents[i].IngestedAt = c.Documents[i].IngestedAt.UTC()
	}
	c.Calcs = sortedClone(b.Calcs, func(x debate.Calc) string { return x.ID })
	for i := range c.Calcs {
		c.Calcs[i].CreatedAt = c.Calcs[i].CreatedAt.UTC()
	}
	return &c
}

func sortedClone[T any](xs []T, key func(T) string) []T {
	if len(xs) == 0 {
		return nil
	}
	out := slices.Clone(xs)
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return out
}

package debate_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/testutil/dectest"
)

func hashFixture() *debate.DealBundle {
	at := time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC)
	return &debate.DealBundle{
		Deal: debate.Deal{ID: "deal-1", ExternalRef: "X-1", CompanyName: "Acme", Stage: "SEED", Sector: "SaaS", Status: "NEW", MaterialityThreshold: debate.MustDecimal("0.5"), CreatedAt: at, UpdatedAt: at},
		Claims: []debate.Claim{
			{ID: "c2", DealID: "deal-1", Key: "C2", Class: debate.ClaimClassFinancial, Text: "GM 70%", Materiality: debate.MaterialityHigh, Value: &debate.ClaimValue{Value: dectest.F(70), Unit: "percent"}, CreatedAt: at},
			{ID: "c1", DealID: "deal-1", Key: "C1", Class: debate.ClaimClassTraction, Text: "ARR $1M", Materiality: debate.MaterialityLow},
		},
		Evidence:  []debate.EvidenceItem{{ID: "e1", SourceSpanID: "s1", SourceGrade: debate.GradeB}},
		Spans:     []debate.Span{{ID: "s1", DocumentID: "d1", Type: debate.SpanTypePageText, Locator: debate.Locator{Page: 3, BBox: []float64{}}, TextExcerpt: "ARR"}},
		Sanads:    []debate.Sanad{{ID: "n1", ClaimID: "c1", PrimaryEvidenceID: "e1", Chain: []debate.ChainNode{{ID: "x", Type: debate.ChainNodeSource}}}},
		Documents: []debate.Document{{ID: "d1", ArtifactType: debate.ArtifactPitchDeck, VersionLabel: "v1", IngestedAt: at}},
		Calcs:     []debate.Calc{{ID: "k1", Type: debate.CalcGrossMargin, Inputs: dectest.Map(map[string]float64{"a": 1})}},
	}
}

// Hashes computed before DealBundle had an Enrichment field: a bundle
// without enrichment must keep the content hash it had.
const (
	fixtureHashBefore = "1c8b7db57b36446cd8a4581f9ff9b787ccd653ea6bd45d4766f021c82302ceda"
	minimalHashBefore = "8026d72a1265652bec2afb70b35ca9beecb7dbca8bb2e5e10089e017b0f851d4"
)

func TestContentHashUnchangedWithoutEnrichment(t *testing.T) {
	for _, enr := range [][]debate.EnrichmentRecord{nil, {}} {
		b := hashFixture()
		b.Enrichment = enr
		h, err := b.ContentHash()
		if err != nil || h != fixtureHashBefore {
			t.Fatalf("fixture hash = %s, %v; want %s", h, err, fixtureHashBefore)
		}
		m := &debate.DealBundle{Deal: debate.Deal{ID: "d"}, Enrichment: enr}
		h, err = m.ContentHash()
		if err != nil || h != minimalHashBefore {
			t.Fatalf("minimal hash = %s, %v; want %s", h, err, minimalHashBefore)
		}
	}
}

func sampleEnrichment() []debate.EnrichmentRecord {
	return []debate.EnrichmentRecord{
		{ID: "r2", EntityType: "COMPANY", EntityName: "Acme", DataPoint: "ARR", Value: "1.2M", Unit: "USD", Source: "Crunchbase", AsOf: "2025-12-31", SourceGrade: debate.GradeC},
		{ID: "r1", EntityType: "MARKET", EntityName: "EU SaaS", DataPoint: "TAM", Value: "40B", Source: "Gartner"},
	}
}

func TestContentHashEnrichment(t *testing.T) {
	b := hashFixture()
	b.Enrichment = sampleEnrichment()
	h1, err := b.ContentHash()
	if err != nil {
		t.Fatal(err)
	}
	if h1 == fixtureHashBefore {
		t.Fatal("enrichment does not change the hash")
	}
	b.Enrichment[0], b.Enrichment[1] = b.Enrichment[1], b.Enrichment[0]
	h2, _ := b.ContentHash()
	if h1 != h2 {
		t.Fatal("hash depends on enrichment order")
	}
	b.Enrichment[0].Value = "41B"
	h3, _ := b.ContentHash()
	if h3 == h1 {
		t.Fatal("hash ignores an enrichment value")
	}
	if b.Enrichment[0].ID != "r1" {
		t.Fatal("ContentHash reordered the caller's slice")
	}
}

func TestValidateEnrichment(t *testing.T) {
	ok := hashFixture()
	ok.Enrichment = sampleEnrichment()
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid bundle rejected: %v", err)
	}
	cases := []struct {
		name  string
		edit  func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord
		field string
	}{
		{"missing id", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord { r[0].ID = ""; return r }, "enrichment_records[0].record_id"},
		{"bad id", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord { r[0].ID = "a b"; return r }, "enrichment_records[0].record_id"},
		{"duplicate id", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord { r[1].ID = r[0].ID; return r }, "enrichment_records[1].record_id"},
		{"missing type", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord { r[0].EntityType = ""; return r }, "enrichment_records[0].entity_type"},
		{"unknown type", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord { r[1].EntityType = "ROBOT"; return r }, "enrichment_records[1].entity_type"},
		{"missing name", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord { r[0].EntityName = " "; return r }, "enrichment_records[0].entity_name"},
		{"missing data point", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord { r[0].DataPoint = ""; return r }, "enrichment_records[0].data_point"},
		{"long value", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord {
			r[0].Value = strings.Repeat("x", debate.MaxTextLen+1)
			return r
		}, "enrichment_records[0].value"},
		{"long source", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord {
			r[1].Source = strings.Repeat("x", debate.MaxShortTextLen+1)
			return r
		}, "enrichment_records[1].source"},
		{"nul unit", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord { r[0].Unit = "a\x00"; return r }, "enrichment_records[0].unit"},
		{"bad grade", func(r []debate.EnrichmentRecord) []debate.EnrichmentRecord { r[0].SourceGrade = "E"; return r }, "enrichment_records[0].source_grade"},
		{"too many", func([]debate.EnrichmentRecord) []debate.EnrichmentRecord {
			return make([]debate.EnrichmentRecord, debate.MaxEnrichment+1)
		}, "enrichment_records"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := hashFixture()
			b.Enrichment = c.edit(sampleEnrichment())
			err := b.Validate()
			var ve *debate.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want a *ValidationError", err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Fatalf("error %q does not name %s", err, c.field)
			}
		})
	}
}

package sanad

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/testutil/dectest"
)

// syntheticDeal builds a deal of n claims cycling through the seven
// metrics, each with a deck primary and a model corroboration in another
// spelling, plus a fixed number of uncited model cells per metric and one
// runway calc per hundred claims.
func syntheticDeal(n int) *debate.DealBundle {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	b := &debate.DealBundle{Deal: debate.Deal{ID: "synthetic", CompanyName: "Synthetic Co"}}
	b.Documents = []debate.Document{
		{ID: "deck", ArtifactType: debate.ArtifactPitchDeck, VersionLabel: "v1", IngestedAt: t0},
		{ID: "model", ArtifactType: debate.ArtifactFinModel, VersionLabel: "v1", IngestedAt: t0.Add(time.Minute)},
	}
	fy := &debate.TimeWindow{Label: "FY2025", StartDate: "2025-01-01", EndDate: "2025-12-31"}
	item := func(id, doc, text string, grade debate.SourceGrade) {
		b.Spans = append(b.Spans, debate.Span{ID: "s-" + id, DocumentID: doc, Type: debate.SpanTypePageText, TextExcerpt: text})
		b.Evidence = append(b.Evidence, debate.EvidenceItem{ID: id, SourceSpanID: "s-" + id, UpstreamOriginID: "o-" + id, SourceGrade: grade})
	}
	var runwayIDs, burnIDs []string
	for i := range n {
		id := fmt.Sprintf("c%06d", i)
		var pred, unit, deck, cell string
		var v float64
		w := fy
		switch i % 7 {
		case 0:
			v = float64(1000000 + 1000*i)
			pred, unit, deck, cell = "ARR(S, FY2025)", "USD", fmt.Sprintf("ARR: $%s (as of Dec 2025)", fmtNum(v)), fmt.Sprintf("%.0f", v)
		case 1:
			v = 50 + float64(i%4000)/100
			pred, unit, deck, cell = "GrossMargin(S, FY2025)", "percent", fmt.Sprintf("Gross Margin: %.2f%%", v), fmt.Sprintf("%.4f", v/100)
		case 2:
			v = float64(100000 + 100*i)
			w = &debate.TimeWindow{Label: "Dec 2025", StartDate: "2025-12-01", EndDate: "2025-12-31"}
			pred, unit, deck, cell = "MonthlyBurn(S, 2025-12)", "USD/month", fmt.Sprintf("Monthly Burn: $%s", fmtNum(v)), fmtNum(v)
			burnIDs = append(burnIDs, id)
		case 3:
			v = 10 + float64(i%300)/10
			w = nil
			pred, unit, deck, cell = "Runway(S, 2025-12)", "months", fmt.Sprintf("Runway: %.1f months", v), fmt.Sprintf("%.1f", v)
			runwayIDs = append(runwayIDs, id)
		case 4:
			v = float64(1000 + 100*(i%90))
			w = &debate.TimeWindow{Label: "Q4 2025", StartDate: "2025-10-01", EndDate: "2025-12-31"}
			pred, unit, deck, cell = "CAC(S, 2025-12)", "USD", fmt.Sprintf("CAC: $%s", fmtNum(v)), fmt.Sprintf("$%.1fK", v/1000)
		case 5:
			v = 90 + float64(i%5000)/100
			pred, unit, deck, cell = "NRR(S, 2025)", "percent", fmt.Sprintf("NRR: %.2f%%", v), fmt.Sprintf("%.4f", v/100)
		default:
			v = float64(1+i%90) * 1e9
			w = nil
			pred, unit, deck, cell = "TAM(S, 2025)", "USD", fmt.Sprintf("TAM: $%s", fmtNum(v)), fmt.Sprintf("$%.0fB", v/1e9)
		}
		item("p"+id, "deck", deck, debate.GradeC)
		item("k"+id, "model", cell, debate.GradeB)
		b.Claims = append(b.Claims, debate.Claim{
			ID: id, Key: fmt.Sprintf("S%06d", i), Class: debate.ClaimClassFinancial, Text: "The deck states " + deck + ".", Predicate: pred,
			Value:       &debate.ClaimValue{Value: dectest.F(v), Unit: unit, AsOf: "2025-12-31", TimeWindow: w},
			Materiality: debate.MaterialityHigh, PrimarySpanID: "s-p" + id,
		})
		b.Sanads = append(b.Sanads, debate.Sanad{
			ID: "sa" + id, ClaimID: id, PrimaryEvidenceID: "p" + id, CorroboratingEvidenceIDs: []string{"k" + id},
			Chain: []debate.ChainNode{
				{ID: "n1" + id, Type: debate.ChainNodeSource, OutputRef: "p" + id},
				{ID: "n2" + id, Type: debate.ChainNodeCorroboration, InputRefs: []string{"k" + id}, OutputRef: id},
			},
		})
	}
	for j := range 3 {
		item(fmt.Sprintf("u%d-rev", j), "model", fmt.Sprintf("Revenue: %d", 5000000+j), debate.GradeB)
		item(fmt.Sprintf("u%d-gm", j), "model", "Gross margin: 0.61", debate.GradeB)
		item(fmt.Sprintf("u%d-cac", j), "model", "CAC (Q4 2025): $1,500", debate.GradeB)
	}
	for j := 0; j < len(runwayIDs) && j < len(burnIDs) && j < n/100; j++ {
		b.Calcs = append(b.Calcs, debate.Calc{ID: fmt.Sprintf("calc%05d", j), Type: debate.CalcRunway,
			InputClaimIDs: []string{burnIDs[j], runwayIDs[j]}, Inputs: dectest.Map(map[string]float64{"cash_balance": 5e6, "monthly_burn": 250000})})
	}
	return b
}

func TestSyntheticDealIsValid(t *testing.T) {
	t.Parallel()
	b := syntheticDeal(700)
	require.NoError(t, b.Validate())
	g := Grade(b)
	require.Len(t, g.Claims, 700)
	// The corroborated, defect-free claims are upgraded to B.
	c, _ := g.Claim("S000002")
	require.Equal(t, debate.GradeB, c.Grade, "%v", c.Steps)
}

func benchmarkGrade(b *testing.B, n int) {
	deal := syntheticDeal(n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Grade(deal)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/claim")
}

// BenchmarkGradeSmallDeal grades a 7-claim deal.
func BenchmarkGradeSmallDeal(b *testing.B) { benchmarkGrade(b, 7) }

// BenchmarkGradeMediumDeal grades 1,000 claims, for the growth ratio.
func BenchmarkGradeMediumDeal(b *testing.B) { benchmarkGrade(b, 1000) }

// BenchmarkGradeLargeDeal grades 10,000 claims: ns/claim stays about the
// same as for 1,000 because the work is linear in claims.
func BenchmarkGradeLargeDeal(b *testing.B) { benchmarkGrade(b, 10000) }

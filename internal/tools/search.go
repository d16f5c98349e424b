package tools

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Searcher finds a deal's evidence for a query: a store's full-text or
// semantic index. Stores implement it; the Invoker uses it for
// search_evidence when one is configured.
type Searcher interface {
	// SearchEvidence returns the best hits for query among the evidence
	// items of the deal, best first: at most limit, each with a source
	// grade at least minGrade and, when claimClass is not empty, cited by a
	// claim of that class. The int is the number of matches before the
	// limit. An error fails the call (ERROR); the Invoker never shows it
	// to the agent.
	SearchEvidence(ctx context.Context, dealID, query string, claimClass debate.ClaimClass, minGrade debate.SourceGrade, limit int) ([]Hit, int, error)
}

// Hit is one evidence item a Searcher found. The Invoker reports the span
// and excerpt the deal holds for the evidence item, whatever the hit says.
type Hit = debate.EvidenceHit

// SearchResult is one result of search_evidence (seed 000 §4.3).
type SearchResult struct {
	EvidenceID     string   `json:"evidence_id"`
	SourceSpan     *SpanOut `json:"source_span"`
	SourceGrade    string   `json:"source_grade"`
	RelevanceScore float64  `json:"relevance_score"`
	TextExcerpt    string   `json:"text_excerpt"`
}

// SearchOutput is search_evidence's output.
type SearchOutput struct {
	Results    []SearchResult `json:"results"`
	TotalCount int            `json:"total_count"`
}

// searchEvidence runs search_evidence. deal_id must be the Invoker's deal
// (else NOT_FOUND); claim_class and min_grade (default D) must be known
// values; limit is 1 to 50 (default 10).
func (inv *Invoker) searchEvidence(ctx context.Context, _ call, a *args) (any, *bad, error) {
	query := a.str("query")
	dealID := a.str("deal_id")
	class := debate.ClaimClass(a.str("claim_class"))
	minGrade := debate.SourceGrade(a.str("min_grade"))
	limit := a.integer("limit", defaultSearchLim)
	a.text("query", query, true, maxQueryLen)
	a.id("deal_id", dealID)
	enum(a, "claim_class", class, debate.ClaimClasses, false)
	enum(a, "min_grade", minGrade, debate.SourceGrades, false)
	if !a.hasViolation("limit") && (limit < 1 || limit > maxSearchLimit) {
		a.v.Add("limit", "must be between 1 and %d", maxSearchLimit)
	}
	x := inv.deal
	a.found("deal_id", dealID == x.dealID && x.dealID != "", "deal")
	if b := a.done(); b != nil {
		return nil, b, nil
	}
	minGrade = cmp.Or(minGrade, debate.GradeD)

	var hits []Hit
	var total int
	if inv.cfg.Searcher != nil {
		var err error
		hits, total, err = inv.cfg.Searcher.SearchEvidence(ctx, x.dealID, query, class, minGrade, limit)
		if err != nil {
			return nil, nil, err
		}
	} else {
		hits, total = x.search(query, class, minGrade, limit)
	}

	out := SearchOutput{Results: []SearchResult{}}
	dropped := 0
	for _, h := range hits {
		e := x.evidence[h.EvidenceID]
		// A hit outside this deal, or that breaks the filters, is never
		// shown, whatever the Searcher says.
		if e == nil || debate.GradeRank(e.SourceGrade) > debate.GradeRank(minGrade) ||
			(class != "" && !slices.Contains(x.classesOf(e.ID), class)) || len(out.Results) == limit {
			dropped++
			continue
		}
		// The span and excerpt are the evidence item's own, from the deal,
		// whatever span the hit names.
		r := SearchResult{
			EvidenceID: e.ID, SourceSpan: x.spanOut(e.SourceSpanID), SourceGrade: string(e.SourceGrade),
			RelevanceScore: clampScore(h.Relevance), TextExcerpt: h.TextExcerpt,
		}
		if r.SourceSpan != nil {
			r.TextExcerpt = r.SourceSpan.TextExcerpt
		}
		out.Results = append(out.Results, r)
	}
	out.TotalCount = max(total-dropped, len(out.Results))
	return out, nil, nil
}

// clampScore keeps a relevance in [0, 1], rounded to 4 decimals.
func clampScore(x float64) float64 {
	if math.IsNaN(x) || x < 0 {
		return 0
	}
	return math.Round(min(x, 1)*1e4) / 1e4
}

// classesOf returns the claim classes citing the evidence item.
func (x *dealIndex) classesOf(evidenceID string) []debate.ClaimClass {
	i, ok := slices.BinarySearchFunc(x.docs, evidenceID, func(d searchDoc, id string) int {
		return strings.Compare(d.evidence.ID, id)
	})
	if !ok {
		return nil
	}
	return x.docs[i].classes
}

// search ranks the deal's evidence in memory: the score is the share of the
// query's terms found in the span's excerpt (terms); items that share none
// are not matches. Ties are broken by evidence id, so the order is
// deterministic.
func (x *dealIndex) search(query string, class debate.ClaimClass, minGrade debate.SourceGrade, limit int) ([]Hit, int) {
	q := termSet(query)
	if len(q) == 0 {
		return nil, 0
	}
	type scored struct {
		doc     *searchDoc
		overlap int
	}
	var matches []scored
	for i := range x.docs {
		d := &x.docs[i]
		if d.span == nil || debate.GradeRank(d.evidence.SourceGrade) > debate.GradeRank(minGrade) {
			continue
		}
		if class != "" && !slices.Contains(d.classes, class) {
			continue
		}
		n := 0
		for t := range q {
			if d.terms[t] {
				n++
			}
		}
		if n > 0 {
			matches = append(matches, scored{d, n})
		}
	}
	slices.SortStableFunc(matches, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.overlap, a.overlap), cmp.Compare(a.doc.evidence.ID, b.doc.evidence.ID))
	})
	total := len(matches)
	hits := make([]Hit, 0, min(limit, total))
	for _, m := range matches[:min(limit, total)] {
		hits = append(hits, Hit{
			EvidenceID: m.doc.evidence.ID, SpanID: m.doc.span.ID, SourceGrade: m.doc.evidence.SourceGrade,
			Relevance: float64(m.overlap) / float64(len(q)), TextExcerpt: m.doc.span.TextExcerpt,
		})
	}
	return hits, total
}

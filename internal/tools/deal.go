package tools

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/debated/debated/internal/debate"
)

// Deal is what the tools read: a deal's registry, its grading and the
// enrichment records its tenant supplied. Any part may be nil or empty: a
// missing part makes lookups of it NOT_FOUND (INVALID) and searches empty,
// never a panic. It is indexed on first use by an Invoker, and the index
// is shared by every Invoker given the same *Deal: its fields must not
// change once it is given to one, and it must not be copied.
type Deal struct {
	Bundle *debate.DealBundle
	// Grading gives lookup_claim its claim_grade and claim_verdict and
	// lookup_calc its output and grade; without it those fields are empty.
	Grading *debate.DealGrading
	// Enrichment holds the records query_enrichment answers from.
	Enrichment []Enrichment

	mu  sync.Mutex
	idx *dealIndex // the last index built, for idx.dealID
}

// index returns the deal indexed for dealID, built once and then shared.
// A nil Deal gives an empty index.
func (d *Deal) index(dealID string) *dealIndex {
	if d == nil {
		return newDealIndex(nil, dealID)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.idx == nil || d.idx.dealID != dealID {
		d.idx = newDealIndex(d, dealID)
	}
	return d.idx
}

// Entity types of query_enrichment.
const (
	EntityCompany = "COMPANY"
	EntityPerson  = "PERSON"
	EntityMarket  = "MARKET"
)

// EntityTypes lists the entity types query_enrichment accepts.
var EntityTypes = []string{EntityCompany, EntityPerson, EntityMarket}

// Enrichment is one tenant-supplied data point about an entity (a
// company, a person, a market), from a third party (a data vendor, a
// registry, a press article). Seed 000 §4.6 treats such data as weak:
// query_enrichment reports it graded C or D (EnrichmentGrade), to be
// corroborated by primary sources.
type Enrichment = debate.EnrichmentRecord

// EnrichmentGrade is the grade query_enrichment reports for a record: A, B
// and C give C; anything else gives D.
func EnrichmentGrade(g debate.SourceGrade) debate.SourceGrade {
	switch g {
	case debate.GradeA, debate.GradeB, debate.GradeC:
		return debate.GradeC
	}
	return debate.GradeD
}

// dealIndex is a Deal indexed by id. It is built once and read
// concurrently.
type dealIndex struct {
	dealID     string
	claims     map[string]*debate.Claim
	calcs      map[string]*debate.Calc
	evidence   map[string]*debate.EvidenceItem
	spans      map[string]*debate.Span
	documents  map[string]*debate.Document
	sanadOf    map[string]*debate.Sanad // by claim id
	grades     map[string]*debate.ClaimGrade
	calcGrades map[string]*debate.CalcResult
	// refs holds every id flag_defect may cite as evidence.
	refs map[string]bool
	// docs are the search documents: one per evidence item, by id.
	docs       []searchDoc
	enrichment []Enrichment
}

// searchDoc is an evidence item as search_evidence ranks it.
type searchDoc struct {
	evidence *debate.EvidenceItem
	span     *debate.Span // nil when the span does not resolve
	terms    map[string]bool
	classes  []debate.ClaimClass // sorted, distinct
}

func newDealIndex(d *Deal, dealID string) *dealIndex {
	x := &dealIndex{
		dealID:     dealID,
		claims:     map[string]*debate.Claim{},
		calcs:      map[string]*debate.Calc{},
		evidence:   map[string]*debate.EvidenceItem{},
		spans:      map[string]*debate.Span{},
		documents:  map[string]*debate.Document{},
		sanadOf:    map[string]*debate.Sanad{},
		grades:     map[string]*debate.ClaimGrade{},
		calcGrades: map[string]*debate.CalcResult{},
		refs:       map[string]bool{},
	}
	if d == nil {
		return x
	}
	x.enrichment = slices.Clone(d.Enrichment)
	if b := d.Bundle; b != nil {
		// The first of duplicate ids wins; Validate rejects such bundles
		// anyway.
		byID(x.claims, b.Claims, func(c *debate.Claim) string {
			if c.DealID != "" && c.DealID != dealID {
				return "" // not this deal's claim: never served
			}
			return c.ID
		})
		byID(x.calcs, b.Calcs, func(c *debate.Calc) string { return c.ID })
		byID(x.evidence, b.Evidence, func(e *debate.EvidenceItem) string { return e.ID })
		byID(x.spans, b.Spans, func(s *debate.Span) string { return s.ID })
		byID(x.documents, b.Documents, func(d *debate.Document) string { return d.ID })
		byID(x.sanadOf, b.Sanads, func(s *debate.Sanad) string {
			if x.claims[s.ClaimID] == nil {
				return ""
			}
			return s.ClaimID
		})
		x.indexRefs()
		x.indexSearch()
	}
	if g := d.Grading; g != nil {
		byID(x.grades, g.Claims, func(c *debate.ClaimGrade) string { return c.ClaimID })
		byID(x.calcGrades, g.Calcs, func(c *debate.CalcResult) string { return c.CalcID })
	}
	return x
}

// byID puts a pointer to each of xs into m under its id: the first of
// duplicate ids wins, and an item whose id is empty is left out.
func byID[T any](m map[string]*T, xs []T, id func(*T) string) {
	for i := range xs {
		if k := id(&xs[i]); k != "" && m[k] == nil {
			m[k] = &xs[i]
		}
	}
}

// indexRefs collects the ids a defect may cite: evidence items, spans,
// calcs (and their calc sanads), claims, documents, sanads and the nodes of
// their chains.
func (x *dealIndex) indexRefs() {
	add := func(id string) {
		if id != "" {
			x.refs[id] = true
		}
	}
	for _, ids := range []iter.Seq[string]{maps.Keys(x.claims), maps.Keys(x.evidence), maps.Keys(x.spans), maps.Keys(x.documents)} {
		for id := range ids {
			add(id)
		}
	}
	for id, c := range x.calcs {
		add(id)
		add(c.CalcSanadID)
	}
	for _, s := range x.sanadOf {
		add(s.ID)
		for _, n := range s.Chain {
			add(n.ID)
		}
	}
}

// indexSearch prepares one search document per evidence item, in evidence
// id order, with the claim classes of the claims that cite it: through
// their primary span or their sanad (primary or corroborating).
func (x *dealIndex) indexSearch() {
	classes := map[string]map[debate.ClaimClass]bool{}
	cite := func(evidenceID string, c debate.ClaimClass) {
		if classes[evidenceID] == nil {
			classes[evidenceID] = map[debate.ClaimClass]bool{}
		}
		classes[evidenceID][c] = true
	}
	bySpan := map[string][]string{}
	for id, e := range x.evidence {
		bySpan[e.SourceSpanID] = append(bySpan[e.SourceSpanID], id)
	}
	for _, c := range x.claims {
		if c.PrimarySpanID != "" {
			for _, e := range bySpan[c.PrimarySpanID] {
				cite(e, c.Class)
			}
		}
		if s := x.sanadOf[c.ID]; s != nil {
			if s.PrimaryEvidenceID != "" {
				cite(s.PrimaryEvidenceID, c.Class)
			}
			for _, e := range s.CorroboratingEvidenceIDs {
				cite(e, c.Class)
			}
		}
	}
	x.docs = make([]searchDoc, 0, len(x.evidence))
	for _, id := range slices.Sorted(maps.Keys(x.evidence)) {
		e := x.evidence[id]
		doc := searchDoc{evidence: e, span: x.spans[e.SourceSpanID], classes: slices.Sorted(maps.Keys(classes[id]))}
		if doc.span != nil {
			doc.terms = termSet(doc.span.TextExcerpt)
		}
		x.docs = append(x.docs, doc)
	}
}

// hasClaim reports whether id is a claim of this deal.
func (x *dealIndex) hasClaim(id string) bool { return x.claims[id] != nil }

// normName folds a name for matching: lower case, every run of characters
// other than letters and digits one space, trimmed.
func normName(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isWordRune(r) }), " ")
}

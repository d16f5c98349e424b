package debate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits on one imported deal. They bound the work and the storage a single
// call can cause; the protobuf validation rules state the same numbers.
const (
	MaxIDLen        = 128
	MaxShortTextLen = 512
	MaxTextLen      = 16 << 10
	MaxClaims       = 20000
	MaxEvidence     = 50000
	MaxSpans        = 50000
	MaxSanads       = 20000
	MaxDocuments    = 10000
	MaxCalcs        = 10000
	MaxChainNodes   = 256
	MaxRefs         = 256
)

// Validate checks the bundle's shape: required ids are present, ids are
// unique within their kind, enumerations hold known values, texts and lists
// stay within limits. It does not check that references resolve: a sanad
// citing an unknown evidence item is data for the grader, not an import
// error. Returns a *ValidationError naming every bad field.
func (b *DealBundle) Validate() error {
	var v Violations
	checkID(&v, "deal.deal_id", b.Deal.ID)
	checkText(&v, "deal.external_ref", b.Deal.ExternalRef, MaxShortTextLen)
	checkText(&v, "deal.company_name", b.Deal.CompanyName, MaxShortTextLen)
	checkText(&v, "deal.stage", b.Deal.Stage, MaxShortTextLen)
	checkText(&v, "deal.sector", b.Deal.Sector, MaxShortTextLen)
	checkText(&v, "deal.status", b.Deal.Status, MaxShortTextLen)

	checkCount(&v, "claims", len(b.Claims), MaxClaims)
	checkCount(&v, "evidence_items", len(b.Evidence), MaxEvidence)
	checkCount(&v, "spans", len(b.Spans), MaxSpans)
	checkCount(&v, "sanads", len(b.Sanads), MaxSanads)
	checkCount(&v, "documents", len(b.Documents), MaxDocuments)
	checkCount(&v, "calcs", len(b.Calcs), MaxCalcs)
	checkCount(&v, "enrichment_records", len(b.Enrichment), MaxEnrichment)
	if v.Len() > 0 {
		return v.Err() // do not walk oversized lists
	}

	seen := map[string]int{}
	unique := func(kind, path, id string, i int) {
		if id == "" {
			return
		}
		key := kind + "\x00" + id
		if j, ok := seen[key]; ok {
			v.Add(path, "duplicate id %q (also at index %d)", id, j)
			return
		}
		seen[key] = i
	}

	for i, c := range b.Claims {
		p := fmt.Sprintf("claims[%d]", i)
		checkID(&v, p+".claim_id", c.ID)
		unique("claim", p+".claim_id", c.ID, i)
		if c.DealID != "" && c.DealID != b.Deal.ID {
			v.Add(p+".deal_id", "names deal %q, not the imported deal %q", c.DealID, b.Deal.ID)
		}
		checkText(&v, p+".claim_key", c.Key, MaxShortTextLen)
		unique("claim_key", p+".claim_key", c.Key, i)
		checkEnum(&v, p+".claim_class", c.Class, ClaimClasses, true)
		checkRequiredText(&v, p+".claim_text", c.Text, MaxTextLen)
		checkText(&v, p+".predicate", c.Predicate, MaxTextLen)
		checkEnum(&v, p+".materiality", c.Materiality, Materialities, true)
		checkOptID(&v, p+".primary_span_id", c.PrimarySpanID)
		checkOptID(&v, p+".created_by", c.CreatedBy)
		if c.Value != nil {
			checkText(&v, p+".value.unit", c.Value.Unit, MaxShortTextLen)
			checkText(&v, p+".value.currency", c.Value.Currency, MaxShortTextLen)
			checkText(&v, p+".value.as_of", c.Value.AsOf, MaxShortTextLen)
			if w := c.Value.TimeWindow; w != nil {
				checkText(&v, p+".value.time_window.label", w.Label, MaxShortTextLen)
				checkText(&v, p+".value.time_window.start_date", w.StartDate, MaxShortTextLen)
				checkText(&v, p+".value.time_window.end_date", w.EndDate, MaxShortTextLen)
			}
		}
	}
	for i, e := range b.Evidence {
		p := fmt.Sprintf("evidence_items[%d]", i)
		checkID(&v, p+".evidence_id", e.ID)
		unique("evidence", p+".evidence_id", e.ID, i)
		checkOptID(&v, p+".source_span_id", e.SourceSpanID)
		checkText(&v, p+".source_system", e.SourceSystem, MaxShortTextLen)
		checkText(&v, p+".upstream_origin_id", e.UpstreamOriginID, MaxShortTextLen)
		checkEnum(&v, p+".source_grade", e.SourceGrade, SourceGrades, true)
	}
	for i, s := range b.Spans {
		p := fmt.Sprintf("spans[%d]", i)
		checkID(&v, p+".span_id", s.ID)
		unique("span", p+".span_id", s.ID, i)
		checkOptID(&v, p+".document_id", s.DocumentID)
		checkEnum(&v, p+".span_type", s.Type, SpanTypes, true)
		checkText(&v, p+".text_excerpt", s.TextExcerpt, MaxTextLen)
		checkText(&v, p+".locator.sheet", s.Locator.Sheet, MaxShortTextLen)
		checkText(&v, p+".locator.cell", s.Locator.Cell, MaxShortTextLen)
		if len(s.Locator.BBox) > 8 {
			v.Add(p+".locator.bbox", "has %d numbers, at most 8 allowed", len(s.Locator.BBox))
		}
		for j, x := range s.Locator.BBox {
			checkFinite(&v, fmt.Sprintf("%s.locator.bbox[%d]", p, j), x)
		}
	}
	for i, s := range b.Sanads {
		p := fmt.Sprintf("sanads[%d]", i)
		checkID(&v, p+".sanad_id", s.ID)
		unique("sanad", p+".sanad_id", s.ID, i)
		checkID(&v, p+".claim_id", s.ClaimID)
		checkOptID(&v, p+".primary_evidence_id", s.PrimaryEvidenceID)
		checkRefs(&v, p+".corroborating_evidence_ids", s.CorroboratingEvidenceIDs)
		checkFinite(&v, p+".extraction_confidence", s.ExtractionConfidence)
		checkFinite(&v, p+".dhabt_score", s.DhabtScore)
		checkCount(&v, p+".transmission_chain", len(s.Chain), MaxChainNodes)
		nodes := map[string]int{}
		for j, n := range s.Chain {
			np := fmt.Sprintf("%s.transmission_chain[%d]", p, j)
			checkID(&v, np+".node_id", n.ID)
			if k, ok := nodes[n.ID]; ok && n.ID != "" {
				v.Add(np+".node_id", "duplicate id %q (also at index %d)", n.ID, k)
			}
			nodes[n.ID] = j
			checkEnum(&v, np+".node_type", n.Type, ChainNodeTypes, true)
			checkRefs(&v, np+".input_refs", n.InputRefs)
			checkOptID(&v, np+".output_ref", n.OutputRef)
		}
	}
	for i, d := range b.Documents {
		p := fmt.Sprintf("documents[%d]", i)
		checkID(&v, p+".document_id", d.ID)
		unique("document", p+".document_id", d.ID, i)
		checkEnum(&v, p+".artifact_type", d.ArtifactType, ArtifactTypes, true)
		checkText(&v, p+".version_label", d.VersionLabel, MaxShortTextLen)
	}
	for i, c := range b.Calcs {
		p := fmt.Sprintf("calcs[%d]", i)
		checkID(&v, p+".calc_id", c.ID)
		unique("calc", p+".calc_id", c.ID, i)
		checkOptID(&v, p+".calc_sanad_id", c.CalcSanadID)
		checkEnum(&v, p+".calc_type", c.Type, CalcTypes, true)
		checkRefs(&v, p+".input_claim_ids", c.InputClaimIDs)
		if len(c.Inputs) > MaxRefs {
			v.Add(p+".inputs", "has %d entries, at most %d allowed", len(c.Inputs), MaxRefs)
		}
		for k := range c.Inputs {
			checkText(&v, p+".inputs", k, MaxShortTextLen)
		}
		if len(c.InputSpanIDs) > MaxRefs {
			v.Add(p+".input_span_ids", "has %d entries, at most %d allowed", len(c.InputSpanIDs), MaxRefs)
		}
		for k, id := range c.InputSpanIDs {
			checkText(&v, p+".input_span_ids", k, MaxShortTextLen)
			checkOptID(&v, p+".input_span_ids["+k+"]", id)
		}
		checkText(&v, p+".formula_hash", c.FormulaHash, MaxShortTextLen)
		checkText(&v, p+".code_version", c.CodeVersion, MaxShortTextLen)
	}
	for i, r := range b.Enrichment {
		p := fmt.Sprintf("enrichment_records[%d]", i)
		checkID(&v, p+".record_id", r.ID)
		unique("enrichment", p+".record_id", r.ID, i)
		checkEnum(&v, p+".entity_type", r.EntityType, EntityTypes, true)
		checkRequiredText(&v, p+".entity_name", r.EntityName, MaxShortTextLen)
		checkRequiredText(&v, p+".data_point", r.DataPoint, MaxShortTextLen)
		checkText(&v, p+".value", r.Value, MaxTextLen)
		checkText(&v, p+".unit", r.Unit, MaxShortTextLen)
		checkText(&v, p+".source", r.Source, MaxShortTextLen)
		checkText(&v, p+".as_of", r.AsOf, MaxShortTextLen)
		checkEnum(&v, p+".source_grade", r.SourceGrade, SourceGrades, false)
	}
	return v.Err()
}

// ValidID reports whether id is acceptable as a resource id: 1 to MaxIDLen
// bytes of printable, non-space UTF-8.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen || !utf8.ValidString(id) {
		return false
	}
	for _, r := range id {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

func checkID(v *Violations, field, id string) {
	switch {
	case id == "":
		v.Add(field, "is required")
	case !ValidID(id):
		v.Add(field, "must be 1 to %d printable characters without spaces", MaxIDLen)
	}
}

func checkOptID(v *Violations, field, id string) {
	if id != "" {
		checkID(v, field, id)
	}
}

func checkRefs(v *Violations, field string, ids []string) {
	if len(ids) > MaxRefs {
		v.Add(field, "has %d entries, at most %d allowed", len(ids), MaxRefs)
		return
	}
	for i, id := range ids {
		checkID(v, fmt.Sprintf("%s[%d]", field, i), id)
	}
}

func checkText(v *Violations, field, s string, limit int) {
	switch {
	case len(s) > limit:
		v.Add(field, "is %d bytes long, at most %d allowed", len(s), limit)
	case !utf8.ValidString(s):
		v.Add(field, "is not valid UTF-8")
	case strings.ContainsRune(s, 0):
		v.Add(field, "contains a NUL character")
	}
}

func checkRequiredText(v *Violations, field, s string, limit int) {
	if strings.TrimSpace(s) == "" {
		v.Add(field, "is required")
		return
	}
	checkText(v, field, s, limit)
}

func checkCount(v *Violations, field string, n, limit int) {
	if n > limit {
		v.Add(field, "has %d entries, at most %d allowed", n, limit)
	}
}

func checkFinite(v *Violations, field string, x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		v.Add(field, "must be a finite number")
	}
}

func checkEnum[E ~string](v *Violations, field string, e E, valid []E, required bool) {
	if e == "" {
		if required {
			v.Add(field, "is required")
		}
		return
	}
	if !slices.Contains(valid, e) {
		v.Add(field, "unknown value %q (one of %v)", string(e), valid)
	}
}

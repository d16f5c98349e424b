package tools

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
)

// maxEnrichmentResults bounds query_enrichment's results.
const maxEnrichmentResults = 50

// EnrichmentNote is the caveat every query_enrichment output carries (seed
// 000 §4.6).
const EnrichmentNote = "Enrichment results are third-party claims graded C or D; corroborate them with primary sources before relying on them."

// EnrichmentResult is one record query_enrichment returns: a claim-like
// statement with its source attribution and a grade of C or D.
type EnrichmentResult struct {
	RecordID   string `json:"record_id"`
	EntityType string `json:"entity_type"`
	EntityName string `json:"entity_name"`
	DataPoint  string `json:"data_point"`
	// ClaimText states the record as a claim: "<entity> <data point>:
	// <value>".
	ClaimText   string `json:"claim_text"`
	Value       string `json:"value"`
	Source      string `json:"source"`
	AsOf        string `json:"as_of,omitempty"`
	SourceGrade string `json:"source_grade"` // C or D
	// CorroborationRequired is always true: enrichment never stands alone.
	CorroborationRequired bool `json:"corroboration_required"`
}

// EnrichmentOutput is query_enrichment's output.
type EnrichmentOutput struct {
	EntityType string             `json:"entity_type"`
	EntityName string             `json:"entity_name"`
	Results    []EnrichmentResult `json:"results"`
	// MissingDataPoints are the requested data points no record answers, in
	// the order asked.
	MissingDataPoints []string `json:"missing_data_points"`
	TotalCount        int      `json:"total_count"`
	Note              string   `json:"note"`
}

// dataPointAliases folds spellings of a data point into one (keys and
// values are normName forms). Unlike the search synonyms they never merge
// different metrics: ARR is not MRR, revenue is not ARR.
var dataPointAliases = map[string]string{
	"annual recurring revenue": "arr", "monthly recurring revenue": "mrr",
	"gm": "gross margin", "gross margins": "gross margin", "gross profit margin": "gross margin",
	"burn rate": "burn", "monthly burn": "burn", "cash burn": "burn", "net burn": "burn",
	"cash runway": "runway", "months of runway": "runway",
	"customer acquisition cost": "cac", "customer acquisition costs": "cac",
	"net revenue retention": "nrr", "net dollar retention": "nrr", "ndr": "nrr", "net retention": "nrr",
	"total addressable market": "tam", "addressable market": "tam", "market size": "tam",
	"employees": "headcount", "employee count": "headcount", "number of employees": "headcount",
}

func dataPointKey(s string) string {
	k := normName(s)
	return cmp.Or(dataPointAliases[k], k)
}

// queryEnrichment runs query_enrichment (seed 000 §4.6) over the deal's
// enrichment records: those of the entity type, whose entity name matches
// (case, spacing and punctuation aside) and whose data point is one of
// data_points (same folding, plus common spellings of a metric). Results
// follow the order of data_points, then record id; at most 50. It makes no
// external call.
func (inv *Invoker) queryEnrichment(_ context.Context, _ call, a *args) (any, *bad, error) {
	typ := a.str("entity_type")
	name := a.str("entity_name")
	points := a.strs("data_points")
	enum(a, "entity_type", typ, EntityTypes, true)
	a.text("entity_name", name, true, maxQueryLen)
	switch {
	case a.hasViolation("data_points"):
	case len(points) == 0:
		a.v.Add("data_points", "needs at least 1 data point")
	case len(points) > maxDataPoints:
		a.v.Add("data_points", "has %d entries, at most %d allowed", len(points), maxDataPoints)
	default:
		for i, p := range points {
			f := "data_points[" + strconv.Itoa(i) + "]"
			a.text(f, p, true, maxQueryLen)
			if !a.hasViolation(f) && normName(p) == "" {
				a.v.Add(f, "must contain letters or digits")
			}
		}
	}
	if !a.hasViolation("entity_name") && name != "" && normName(name) == "" {
		a.v.Add("entity_name", "must contain letters or digits")
	}
	if b := a.done(); b != nil {
		return nil, b, nil
	}

	out := EnrichmentOutput{EntityType: typ, EntityName: name, Results: []EnrichmentResult{}, MissingDataPoints: []string{}, Note: EnrichmentNote}
	entity := normName(name)
	var recs []Enrichment
	for _, r := range inv.deal.enrichment {
		if strings.EqualFold(strings.TrimSpace(r.EntityType), typ) && normName(r.EntityName) == entity {
			recs = append(recs, r)
		}
	}
	slices.SortStableFunc(recs, func(x, y Enrichment) int { return cmp.Compare(x.ID, y.ID) })

	// Each key is answered once, so no record is reported twice.
	var seen []string
	for _, p := range points {
		key := dataPointKey(p)
		if slices.Contains(seen, key) {
			continue
		}
		seen = append(seen, key)
		found := false
		for _, r := range recs {
			if dataPointKey(r.DataPoint) != key {
				continue
			}
			found = true
			out.TotalCount++
			if len(out.Results) < maxEnrichmentResults {
				out.Results = append(out.Results, EnrichmentResult{
					RecordID: r.ID, EntityType: strings.ToUpper(strings.TrimSpace(r.EntityType)), EntityName: r.EntityName,
					DataPoint: r.DataPoint, ClaimText: r.EntityName + " " + r.DataPoint + ": " + r.Value, Value: r.Value,
					Source: r.Source, AsOf: r.AsOf, SourceGrade: string(EnrichmentGrade(r.SourceGrade)), CorroborationRequired: true,
				})
			}
		}
		if !found {
			out.MissingDataPoints = append(out.MissingDataPoints, p)
		}
	}
	return out, nil, nil
}

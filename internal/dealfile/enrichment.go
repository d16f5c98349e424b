package dealfile

import "github.com/debated/debated/internal/debate"

// EnrichmentFile holds the deal's tenant-supplied enrichment records,
// {"enrichment_records": [...]}. It is optional: no file, no records.
const EnrichmentFile = "enrichment.json"

// enrichmentJSON is one enrichment record, its fields named as in the
// protobuf EnrichmentRecord.
type enrichmentJSON struct {
	RecordID    string `json:"record_id"`
	EntityType  string `json:"entity_type"`
	EntityName  string `json:"entity_name"`
	DataPoint   string `json:"data_point"`
	Value       string `json:"value"`
	Unit        string `json:"unit"`
	Source      string `json:"source"`
	AsOf        string `json:"as_of"`
	SourceGrade string `json:"source_grade"`
}

func (r enrichmentJSON) toDomain() debate.EnrichmentRecord {
	return debate.EnrichmentRecord{
		ID:          r.RecordID,
		EntityType:  r.EntityType,
		EntityName:  r.EntityName,
		DataPoint:   r.DataPoint,
		Value:       r.Value,
		Unit:        r.Unit,
		Source:      r.Source,
		AsOf:        r.AsOf,
		SourceGrade: debate.SourceGrade(r.SourceGrade),
	}
}

func enrichmentToJSON(rs []debate.EnrichmentRecord) []enrichmentJSON {
	out := make([]enrichmentJSON, 0, len(rs))
	for _, r := range rs {
		out = append(out, enrichmentJSON{
			RecordID: r.ID, EntityType: r.EntityType, EntityName: r.EntityName, DataPoint: r.DataPoint,
			Value: r.Value, Unit: r.Unit, Source: r.Source, AsOf: r.AsOf, SourceGrade: string(r.SourceGrade),
		})
	}
	return out
}

package rows

import "github.com/debated/debated/internal/debate"

// enrichmentRecord is how an enrichment record is stored: JSON named as the
// protobuf EnrichmentRecord.
type enrichmentRecord struct {
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

// encodeEnrichment turns the enrichment records of a bundle into rows.
func encodeEnrichment(rs []debate.EnrichmentRecord) (IDRows, error) {
	var out IDRows
	for i, x := range rs {
		rec, err := marshal("enrichment_records", i, enrichmentRecord{
			RecordID: x.ID, EntityType: x.EntityType, EntityName: x.EntityName, DataPoint: x.DataPoint,
			Value: x.Value, Unit: x.Unit, Source: x.Source, AsOf: x.AsOf, SourceGrade: string(x.SourceGrade),
		})
		if err != nil {
			return IDRows{}, err
		}
		out.IDs = append(out.IDs, x.ID)
		out.Records = append(out.Records, rec)
	}
	return out, nil
}

// DecodeEnrichment returns the enrichment record stored as data.
func DecodeEnrichment(data []byte) (debate.EnrichmentRecord, error) {
	var r enrichmentRecord
	if err := unmarshal("enrichment record", data, &r); err != nil {
		return debate.EnrichmentRecord{}, err
	}
	return debate.EnrichmentRecord{
		ID: r.RecordID, EntityType: r.EntityType, EntityName: r.EntityName, DataPoint: r.DataPoint,
		Value: r.Value, Unit: r.Unit, Source: r.Source, AsOf: r.AsOf, SourceGrade: debate.SourceGrade(r.SourceGrade),
	}, nil
}

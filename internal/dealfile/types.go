package dealfile

import (
	"encoding/json"
	"reflect"

	"github.com/debated/debated/internal/debate"
)

// The JSON shapes of the layout. Times are *string so that "" and null read
// as the zero time and a bad time is reported with its path; every other
// null is the field's zero value. Exact quantities are number (a JSON
// number, or a string holding one), read into debate.Decimal digit for
// digit, never through float64. tenant_id is deliberately absent.

// number is an exact quantity as written: the text of a JSON number, or of
// a string holding a decimal number ("3150000", "1.5e6"). Anything else is
// a *json.UnmarshalTypeError, so the violation names the field.
type number string

// MarshalJSON writes n as a JSON number; Encode fills it with canonical
// decimal text.
func (n number) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("0"), nil
	}
	d, err := debate.ReadDecimal(string(n))
	if err != nil {
		return nil, err
	}
	return []byte(d.String()), nil
}

// UnmarshalJSON keeps the text of a JSON number, or of a string holding a
// decimal number.
func (n *number) UnmarshalJSON(data []byte) error {
	switch {
	case string(data) == "null":
		return nil
	case data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err == nil {
			if _, err := debate.ReadDecimal(s); err == nil {
				*n = number(s)
				return nil
			}
		}
		return &json.UnmarshalTypeError{Value: "string", Type: reflect.TypeFor[number]()}
	case data[0] == '-' || data[0] >= '0' && data[0] <= '9':
		*n = number(data)
		return nil
	case data[0] == 't' || data[0] == 'f':
		return &json.UnmarshalTypeError{Value: "bool", Type: reflect.TypeFor[number]()}
	case data[0] == '[':
		return &json.UnmarshalTypeError{Value: "array", Type: reflect.TypeFor[number]()}
	default:
		return &json.UnmarshalTypeError{Value: "object", Type: reflect.TypeFor[number]()}
	}
}

type dealJSON struct {
	DealID               string  `json:"deal_id"`
	ExternalRef          string  `json:"external_ref"`
	CompanyName          string  `json:"company_name"`
	Stage                string  `json:"stage"`
	Sector               string  `json:"sector"`
	Status               string  `json:"status"`
	MaterialityThreshold number  `json:"materiality_threshold"`
	CreatedAt            *string `json:"created_at"`
	UpdatedAt            *string `json:"updated_at"`
}

func (d dealJSON) toDomain(p *parser, path string) debate.Deal {
	return debate.Deal{
		ID:                   d.DealID,
		ExternalRef:          d.ExternalRef,
		CompanyName:          d.CompanyName,
		Stage:                d.Stage,
		Sector:               d.Sector,
		Status:               d.Status,
		MaterialityThreshold: p.decimal(path+".materiality_threshold", d.MaterialityThreshold),
		CreatedAt:            p.timeField(path+".created_at", d.CreatedAt),
		UpdatedAt:            p.timeField(path+".updated_at", d.UpdatedAt),
	}
}

type timeWindowJSON struct {
	Label     string `json:"label"`
	StartDate string `json:"start_date"`
	EndDate   string `json:"end_date"`
}

type valueJSON struct {
	Value      number          `json:"value"`
	Unit       string          `json:"unit"`
	Currency   string          `json:"currency"`
	AsOf       string          `json:"as_of"`
	TimeWindow *timeWindowJSON `json:"time_window"`
}

type claimJSON struct {
	ClaimID       string     `json:"claim_id"`
	DealID        string     `json:"deal_id"`
	ClaimKey      string     `json:"claim_key"`
	ClaimClass    string     `json:"claim_class"`
	ClaimText     string     `json:"claim_text"`
	Predicate     string     `json:"predicate"`
	Value         *valueJSON `json:"value"`
	Materiality   string     `json:"materiality"`
	ICBound       bool       `json:"ic_bound"`
	PrimarySpanID string     `json:"primary_span_id"`
	CreatedBy     string     `json:"created_by"`
	CreatedAt     *string    `json:"created_at"`
	UpdatedAt     *string    `json:"updated_at"`
}

func (c claimJSON) toDomain(p *parser, path string) debate.Claim {
	out := debate.Claim{
		ID:            c.ClaimID,
		DealID:        c.DealID,
		Key:           c.ClaimKey,
		Class:         debate.ClaimClass(c.ClaimClass),
		Text:          c.ClaimText,
		Predicate:     c.Predicate,
		Materiality:   debate.Materiality(c.Materiality),
		ICBound:       c.ICBound,
		PrimarySpanID: c.PrimarySpanID,
		CreatedBy:     c.CreatedBy,
		CreatedAt:     p.timeField(path+".created_at", c.CreatedAt),
		UpdatedAt:     p.timeField(path+".updated_at", c.UpdatedAt),
	}
	if v := c.Value; v != nil {
		out.Value = &debate.ClaimValue{Value: p.decimal(path+".value.value", v.Value), Unit: v.Unit, Currency: v.Currency, AsOf: v.AsOf}
		if w := v.TimeWindow; w != nil {
			out.Value.TimeWindow = &debate.TimeWindow{Label: w.Label, StartDate: w.StartDate, EndDate: w.EndDate}
		}
	}
	return out
}

type evidenceJSON struct {
	EvidenceID         string  `json:"evidence_id"`
	SourceSpanID       string  `json:"source_span_id"`
	SourceSystem       string  `json:"source_system"`
	UpstreamOriginID   string  `json:"upstream_origin_id"`
	RetrievalTimestamp *string `json:"retrieval_timestamp"`
	SourceGrade        string  `json:"source_grade"`
	CreatedAt          *string `json:"created_at"`
	UpdatedAt          *string `json:"updated_at"`
}

func (e evidenceJSON) toDomain(p *parser, path string) debate.EvidenceItem {
	return debate.EvidenceItem{
		ID:                 e.EvidenceID,
		SourceSpanID:       e.SourceSpanID,
		SourceSystem:       e.SourceSystem,
		UpstreamOriginID:   e.UpstreamOriginID,
		RetrievalTimestamp: p.timeField(path+".retrieval_timestamp", e.RetrievalTimestamp),
		SourceGrade:        debate.SourceGrade(e.SourceGrade),
		CreatedAt:          p.timeField(path+".created_at", e.CreatedAt),
		UpdatedAt:          p.timeField(path+".updated_at", e.UpdatedAt),
	}
}

type locatorJSON struct {
	Page  int32     `json:"page"`
	BBox  []float64 `json:"bbox"`
	Sheet string    `json:"sheet"`
	Cell  string    `json:"cell"`
}

type spanJSON struct {
	SpanID      string      `json:"span_id"`
	DocumentID  string      `json:"document_id"`
	SpanType    string      `json:"span_type"`
	Locator     locatorJSON `json:"locator"`
	TextExcerpt string      `json:"text_excerpt"`
	CreatedAt   *string     `json:"created_at"`
	UpdatedAt   *string     `json:"updated_at"`
}

func (s spanJSON) toDomain(p *parser, path string) debate.Span {
	return debate.Span{
		ID:          s.SpanID,
		DocumentID:  s.DocumentID,
		Type:        debate.SpanType(s.SpanType),
		Locator:     debate.Locator{Page: s.Locator.Page, BBox: s.Locator.BBox, Sheet: s.Locator.Sheet, Cell: s.Locator.Cell},
		TextExcerpt: s.TextExcerpt,
		CreatedAt:   p.timeField(path+".created_at", s.CreatedAt),
		UpdatedAt:   p.timeField(path+".updated_at", s.UpdatedAt),
	}
}

type nodeJSON struct {
	NodeID    string   `json:"node_id"`
	NodeType  string   `json:"node_type"`
	InputRefs []string `json:"input_refs"`
	OutputRef string   `json:"output_ref"`
}

type sanadJSON struct {
	SanadID                  string            `json:"sanad_id"`
	ClaimID                  string            `json:"claim_id"`
	PrimaryEvidenceID        string            `json:"primary_evidence_id"`
	CorroboratingEvidenceIDs []string          `json:"corroborating_evidence_ids"`
	ExtractionConfidence     float64           `json:"extraction_confidence"`
	DhabtScore               float64           `json:"dhabt_score"`
	TransmissionChain        []json.RawMessage `json:"transmission_chain"`
	CreatedAt                *string           `json:"created_at"`
	UpdatedAt                *string           `json:"updated_at"`
}

func (s sanadJSON) toDomain(p *parser, path string) debate.Sanad {
	return debate.Sanad{
		ID:                       s.SanadID,
		ClaimID:                  s.ClaimID,
		PrimaryEvidenceID:        s.PrimaryEvidenceID,
		CorroboratingEvidenceIDs: s.CorroboratingEvidenceIDs,
		ExtractionConfidence:     s.ExtractionConfidence,
		DhabtScore:               s.DhabtScore,
		Chain:                    p.nodes(path, s.TransmissionChain),
		CreatedAt:                p.timeField(path+".created_at", s.CreatedAt),
		UpdatedAt:                p.timeField(path+".updated_at", s.UpdatedAt),
	}
}

type documentJSON struct {
	DocumentID   string  `json:"document_id"`
	ArtifactType string  `json:"artifact_type"`
	VersionLabel string  `json:"version_label"`
	IngestedAt   *string `json:"ingested_at"`
}

func (d documentJSON) toDomain(p *parser, path string) debate.Document {
	return debate.Document{
		ID:           d.DocumentID,
		ArtifactType: debate.ArtifactType(d.ArtifactType),
		VersionLabel: d.VersionLabel,
		IngestedAt:   p.timeField(path+".ingested_at", d.IngestedAt),
	}
}

type calcJSON struct {
	CalcSanadID   string            `json:"calc_sanad_id"`
	CalcID        string            `json:"calc_id"`
	CalcType      string            `json:"calc_type"`
	InputClaimIDs []string          `json:"input_claim_ids"`
	Inputs        map[string]number `json:"inputs"`
	InputSpanIDs  map[string]string `json:"input_span_ids"`
	FormulaHash   string            `json:"formula_hash"`
	CodeVersion   string            `json:"code_version"`
	CreatedAt     *string           `json:"created_at"`
}

func (c calcJSON) toDomain(p *parser, path string) debate.Calc {
	return debate.Calc{
		ID:            c.CalcID,
		CalcSanadID:   c.CalcSanadID,
		Type:          debate.CalcType(c.CalcType),
		InputClaimIDs: c.InputClaimIDs,
		Inputs:        p.decimals(path+".inputs", c.Inputs),
		InputSpanIDs:  c.InputSpanIDs,
		FormulaHash:   c.FormulaHash,
		CodeVersion:   c.CodeVersion,
		CreatedAt:     p.timeField(path+".created_at", c.CreatedAt),
	}
}

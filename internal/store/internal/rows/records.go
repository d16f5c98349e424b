package rows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/debated/debated/internal/debate"
)

// The records. Field names follow the deal files' layout. Nil slices and
// maps are kept as null, empty ones as [] and {}, so both come back as they
// went in. Decimals are JSON numbers written digit for digit
// (debate.Decimal): records written when they were float64 read back as the
// same values, and new ones keep every digit.

type dealRecord struct {
	DealID               string         `json:"deal_id"`
	ExternalRef          string         `json:"external_ref"`
	CompanyName          string         `json:"company_name"`
	Stage                string         `json:"stage"`
	Sector               string         `json:"sector"`
	Status               string         `json:"status"`
	MaterialityThreshold debate.Decimal `json:"materiality_threshold"`
	CreatedAt            time.Time      `json:"created_at"`
	UpdatedAt            time.Time      `json:"updated_at"`
}

type timeWindowRecord struct {
	Label     string `json:"label"`
	StartDate string `json:"start_date"`
	EndDate   string `json:"end_date"`
}

type claimValueRecord struct {
	Value      debate.Decimal    `json:"value"`
	Unit       string            `json:"unit"`
	Currency   string            `json:"currency"`
	AsOf       string            `json:"as_of"`
	TimeWindow *timeWindowRecord `json:"time_window"`
}

// claimRecord has no deal id: the deal_id column is authoritative.
type claimRecord struct {
	ClaimID       string            `json:"claim_id"`
	ClaimKey      string            `json:"claim_key"`
	ClaimClass    string            `json:"claim_class"`
	ClaimText     string            `json:"claim_text"`
	Predicate     string            `json:"predicate"`
	Value         *claimValueRecord `json:"value"`
	Materiality   string            `json:"materiality"`
	ICBound       bool              `json:"ic_bound"`
	PrimarySpanID string            `json:"primary_span_id"`
	CreatedBy     string            `json:"created_by"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
}

type evidenceRecord struct {
	EvidenceID         string    `json:"evidence_id"`
	SourceSpanID       string    `json:"source_span_id"`
	SourceSystem       string    `json:"source_system"`
	UpstreamOriginID   string    `json:"upstream_origin_id"`
	RetrievalTimestamp time.Time `json:"retrieval_timestamp"`
	SourceGrade        string    `json:"source_grade"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

type locatorRecord struct {
	Page  int32     `json:"page"`
	BBox  []float64 `json:"bbox"`
	Sheet string    `json:"sheet"`
	Cell  string    `json:"cell"`
}

type spanRecord struct {
	SpanID      string        `json:"span_id"`
	DocumentID  string        `json:"document_id"`
	SpanType    string        `json:"span_type"`
	Locator     locatorRecord `json:"locator"`
	TextExcerpt string        `json:"text_excerpt"`
	CreatedAt   time.Time     `json:"created_at"`
	UpdatedAt   time.Time     `json:"updated_at"`
}

type chainNodeRecord struct {
	NodeID    string   `json:"node_id"`
	NodeType  string   `json:"node_type"`
	InputRefs []string `json:"input_refs"`
	OutputRef string   `json:"output_ref"`
}

type sanadRecord struct {
	SanadID                  string            `json:"sanad_id"`
	ClaimID                  string            `json:"claim_id"`
	PrimaryEvidenceID        string            `json:"primary_evidence_id"`
	CorroboratingEvidenceIDs []string          `json:"corroborating_evidence_ids"`
	ExtractionConfidence     float64           `json:"extraction_confidence"`
	DhabtScore               float64           `json:"dhabt_score"`
	TransmissionChain        []chainNodeRecord `json:"transmission_chain"`
	CreatedAt                time.Time         `json:"created_at"`
	UpdatedAt                time.Time         `json:"updated_at"`
}

type documentRecord struct {
	DocumentID   string    `json:"document_id"`
	ArtifactType string    `json:"artifact_type"`
	VersionLabel string    `json:"version_label"`
	IngestedAt   time.Time `json:"ingested_at"`
}

type calcRecord struct {
	CalcID        string                    `json:"calc_id"`
	CalcSanadID   string                    `json:"calc_sanad_id"`
	CalcType      string                    `json:"calc_type"`
	InputClaimIDs []string                  `json:"input_claim_ids"`
	Inputs        map[string]debate.Decimal `json:"inputs"`
	InputSpanIDs  map[string]string         `json:"input_span_ids"`
	FormulaHash   string                    `json:"formula_hash"`
	CodeVersion   string                    `json:"code_version"`
	CreatedAt     time.Time                 `json:"created_at"`
}

// DealRow is the deals row of an import, less its tenant.
type DealRow struct {
	Deal        debate.Deal // times as given; the columns use Time(...)
	ContentHash string
	ImportedAt  time.Time // Time(at)
	Counts      [6]int    // claims, evidence, spans, sanads, documents, calcs
	Record      string
}

// ClaimRows are the claims rows of an import, column by column.
type ClaimRows struct {
	IDs, Keys, Classes, Materialities []string
	ICBound                           []bool
	Records                           []string
}

// SpanRows are the spans rows of an import, column by column.
type SpanRows struct {
	IDs, DocumentIDs, TextExcerpts, Records []string
}

// SanadRows are the sanads rows of an import, column by column.
type SanadRows struct {
	IDs, ClaimIDs, Records []string
}

// IDRows are the rows of a table with only an id and a record: evidence
// items, documents, calcs.
type IDRows struct {
	IDs, Records []string
}

// Bundle is a whole import as rows, ready to insert.
type Bundle struct {
	Deal      DealRow
	Claims    ClaimRows
	Evidence  IDRows
	Spans     SpanRows
	Sanads    SanadRows
	Documents IDRows
	Calcs     IDRows
	// Enrichment holds the enrichment records (table enrichment_records).
	Enrichment IDRows
}

// EncodeBundle checks b and turns it into rows. Returns a
// *debate.ValidationError if b is nil, if b.Validate rejects it, if
// contentHash is empty, or if a text holds a NUL character.
func EncodeBundle(b *debate.DealBundle, contentHash string, at time.Time) (*Bundle, error) {
	if b == nil {
		return nil, &debate.ValidationError{Violations: []debate.FieldViolation{{Field: "deal", Description: "is required"}}}
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if contentHash == "" {
		return nil, &debate.ValidationError{Violations: []debate.FieldViolation{{Field: "content_hash", Description: "is required"}}}
	}
	out := &Bundle{}
	var err error
	d := b.Deal
	out.Deal = DealRow{
		Deal:        d,
		ContentHash: contentHash,
		ImportedAt:  Time(at),
		Counts:      [6]int{len(b.Claims), len(b.Evidence), len(b.Spans), len(b.Sanads), len(b.Documents), len(b.Calcs)},
	}
	out.Deal.Record, err = marshal("deal", -1, dealRecord{
		DealID: d.ID, ExternalRef: d.ExternalRef, CompanyName: d.CompanyName, Stage: d.Stage,
		Sector: d.Sector, Status: d.Status, MaterialityThreshold: d.MaterialityThreshold,
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
	})
	if err != nil {
		return nil, err
	}

	// Claims go in id order: two imports that collide on claim ids then
	// lock them in the same order, and cannot deadlock on PostgreSQL.
	order := make([]int, len(b.Claims))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return strings.Compare(b.Claims[i].ID, b.Claims[j].ID) })
	c := &out.Claims
	for _, i := range order {
		x := b.Claims[i]
		rec, err := marshal("claims", i, claimToRecord(x))
		if err != nil {
			return nil, err
		}
		c.IDs = append(c.IDs, x.ID)
		c.Keys = append(c.Keys, x.Key)
		c.Classes = append(c.Classes, string(x.Class))
		c.Materialities = append(c.Materialities, string(x.Materiality))
		c.ICBound = append(c.ICBound, x.ICBound)
		c.Records = append(c.Records, rec)
	}
	for i, x := range b.Evidence {
		rec, err := marshal("evidence_items", i, evidenceRecord{
			EvidenceID: x.ID, SourceSpanID: x.SourceSpanID, SourceSystem: x.SourceSystem,
			UpstreamOriginID: x.UpstreamOriginID, RetrievalTimestamp: x.RetrievalTimestamp.UTC(),
			SourceGrade: string(x.SourceGrade), CreatedAt: x.CreatedAt.UTC(), UpdatedAt: x.UpdatedAt.UTC(),
		})
		if err != nil {
			return nil, err
		}
		out.Evidence.IDs = append(out.Evidence.IDs, x.ID)
		out.Evidence.Records = append(out.Evidence.Records, rec)
	}
	for i, x := range b.Spans {
		rec, err := marshal("spans", i, spanRecord{
			SpanID: x.ID, DocumentID: x.DocumentID, SpanType: string(x.Type),
			Locator:     locatorRecord{Page: x.Locator.Page, BBox: x.Locator.BBox, Sheet: x.Locator.Sheet, Cell: x.Locator.Cell},
			TextExcerpt: x.TextExcerpt, CreatedAt: x.CreatedAt.UTC(), UpdatedAt: x.UpdatedAt.UTC(),
		})
		if err != nil {
			return nil, err
		}
		s := &out.Spans
		s.IDs = append(s.IDs, x.ID)
		s.DocumentIDs = append(s.DocumentIDs, x.DocumentID)
		s.TextExcerpts = append(s.TextExcerpts, x.TextExcerpt)
		s.Records = append(s.Records, rec)
	}
	for i, x := range b.Sanads {
		r := sanadRecord{
			SanadID: x.ID, ClaimID: x.ClaimID, PrimaryEvidenceID: x.PrimaryEvidenceID,
			CorroboratingEvidenceIDs: x.CorroboratingEvidenceIDs, ExtractionConfidence: x.ExtractionConfidence,
			DhabtScore: x.DhabtScore, CreatedAt: x.CreatedAt.UTC(), UpdatedAt: x.UpdatedAt.UTC(),
		}
		if x.Chain != nil {
			r.TransmissionChain = make([]chainNodeRecord, len(x.Chain))
			for j, n := range x.Chain {
				r.TransmissionChain[j] = chainNodeRecord{NodeID: n.ID, NodeType: string(n.Type), InputRefs: n.InputRefs, OutputRef: n.OutputRef}
			}
		}
		rec, err := marshal("sanads", i, r)
		if err != nil {
			return nil, err
		}
		s := &out.Sanads
		s.IDs = append(s.IDs, x.ID)
		s.ClaimIDs = append(s.ClaimIDs, x.ClaimID)
		s.Records = append(s.Records, rec)
	}
	for i, x := range b.Documents {
		rec, err := marshal("documents", i, documentRecord{
			DocumentID: x.ID, ArtifactType: string(x.ArtifactType), VersionLabel: x.VersionLabel, IngestedAt: x.IngestedAt.UTC(),
		})
		if err != nil {
			return nil, err
		}
		out.Documents.IDs = append(out.Documents.IDs, x.ID)
		out.Documents.Records = append(out.Documents.Records, rec)
	}
	for i, x := range b.Calcs {
		rec, err := marshal("calcs", i, calcRecord{
			CalcID: x.ID, CalcSanadID: x.CalcSanadID, CalcType: string(x.Type), InputClaimIDs: x.InputClaimIDs,
			Inputs: x.Inputs, InputSpanIDs: x.InputSpanIDs, FormulaHash: x.FormulaHash, CodeVersion: x.CodeVersion,
			CreatedAt: x.CreatedAt.UTC(),
		})
		if err != nil {
			return nil, err
		}
		out.Calcs.IDs = append(out.Calcs.IDs, x.ID)
		out.Calcs.Records = append(out.Calcs.Records, rec)
	}
	if out.Enrichment, err = encodeEnrichment(b.Enrichment); err != nil {
		return nil, err
	}
	return out, nil
}

func claimToRecord(x debate.Claim) claimRecord {
	r := claimRecord{
		ClaimID: x.ID, ClaimKey: x.Key, ClaimClass: string(x.Class), ClaimText: x.Text, Predicate: x.Predicate,
		Materiality: string(x.Materiality), ICBound: x.ICBound, PrimarySpanID: x.PrimarySpanID,
		CreatedBy: x.CreatedBy, CreatedAt: x.CreatedAt.UTC(), UpdatedAt: x.UpdatedAt.UTC(),
	}
	if v := x.Value; v != nil {
		r.Value = &claimValueRecord{Value: v.Value, Unit: v.Unit, Currency: v.Currency, AsOf: v.AsOf}
		if w := v.TimeWindow; w != nil {
			r.Value.TimeWindow = &timeWindowRecord{Label: w.Label, StartDate: w.StartDate, EndDate: w.EndDate}
		}
	}
	return r
}

func unmarshal(kind string, data []byte, rec any) error {
	if err := json.Unmarshal(data, rec); err != nil {
		return fmt.Errorf("decode stored %s record: %w", kind, err)
	}
	return nil
}

// DecodeDeal returns the deal stored as data.
func DecodeDeal(data []byte) (debate.Deal, error) {
	var r dealRecord
	if err := unmarshal("deal", data, &r); err != nil {
		return debate.Deal{}, err
	}
	return debate.Deal{
		ID: r.DealID, ExternalRef: r.ExternalRef, CompanyName: r.CompanyName, Stage: r.Stage,
		Sector: r.Sector, Status: r.Status, MaterialityThreshold: r.MaterialityThreshold,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}, nil
}

// DecodeClaim returns the claim stored as data in deal dealID. Its DealID is
// always dealID, also when the imported claim left it empty.
func DecodeClaim(dealID string, data []byte) (debate.Claim, error) {
	var r claimRecord
	if err := unmarshal("claim", data, &r); err != nil {
		return debate.Claim{}, err
	}
	c := debate.Claim{
		ID: r.ClaimID, DealID: dealID, Key: r.ClaimKey, Class: debate.ClaimClass(r.ClaimClass),
		Text: r.ClaimText, Predicate: r.Predicate, Materiality: debate.Materiality(r.Materiality),
		ICBound: r.ICBound, PrimarySpanID: r.PrimarySpanID, CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if v := r.Value; v != nil {
		c.Value = &debate.ClaimValue{Value: v.Value, Unit: v.Unit, Currency: v.Currency, AsOf: v.AsOf}
		if w := v.TimeWindow; w != nil {
			c.Value.TimeWindow = &debate.TimeWindow{Label: w.Label, StartDate: w.StartDate, EndDate: w.EndDate}
		}
	}
	return c, nil
}

// DecodeEvidence returns the evidence item stored as data.
func DecodeEvidence(data []byte) (debate.EvidenceItem, error) {
	var r evidenceRecord
	if err := unmarshal("evidence item", data, &r); err != nil {
		return debate.EvidenceItem{}, err
	}
	return debate.EvidenceItem{
		ID: r.EvidenceID, SourceSpanID: r.SourceSpanID, SourceSystem: r.SourceSystem,
		UpstreamOriginID: r.UpstreamOriginID, RetrievalTimestamp: r.RetrievalTimestamp.UTC(),
		SourceGrade: debate.SourceGrade(r.SourceGrade), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}, nil
}

// DecodeSpan returns the span stored as data.
func DecodeSpan(data []byte) (debate.Span, error) {
	var r spanRecord
	if err := unmarshal("span", data, &r); err != nil {
		return debate.Span{}, err
	}
	return debate.Span{
		ID: r.SpanID, DocumentID: r.DocumentID, Type: debate.SpanType(r.SpanType),
		Locator:     debate.Locator{Page: r.Locator.Page, BBox: r.Locator.BBox, Sheet: r.Locator.Sheet, Cell: r.Locator.Cell},
		TextExcerpt: r.TextExcerpt, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}, nil
}

// DecodeSanad returns the sanad stored as data.
func DecodeSanad(data []byte) (debate.Sanad, error) {
	var r sanadRecord
	if err := unmarshal("sanad", data, &r); err != nil {
		return debate.Sanad{}, err
	}
	s := debate.Sanad{
		ID: r.SanadID, ClaimID: r.ClaimID, PrimaryEvidenceID: r.PrimaryEvidenceID,
		CorroboratingEvidenceIDs: r.CorroboratingEvidenceIDs, ExtractionConfidence: r.ExtractionConfidence,
		DhabtScore: r.DhabtScore, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if r.TransmissionChain != nil {
		s.Chain = make([]debate.ChainNode, len(r.TransmissionChain))
		for i, n := range r.TransmissionChain {
			s.Chain[i] = debate.ChainNode{ID: n.NodeID, Type: debate.ChainNodeType(n.NodeType), InputRefs: n.InputRefs, OutputRef: n.OutputRef}
		}
	}
	return s, nil
}

// DecodeDocument returns the document stored as data.
func DecodeDocument(data []byte) (debate.Document, error) {
	var r documentRecord
	if err := unmarshal("document", data, &r); err != nil {
		return debate.Document{}, err
	}
	return debate.Document{
		ID: r.DocumentID, ArtifactType: debate.ArtifactType(r.ArtifactType), VersionLabel: r.VersionLabel,
		IngestedAt: r.IngestedAt.UTC(),
	}, nil
}

// DecodeCalc returns the calc stored as data.
func DecodeCalc(data []byte) (debate.Calc, error) {
	var r calcRecord
	if err := unmarshal("calc", data, &r); err != nil {
		return debate.Calc{}, err
	}
	return debate.Calc{
		ID: r.CalcID, CalcSanadID: r.CalcSanadID, Type: debate.CalcType(r.CalcType), InputClaimIDs: r.InputClaimIDs,
		Inputs: r.Inputs, InputSpanIDs: r.InputSpanIDs, FormulaHash: r.FormulaHash, CodeVersion: r.CodeVersion,
		CreatedAt: r.CreatedAt.UTC(),
	}, nil
}

// Summary assembles a deal summary from a deals row.
func Summary(record []byte, contentHash string, importedAt time.Time, counts [6]int) (debate.DealSummary, error) {
	d, err := DecodeDeal(record)
	if err != nil {
		return debate.DealSummary{}, err
	}
	return debate.DealSummary{
		Deal: d, ContentHash: contentHash, ImportedAt: importedAt.UTC(),
		ClaimCount: counts[0], EvidenceCount: counts[1], SpanCount: counts[2],
		SanadCount: counts[3], DocumentCount: counts[4], CalcCount: counts[5],
	}, nil
}

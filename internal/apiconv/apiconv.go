// Package apiconv converts between the domain types of internal/debate and
// the debated.v1 protobuf messages. The server uses it on every request and
// response; debatectl uses it to send deal files. Enumerations are mapped by
// name: the domain's "FINANCIAL" is the API's CLAIM_CLASS_FINANCIAL.
package apiconv

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// decimal reads a decimal string of the API (canonical form only, see
// debate.ParseDecimal); a bad one is a violation of field and reads as 0.
func decimal(v *debate.Violations, field, s string) debate.Decimal {
	d, err := debate.ParseDecimal(s)
	if err != nil {
		v.Add(field, "must be a decimal string like \"3150000\" or \"-12.5\" (%v)", err)
	}
	return d
}

// decimalTexts is the wire form of a map of decimals; nil stays nil.
func decimalTexts(m map[string]debate.Decimal) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, d := range m {
		out[k] = d.String()
	}
	return out
}

// enumName strips prefix from a protobuf enum value name; the unspecified
// value maps to "".
func enumName(prefix, name string) string {
	s := strings.TrimPrefix(name, prefix)
	if s == "UNSPECIFIED" {
		return ""
	}
	return s
}

// enumValue maps a domain enumeration value to its protobuf number. An empty
// string is the unspecified value (0); an unknown one is reported on v.
func enumValue(v *debate.Violations, field, prefix string, values map[string]int32, s string) int32 {
	if s == "" {
		return 0
	}
	n, ok := values[prefix+s]
	if !ok || n == 0 {
		v.Add(field, "unknown value %q", s)
		return 0
	}
	return n
}

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func fromTS(t *timestamppb.Timestamp) time.Time {
	if t == nil || !t.IsValid() {
		return time.Time{}
	}
	return t.AsTime().UTC()
}

// TenantToProto converts a tenant.
func TenantToProto(t debate.Tenant) *debatedv1.Tenant {
	return &debatedv1.Tenant{TenantId: t.ID, Name: t.Name, CreateTime: ts(t.CreatedAt)}
}

// ScopesFromProto converts API key scopes. Unknown values are dropped: the
// request validation rejects them first.
func ScopesFromProto(in []debatedv1.Scope) []debate.Scope {
	out := make([]debate.Scope, 0, len(in))
	for _, s := range in {
		if name := enumName("SCOPE_", s.String()); name != "" {
			out = append(out, debate.Scope(strings.ToLower(name)))
		}
	}
	return out
}

// APIKeyToProto converts an API key's public description. The hash never
// leaves the server.
func APIKeyToProto(k debate.APIKey) *debatedv1.APIKey {
	out := &debatedv1.APIKey{
		KeyId:      k.ID,
		TenantId:   k.TenantID,
		Name:       k.Name,
		Prefix:     k.Prefix,
		CreateTime: ts(k.CreatedAt),
	}
	for _, s := range k.Scopes {
		if n, ok := debatedv1.Scope_value["SCOPE_"+strings.ToUpper(string(s))]; ok {
			out.Scopes = append(out.Scopes, debatedv1.Scope(n))
		}
	}
	if k.RevokedAt != nil {
		out.RevokeTime = ts(*k.RevokedAt)
	}
	return out
}

// DealToProto converts a deal.
func DealToProto(d debate.Deal) *debatedv1.Deal {
	return &debatedv1.Deal{
		DealId:               d.ID,
		ExternalRef:          d.ExternalRef,
		CompanyName:          d.CompanyName,
		Stage:                d.Stage,
		Sector:               d.Sector,
		Status:               d.Status,
		MaterialityThreshold: d.MaterialityThreshold.String(),
		CreateTime:           ts(d.CreatedAt),
		UpdateTime:           ts(d.UpdatedAt),
	}
}

func dealFromProto(v *debate.Violations, p string, d *debatedv1.Deal) debate.Deal {
	var threshold debate.Decimal
	if s := d.GetMaterialityThreshold(); s != "" {
		threshold = decimal(v, p+".materiality_threshold", s)
	}
	return debate.Deal{
		ID:                   d.GetDealId(),
		ExternalRef:          d.GetExternalRef(),
		CompanyName:          d.GetCompanyName(),
		Stage:                d.GetStage(),
		Sector:               d.GetSector(),
		Status:               d.GetStatus(),
		MaterialityThreshold: threshold,
		CreatedAt:            fromTS(d.GetCreateTime()),
		UpdatedAt:            fromTS(d.GetUpdateTime()),
	}
}

// DealSummaryToProto converts a stored deal's summary.
func DealSummaryToProto(s debate.DealSummary) *debatedv1.DealSummary {
	return &debatedv1.DealSummary{
		Deal:              DealToProto(s.Deal),
		ContentHash:       s.ContentHash,
		ImportTime:        ts(s.ImportedAt),
		ClaimCount:        int32(s.ClaimCount),
		EvidenceItemCount: int32(s.EvidenceCount),
		SpanCount:         int32(s.SpanCount),
		SanadCount:        int32(s.SanadCount),
		DocumentCount:     int32(s.DocumentCount),
		CalcCount:         int32(s.CalcCount),
	}
}

// ClaimToProto converts a claim. Its enumerations come from the store,
// where only validated values are written, so unknown values cannot occur;
// they would map to unspecified.
func ClaimToProto(c debate.Claim) *debatedv1.Claim {
	var v debate.Violations
	return claimToProto(&v, "claim", c)
}

func claimToProto(v *debate.Violations, p string, c debate.Claim) *debatedv1.Claim {
	out := &debatedv1.Claim{
		ClaimId:       c.ID,
		DealId:        c.DealID,
		ClaimKey:      c.Key,
		ClaimClass:    debatedv1.ClaimClass(enumValue(v, p+".claim_class", "CLAIM_CLASS_", debatedv1.ClaimClass_value, string(c.Class))),
		ClaimText:     c.Text,
		Predicate:     c.Predicate,
		Materiality:   debatedv1.Materiality(enumValue(v, p+".materiality", "MATERIALITY_", debatedv1.Materiality_value, string(c.Materiality))),
		IcBound:       c.ICBound,
		PrimarySpanId: c.PrimarySpanID,
		CreatedBy:     c.CreatedBy,
		CreateTime:    ts(c.CreatedAt),
		UpdateTime:    ts(c.UpdatedAt),
	}
	if c.Value != nil {
		out.Value = &debatedv1.ClaimValue{
			Value:    c.Value.Value.String(),
			Unit:     c.Value.Unit,
			Currency: c.Value.Currency,
			AsOf:     c.Value.AsOf,
		}
		if w := c.Value.TimeWindow; w != nil {
			out.Value.TimeWindow = &debatedv1.TimeWindow{Label: w.Label, StartDate: w.StartDate, EndDate: w.EndDate}
		}
	}
	return out
}

func claimFromProto(vs *debate.Violations, p string, c *debatedv1.Claim) debate.Claim {
	out := debate.Claim{
		ID:            c.GetClaimId(),
		DealID:        c.GetDealId(),
		Key:           c.GetClaimKey(),
		Class:         debate.ClaimClass(enumName("CLAIM_CLASS_", c.GetClaimClass().String())),
		Text:          c.GetClaimText(),
		Predicate:     c.GetPredicate(),
		Materiality:   debate.Materiality(enumName("MATERIALITY_", c.GetMateriality().String())),
		ICBound:       c.GetIcBound(),
		PrimarySpanID: c.GetPrimarySpanId(),
		CreatedBy:     c.GetCreatedBy(),
		CreatedAt:     fromTS(c.GetCreateTime()),
		UpdatedAt:     fromTS(c.GetUpdateTime()),
	}
	if v := c.GetValue(); v != nil {
		out.Value = &debate.ClaimValue{Value: decimal(vs, p+".value.value", v.GetValue()), Unit: v.GetUnit(), Currency: v.GetCurrency(), AsOf: v.GetAsOf()}
		if w := v.GetTimeWindow(); w != nil {
			out.Value.TimeWindow = &debate.TimeWindow{Label: w.GetLabel(), StartDate: w.GetStartDate(), EndDate: w.GetEndDate()}
		}
	}
	return out
}

// ClassFromProto converts a claim class filter; unspecified is "".
func ClassFromProto(c debatedv1.ClaimClass) debate.ClaimClass {
	return debate.ClaimClass(enumName("CLAIM_CLASS_", c.String()))
}

// MaterialityFromProto converts a materiality filter; unspecified is "".
func MaterialityFromProto(m debatedv1.Materiality) debate.Materiality {
	return debate.Materiality(enumName("MATERIALITY_", m.String()))
}

// EvidenceToProto converts a stored evidence item. A grade the API does
// not know (none is stored: imports validate it) is left unspecified.
func EvidenceToProto(e debate.EvidenceItem) *debatedv1.EvidenceItem {
	return &debatedv1.EvidenceItem{
		EvidenceId:       e.ID,
		SourceSpanId:     e.SourceSpanID,
		SourceSystem:     e.SourceSystem,
		UpstreamOriginId: e.UpstreamOriginID,
		RetrievalTime:    ts(e.RetrievalTimestamp),
		SourceGrade:      debatedv1.SourceGrade(debatedv1.SourceGrade_value["SOURCE_GRADE_"+string(e.SourceGrade)]),
		CreateTime:       ts(e.CreatedAt),
		UpdateTime:       ts(e.UpdatedAt),
	}
}

// BundleToProto converts a deal bundle into an import request. Returns a
// *debate.ValidationError naming every enumeration value the API does not
// know, with the field paths the server would use.
func BundleToProto(b *debate.DealBundle) (*debatedv1.ImportDealRequest, error) {
	var v debate.Violations
	req := &debatedv1.ImportDealRequest{Deal: DealToProto(b.Deal)}
	for i, c := range b.Claims {
		req.Claims = append(req.Claims, claimToProto(&v, fmt.Sprintf("claims[%d]", i), c))
	}
	for i, e := range b.Evidence {
		req.EvidenceItems = append(req.EvidenceItems, &debatedv1.EvidenceItem{
			EvidenceId:       e.ID,
			SourceSpanId:     e.SourceSpanID,
			SourceSystem:     e.SourceSystem,
			UpstreamOriginId: e.UpstreamOriginID,
			RetrievalTime:    ts(e.RetrievalTimestamp),
			SourceGrade:      debatedv1.SourceGrade(enumValue(&v, fmt.Sprintf("evidence_items[%d].source_grade", i), "SOURCE_GRADE_", debatedv1.SourceGrade_value, string(e.SourceGrade))),
			CreateTime:       ts(e.CreatedAt),
			UpdateTime:       ts(e.UpdatedAt),
		})
	}
	for i, s := range b.Spans {
		req.Spans = append(req.Spans, &debatedv1.Span{
			SpanId:     s.ID,
			DocumentId: s.DocumentID,
			SpanType:   debatedv1.SpanType(enumValue(&v, fmt.Sprintf("spans[%d].span_type", i), "SPAN_TYPE_", debatedv1.SpanType_value, string(s.Type))),
			Locator: &debatedv1.Locator{
				Page:  s.Locator.Page,
				Bbox:  s.Locator.BBox,
				Sheet: s.Locator.Sheet,
				Cell:  s.Locator.Cell,
			},
			TextExcerpt: s.TextExcerpt,
			CreateTime:  ts(s.CreatedAt),
			UpdateTime:  ts(s.UpdatedAt),
		})
	}
	for i, s := range b.Sanads {
		ps := &debatedv1.Sanad{
			SanadId:                  s.ID,
			ClaimId:                  s.ClaimID,
			PrimaryEvidenceId:        s.PrimaryEvidenceID,
			CorroboratingEvidenceIds: s.CorroboratingEvidenceIDs,
			ExtractionConfidence:     s.ExtractionConfidence,
			DhabtScore:               s.DhabtScore,
			CreateTime:               ts(s.CreatedAt),
			UpdateTime:               ts(s.UpdatedAt),
		}
		for j, n := range s.Chain {
			ps.TransmissionChain = append(ps.TransmissionChain, &debatedv1.ChainNode{
				NodeId:    n.ID,
				NodeType:  debatedv1.ChainNodeType(enumValue(&v, fmt.Sprintf("sanads[%d].transmission_chain[%d].node_type", i, j), "CHAIN_NODE_TYPE_", debatedv1.ChainNodeType_value, string(n.Type))),
				InputRefs: n.InputRefs,
				OutputRef: n.OutputRef,
			})
		}
		req.Sanads = append(req.Sanads, ps)
	}
	for i, d := range b.Documents {
		req.Documents = append(req.Documents, &debatedv1.Document{
			DocumentId:   d.ID,
			ArtifactType: debatedv1.ArtifactType(enumValue(&v, fmt.Sprintf("documents[%d].artifact_type", i), "ARTIFACT_TYPE_", debatedv1.ArtifactType_value, string(d.ArtifactType))),
			VersionLabel: d.VersionLabel,
			IngestTime:   ts(d.IngestedAt),
		})
	}
	for i, c := range b.Calcs {
		req.Calcs = append(req.Calcs, &debatedv1.Calc{
			CalcId:        c.ID,
			CalcSanadId:   c.CalcSanadID,
			CalcType:      debatedv1.CalcType(enumValue(&v, fmt.Sprintf("calcs[%d].calc_type", i), "CALC_TYPE_", debatedv1.CalcType_value, string(c.Type))),
			InputClaimIds: c.InputClaimIDs,
			Inputs:        decimalTexts(c.Inputs),
			InputSpanIds:  c.InputSpanIDs,
			FormulaHash:   c.FormulaHash,
			CodeVersion:   c.CodeVersion,
			CreateTime:    ts(c.CreatedAt),
		})
	}
	for i, r := range b.Enrichment {
		req.EnrichmentRecords = append(req.EnrichmentRecords, &debatedv1.EnrichmentRecord{
			RecordId:    r.ID,
			EntityType:  r.EntityType,
			EntityName:  r.EntityName,
			DataPoint:   r.DataPoint,
			Value:       r.Value,
			Unit:        r.Unit,
			Source:      r.Source,
			AsOf:        r.AsOf,
			SourceGrade: debatedv1.SourceGrade(enumValue(&v, fmt.Sprintf("enrichment_records[%d].source_grade", i), "SOURCE_GRADE_", debatedv1.SourceGrade_value, string(r.SourceGrade))),
		})
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return req, nil
}

// BundleFromProto converts an import request into a deal bundle. It checks
// only what the conversion needs, the decimal strings, and returns a
// *debate.ValidationError naming each bad one (with the bundle converted as
// far as it could be); call (*debate.DealBundle).Validate on the result for
// the rest.
func BundleFromProto(req *debatedv1.ImportDealRequest) (*debate.DealBundle, error) {
	var v debate.Violations
	b := &debate.DealBundle{Deal: dealFromProto(&v, "deal", req.GetDeal())}
	for i, c := range req.GetClaims() {
		b.Claims = append(b.Claims, claimFromProto(&v, fmt.Sprintf("claims[%d]", i), c))
	}
	for _, e := range req.GetEvidenceItems() {
		b.Evidence = append(b.Evidence, debate.EvidenceItem{
			ID:                 e.GetEvidenceId(),
			SourceSpanID:       e.GetSourceSpanId(),
			SourceSystem:       e.GetSourceSystem(),
			UpstreamOriginID:   e.GetUpstreamOriginId(),
			RetrievalTimestamp: fromTS(e.GetRetrievalTime()),
			SourceGrade:        debate.SourceGrade(enumName("SOURCE_GRADE_", e.GetSourceGrade().String())),
			CreatedAt:          fromTS(e.GetCreateTime()),
			UpdatedAt:          fromTS(e.GetUpdateTime()),
		})
	}
	for _, s := range req.GetSpans() {
		b.Spans = append(b.Spans, debate.Span{
			ID:         s.GetSpanId(),
			DocumentID: s.GetDocumentId(),
			Type:       debate.SpanType(enumName("SPAN_TYPE_", s.GetSpanType().String())),
			Locator: debate.Locator{
				Page:  s.GetLocator().GetPage(),
				BBox:  s.GetLocator().GetBbox(),
				Sheet: s.GetLocator().GetSheet(),
				Cell:  s.GetLocator().GetCell(),
			},
			TextExcerpt: s.GetTextExcerpt(),
			CreatedAt:   fromTS(s.GetCreateTime()),
			UpdatedAt:   fromTS(s.GetUpdateTime()),
		})
	}
	for _, s := range req.GetSanads() {
		ds := debate.Sanad{
			ID:                       s.GetSanadId(),
			ClaimID:                  s.GetClaimId(),
			PrimaryEvidenceID:        s.GetPrimaryEvidenceId(),
			CorroboratingEvidenceIDs: s.GetCorroboratingEvidenceIds(),
			ExtractionConfidence:     s.GetExtractionConfidence(),
			DhabtScore:               s.GetDhabtScore(),
			CreatedAt:                fromTS(s.GetCreateTime()),
			UpdatedAt:                fromTS(s.GetUpdateTime()),
		}
		for _, n := range s.GetTransmissionChain() {
			ds.Chain = append(ds.Chain, debate.ChainNode{
				ID:        n.GetNodeId(),
				Type:      debate.ChainNodeType(enumName("CHAIN_NODE_TYPE_", n.GetNodeType().String())),
				InputRefs: n.GetInputRefs(),
				OutputRef: n.GetOutputRef(),
			})
		}
		b.Sanads = append(b.Sanads, ds)
	}
	for _, d := range req.GetDocuments() {
		b.Documents = append(b.Documents, debate.Document{
			ID:           d.GetDocumentId(),
			ArtifactType: debate.ArtifactType(enumName("ARTIFACT_TYPE_", d.GetArtifactType().String())),
			VersionLabel: d.GetVersionLabel(),
			IngestedAt:   fromTS(d.GetIngestTime()),
		})
	}
	for i, c := range req.GetCalcs() {
		var inputs map[string]debate.Decimal
		if in := c.GetInputs(); in != nil {
			inputs = make(map[string]debate.Decimal, len(in))
			for _, k := range slices.Sorted(maps.Keys(in)) {
				inputs[k] = decimal(&v, fmt.Sprintf("calcs[%d].inputs[%q]", i, k), in[k])
			}
		}
		b.Calcs = append(b.Calcs, debate.Calc{
			ID:            c.GetCalcId(),
			CalcSanadID:   c.GetCalcSanadId(),
			Type:          debate.CalcType(enumName("CALC_TYPE_", c.GetCalcType().String())),
			InputClaimIDs: c.GetInputClaimIds(),
			Inputs:        inputs,
			InputSpanIDs:  c.GetInputSpanIds(),
			FormulaHash:   c.GetFormulaHash(),
			CodeVersion:   c.GetCodeVersion(),
			CreatedAt:     fromTS(c.GetCreateTime()),
		})
	}
	for _, r := range req.GetEnrichmentRecords() {
		b.Enrichment = append(b.Enrichment, debate.EnrichmentRecord{
			ID:          r.GetRecordId(),
			EntityType:  r.GetEntityType(),
			EntityName:  r.GetEntityName(),
			DataPoint:   r.GetDataPoint(),
			Value:       r.GetValue(),
			Unit:        r.GetUnit(),
			Source:      r.GetSource(),
			AsOf:        r.GetAsOf(),
			SourceGrade: debate.SourceGrade(enumName("SOURCE_GRADE_", r.GetSourceGrade().String())),
		})
	}
	return b, v.Err()
}

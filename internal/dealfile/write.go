package dealfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/debated/debated/internal/debate"
)

// Write stores b in dir in the layout Load reads, creating dir if needed and
// overwriting the files of the layout. calcs.json is written only when b has
// calcs, enrichment.json only when it has enrichment records. The output is deterministic (fields in a fixed order, arrays in b's
// order, times in RFC 3339 UTC) so authored test deals diff cleanly; Load of
// the result gives back b up to time zones and nil-versus-empty slices.
func Write(dir string, b *debate.DealBundle) error {
	files, err := Encode(b)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dealfile: %w", err)
	}
	for _, name := range append(requiredFiles, CalcsFile, EnrichmentFile) {
		data, ok := files[name]
		if !ok {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("dealfile: %w", err)
		}
	}
	return nil
}

// Encode renders b as the files of the layout, keyed by file name, the
// inverse of Parse. It fails only on a non-finite number.
func Encode(b *debate.DealBundle) (map[string][]byte, error) {
	out := make(map[string][]byte, 8)
	put := func(name string, v any) error {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("dealfile: encode %s: %w", name, err)
		}
		out[name] = append(data, '\n')
		return nil
	}
	d := b.Deal
	if err := put(DealFile, dealJSON{
		DealID: d.ID, ExternalRef: d.ExternalRef, CompanyName: d.CompanyName, Stage: d.Stage,
		Sector: d.Sector, Status: d.Status, MaterialityThreshold: number(d.MaterialityThreshold.String()),
		CreatedAt: timeString(d.CreatedAt), UpdatedAt: timeString(d.UpdatedAt),
	}); err != nil {
		return nil, err
	}

	claims := make([]claimJSON, 0, len(b.Claims))
	for _, c := range b.Claims {
		cj := claimJSON{
			ClaimID: c.ID, DealID: c.DealID, ClaimKey: c.Key, ClaimClass: string(c.Class),
			ClaimText: c.Text, Predicate: c.Predicate, Materiality: string(c.Materiality),
			ICBound: c.ICBound, PrimarySpanID: c.PrimarySpanID, CreatedBy: c.CreatedBy,
			CreatedAt: timeString(c.CreatedAt), UpdatedAt: timeString(c.UpdatedAt),
		}
		if v := c.Value; v != nil {
			cj.Value = &valueJSON{Value: number(v.Value.String()), Unit: v.Unit, Currency: v.Currency, AsOf: v.AsOf}
			if w := v.TimeWindow; w != nil {
				cj.Value.TimeWindow = &timeWindowJSON{Label: w.Label, StartDate: w.StartDate, EndDate: w.EndDate}
			}
		}
		claims = append(claims, cj)
	}
	if err := put(ClaimsFile, map[string]any{"claims": claims}); err != nil {
		return nil, err
	}

	evidence := make([]evidenceJSON, 0, len(b.Evidence))
	for _, e := range b.Evidence {
		evidence = append(evidence, evidenceJSON{
			EvidenceID: e.ID, SourceSpanID: e.SourceSpanID, SourceSystem: e.SourceSystem,
			UpstreamOriginID: e.UpstreamOriginID, RetrievalTimestamp: timeString(e.RetrievalTimestamp),
			SourceGrade: string(e.SourceGrade), CreatedAt: timeString(e.CreatedAt), UpdatedAt: timeString(e.UpdatedAt),
		})
	}
	if err := put(EvidenceFile, map[string]any{"evidence_items": evidence}); err != nil {
		return nil, err
	}

	spans := make([]spanJSON, 0, len(b.Spans))
	for _, s := range b.Spans {
		spans = append(spans, spanJSON{
			SpanID: s.ID, DocumentID: s.DocumentID, SpanType: string(s.Type),
			Locator:     locatorJSON{Page: s.Locator.Page, BBox: s.Locator.BBox, Sheet: s.Locator.Sheet, Cell: s.Locator.Cell},
			TextExcerpt: s.TextExcerpt, CreatedAt: timeString(s.CreatedAt), UpdatedAt: timeString(s.UpdatedAt),
		})
	}
	if err := put(SpansFile, map[string]any{"spans": spans}); err != nil {
		return nil, err
	}

	sanads := make([]sanadJSON, 0, len(b.Sanads))
	for _, s := range b.Sanads {
		chain := make([]json.RawMessage, 0, len(s.Chain))
		for _, n := range s.Chain {
			raw, err := json.Marshal(nodeJSON{NodeID: n.ID, NodeType: string(n.Type), InputRefs: nonNil(n.InputRefs), OutputRef: n.OutputRef})
			if err != nil {
				return nil, fmt.Errorf("dealfile: encode %s: %w", SanadsFile, err)
			}
			chain = append(chain, raw)
		}
		sanads = append(sanads, sanadJSON{
			SanadID: s.ID, ClaimID: s.ClaimID, PrimaryEvidenceID: s.PrimaryEvidenceID,
			CorroboratingEvidenceIDs: nonNil(s.CorroboratingEvidenceIDs),
			ExtractionConfidence:     s.ExtractionConfidence, DhabtScore: s.DhabtScore,
			TransmissionChain: chain, CreatedAt: timeString(s.CreatedAt), UpdatedAt: timeString(s.UpdatedAt),
		})
	}
	if err := put(SanadsFile, map[string]any{"sanads": sanads}); err != nil {
		return nil, err
	}

	docs := make([]documentJSON, 0, len(b.Documents))
	for _, d := range b.Documents {
		docs = append(docs, documentJSON{
			DocumentID: d.ID, ArtifactType: string(d.ArtifactType), VersionLabel: d.VersionLabel,
			IngestedAt: timeString(d.IngestedAt),
		})
	}
	if err := put(DocumentsFile, map[string]any{"documents": docs}); err != nil {
		return nil, err
	}

	if len(b.Calcs) > 0 {
		calcs := make([]calcJSON, 0, len(b.Calcs))
		for _, c := range b.Calcs {
			calcs = append(calcs, calcJSON{
				CalcSanadID: c.CalcSanadID, CalcID: c.ID, CalcType: string(c.Type),
				InputClaimIDs: nonNil(c.InputClaimIDs), Inputs: numbers(c.Inputs), InputSpanIDs: c.InputSpanIDs,
				FormulaHash: c.FormulaHash, CodeVersion: c.CodeVersion, CreatedAt: timeString(c.CreatedAt),
			})
		}
		if err := put(CalcsFile, map[string]any{"calc_sanads": calcs}); err != nil {
			return nil, err
		}
	}
	if len(b.Enrichment) > 0 {
		if err := put(EnrichmentFile, map[string]any{"enrichment_records": enrichmentToJSON(b.Enrichment)}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// timeString renders t in RFC 3339 UTC; the zero time is null.
func timeString(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// nonNil makes an absent list render as [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// numbers is the file form of a map of decimals; nil stays nil.
func numbers(m map[string]debate.Decimal) map[string]number {
	if m == nil {
		return nil
	}
	out := make(map[string]number, len(m))
	for k, d := range m {
		out[k] = number(d.String())
	}
	return out
}

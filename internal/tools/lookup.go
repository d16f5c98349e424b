package tools

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/debated/debated/internal/debate"
)

// Output shapes of lookup_claim and lookup_calc (seed 000 §4.1, §4.2). Ids
// in them are the deal's own: the registry's references, resolved or not.

// ClaimOut is a claim as lookup_claim (and lookup_calc's inputs) return it.
// ClaimGrade, ClaimVerdict and ClaimAction are empty when the deal has not
// been graded.
type ClaimOut struct {
	ClaimID       string    `json:"claim_id"`
	ClaimKey      string    `json:"claim_key"`
	ClaimText     string    `json:"claim_text"`
	ClaimClass    string    `json:"claim_class"`
	Predicate     string    `json:"predicate,omitempty"`
	ValueStruct   *ValueOut `json:"value_struct"`
	Materiality   string    `json:"materiality"`
	ICBound       bool      `json:"ic_bound"`
	PrimarySpanID string    `json:"primary_span_id,omitempty"`
	ClaimGrade    string    `json:"claim_grade,omitempty"`
	ClaimVerdict  string    `json:"claim_verdict,omitempty"`
	ClaimAction   string    `json:"claim_action,omitempty"`
}

// ValueOut is a claim's stated figure.
type ValueOut struct {
	Value      debate.Decimal `json:"value"` // a JSON number, every digit
	Unit       string         `json:"unit,omitempty"`
	Currency   string         `json:"currency,omitempty"`
	AsOf       string         `json:"as_of,omitempty"`
	TimeWindow *TimeWindowOut `json:"time_window,omitempty"`
}

// TimeWindowOut is the period a value speaks of.
type TimeWindowOut struct {
	Label     string `json:"label,omitempty"`
	StartDate string `json:"start_date,omitempty"`
	EndDate   string `json:"end_date,omitempty"`
}

// SanadOut is a claim's transmission chain with its graded corroboration
// and open defects.
type SanadOut struct {
	SanadID                  string         `json:"sanad_id"`
	PrimaryEvidenceID        string         `json:"primary_evidence_id"`
	CorroboratingEvidenceIDs []string       `json:"corroborating_evidence_ids"`
	ExtractionConfidence     float64        `json:"extraction_confidence"`
	DhabtScore               float64        `json:"dhabt_score"`
	Chain                    []ChainNodeOut `json:"chain"`
	Corroboration            string         `json:"corroboration,omitempty"`
	IndependentCount         int            `json:"independent_count"`
	Defects                  []DefectOut    `json:"defects"`
}

// ChainNodeOut is one step of a transmission chain.
type ChainNodeOut struct {
	NodeID    string   `json:"node_id"`
	NodeType  string   `json:"node_type"`
	InputRefs []string `json:"input_refs"`
	OutputRef string   `json:"output_ref"`
}

// DefectOut is a defect record: a graded one in lookup_claim's sanad, a
// flagged one as flag_defect's output.
type DefectOut struct {
	DefectID     string   `json:"defect_id,omitempty"`
	DealID       string   `json:"deal_id,omitempty"`
	ClaimID      string   `json:"claim_id"`
	ClaimKey     string   `json:"claim_key,omitempty"`
	Origin       string   `json:"origin"`
	DefectType   string   `json:"defect_type"`
	Severity     string   `json:"severity"`
	CureProtocol string   `json:"cure_protocol"`
	Status       string   `json:"status"`
	Description  string   `json:"description"`
	EvidenceRefs []string `json:"evidence_refs"`
	Actor        string   `json:"actor,omitempty"`
	CreatedAt    string   `json:"created_at,omitempty"`
}

// EvidenceOut is an evidence item with the span it quotes. Resolved is
// false for an id the registry cites but does not hold (a dangling
// reference: itself evidence of a broken chain).
type EvidenceOut struct {
	EvidenceID   string   `json:"evidence_id"`
	Role         string   `json:"role"` // PRIMARY or CORROBORATING
	Resolved     bool     `json:"resolved"`
	SourceGrade  string   `json:"source_grade,omitempty"`
	SourceSystem string   `json:"source_system,omitempty"`
	SourceSpan   *SpanOut `json:"source_span"`
}

// SpanOut is a span and where it sits.
type SpanOut struct {
	SpanID       string    `json:"span_id"`
	DocumentID   string    `json:"document_id,omitempty"`
	ArtifactType string    `json:"artifact_type,omitempty"`
	VersionLabel string    `json:"version_label,omitempty"`
	SpanType     string    `json:"span_type,omitempty"`
	Page         int32     `json:"page,omitempty"`
	BBox         []float64 `json:"bbox,omitempty"`
	Sheet        string    `json:"sheet,omitempty"`
	Cell         string    `json:"cell,omitempty"`
	TextExcerpt  string    `json:"text_excerpt"`
}

// CalcOut is a calc as lookup_calc returns it. Output is the recomputed
// result of the grading (null when ungraded or not computable).
type CalcOut struct {
	CalcID      string             `json:"calc_id"`
	CalcType    string             `json:"calc_type"`
	Output      map[string]float64 `json:"output"`
	CalcGrade   string             `json:"calc_grade,omitempty"`
	FormulaHash string             `json:"formula_hash"`
	CodeVersion string             `json:"code_version"`
}

// CalcSanadOut is a calc's provenance: the claims and cells it reads.
type CalcSanadOut struct {
	CalcSanadID   string         `json:"calc_sanad_id"`
	InputClaimIDs []string       `json:"input_claim_ids"`
	InputValues   []CalcInputOut `json:"input_values"`
}

// CalcInputOut is one named input of a calc, sorted by name.
type CalcInputOut struct {
	Name        string         `json:"name"`
	Value       debate.Decimal `json:"value"`
	SpanID      string         `json:"span_id,omitempty"`
	TextExcerpt string         `json:"text_excerpt,omitempty"`
}

// lookupClaim runs lookup_claim: {"claim": ClaimOut, "sanad": SanadOut or
// null (include_sanad), "evidence": [EvidenceOut] (include_evidence)}.
func (inv *Invoker) lookupClaim(_ context.Context, _ call, a *args) (any, *bad, error) {
	id := a.str("claim_id")
	withSanad := a.boolean("include_sanad", false)
	withEvidence := a.boolean("include_evidence", false)
	a.id("claim_id", id)
	x := inv.deal
	a.found("claim_id", x.hasClaim(id), "claim")
	if b := a.done(); b != nil {
		return nil, b, nil
	}
	c := x.claims[id]
	out := map[string]any{"claim": x.claimOut(c)}
	if withSanad {
		out["sanad"] = x.sanadOut(c)
	}
	if withEvidence {
		out["evidence"] = x.evidenceOf(c)
	}
	return out, nil, nil
}

// lookupCalc runs lookup_calc: {"calc": CalcOut, "inputs": [ClaimOut]
// (include_inputs, default true: the input claims that resolve),
// "calc_sanad": CalcSanadOut}.
func (inv *Invoker) lookupCalc(_ context.Context, _ call, a *args) (any, *bad, error) {
	id := a.str("calc_id")
	withInputs := a.boolean("include_inputs", true)
	a.id("calc_id", id)
	x := inv.deal
	a.found("calc_id", x.calcs[id] != nil, "calc")
	if b := a.done(); b != nil {
		return nil, b, nil
	}
	c := x.calcs[id]
	co := CalcOut{CalcID: c.ID, CalcType: string(c.Type), FormulaHash: c.FormulaHash, CodeVersion: c.CodeVersion}
	if g := x.calcGrades[c.ID]; g != nil {
		co.CalcGrade = string(g.Grade)
		if len(g.Output) > 0 {
			co.Output = maps.Clone(g.Output)
		}
	}
	cs := CalcSanadOut{CalcSanadID: c.CalcSanadID, InputClaimIDs: nonNil(c.InputClaimIDs), InputValues: []CalcInputOut{}}
	for _, name := range slices.Sorted(maps.Keys(c.Inputs)) {
		in := CalcInputOut{Name: name, Value: c.Inputs[name], SpanID: c.InputSpanIDs[name]}
		if s := x.spans[in.SpanID]; s != nil {
			in.TextExcerpt = s.TextExcerpt
		}
		cs.InputValues = append(cs.InputValues, in)
	}
	out := map[string]any{"calc": co, "calc_sanad": cs}
	if withInputs {
		inputs := []ClaimOut{}
		for _, cid := range dedupe(c.InputClaimIDs) {
			if cl := x.claims[cid]; cl != nil {
				inputs = append(inputs, x.claimOut(cl))
			}
		}
		out["inputs"] = inputs
	}
	return out, nil, nil
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return slices.Clone(xs)
}

func (x *dealIndex) claimOut(c *debate.Claim) ClaimOut {
	o := ClaimOut{
		ClaimID: c.ID, ClaimKey: c.Key, ClaimText: c.Text, ClaimClass: string(c.Class), Predicate: c.Predicate,
		Materiality: string(c.Materiality), ICBound: c.ICBound, PrimarySpanID: c.PrimarySpanID,
	}
	if v := c.Value; v != nil {
		o.ValueStruct = &ValueOut{Value: v.Value, Unit: v.Unit, Currency: v.Currency, AsOf: v.AsOf}
		if w := v.TimeWindow; w != nil {
			o.ValueStruct.TimeWindow = &TimeWindowOut{Label: w.Label, StartDate: w.StartDate, EndDate: w.EndDate}
		}
	}
	if g := x.grades[c.ID]; g != nil {
		o.ClaimGrade, o.ClaimVerdict, o.ClaimAction = string(g.Grade), string(g.Verdict), string(g.Action)
	}
	return o
}

// sanadOut returns the claim's sanad, or nil when it has none.
func (x *dealIndex) sanadOut(c *debate.Claim) *SanadOut {
	s := x.sanadOf[c.ID]
	if s == nil {
		return nil
	}
	o := &SanadOut{
		SanadID: s.ID, PrimaryEvidenceID: s.PrimaryEvidenceID, CorroboratingEvidenceIDs: nonNil(s.CorroboratingEvidenceIDs),
		ExtractionConfidence: s.ExtractionConfidence, DhabtScore: s.DhabtScore, Chain: []ChainNodeOut{}, Defects: []DefectOut{},
	}
	for _, n := range s.Chain {
		o.Chain = append(o.Chain, ChainNodeOut{NodeID: n.ID, NodeType: string(n.Type), InputRefs: nonNil(n.InputRefs), OutputRef: n.OutputRef})
	}
	if g := x.grades[c.ID]; g != nil {
		o.Corroboration, o.IndependentCount = string(g.Corroboration), g.IndependentCount
		for _, d := range g.Defects {
			o.Defects = append(o.Defects, defectOut(d))
		}
	}
	return o
}

func defectOut(d debate.Defect) DefectOut {
	o := DefectOut{
		DefectID: d.ID, DealID: d.DealID, ClaimID: d.ClaimID, ClaimKey: d.ClaimKey, Origin: string(d.Origin),
		DefectType: string(d.Type), Severity: string(d.Severity), CureProtocol: string(d.CureProtocol),
		Status: string(cmp.Or(d.Status, debate.DefectOpen)), Description: d.Description, EvidenceRefs: nonNil(d.EvidenceRefs), Actor: d.Actor,
	}
	if !d.CreatedAt.IsZero() {
		o.CreatedAt = d.CreatedAt.UTC().Format(timeFormat)
	}
	return o
}

// timeFormat is RFC 3339 with microseconds, as the ledger keeps times.
const timeFormat = "2006-01-02T15:04:05.000000Z07:00"

// evidenceOf returns the claim's evidence: its sanad's primary and
// corroborating items in that order, or without a sanad the items quoting
// its primary span, by id.
func (x *dealIndex) evidenceOf(c *debate.Claim) []EvidenceOut {
	out := []EvidenceOut{}
	if s := x.sanadOf[c.ID]; s != nil {
		seen := map[string]bool{}
		add := func(id, role string) {
			if id == "" || seen[id] {
				return
			}
			seen[id] = true
			out = append(out, x.evidenceOut(id, role))
		}
		add(s.PrimaryEvidenceID, "PRIMARY")
		for _, id := range s.CorroboratingEvidenceIDs {
			add(id, "CORROBORATING")
		}
		return out
	}
	if c.PrimarySpanID == "" {
		return out
	}
	for _, d := range x.docs {
		if d.evidence.SourceSpanID == c.PrimarySpanID {
			out = append(out, x.evidenceOut(d.evidence.ID, "PRIMARY"))
		}
	}
	return out
}

func (x *dealIndex) evidenceOut(id, role string) EvidenceOut {
	e := x.evidence[id]
	if e == nil {
		return EvidenceOut{EvidenceID: id, Role: role}
	}
	return EvidenceOut{
		EvidenceID: id, Role: role, Resolved: true, SourceGrade: string(e.SourceGrade), SourceSystem: e.SourceSystem,
		SourceSpan: x.spanOut(e.SourceSpanID),
	}
}

// spanOut returns the span, or nil when it does not resolve.
func (x *dealIndex) spanOut(id string) *SpanOut {
	s := x.spans[id]
	if s == nil {
		return nil
	}
	o := &SpanOut{
		SpanID: s.ID, DocumentID: s.DocumentID, SpanType: string(s.Type), Page: s.Locator.Page,
		BBox: slices.Clone(s.Locator.BBox), Sheet: s.Locator.Sheet, Cell: s.Locator.Cell, TextExcerpt: s.TextExcerpt,
	}
	if d := x.documents[s.DocumentID]; d != nil {
		o.ArtifactType, o.VersionLabel = string(d.ArtifactType), d.VersionLabel
	}
	return o
}

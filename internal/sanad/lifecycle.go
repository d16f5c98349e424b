package sanad

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/debated/debated/internal/debate"
)

// Regrade grades b with its stored defect records and compares the result
// with the previous grading (nil on the first). It returns the new grading,
// the records to store (every detected defect not recorded yet, as OPEN),
// and the events that record what changed, in a stable order:
// defect.created for each new detection, then claim.grade.changed and
// claim.verdict.changed for each claim whose grade or verdict differs from
// prev (from "" on the first grading). Pure: now only stamps the output.
func Regrade(b *debate.DealBundle, records []debate.Defect, prev *debate.DealGrading, now time.Time) (*debate.DealGrading, []debate.Defect, []debate.DealEvent) {
	next := GradeWithOptions(b, Options{Now: now, Records: records})
	known := make(map[string]bool, len(records))
	for _, r := range records {
		known[r.ID] = true
	}
	var upsert []debate.Defect
	var events []debate.DealEvent
	for _, d := range next.Defects {
		if d.Origin != debate.OriginDetected || known[d.ID] {
			continue
		}
		upsert = append(upsert, d)
		events = append(events, event(b.Deal.ID, debate.EventDefectCreated, debate.ActorGrader, now, defectPayload(d)))
	}
	before := map[string]debate.ClaimGrade{}
	if prev != nil {
		for _, c := range prev.Claims {
			before[c.ClaimID] = c
		}
	}
	for _, c := range next.Claims {
		old, had := before[c.ClaimID]
		if !had || old.Grade != c.Grade {
			events = append(events, event(b.Deal.ID, debate.EventClaimGradeChanged, debate.ActorGrader, now, map[string]any{
				"claim_id":    c.ClaimID,
				"claim_key":   c.ClaimKey,
				"from_grade":  string(old.Grade),
				"to_grade":    string(c.Grade),
				"explanation": stepsText(c.Steps),
			}))
		}
		if !had || old.Verdict != c.Verdict {
			events = append(events, event(b.Deal.ID, debate.EventClaimVerdictChanged, debate.ActorGrader, now, map[string]any{
				"claim_id":     c.ClaimID,
				"claim_key":    c.ClaimKey,
				"from_verdict": string(old.Verdict),
				"to_verdict":   string(c.Verdict),
				"action":       string(c.Action),
			}))
		}
	}
	return next, upsert, events
}

// FlagParams is a defect flagged by an agent or a person (seed 000 §4.4
// flag_defect).
type FlagParams struct {
	ID           string // new, unique id chosen by the caller
	ClaimID      string
	Type         debate.DefectType
	Severity     debate.Severity     // empty: the type's usual severity
	CureProtocol debate.CureProtocol // empty: the type's usual cure
	Description  string
	EvidenceRefs []string
	Actor        string
}

// Flag checks a flag against the deal and returns the OPEN record to store
// and its defect.flagged event. The claim must be the deal's, and every
// evidence reference must name an evidence item, span, calc, claim or
// document of the deal: a flag cites evidence, never free text (seed 000
// §6.2). Returns a *debate.ValidationError naming the bad fields.
func Flag(b *debate.DealBundle, p FlagParams, now time.Time) (debate.Defect, debate.DealEvent, error) {
	var v debate.Violations
	var claim *debate.Claim
	for i := range b.Claims {
		if b.Claims[i].ID == p.ClaimID {
			claim = &b.Claims[i]
		}
	}
	if claim == nil {
		v.Add("claim_id", "names no claim of deal %q", b.Deal.ID)
	}
	ids := map[string]bool{}
	for _, e := range b.Evidence {
		ids[e.ID] = true
	}
	for _, s := range b.Spans {
		ids[s.ID] = true
	}
	for _, c := range b.Calcs {
		ids[c.ID] = true
	}
	for _, c := range b.Claims {
		ids[c.ID] = true
	}
	for _, d := range b.Documents {
		ids[d.ID] = true
	}
	if len(p.EvidenceRefs) == 0 {
		v.Add("evidence_refs", "at least one evidence reference is required")
	}
	for i, r := range p.EvidenceRefs {
		if !ids[r] {
			v.Add(fmt.Sprintf("evidence_refs[%d]", i), "%q names nothing in deal %q", r, b.Deal.ID)
		}
	}
	d := debate.Defect{
		ID:           p.ID,
		DealID:       b.Deal.ID,
		Origin:       debate.OriginFlagged,
		ClaimID:      p.ClaimID,
		Type:         p.Type,
		Severity:     p.Severity,
		CureProtocol: p.CureProtocol,
		Status:       debate.DefectOpen,
		Description:  p.Description,
		EvidenceRefs: slices.Compact(slices.Sorted(slices.Values(p.EvidenceRefs))),
		Actor:        p.Actor,
		CreatedAt:    now,
		UpdatedAt:    now,
	}
	if d.Severity == "" {
		d.Severity = d.Type.DefaultSeverity()
	}
	if d.CureProtocol == "" {
		d.CureProtocol = d.Type.DefaultCure()
	}
	if claim != nil {
		d.ClaimKey = claim.Key
	}
	if err := d.Validate(); err != nil {
		var ve *debate.ValidationError
		if errors.As(err, &ve) {
			for _, fv := range ve.Violations {
				v.Add(fv.Field, "%s", fv.Description)
			}
		}
	}
	if err := v.Err(); err != nil {
		return debate.Defect{}, debate.DealEvent{}, err
	}
	return d, event(b.Deal.ID, debate.EventDefectFlagged, d.Actor, now, defectPayload(d)), nil
}

// Close moves an OPEN defect record to CURED or WAIVED with its actor and
// reason, and returns the updated record and its event. Returns
// debate.ErrNotFound if no record has the id, debate.ErrFailedPrecondition
// if the record is not OPEN, and a *debate.ValidationError for a bad status,
// actor or reason.
func Close(records []debate.Defect, defectID string, status debate.DefectStatus, actor, reason string, now time.Time) (debate.Defect, debate.DealEvent, error) {
	if status != debate.DefectCured && status != debate.DefectWaived {
		return debate.Defect{}, debate.DealEvent{}, &debate.ValidationError{Violations: []debate.FieldViolation{{Field: "status", Description: "must be CURED or WAIVED"}}}
	}
	for _, r := range records {
		if r.ID != defectID {
			continue
		}
		if !r.Open() {
			return debate.Defect{}, debate.DealEvent{}, fmt.Errorf("defect %s is already %s: %w", r.ID, r.Status, debate.ErrFailedPrecondition)
		}
		r.Status, r.Actor, r.Reason, r.UpdatedAt = status, actor, reason, now
		if err := r.Validate(); err != nil {
			return debate.Defect{}, debate.DealEvent{}, err
		}
		typ := debate.EventDefectCured
		if status == debate.DefectWaived {
			typ = debate.EventDefectWaived
		}
		p := defectPayload(r)
		p["reason"] = reason
		return r, event(r.DealID, typ, actor, now, p), nil
	}
	return debate.Defect{}, debate.DealEvent{}, fmt.Errorf("defect %s: %w", defectID, debate.ErrNotFound)
}

func event(dealID, typ, actor string, now time.Time, payload map[string]any) debate.DealEvent {
	return debate.DealEvent{DealID: dealID, Type: typ, Actor: actor, Payload: payload, CreatedAt: now}
}

// defectPayload holds the fields of seed 000's flag_defect audit record.
func defectPayload(d debate.Defect) map[string]any {
	refs := make([]any, 0, len(d.EvidenceRefs))
	for _, r := range d.EvidenceRefs {
		refs = append(refs, r)
	}
	return map[string]any{
		"defect_id":     d.ID,
		"claim_id":      d.ClaimID,
		"claim_key":     d.ClaimKey,
		"defect_type":   string(d.Type),
		"severity":      string(d.Severity),
		"cure_protocol": string(d.CureProtocol),
		"description":   d.Description,
		"evidence_refs": refs,
		"origin":        string(d.Origin),
		"status":        string(d.Status),
	}
}

func stepsText(steps []debate.Step) []any {
	out := make([]any, 0, len(steps))
	for _, s := range steps {
		out = append(out, s.String())
	}
	return out
}

package tools

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// Review priorities of request_human_review.
const (
	PriorityLow      = "LOW"
	PriorityNormal   = "NORMAL"
	PriorityHigh     = "HIGH"
	PriorityCritical = "CRITICAL"
)

// Priorities lists the review priorities, lowest first.
var Priorities = []string{PriorityLow, PriorityNormal, PriorityHigh, PriorityCritical}

// DefaultRequiredRole is the reviewer role of a request that names none
// (seed 000 §4.5).
const DefaultRequiredRole = "ANALYST"

// ReviewRequest is a human review request_human_review asked for; the
// protocol turns it into a human gate (debate.HumanGate).
type ReviewRequest struct {
	ID       string
	DealID   string
	DebateID string
	Round    int
	// ClaimIDs are the claims to review, distinct, in the order asked.
	ClaimIDs []string
	Reason   string
	// Priority is LOW, NORMAL, HIGH or CRITICAL.
	Priority string
	// RequiredRole is the least role that may approve, e.g. ANALYST or
	// PARTNER: 1 to 64 upper-case letters, digits and underscores.
	RequiredRole string
	// RequestedBy is the role that asked (the arbiter).
	RequestedBy string
	CreatedAt   time.Time
}

// ReviewOut is request_human_review's output.
type ReviewOut struct {
	ReviewID     string   `json:"review_id"`
	Status       string   `json:"status"` // PENDING: the gate opens when the node commits
	DealID       string   `json:"deal_id"`
	DebateID     string   `json:"debate_id,omitempty"`
	RoundNumber  int      `json:"round_number"`
	ClaimIDs     []string `json:"claim_ids"`
	Reason       string   `json:"reason"`
	Priority     string   `json:"priority"`
	RequiredRole string   `json:"required_role"`
	RequestedBy  string   `json:"requested_by"`
	CreatedAt    string   `json:"created_at"`
}

// flagDefect runs flag_defect (seed 000 §4.4, §6.2). claim_id, defect_type,
// description and evidence_refs are required; severity and cure_protocol
// default to the type's (debate.DefectType.DefaultSeverity, DefaultCure).
// The requirements (RuleRequirement) are at least Limits' evidence
// references and description length; every reference must name an evidence
// item, span, calc, calc sanad, claim, document, sanad or chain node of the
// deal (RuleNotFound). The output is the created defect (DefectOut), OPEN,
// origin FLAGGED, actor the role; the record is kept for Flagged.
func (inv *Invoker) flagDefect(_ context.Context, c call, a *args) (any, *bad, error) {
	claimID := a.str("claim_id")
	typ := debate.DefectType(a.str("defect_type"))
	sev := debate.Severity(a.str("severity"))
	cure := debate.CureProtocol(a.str("cure_protocol"))
	desc := a.str("description")
	refs := a.strs("evidence_refs")
	a.id("claim_id", claimID)
	enum(a, "defect_type", typ, debate.DefectTypes, true)
	enum(a, "severity", sev, debate.Severities, false)
	enum(a, "cure_protocol", cure, debate.CureProtocols, false)
	a.text("description", desc, false, debate.MaxTextLen) // required below (RuleRequirement)
	a.ids("evidence_refs", refs, 0, debate.MaxRefs)
	// Seed 000 §6.2: flag_defect_requires.
	lim := inv.cfg.Limits // with NewInvoker's defaults
	if n := len(dedupe(refs)); n < lim.FlagDefectMinEvidenceRefs {
		a.req.Add("evidence_refs", "flag_defect needs at least %d evidence reference(s), got %d", lim.FlagDefectMinEvidenceRefs, n)
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(desc)); n < lim.FlagDefectMinDescription {
		a.req.Add("description", "flag_defect needs a description of at least %d characters, got %d", lim.FlagDefectMinDescription, n)
	}
	x := inv.deal
	a.found("claim_id", x.hasClaim(claimID), "claim")
	for i, r := range refs {
		a.found(fmt.Sprintf("evidence_refs[%d]", i), x.refs[r], "evidence, span, calc, claim, document or sanad")
	}
	if b := a.done(); b != nil {
		return nil, b, nil
	}

	refs = dedupe(refs)
	slices.Sort(refs)
	d := debate.Defect{
		DealID:       x.dealID,
		Origin:       debate.OriginFlagged,
		ClaimID:      claimID,
		ClaimKey:     x.claims[claimID].Key,
		Type:         typ,
		Severity:     cmp.Or(sev, typ.DefaultSeverity()),
		CureProtocol: cmp.Or(cure, typ.DefaultCure()),
		Status:       debate.DefectOpen,
		Description:  strings.TrimSpace(desc),
		EvidenceRefs: refs,
		Actor:        c.role,
		CreatedAt:    c.at,
		UpdatedAt:    c.at,
	}
	if err := d.Validate(); err != nil {
		// The checks above cover Validate's; keep it as the last word.
		a.v.Add("args", "the defect is not valid: %v", err)
		return nil, a.done(), nil
	}
	inv.mu.Lock()
	d.ID = inv.id(c)
	inv.flagged = append(inv.flagged, entry[debate.Defect]{c.role, c.seq, d})
	inv.mu.Unlock()
	return defectOut(d), nil, nil
}

// requestHumanReview runs request_human_review (seed 000 §4.5): claim_ids (1
// to 256 claims of the deal) and reason are required; priority defaults to
// NORMAL, required_role to ANALYST. The output is ReviewOut; the request is
// kept for ReviewRequests.
func (inv *Invoker) requestHumanReview(_ context.Context, c call, a *args) (any, *bad, error) {
	ids := a.strs("claim_ids")
	reason := a.str("reason")
	priority := a.str("priority")
	role := a.str("required_role")
	a.ids("claim_ids", ids, 1, debate.MaxRefs)
	a.text("reason", reason, true, debate.MaxTextLen)
	enum(a, "priority", priority, Priorities, false)
	if role != "" && !validRole(role) {
		a.v.Add("required_role", "must be 1 to %d upper-case letters, digits and underscores", maxRoleLen)
	}
	x := inv.deal
	for i, id := range ids {
		a.found(fmt.Sprintf("claim_ids[%d]", i), x.hasClaim(id), "claim")
	}
	if b := a.done(); b != nil {
		return nil, b, nil
	}
	r := ReviewRequest{
		DealID: x.dealID, DebateID: inv.cfg.DebateID, Round: inv.cfg.Round, ClaimIDs: dedupe(ids),
		Reason: strings.TrimSpace(reason), Priority: cmp.Or(priority, PriorityNormal),
		RequiredRole: cmp.Or(role, DefaultRequiredRole), RequestedBy: c.role, CreatedAt: c.at,
	}
	inv.mu.Lock()
	r.ID = inv.id(c)
	inv.reviews = append(inv.reviews, entry[ReviewRequest]{c.role, c.seq, r})
	inv.mu.Unlock()
	return ReviewOut{
		ReviewID: r.ID, Status: "PENDING", DealID: r.DealID, DebateID: r.DebateID, RoundNumber: r.Round,
		ClaimIDs: r.ClaimIDs, Reason: r.Reason, Priority: r.Priority, RequiredRole: r.RequiredRole,
		RequestedBy: r.RequestedBy, CreatedAt: r.CreatedAt.Format(timeFormat),
	}, nil, nil
}

// validRole reports a required_role of 1 to maxRoleLen upper-case ASCII
// letters, digits and underscores.
func validRole(s string) bool {
	return s != "" && len(s) <= maxRoleLen && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}

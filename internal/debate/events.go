package debate

import (
	"context"
	"time"
)

// Deal event types: the audit log of a deal's registry (seed 000's audit
// taxonomy).
const (
	EventClaimGradeChanged   = "claim.grade.changed"
	EventClaimVerdictChanged = "claim.verdict.changed"
	EventDefectCreated       = "defect.created"
	EventDefectFlagged       = "defect.flagged"
	EventDefectCured         = "defect.cured"
	EventDefectWaived        = "defect.waived"
)

// ActorGrader is the actor of everything the grader records.
const ActorGrader = "grader"

// DealEvent is an entry of a deal's append-only audit log. The store
// assigns Seq (1, 2, 3, ... per deal) when it appends.
type DealEvent struct {
	Seq       int64
	DealID    string
	Type      string
	Actor     string
	Payload   map[string]any // JSON-encodable
	CreatedAt time.Time
	// The chain (docs/ledger.md, "Deal audit logs"): PrevHash is the hash
	// of the deal's previous chained event (the genesis hash for the
	// first), Hash the event's own, KeyID and Signature its signature. All
	// four are empty on a legacy event, recorded before the log was
	// chained.
	PrevHash  string
	Hash      string
	KeyID     string
	Signature string
}

// DealSealer chains and signs a deal's audit events. The stores call it
// inside the transaction that appends the events, holding the deal's lock.
type DealSealer interface {
	// SealDeal returns events completed as the deal's next events after the
	// chained event with hash prevHash ("" when the deal has none yet):
	// PrevHash, Hash, KeyID and Signature set. Each event's Seq, DealID and
	// CreatedAt (UTC, to the microsecond) must already be set, and its
	// Payload be what a read will return. Returns an error for an event it
	// cannot seal (an unknown type, an unusable field).
	SealDeal(tenantID, prevHash string, events []DealEvent) ([]DealEvent, error)
}

// GradeFunc computes a deal's grading inside the store's transaction. It
// receives the registry, the deal's stored defect records (detected and
// flagged, any status) and the previous grading (nil on the first). It
// returns the new grading, the defect records to upsert (by id), and the
// events to append, in order. An error aborts the transaction: nothing is
// written.
type GradeFunc func(b *DealBundle, records []Defect, prev *DealGrading) (next *DealGrading, upsert []Defect, events []DealEvent, err error)

// GradingStore keeps gradings, defect records and deal events. Every method
// is scoped to the tenant of the context and returns ErrNoTenant without
// one; another tenant's deal is ErrNotFound.
type GradingStore interface {
	// DealGrade runs grade in one transaction holding the deal against
	// concurrent gradings: it loads the bundle, the defect records and the
	// previous grading, calls grade, and stores the new grading, the
	// upserted records and the events. Returns the stored grading and the
	// appended events with their seq. Returns ErrNotFound if the deal is
	// unknown, and grade's error unchanged.
	DealGrade(ctx context.Context, dealID string, at time.Time, grade GradeFunc) (*DealGrading, []DealEvent, error)
	// GradingGet returns the last stored grading and when it was made.
	// Returns ErrNotFound if the deal is unknown or was never graded.
	GradingGet(ctx context.Context, dealID string) (*DealGrading, time.Time, error)
	// DefectList returns the deal's defect records ordered by id. Returns
	// ErrNotFound if the deal is unknown.
	DefectList(ctx context.Context, dealID string) ([]Defect, error)
	// DealEventList returns the deal's events with seq > afterSeq in seq
	// order, at most limit (≤0 means 100, capped at 1000). Returns
	// ErrNotFound if the deal is unknown.
	DealEventList(ctx context.Context, dealID string, afterSeq int64, limit int) ([]DealEvent, error)
}

package debate

import (
	"context"
	"encoding/json"
	"time"
)

// DebateStatus is where a debate is in its life.
type DebateStatus string

// Debate statuses. queued → running → (awaiting_review ↔ running) →
// completed | needs_review | failed | aborted.
const (
	DebateQueued         DebateStatus = "queued"
	DebateRunning        DebateStatus = "running"
	DebateAwaitingReview DebateStatus = "awaiting_review" // a human gate is open; no worker holds it
	DebateNeedsReview    DebateStatus = "needs_review"    // a node failed its retries (seed 004)
	DebateCompleted      DebateStatus = "completed"
	DebateFailed         DebateStatus = "failed" // an integrity violation (seed 003)
	DebateAborted        DebateStatus = "aborted"
)

// DebateStatuses lists every status in declared order.
var DebateStatuses = []DebateStatus{DebateQueued, DebateRunning, DebateAwaitingReview, DebateNeedsReview, DebateCompleted, DebateFailed, DebateAborted}

// Terminal reports whether no engine will move the debate any further:
// completed, needs_review, failed or aborted.
func (s DebateStatus) Terminal() bool {
	switch s {
	case DebateCompleted, DebateNeedsReview, DebateFailed, DebateAborted:
		return true
	}
	return false
}

// Runnable reports whether a worker should carry the debate on.
func (s DebateStatus) Runnable() bool { return s == DebateQueued || s == DebateRunning }

// Debate is one run of a protocol over a deal.
type Debate struct {
	ID       string
	TenantID string
	DealID   string
	Protocol string
	// Options are the protocol's options as a canonical JSON object, e.g.
	// {"max_rounds":3}.
	Options json.RawMessage
	// IdempotencyKey, when set, makes CreateDebate idempotent: the same key
	// and request (RequestHash) return the same debate.
	IdempotencyKey string
	RequestHash    string
	Status         DebateStatus
	StopReason     string
	Error          string
	// Round is the current round (1-based; 0 before the first). Nodes after
	// the last round (a finaliser) run in the next one, so an ended debate's
	// round can be one more than the rounds it completed.
	Round int
	// RoundsCompleted counts the debate's round.completed events.
	RoundsCompleted int
	// NextNode is the node the engine runs next ("" when terminal).
	NextNode string
	// Attempt counts the failed attempts of NextNode so far.
	Attempt int
	// LastSeq and HeadHash are the ledger's head: the fence every commit
	// checks.
	LastSeq   int64
	HeadHash  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Event is one entry of a debate's ledger: append-only, hash-chained and
// signed (package ledger seals and verifies it). Its JSON form is the
// export format.
type Event struct {
	DebateID  string          `json:"debate_id"`
	TenantID  string          `json:"tenant_id"`
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	Actor     string          `json:"actor"`
	Node      string          `json:"node"`
	Round     int             `json:"round"`
	Payload   json.RawMessage `json:"payload"`
	Time      time.Time       `json:"time"`
	PrevHash  string          `json:"prev_hash"`
	Hash      string          `json:"hash"`
	KeyID     string          `json:"key_id"`
	Signature string          `json:"signature"`
}

// Artifact is one named JSON document of a debate's deliverables.
type Artifact struct {
	Name    string
	Content json.RawMessage
}

// Checkpoint is what a debate needs to resume: the compact protocol state
// after a committed node and the node to run next. The transcript lives in
// the ledger, not here.
type Checkpoint struct {
	DebateID string
	// Step counts committed node steps, 1, 2, 3, ...
	Step int
	// Seq is the ledger seq of the step's last event.
	Seq        int64
	Node       string // the node this step ran
	NextNode   string // "" when the debate ended
	Round      int
	State      json.RawMessage
	InputHash  string // SHA-256 of the state the node started from
	OutputHash string // SHA-256 of State
	CreatedAt  time.Time
}

// GateStatus is where a human gate is.
type GateStatus string

// Human gate statuses.
const (
	GateOpen     GateStatus = "open"
	GateApproved GateStatus = "approved"
	GateRejected GateStatus = "rejected"
	// GateCancelled closes the open gate of a debate that was aborted: no
	// one resolved it, and no one can any more.
	GateCancelled GateStatus = "cancelled"
)

// HumanGate is a pause that a person must resolve (seed 000 §4.5).
type HumanGate struct {
	ID         string
	DebateID   string
	Node       string
	Reason     string
	ClaimIDs   []string
	Status     GateStatus
	Resolution string // the resolver's reason
	ResolvedBy string
	CreatedAt  time.Time
	ResolvedAt *time.Time
}

// StepCommit is everything one engine step writes, atomically: its sealed
// events, the checkpoint, the debate's new status and head, and a human gate
// it opens or resolves.
type StepCommit struct {
	DebateID string
	// ExpectSeq and ExpectHash fence the commit: it applies only if the
	// debate's head is still exactly this (two workers can never both
	// commit a step).
	ExpectSeq  int64
	ExpectHash string
	// Events are sealed, with seqs ExpectSeq+1, ExpectSeq+2, ...
	Events []Event
	// Checkpoint is stored when non-nil.
	Checkpoint *Checkpoint
	Status     DebateStatus
	StopReason string
	Error      string
	Round      int
	NextNode   string
	Attempt    int
	// OpenGate is stored as a new open gate; ResolveGate updates one.
	OpenGate    *HumanGate
	ResolveGate *HumanGate
	// Enqueue schedules the debate's job in the same transaction (after a
	// gate is resolved, or when a worker hands the debate back).
	Enqueue bool
	At      time.Time
}

// EventRoundCompleted is the type of the event the engine appends when a
// round ends; a debate's RoundsCompleted counts them.
const EventRoundCompleted = "round.completed"

// RoundsCompleted is how many rounds the commit's events complete.
func (c *StepCommit) RoundsCompleted() int {
	n := 0
	for i := range c.Events {
		if c.Events[i].Type == EventRoundCompleted {
			n++
		}
	}
	return n
}

// DebateFilter narrows DebateList. Zero values do not filter.
type DebateFilter struct {
	Status DebateStatus
	DealID string
}

// DebateStore keeps debates, their ledgers, checkpoints and human gates.
// Every method is scoped to the tenant of the context (ErrNoTenant
// without one; another tenant's debate is ErrNotFound).
type DebateStore interface {
	// DebateCreate stores a new queued debate and schedules its job in the
	// same transaction. With an IdempotencyKey already used: the same
	// RequestHash returns the stored debate with created false; another
	// returns ErrAlreadyExists. Returns ErrNotFound if the deal is unknown.
	DebateCreate(ctx context.Context, d Debate) (Debate, bool, error)
	// DebateGet returns a debate. Returns ErrNotFound if unknown.
	DebateGet(ctx context.Context, id string) (Debate, error)
	// DebateList returns debates ordered by creation (newest first) then
	// id, after page.After, and the next cursor.
	DebateList(ctx context.Context, filter DebateFilter, page Page) ([]Debate, string, error)
	// StepCommit applies c in one transaction. Returns ErrConflict if the
	// debate's head is no longer (ExpectSeq, ExpectHash): nothing is
	// written. Returns ErrNotFound if the debate is unknown.
	StepCommit(ctx context.Context, c StepCommit) error
	// CheckpointLatest returns the debate's last checkpoint. Returns
	// ErrNotFound if it has none.
	CheckpointLatest(ctx context.Context, debateID string) (Checkpoint, error)
	// EventList returns the debate's events with seq > afterSeq in seq
	// order, at most limit (≤0 means 500, capped at 5000).
	EventList(ctx context.Context, debateID string, afterSeq int64, limit int) ([]Event, error)
	// GateGet returns a human gate of the debate. Returns ErrNotFound if
	// unknown.
	GateGet(ctx context.Context, debateID, gateID string) (HumanGate, error)
	// GateList returns the debate's gates ordered by creation.
	GateList(ctx context.Context, debateID string) ([]HumanGate, error)
}

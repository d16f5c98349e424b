package stratmaster

import (
	"cmp"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Seed 004's task statuses and the debate statuses they map onto.
const (
	StatusPending     = "pending"      // debate queued
	StatusInProgress  = "in_progress"  // debate running
	StatusNeedsReview = "needs_review" // debate needs_review
	StatusComplete    = "complete"     // debate completed
	StatusFailed      = "failed"       // debate failed
)

var debateStatuses = map[string]debate.DebateStatus{StatusPending: debate.DebateQueued, StatusInProgress: debate.DebateRunning,
	StatusNeedsReview: debate.DebateNeedsReview, StatusFailed: debate.DebateFailed}

// debateStatus maps a seed status onto the debate status (completed for
// any other).
func debateStatus(seed string) debate.DebateStatus {
	return cmp.Or(debateStatuses[seed], debate.DebateCompleted)
}

// Directives are the critic's actionable feedback, accumulated over the
// revisions: what the next pass of research, synthesis and strategy must
// do differently. Every backend reads them in its DATA.
type Directives struct {
	// LookupClaims are claims whose evidence the researcher must look up.
	LookupClaims []string `json:"lookup_claims,omitempty"`
	// Broaden asks the researcher to look up every claim of the deal.
	Broaden bool `json:"broaden,omitempty"`
	// MinGrade is the worst source grade evidence may have.
	MinGrade debate.SourceGrade `json:"min_grade,omitempty"`
	// MinEvidence is the fewest evidence items a presented hypothesis
	// cites; the synthesiser sets aside the others.
	MinEvidence int `json:"min_evidence,omitempty"`
	// ConfidenceCap caps the confidence of a hypothesis without grade A
	// evidence (0: no cap).
	ConfidenceCap float64 `json:"confidence_cap,omitempty"`
	// RequireCounter asks for at least one counter-hypothesis.
	RequireCounter bool `json:"require_counter,omitempty"`
	// AvoidTerms may not appear in presented text.
	AvoidTerms []string `json:"avoid_terms,omitempty"`
	// Feedback is the critic's last feedback, as it gave it.
	Feedback []Feedback `json:"feedback,omitempty"`
}

// SetAside is a hypothesis the synthesiser did not present, and why.
type SetAside struct {
	Statement string   `json:"statement"`
	ClaimIDs  []string `json:"claim_ids,omitempty"`
	Reason    string   `json:"reason"`
}

// Challenge is the adversary's challenge to a hypothesis.
type Challenge struct {
	HypothesisID string   `json:"hypothesis_id"`
	Argument     string   `json:"argument"`
	EvidenceIDs  []string `json:"evidence_ids,omitempty"`
}

// Decisions of the strategist on a challenge.
const (
	DecisionDefend  = "defend"
	DecisionConcede = "concede"
)

// Response is the strategist's answer to a challenge.
type Response struct {
	HypothesisID string `json:"hypothesis_id"`
	Decision     string `json:"decision"`
	Argument     string `json:"argument"`
}

// DebateTurn is one turn of the strategist/adversary debate (seed 004's
// debate_log).
type DebateTurn struct {
	Pass         int    `json:"pass"`
	Speaker      string `json:"speaker"`
	HypothesisID string `json:"hypothesis_id"`
	Kind         string `json:"kind"` // challenge, defend or concede
	Text         string `json:"text"`
}

// PlanItem is a recommendation or a risk of the plan.
type PlanItem struct {
	Text          string   `json:"text"`
	HypothesisIDs []string `json:"hypothesis_ids"`
	Priority      string   `json:"priority,omitempty"`
}

// Plan is the strategist's plan (seed 004's Plan).
type Plan struct {
	Summary         string     `json:"summary"`
	Recommendations []PlanItem `json:"recommendations"`
	Risks           []PlanItem `json:"risks"`
}

// reviewSummary is what the state keeps of a review: the review itself is
// in the ledger (constitution.reviewed) and its artifact.
type reviewSummary struct {
	Pass   int      `json:"pass"`
	Passed bool     `json:"passed"`
	Failed []string `json:"failed,omitempty"` // principle ids and metric names
}

// state is the protocol state. It stays bounded: evidence is bounded by
// the deal, hypotheses by the synthesiser's gate, passes by max_revisions.
type state struct {
	Pass          int             `json:"pass"`
	Revisions     int             `json:"revisions"`
	Status        string          `json:"status"`
	Evidence      []Evidence      `json:"evidence,omitempty"`
	Hypotheses    []Hypothesis    `json:"hypotheses,omitempty"`
	SetAside      []SetAside      `json:"set_aside,omitempty"`
	DebateReasons []string        `json:"debate_reasons,omitempty"`
	Challenges    []Challenge     `json:"challenges,omitempty"`
	DebateLog     []DebateTurn    `json:"debate_log,omitempty"`
	Plan          *Plan           `json:"plan,omitempty"`
	Directives    Directives      `json:"directives"`
	Reviews       []reviewSummary `json:"reviews,omitempty"`
	StopReason    string          `json:"stop_reason,omitempty"`
	StopWhy       string          `json:"stop_why,omitempty"`
}

// evidenceByID indexes evidence by id.
func evidenceByID(evs []Evidence) map[string]Evidence {
	m := make(map[string]Evidence, len(evs))
	for _, e := range evs {
		m[e.EvidenceID] = e
	}
	return m
}

// addEvidence adds items not collected yet (the first provenance wins) and
// returns the ids of the new ones; the evidence stays sorted by id.
func (s *state) addEvidence(items []Evidence) []string {
	have := evidenceByID(s.Evidence)
	var added []string
	for _, e := range items {
		if _, ok := have[e.EvidenceID]; ok {
			continue
		}
		have[e.EvidenceID] = e
		s.Evidence = append(s.Evidence, e)
		added = append(added, e.EvidenceID)
	}
	slices.SortFunc(s.Evidence, func(a, b Evidence) int { return strings.Compare(a.EvidenceID, b.EvidenceID) })
	return added
}

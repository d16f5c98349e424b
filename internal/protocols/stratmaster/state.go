package stratmaster

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
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

// Thresholds of the strategist/adversary debate (docs/decisions.md): the
// synthesiser's hypotheses are debated when one of them is below
// DebateConfidenceThreshold or the evidence conflicts (see
// debateReasons).
const (
	// DebateConfidenceThreshold: a presented hypothesis with a confidence
	// below it makes the pass debate.
	DebateConfidenceThreshold = 0.6
	// ConflictGradeSpread: a hypothesis whose cited evidence grades differ
	// by at least this many ranks (A and C, B and D) is conflicting
	// evidence.
	ConflictGradeSpread = 2
	// ConcedePenalty is what a hypothesis loses in confidence when the
	// strategist concedes the adversary's challenge to it.
	ConcedePenalty = 0.1
)

// Stances of a hypothesis.
const (
	StanceSupports = "supports"
	StanceCounter  = "counter"
)

// Evidence is an evidence item the researcher collected, with its
// provenance: the tool call that found it.
type Evidence struct {
	EvidenceID  string             `json:"evidence_id"`
	SourceGrade debate.SourceGrade `json:"source_grade"`
	Excerpt     string             `json:"text_excerpt,omitempty"`
	// ClaimIDs are the deal's claims the item supports (their sanads cite
	// it as primary or corroborating evidence), sorted.
	ClaimIDs   []string   `json:"claim_ids"`
	Provenance Provenance `json:"provenance"`
}

// Provenance says how an evidence item was found: the tool, its arguments
// in short (the query or the claim looked up), the pass and the hash of the
// result as its agent.tool_call audit records it.
type Provenance struct {
	Tool       string `json:"tool"`
	Query      string `json:"query,omitempty"`
	ClaimID    string `json:"claim_id,omitempty"`
	Pass       int    `json:"pass"`
	ResultHash string `json:"result_hash"`
}

// Hypothesis is a synthesised hypothesis with its provenance, fingerprint
// and confidence (seed 004's Hypothesis).
type Hypothesis struct {
	// ID is "h-" and the first 12 hex digits of the fingerprint.
	ID        string `json:"hypothesis_id"`
	Statement string `json:"statement"`
	// Stance is StanceSupports or StanceCounter.
	Stance      string   `json:"stance"`
	ClaimIDs    []string `json:"claim_ids"`
	EvidenceIDs []string `json:"evidence_ids"`
	// Provenance is the provenance of each cited evidence item, in
	// EvidenceIDs' order.
	Provenance  []Provenance `json:"provenance"`
	Fingerprint string       `json:"fingerprint"`
	Confidence  float64      `json:"confidence"`
	// Contested is set when the strategist conceded a challenge to it.
	Contested bool   `json:"contested,omitempty"`
	Rationale string `json:"rationale,omitempty"`
}

// CanonicalStatement is the statement a fingerprint covers: lower case,
// runs of white space made one space, trimmed.
func CanonicalStatement(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// Fingerprint is "sha256:" and the hex SHA-256 of the canonical statement,
// a newline, and the distinct evidence ids sorted and joined by newlines.
// The same statement over the same evidence has the same fingerprint
// whatever the order its evidence was cited in.
func Fingerprint(statement string, evidenceIDs []string) string {
	ids := slices.Compact(slices.Sorted(slices.Values(evidenceIDs)))
	sum := sha256.Sum256([]byte(CanonicalStatement(statement) + "\n" + strings.Join(ids, "\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// hypothesisID derives a hypothesis id from its fingerprint.
func hypothesisID(fingerprint string) string {
	return "h-" + strings.TrimPrefix(fingerprint, "sha256:")[:12]
}

// debateReasons says why a set of hypotheses must be debated: a confidence
// below DebateConfidenceThreshold, cited evidence grades ConflictGradeSpread
// ranks apart, a cited claim graded CONTRADICTED or INFLATED, or a claim
// both supported and countered. None means no debate.
func debateReasons(hs []Hypothesis, ev map[string]Evidence, verdicts map[string]debate.Verdict) []string {
	var out []string
	stances := map[string]map[string]bool{}
	for _, h := range hs {
		if h.Confidence < DebateConfidenceThreshold {
			out = append(out, fmt.Sprintf("%s: confidence %.2f is below %.2f", h.ID, h.Confidence, DebateConfidenceThreshold))
		}
		best, worst := 3, 0
		for _, id := range h.EvidenceIDs {
			r := debate.GradeRank(ev[id].SourceGrade)
			best, worst = min(best, r), max(worst, r)
		}
		if len(h.EvidenceIDs) > 1 && worst-best >= ConflictGradeSpread {
			out = append(out, fmt.Sprintf("%s: its evidence is graded from %s to %s", h.ID, debate.GradeOfRank(best), debate.GradeOfRank(worst)))
		}
		for _, c := range h.ClaimIDs {
			if v := verdicts[c]; v == debate.VerdictContradicted || v == debate.VerdictInflated {
				out = append(out, fmt.Sprintf("%s: claim %s is graded %s", h.ID, c, v))
			}
			if stances[c] == nil {
				stances[c] = map[string]bool{}
			}
			stances[c][h.Stance] = true
		}
	}
	for _, c := range slices.Sorted(maps.Keys(stances)) {
		if stances[c][StanceSupports] && stances[c][StanceCounter] {
			out = append(out, fmt.Sprintf("claim %s is both supported and countered", c))
		}
	}
	return out
}

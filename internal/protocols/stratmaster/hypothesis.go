package stratmaster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

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

package idis

import (
	"encoding/json"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// Name is the protocol's name.
const Name = "idis.vc.v1"

// Options of an IDIS debate.
type Options struct {
	// MaxRounds is 1–5 (default 5, seed 001 §3).
	MaxRounds int `json:"max_rounds"`
	// PauseForReview opens a human gate when the arbiter requests human
	// review; by default the request becomes an action item and the debate
	// goes on to its stop rule.
	PauseForReview bool `json:"pause_for_review"`
}

// defaults are the options a debate does not set.
func defaults() Options { return Options{MaxRounds: 5} }

// check validates decoded options.
func check(o *Options, v *debate.Violations) {
	if o.MaxRounds < 1 || o.MaxRounds > 5 {
		v.Add("options.max_rounds", "must be between 1 and 5")
	}
}

// band is an agent's position in one round: its recommendation and its
// confidence rounded down to a tenth (positions "unchanged" for
// STABLE_DISSENT compare these).
type band struct {
	Round          int     `json:"round"`
	Recommendation string  `json:"recommendation"`
	Band           float64 `json:"band"`
	Confidence     float64 `json:"confidence"`
}

// utility collects the penalties of an agent's utility; the Brier part is
// computed from the transcript at the end.
type utility struct {
	GateRejections int `json:"gate_rejections,omitempty"`
	QuotaBreaches  int `json:"quota_breaches,omitempty"`
}

// reviewRequest is a human review the arbiter asked for.
type reviewRequest struct {
	ClaimIDs []string `json:"claim_ids"`
	Reason   string   `json:"reason"`
	Priority string   `json:"priority,omitempty"`
	Round    int      `json:"round"`
}

// state is the protocol's compact state. The transcript is not in it: the
// accepted outputs live in the ledger (agent.output events) and are read
// back when a node needs them.
type state struct {
	MaxRounds      int                 `json:"max_rounds"`
	PauseForReview bool                `json:"pause_for_review,omitempty"`
	Round          int                 `json:"round"`
	Positions      map[string][]band   `json:"positions,omitempty"`
	RoundConf      map[string]float64  `json:"round_confidences,omitempty"`
	Usage          tools.Usage         `json:"usage,omitempty"` // role → tool → calls in UsageRound
	UsageRound     int                 `json:"usage_round,omitempty"`
	Flagged        []debate.Defect     `json:"flagged,omitempty"`
	ReliedCritical []string            `json:"relied_critical,omitempty"`
	EvidenceAsked  bool                `json:"evidence_asked,omitempty"`
	PendingQueries []string            `json:"pending_queries,omitempty"`
	NewEvidence    bool                `json:"new_evidence,omitempty"`
	Retrieved      []json.RawMessage   `json:"retrieved,omitempty"`
	SeenEvidence   []string            `json:"seen_evidence,omitempty"`
	OpenQuestions  []string            `json:"open_questions,omitempty"`
	Utility        map[string]*utility `json:"utility,omitempty"`
	Reviews        []reviewRequest     `json:"reviews,omitempty"`
	StopReason     string              `json:"stop_reason,omitempty"`
	StopWhy        string              `json:"stop_why,omitempty"`
	Accepted       int                 `json:"accepted,omitempty"`
	Rejected       int                 `json:"rejected,omitempty"`
}

// newState is the base a node's state decodes onto: its maps are never
// nil.
func newState() *state {
	return &state{Positions: map[string][]band{}, RoundConf: map[string]float64{},
		Usage: tools.Usage{}, Utility: map[string]*utility{}}
}

// passRate is the share of outputs the gate accepted (1 with none).
func (s *state) passRate() float64 {
	if total := s.Accepted + s.Rejected; total > 0 {
		return float64(s.Accepted) / float64(total)
	}
	return 1
}

func (s *state) util(agent string) *utility {
	u := s.Utility[agent]
	if u == nil {
		u = &utility{}
		s.Utility[agent] = u
	}
	return u
}

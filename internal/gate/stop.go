package gate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Stop reasons (seed 001 §3), in priority order.
const (
	StopCriticalDefect    = "CRITICAL_DEFECT"
	StopMaxRounds         = "MAX_ROUNDS"
	StopConsensus         = "CONSENSUS"
	StopStableDissent     = "STABLE_DISSENT"
	StopEvidenceExhausted = "EVIDENCE_EXHAUSTED"
)

const (
	// DefaultMaxRounds is seed 001's round limit (round_number 1–5). It is
	// also the ceiling: a larger StopState.MaxRounds is lowered to it.
	DefaultMaxRounds = 5
	// ConsensusSpan is the widest spread of the current round's
	// confidences that still counts as consensus ("within 10%", read as
	// 0.10 on the [0, 1] scale).
	ConsensusSpan = 0.10
	// StableRounds is the number of consecutive rounds an agent's position
	// must be the same for STABLE_DISSENT.
	StableRounds = 2
)

// epsilon absorbs binary floating-point error in comparisons against the
// decimal thresholds (0.8 - 0.7 is 0.10000000000000009).
const epsilon = 1e-9

// PositionBand is an agent's position in one round as STABLE_DISSENT
// compares it: the recommendation and the confidence band. Two positions
// are the same when both fields are equal.
type PositionBand struct {
	Recommendation string  `json:"recommendation"`
	Band           float64 `json:"band"`
}

// Band is the confidence band of a confidence: rounded down to a tenth
// (floor(conf*10)/10, with a 1e-9 allowance so that 0.7 is band 0.7),
// clamped to [0, 1]; 1.0 is its own band. A confidence that is not a
// number has band -1, which equals only itself. Moving within a band
// (0.71 → 0.78) is no change of position; crossing one (0.69 → 0.71) is.
func Band(conf float64) float64 {
	if math.IsNaN(conf) {
		return -1
	}
	conf = min(max(conf, 0), 1)
	return math.Floor(conf*10+epsilon) / 10
}

// BandOf is the PositionBand of a position.
func BandOf(p debate.Position) PositionBand {
	return PositionBand{Recommendation: p.Recommendation, Band: Band(p.Confidence)}
}

// StopState is what the stop conditions read after a round.
type StopState struct {
	// Round is the round just finished (1-based); MaxRounds the debate's
	// limit (≤ 0 means DefaultMaxRounds; above it, DefaultMaxRounds).
	Round, MaxRounds int
	// ReliedOnCritical are the material claims with grade D or an open
	// FATAL defect that an accepted output of the debate relies on (see
	// ReliedOnCritical).
	ReliedOnCritical []string
	// Confidences are the current round's confidences, one per agent that
	// spoke and was accepted.
	Confidences []float64
	// Positions are, per agent, its position in each round it stated one,
	// oldest first (use BandOf). An agent without positions is left out.
	Positions map[string][]PositionBand
	// EvidenceRequested: an agent asked for evidence this round;
	// NewEvidenceFound: retrieval found evidence the debate had not seen.
	EvidenceRequested, NewEvidenceFound bool
	// OpenQuestions is the number of questions still open.
	OpenQuestions int
}

// StopCondition applies seed 001 §3: it returns the highest-priority stop
// reason that holds and why, or "", "" to continue. In priority order:
//
//   - CRITICAL_DEFECT: ReliedOnCritical is non-empty: an accepted output
//     rests on a claim that is material (HIGH or CRITICAL materiality, or
//     IC-bound) and grade D or has an OPEN FATAL defect (SANAD.md, material
//     position).
//   - MAX_ROUNDS: Round ≥ MaxRounds (MaxRounds ≤ 0 is read as 5, and more
//     than 5 as 5: seed 001 allows rounds 1–5 only).
//   - CONSENSUS: at least two agents gave a confidence this round, all
//     within [0, 1], and the highest minus the lowest is ≤ 0.10 (allowing
//     1e-9 of floating-point error).
//   - STABLE_DISSENT: at least one agent has positions, every agent with
//     positions has at least 2 of them, and each agent's last 2 positions
//     (recommendation and confidence band, see Band) are the same: no
//     position changed for 2 consecutive rounds.
//   - EVIDENCE_EXHAUSTED: evidence was requested, retrieval found nothing
//     new, and at least one question is still open.
//
// StopCondition is pure and deterministic: why names the facts that
// decided, in sorted order.
func StopCondition(s StopState) (reason string, why string) {
	if len(s.ReliedOnCritical) > 0 {
		ids := slices.Compact(slices.Sorted(slices.Values(s.ReliedOnCritical)))
		return StopCriticalDefect, fmt.Sprintf("the debate relies on %d material claim(s) with grade D or an open FATAL defect: %s", len(ids), strings.Join(ids, ", "))
	}
	limit := s.MaxRounds
	if limit <= 0 || limit > DefaultMaxRounds {
		limit = DefaultMaxRounds
	}
	if s.Round >= limit {
		return StopMaxRounds, fmt.Sprintf("round %d reached the limit of %d rounds", s.Round, limit)
	}
	if lo, hi, ok := confidenceRange(s.Confidences); ok && hi-lo <= ConsensusSpan+epsilon {
		return StopConsensus, fmt.Sprintf("the %d agents' confidences span %.2f (%.2f to %.2f), within %.2f", len(s.Confidences), hi-lo, lo, hi, ConsensusSpan)
	}
	if desc, ok := stablePositions(s.Positions); ok {
		return StopStableDissent, fmt.Sprintf("no agent changed position in the last %d rounds: %s", StableRounds, desc)
	}
	if s.EvidenceRequested && !s.NewEvidenceFound && s.OpenQuestions > 0 {
		return StopEvidenceExhausted, fmt.Sprintf("evidence was requested, retrieval found nothing new, and %d question(s) remain open", s.OpenQuestions)
	}
	return "", ""
}

// confidenceRange returns the lowest and highest confidence when there are
// at least two, all within [0, 1].
func confidenceRange(cs []float64) (lo, hi float64, ok bool) {
	if len(cs) < 2 || slices.ContainsFunc(cs, func(c float64) bool { return !inUnit(c) }) {
		return 0, 0, false
	}
	return slices.Min(cs), slices.Max(cs), true
}

// stablePositions reports whether every agent's last StableRounds
// positions are the same, and describes them.
func stablePositions(ps map[string][]PositionBand) (string, bool) {
	if len(ps) == 0 {
		return "", false
	}
	parts := make([]string, 0, len(ps))
	for _, a := range slices.Sorted(maps.Keys(ps)) {
		hist := ps[a]
		if len(hist) < StableRounds {
			return "", false
		}
		last := hist[len(hist)-StableRounds:]
		if slices.ContainsFunc(last[1:], func(p PositionBand) bool { return p != last[0] }) {
			return "", false
		}
		parts = append(parts, fmt.Sprintf("%s %s at %.1f", a, last[0].Recommendation, last[0].Band))
	}
	return strings.Join(parts, ", "), true
}

// ReliedOnCritical returns the claims, sorted and without duplicates, that
// make CRITICAL_DEFECT hold: claims that are material and grade D or have
// an OPEN FATAL defect (ClaimFact.Critical), and that one of the outputs
// relies on. An output relies on the claims of its claim_refs and its
// record's supported_claim_ids, and on the input claims of the calcs of its
// calc_refs and supported_calc_ids; a claim the output itself challenges is
// attacked, not relied on, and does not count for that output. Pass the
// accepted outputs only: a rejected output relies on nothing. Ids unknown
// to f are ignored (the gate rejected them).
func ReliedOnCritical(outputs []debate.AgentOutput, f *Facts) []string {
	var out []string
	for i := range outputs {
		o := &outputs[i]
		attacked := map[string]bool{}
		for _, ch := range o.Challenges {
			for _, id := range ch.ClaimRefs {
				attacked[id] = true
			}
		}
		claims := slices.Concat(o.ClaimRefs, o.Muhasabah.SupportedClaimIDs)
		for _, id := range slices.Concat(o.CalcRefs, o.Muhasabah.SupportedCalcIDs) {
			if c := f.calc(id); c != nil {
				claims = append(claims, c.InputClaimIDs...)
			}
		}
		for _, id := range claims {
			if c := f.claim(id); c != nil && !attacked[id] && c.Critical() {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

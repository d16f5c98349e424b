package legal

import (
	"maps"
	"slices"
	"strings"
	"unicode"
)

// Convergence criteria (seed §5); the debate converges when one holds.
const (
	// CriterionSeverity: no CRITICAL critique and at most one MAJOR.
	CriterionSeverity = "NO_CRITICAL_AT_MOST_ONE_MAJOR"
	// CriterionNoConflict: no unresolved domain conflict: no conflicting
	// triples without justification, and no CRITICAL or MAJOR conflict
	// critique in force (the agents' own finding, for claims without
	// triples).
	CriterionNoConflict = "NO_UNRESOLVED_DOMAIN_CONFLICT"
	// CriterionStable: every revision changed its answer by less than
	// StableChange, and no critique is CRITICAL.
	CriterionStable = "ANSWER_STABLE"
)

// Escalation rules (seed §6, plus the ends of §5 and of the gates).
const (
	// EscalateCritical: a CRITICAL critique concerns evidence validity
	// (evidence_gap) or a norm conflict (conflict).
	EscalateCritical = "CRITICAL_EVIDENCE_OR_NORM_CONFLICT"
	// EscalateContradiction: a hard, unresolved contradiction between the
	// agents (see Conflict.Hard).
	EscalateContradiction = "HARD_CONTRADICTION"
	// EscalateEvidence: an agent has no evidence for more than
	// MaxUnevidenced of its claims.
	EscalateEvidence = "MISSING_EVIDENCE"
	// EscalateNotConverged: no criterion held after the last round (§5).
	EscalateNotConverged = "NOT_CONVERGED"
	// EscalateRejected: an agent's output failed the gates, so the debate
	// lacks it.
	EscalateRejected = "OUTPUT_REJECTED"
)

// Outcomes of a convergence check.
const (
	OutcomeContinue  = "continue"
	OutcomeConverged = "converged"
	OutcomeEscalated = "escalated"
)

// Thresholds of the criteria and rules.
const (
	// StableChange is §5's 15%: a revision whose AnswerChange is below it
	// is stable.
	StableChange = 0.15
	// MaxUnevidenced is §6's 30%.
	MaxUnevidenced = 0.30
	// HardConfidence is the confidence at or above which both sides of an
	// unresolved conflict make it a hard contradiction.
	HardConfidence = 0.7
)

// tokens returns the set of lower-cased letter-or-digit runs of s.
func tokens(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		out[f] = true
	}
	return out
}

// AnswerChange is the measure of §5's answer stability: one minus the
// Jaccard similarity of the token sets (lower-cased runs of letters and
// digits) of the answer before and after a revision. 0 means the same
// words, 1 no word in common; two empty answers are unchanged.
func AnswerChange(before, after string) float64 {
	a, b := tokens(before), tokens(after)
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	return 1 - float64(inter)/float64(len(a)+len(b)-inter)
}

// Conflict is a domain conflict: an NLA claim and an ALA claim state
// different objects for the same subject and predicate.
type Conflict struct {
	Subject       string  `json:"subject"`
	Predicate     string  `json:"predicate"`
	NLAClaim      string  `json:"nla_claim"`
	NLAObject     string  `json:"nla_object"`
	NLAConfidence float64 `json:"nla_confidence"`
	ALAClaim      string  `json:"ala_claim"`
	ALAObject     string  `json:"ala_object"`
	ALAConfidence float64 `json:"ala_confidence"`
	// Resolved: one side carries a justification and evidence (seed §5:
	// "without justification" makes a conflict unresolved).
	Resolved      bool   `json:"resolved"`
	JustifiedBy   string `json:"justified_by,omitempty"`
	Justification string `json:"justification,omitempty"`
	// Hard: unresolved and both sides at HardConfidence or more.
	Hard bool `json:"hard"`
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// sameFact reports whether two triples name the same subject and
// predicate.
func sameFact(a, b *Triple) bool {
	return a != nil && b != nil && norm(a.Subject) == norm(b.Subject) && norm(a.Predicate) == norm(b.Predicate)
}

// justified reports whether a claim justifies itself against a conflict.
func justified(c Claim) bool { return strings.TrimSpace(c.Justification) != "" && len(c.Evidence) > 0 }

// Conflicts returns the domain conflicts between the agents' outputs, in
// claim order.
func Conflicts(nla, ala *Output) []Conflict {
	if nla == nil || ala == nil {
		return nil
	}
	var out []Conflict
	for _, n := range nla.Claims {
		for _, a := range ala.Claims {
			if !sameFact(n.Triple, a.Triple) || norm(n.Triple.Object) == norm(a.Triple.Object) {
				continue
			}
			c := Conflict{Subject: norm(n.Triple.Subject), Predicate: norm(n.Triple.Predicate),
				NLAClaim: n.ID, NLAObject: n.Triple.Object, NLAConfidence: n.Confidence,
				ALAClaim: a.ID, ALAObject: a.Triple.Object, ALAConfidence: a.Confidence}
			switch {
			case justified(a):
				c.Resolved, c.JustifiedBy, c.Justification = true, AgentALA, a.Justification
			case justified(n):
				c.Resolved, c.JustifiedBy, c.Justification = true, AgentNLA, n.Justification
			}
			c.Hard = !c.Resolved && n.Confidence >= HardConfidence && a.Confidence >= HardConfidence
			out = append(out, c)
		}
	}
	return out
}

// unevidenced is the share of an output's claims without evidence.
func unevidenced(o *Output) float64 {
	if o == nil || len(o.Claims) == 0 {
		return 0
	}
	n := 0
	for _, c := range o.Claims {
		if len(c.Evidence) == 0 {
			n++
		}
	}
	return float64(n) / float64(len(o.Claims))
}

// Signals is what a convergence check decides on.
type Signals struct {
	Round, MaxRounds int
	// Critiques are the critiques in force: this round's, or the previous
	// round's when this round's revisions were calm and not critiqued.
	Critiques []Critique
	// Change is each agent's AnswerChange of its last revision (rounds
	// ≥ 2).
	Change map[string]float64
	// Outputs are the agents' latest accepted outputs.
	Outputs map[string]*Output
	// Rejected: an agent's output of this round failed the gates.
	Rejected bool
}

// Decision is a convergence check's result (seed §5–§6).
type Decision struct {
	Round   int    `json:"round"`
	Outcome string `json:"outcome"`
	// Criteria are the convergence criteria that hold; Escalation the
	// escalation rules that fired.
	Criteria            []string           `json:"convergence_criteria"`
	Escalation          []string           `json:"escalation_rules"`
	Critical            int                `json:"critical"`
	Major               int                `json:"major"`
	AnswerChange        map[string]float64 `json:"answer_change"`
	UnresolvedConflicts int                `json:"unresolved_conflicts"`
	// ConflictCritiques are the CRITICAL or MAJOR conflict critiques in
	// force.
	ConflictCritiques int                `json:"conflict_critiques"`
	Unevidenced       map[string]float64 `json:"unevidenced_share"`
	NeedsHumanReview  bool               `json:"needs_human_review"`
}

// criteria returns the convergence criteria that hold, and the counts
// they were decided on.
func criteria(s Signals) (held []string, critical, major, conflictCritiques int, unresolved []Conflict) {
	for _, k := range s.Critiques {
		switch k.Severity {
		case SeverityCritical:
			critical++
		case SeverityMajor:
			major++
		default:
			continue
		}
		if k.IssueType == IssueConflict {
			conflictCritiques++
		}
	}
	for _, c := range Conflicts(s.Outputs[AgentNLA], s.Outputs[AgentALA]) {
		if !c.Resolved {
			unresolved = append(unresolved, c)
		}
	}
	if critical == 0 && major <= 1 {
		held = append(held, CriterionSeverity)
	}
	if len(unresolved) == 0 && conflictCritiques == 0 {
		held = append(held, CriterionNoConflict)
	}
	stable := len(s.Change) > 0 && critical == 0
	for _, ch := range s.Change {
		stable = stable && ch < StableChange
	}
	if stable {
		held = append(held, CriterionStable)
	}
	return held, critical, major, conflictCritiques, unresolved
}

// Calm reports whether every convergence criterion holds: after a
// revision, the cross-critique of the revisions is skipped when they are
// calm (seed §4.4: it runs "if conflict is still high").
func Calm(s Signals) bool {
	held, _, _, _, _ := criteria(s)
	return len(held) == 3
}

// Decide applies seed §5–§6 at the end of a round. Round 1 always
// continues to the revision (§4.3) unless an output was rejected. From
// round 2, the escalation rules come first (any one escalates at once),
// then the convergence criteria (any one converges), then the next round,
// and after the last round the debate escalates as NOT_CONVERGED. An
// escalated decision needs human review.
func Decide(s Signals) Decision {
	held, critical, major, conflictCritiques, unresolved := criteria(s)
	d := Decision{Round: s.Round, Critical: critical, Major: major, UnresolvedConflicts: len(unresolved), ConflictCritiques: conflictCritiques,
		AnswerChange: map[string]float64{}, Unevidenced: map[string]float64{}, Criteria: []string{}, Escalation: []string{}}
	maps.Copy(d.AnswerChange, s.Change)
	for _, a := range []string{AgentNLA, AgentALA} {
		if o := s.Outputs[a]; o != nil {
			d.Unevidenced[a] = unevidenced(o)
		}
	}
	escalate := func(rules ...string) Decision {
		d.Outcome, d.NeedsHumanReview = OutcomeEscalated, true
		d.Escalation = append(d.Escalation, rules...)
		return d
	}
	if s.Rejected {
		return escalate(EscalateRejected)
	}
	if s.Round < 2 {
		d.Outcome = OutcomeContinue
		return d
	}
	if slices.ContainsFunc(s.Critiques, func(k Critique) bool {
		return k.Severity == SeverityCritical && (k.IssueType == IssueEvidenceGap || k.IssueType == IssueConflict)
	}) {
		d.Escalation = append(d.Escalation, EscalateCritical)
	}
	if slices.ContainsFunc(unresolved, func(c Conflict) bool { return c.Hard }) {
		d.Escalation = append(d.Escalation, EscalateContradiction)
	}
	if slices.ContainsFunc([]string{AgentNLA, AgentALA}, func(a string) bool { return d.Unevidenced[a] > MaxUnevidenced }) {
		d.Escalation = append(d.Escalation, EscalateEvidence)
	}
	if len(d.Escalation) > 0 {
		return escalate()
	}
	d.Criteria = held
	switch {
	case len(held) > 0:
		d.Outcome = OutcomeConverged
	case s.Round < s.MaxRounds:
		d.Outcome = OutcomeContinue
	default:
		return escalate(EscalateNotConverged)
	}
	return d
}

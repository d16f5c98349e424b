package legal

import (
	"fmt"
	"slices"
	"strings"

	"github.com/debated/debated/internal/protocol"
)

// Summary is debate_summary.json (seed §7): the supervisor's input besides
// the final revisions, and the debate's closing log.
type Summary struct {
	Query  string `json:"query"`
	CaseID string `json:"case_id"`
	// Rounds is the last round that ran.
	Rounds  int    `json:"rounds"`
	Outcome string `json:"outcome"`
	// StopReason is CONVERGED or ESCALATED.
	StopReason          string             `json:"stop_reason"`
	ConvergenceCriteria []string           `json:"convergence_criteria"`
	EscalationRules     []string           `json:"escalation_rules"`
	NeedsHumanReview    bool               `json:"needs_human_review"`
	AgreedClaims        []AgreedClaim      `json:"agreed_claims"`
	DisputedClaims      []DisputedClaim    `json:"disputed_claims"`
	Conflicts           []Conflict         `json:"conflicts"`
	Risks               []ClaimNote        `json:"risks"`
	AnswerChange        map[string]float64 `json:"answer_change"`
	Rejections          []Rejection        `json:"rejections"`
}

// AgreedClaim is a claim both agents make: the same fact (triple), or
// statements at least 80% alike by token Jaccard similarity.
type AgreedClaim struct {
	NLAClaim  string   `json:"nla_claim"`
	ALAClaim  string   `json:"ala_claim"`
	Statement string   `json:"statement"`
	Evidence  []string `json:"evidence"`
}

// DisputedClaim is a final claim in an unresolved conflict or under a
// CRITICAL or MAJOR critique still in force.
type DisputedClaim struct {
	// Ref is "NLA.C1" or "ALA.C2".
	Ref       string   `json:"ref"`
	Statement string   `json:"statement"`
	Reasons   []string `json:"reasons"`
}

// ClaimNote names a claim with its statement.
type ClaimNote struct {
	Ref       string `json:"ref"`
	Statement string `json:"statement"`
}

// Rejection records an output the gates refused.
type Rejection struct {
	Agent string   `json:"agent"`
	Round int      `json:"round"`
	Kind  string   `json:"kind"`
	Rules []string `json:"rules"`
}

// Stop reasons of a legal debate.
const (
	ReasonConverged = "CONVERGED"
	ReasonEscalated = "ESCALATED"
)

// agreedSimilarity is the statement similarity at which two claims agree.
const agreedSimilarity = 0.8

func ref(agent, id string) string { return agent + "." + id }

// summarize builds the summary from the final outputs, the critiques in
// force and the last decision.
func summarize(o *Options, caseID string, s *state, d Decision) *Summary {
	nla, ala := s.Outputs[AgentNLA], s.Outputs[AgentALA]
	sum := &Summary{Query: o.Query, CaseID: caseID, Rounds: d.Round, Outcome: d.Outcome,
		ConvergenceCriteria: d.Criteria, EscalationRules: d.Escalation, NeedsHumanReview: d.NeedsHumanReview,
		AgreedClaims: []AgreedClaim{}, DisputedClaims: []DisputedClaim{}, Conflicts: protocol.NonNil(Conflicts(nla, ala)),
		Risks: []ClaimNote{}, AnswerChange: d.AnswerChange, Rejections: protocol.NonNil(slices.Clone(s.Rejections))}
	sum.StopReason = ReasonConverged
	if d.Outcome == OutcomeEscalated {
		sum.StopReason = ReasonEscalated
	}
	if nla != nil && ala != nil {
		for _, n := range nla.Claims {
			for _, a := range ala.Claims {
				same := sameFact(n.Triple, a.Triple) && norm(n.Triple.Object) == norm(a.Triple.Object)
				if same || 1-AnswerChange(n.Statement, a.Statement) >= agreedSimilarity {
					ev := slices.Concat(n.Evidence, a.Evidence)
					slices.Sort(ev)
					sum.AgreedClaims = append(sum.AgreedClaims, AgreedClaim{NLAClaim: n.ID, ALAClaim: a.ID,
						Statement: n.Statement, Evidence: slices.Compact(ev)})
				}
			}
		}
	}
	reasons := map[string][]string{}
	for _, c := range sum.Conflicts {
		if c.Resolved {
			continue
		}
		why := fmt.Sprintf("unresolved conflict on %s of %s: NLA says %q, ALA says %q", c.Predicate, c.Subject, c.NLAObject, c.ALAObject)
		reasons[ref(AgentNLA, c.NLAClaim)] = append(reasons[ref(AgentNLA, c.NLAClaim)], why)
		reasons[ref(AgentALA, c.ALAClaim)] = append(reasons[ref(AgentALA, c.ALAClaim)], why)
	}
	for _, cs := range s.inForce() {
		for _, k := range cs.Critiques {
			if k.Severity == SeverityMinor {
				continue
			}
			r := ref(cs.Target, k.TargetClaimID)
			reasons[r] = append(reasons[r], fmt.Sprintf("%s %s critique %s by %s: %s", k.Severity, k.IssueType, k.ID, cs.Agent, k.Description))
		}
	}
	for _, a := range []string{AgentNLA, AgentALA} {
		out := s.Outputs[a]
		if out == nil {
			continue
		}
		for _, c := range out.Claims {
			r := ref(a, c.ID)
			if why := reasons[r]; len(why) > 0 {
				sum.DisputedClaims = append(sum.DisputedClaims, DisputedClaim{Ref: r, Statement: c.Statement, Reasons: why})
			}
			if len(c.Evidence) == 0 || c.Risk {
				sum.Risks = append(sum.Risks, ClaimNote{Ref: r, Statement: c.Statement})
			}
		}
	}
	return sum
}

// Deliverables are the debate's deliverables (deliverables.created).
type Deliverables struct {
	Summary        *Summary           `json:"summary"`
	Synthesis      *Synthesis         `json:"synthesis,omitempty"`
	FinalRevisions map[string]*Output `json:"final_revisions"`
	// NeedsHumanReview is the summary's flag, raised by the supervisor or
	// by a rejected synthesis.
	NeedsHumanReview bool     `json:"needs_human_review"`
	Artifacts        []string `json:"artifacts"`
	Markdown         string   `json:"markdown"`
}

// markdown renders the deliverables for a reader.
func (d *Deliverables) markdown() string {
	var b strings.Builder
	s := d.Summary
	fmt.Fprintf(&b, "# Legal debate: %s\n\n", s.Query)
	fmt.Fprintf(&b, "**Outcome:** %s after round %d (%s)", s.Outcome, s.Rounds, s.StopReason)
	if len(s.ConvergenceCriteria) > 0 {
		fmt.Fprintf(&b, "; criteria held: %s", strings.Join(s.ConvergenceCriteria, ", "))
	}
	if len(s.EscalationRules) > 0 {
		fmt.Fprintf(&b, "; escalation: %s", strings.Join(s.EscalationRules, ", "))
	}
	fmt.Fprintf(&b, ".\n\n**Needs human review:** %t\n\n", d.NeedsHumanReview)
	if d.Synthesis != nil {
		fmt.Fprintf(&b, "## Supervisor synthesis\n\n%s\n\n%s\n\n", d.Synthesis.Answer, d.Synthesis.Rationale)
	}
	for _, a := range []string{AgentNLA, AgentALA} {
		if o := d.FinalRevisions[a]; o != nil {
			fmt.Fprintf(&b, "## %s final answer (round %d)\n\n%s\n\n", a, o.Round, o.Answer)
		}
	}
	b.WriteString("## Agreed claims\n\n")
	if len(s.AgreedClaims) == 0 {
		b.WriteString("None.\n")
	}
	for _, c := range s.AgreedClaims {
		fmt.Fprintf(&b, "- NLA.%s = ALA.%s: %s [%s]\n", c.NLAClaim, c.ALAClaim, c.Statement, strings.Join(c.Evidence, ", "))
	}
	b.WriteString("\n## Disputed claims\n\n")
	if len(s.DisputedClaims) == 0 {
		b.WriteString("None.\n")
	}
	for _, c := range s.DisputedClaims {
		fmt.Fprintf(&b, "- %s: %s\n", c.Ref, c.Statement)
		for _, r := range c.Reasons {
			fmt.Fprintf(&b, "  - %s\n", r)
		}
	}
	if len(s.Risks) > 0 {
		b.WriteString("\n## Risks (claims without evidence)\n\n")
		for _, r := range s.Risks {
			fmt.Fprintf(&b, "- %s: %s\n", r.Ref, r.Statement)
		}
	}
	return b.String()
}

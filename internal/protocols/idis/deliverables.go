package idis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Deliverables are what the debate hands the investment committee.
type Deliverables struct {
	DebateID   string `json:"debate_id"`
	DealID     string `json:"deal_id"`
	Company    string `json:"company"`
	StopReason string `json:"stop_reason"`
	StopWhy    string `json:"stop_why"`
	Rounds     int    `json:"rounds"`
	// Recommendation is the arbiter's final position (the majority's when
	// the arbiter took none).
	Recommendation string    `json:"recommendation"`
	Confidence     float64   `json:"confidence"`
	Summary        string    `json:"consensus_summary"`
	Dissent        []Dissent `json:"dissent"`
	// CriticalClaims are the material claims with grade D or an open FATAL
	// defect that an output relied on (the CRITICAL_DEFECT stop names them).
	CriticalClaims []ClaimRow         `json:"critical_claims"`
	ClaimTable     []ClaimRow         `json:"claim_table"`
	Actions        []Action           `json:"actions"`
	Utility        map[string]float64 `json:"utility"`
	Gate           GateSummary        `json:"gate"`
}

// Dissent is a preserved minority position: evidence-backed (it rests on
// claims graded C or better), from an agent with positive utility and no
// frivolous challenge.
type Dissent struct {
	Agent          string   `json:"agent"`
	Recommendation string   `json:"recommendation"`
	Confidence     float64  `json:"confidence"`
	ClaimRefs      []string `json:"claim_refs"`
	Reason         string   `json:"reason"`
}

// ClaimRow is one material claim with its grade and evidence.
type ClaimRow struct {
	ClaimID  string   `json:"claim_id"`
	Key      string   `json:"claim_key"`
	Text     string   `json:"claim_text"`
	Grade    string   `json:"grade"`
	Verdict  string   `json:"verdict"`
	Action   string   `json:"action"`
	Evidence []string `json:"evidence"`
	Defects  []string `json:"defects"`
}

// Action is something to do before the decision.
type Action struct {
	Type     string   `json:"type"` // REQUEST_SOURCE, RECONSTRUCT_CHAIN, HUMAN_REVIEW, TEST, QUESTION, ...
	ClaimIDs []string `json:"claim_ids,omitempty"`
	Detail   string   `json:"detail"`
}

// GateSummary counts the outputs the gates let through and refused.
type GateSummary struct {
	Accepted int     `json:"accepted"`
	Rejected int     `json:"rejected"`
	PassRate float64 `json:"pass_rate"`
}

func buildDeliverables(debateID string, s *state, v *dealView, outs []debate.AgentOutput) *Deliverables {
	d := &Deliverables{
		DebateID: debateID, DealID: v.bundle.Deal.ID, Company: v.bundle.Deal.CompanyName,
		StopReason: cmp.Or(s.StopReason, "MAX_ROUNDS"), StopWhy: s.StopWhy, Rounds: s.Round,
		Utility: utilities(s, outs, v),
		Dissent: []Dissent{}, CriticalClaims: []ClaimRow{}, ClaimTable: []ClaimRow{}, Actions: []Action{},
	}
	total := s.Accepted + s.Rejected
	d.Gate = GateSummary{Accepted: s.Accepted, Rejected: s.Rejected, PassRate: 1}
	if total > 0 {
		d.Gate.PassRate = float64(s.Accepted) / float64(total)
	}
	claims := map[string]*debate.Claim{}
	for i := range v.bundle.Claims {
		claims[v.bundle.Claims[i].ID] = &v.bundle.Claims[i]
	}
	rowOf := func(cg debate.ClaimGrade) ClaimRow {
		r := ClaimRow{ClaimID: cg.ClaimID, Key: cg.ClaimKey, Grade: string(cg.Grade), Verdict: string(cg.Verdict), Action: string(cg.Action), Evidence: []string{}, Defects: []string{}}
		if c := claims[cg.ClaimID]; c != nil {
			r.Text = c.Text
		}
		for _, sn := range v.bundle.Sanads {
			if sn.ClaimID == cg.ClaimID {
				if sn.PrimaryEvidenceID != "" {
					r.Evidence = append(r.Evidence, sn.PrimaryEvidenceID)
				}
				r.Evidence = append(r.Evidence, sn.CorroboratingEvidenceIDs...)
			}
		}
		for _, df := range cg.Defects {
			r.Defects = append(r.Defects, string(df.Type)+" ("+string(df.Severity)+")")
		}
		return r
	}
	for _, cg := range v.grading.Claims {
		c := claims[cg.ClaimID]
		if c == nil || !c.Material() {
			continue
		}
		d.ClaimTable = append(d.ClaimTable, rowOf(cg))
		for _, df := range cg.Defects {
			d.Actions = append(d.Actions, Action{Type: string(df.CureProtocol), ClaimIDs: []string{cg.ClaimID},
				Detail: fmt.Sprintf("%s on %s: %s", df.Type, cg.ClaimKey, df.Description)})
		}
		if cg.Verdict == debate.VerdictBlocked {
			d.Actions = append(d.Actions, Action{Type: "MISSING_DOCUMENT", ClaimIDs: []string{cg.ClaimID},
				Detail: fmt.Sprintf("%s has no evidence span: provide the source document", cg.ClaimKey)})
		}
	}
	for _, id := range s.ReliedCritical {
		for _, cg := range v.grading.Claims {
			if cg.ClaimID == id {
				d.CriticalClaims = append(d.CriticalClaims, rowOf(cg))
			}
		}
	}
	for _, f := range s.Flagged {
		d.Actions = append(d.Actions, Action{Type: string(f.CureProtocol), ClaimIDs: []string{f.ClaimID},
			Detail: fmt.Sprintf("flagged in debate by %s: %s %s", f.Actor, f.Type, f.Description)})
	}
	for _, r := range s.Reviews {
		d.Actions = append(d.Actions, Action{Type: "HUMAN_REVIEW", ClaimIDs: r.ClaimIDs, Detail: r.Reason})
	}
	for _, q := range s.OpenQuestions {
		d.Actions = append(d.Actions, Action{Type: "QUESTION", Detail: q})
	}
	for _, o := range outs {
		for _, t := range o.Muhasabah.FalsifiabilityTests {
			if o.Role == debate.RoleArbiter && o.RoundNumber == s.Round {
				d.Actions = append(d.Actions, Action{Type: "TEST", Detail: t.TestDescription + " — needs " + t.RequiredEvidence})
			}
		}
	}

	// Final positions.
	final := map[string]debate.AgentOutput{}
	for _, o := range outs {
		if o.Position != nil {
			final[o.Role] = o
		}
	}
	if a, ok := final[debate.RoleArbiter]; ok {
		d.Recommendation, d.Confidence = a.Position.Recommendation, a.Position.Confidence
	} else {
		votes := map[string]int{}
		for _, o := range final {
			votes[o.Position.Recommendation]++
		}
		best := 0
		for _, rec := range slices.Sorted(mapsKeys(votes)) {
			if votes[rec] > best {
				d.Recommendation, best = rec, votes[rec]
			}
		}
	}
	frivolous := frivolousBy(outs)
	for _, role := range debate.IDISRoles {
		o, ok := final[role]
		if !ok || role == debate.RoleArbiter || o.Position.Recommendation == d.Recommendation {
			continue
		}
		backed := false
		for _, id := range o.Muhasabah.SupportedClaimIDs {
			for _, cg := range v.grading.Claims {
				if cg.ClaimID == id && cg.Grade != debate.GradeD {
					backed = true
				}
			}
		}
		if backed && d.Utility[role] > 0 && frivolous[role] == 0 {
			d.Dissent = append(d.Dissent, Dissent{Agent: role, Recommendation: o.Position.Recommendation, Confidence: o.Position.Confidence,
				ClaimRefs: o.Muhasabah.SupportedClaimIDs, Reason: firstSentence(o.Content)})
		}
	}
	d.Summary = summary(d)
	return d
}

func mapsKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func summary(d *Deliverables) string {
	var b strings.Builder
	fmt.Fprintf(&b, "After %d round(s) the debate stopped on %s", d.Rounds, d.StopReason)
	if d.StopWhy != "" {
		fmt.Fprintf(&b, " (%s)", d.StopWhy)
	}
	fmt.Fprintf(&b, ". Recommendation: %s at confidence %.2f.", cmp.Or(d.Recommendation, "none"), d.Confidence)
	if len(d.CriticalClaims) > 0 {
		var keys []string
		for _, c := range d.CriticalClaims {
			keys = append(keys, c.Key)
		}
		fmt.Fprintf(&b, " Critical claims: %s.", strings.Join(keys, ", "))
	}
	if len(d.Dissent) > 0 {
		fmt.Fprintf(&b, " %d evidence-backed dissent(s) preserved.", len(d.Dissent))
	}
	return b.String()
}

// frivolousBy counts, per agent, the challenges the arbiter ruled
// frivolous.
func frivolousBy(outs []debate.AgentOutput) map[string]int {
	author := map[string]string{}
	for _, o := range outs {
		for _, c := range o.Challenges {
			author[c.ChallengeID] = o.Role
		}
	}
	out := map[string]int{}
	for _, o := range outs {
		for _, r := range o.Rulings {
			if r.Frivolous {
				out[author[r.ChallengeID]]++
			}
		}
	}
	return out
}

// utilities scores each agent: 1 − Brier score of its stated confidences
// against the arbiter's rulings, minus 0.10 per frivolous challenge, 0.20
// per output the gate rejected and 0.05 per call over quota, within [−1, 1].
// A challenger forecasts each of its challenges with the confidence of the
// output that made it (outcome 1 when upheld, 0 when dismissed); the
// advocate forecasts each round with its position's confidence (outcome:
// the share of that round's challenges dismissed). An agent with no ruled
// forecast has no Brier term.
func utilities(s *state, outs []debate.AgentOutput, v *dealView) map[string]float64 {
	type forecast struct{ p, o float64 }
	fc := map[string][]forecast{}
	made := map[string]struct {
		role string
		conf float64
		rnd  int
	}{}
	for _, o := range outs {
		for _, c := range o.Challenges {
			made[c.ChallengeID] = struct {
				role string
				conf float64
				rnd  int
			}{o.Role, o.Muhasabah.Confidence, o.RoundNumber}
		}
	}
	upheldShare := map[int][2]int{} // round → upheld, total
	for _, o := range outs {
		for _, r := range o.Rulings {
			m, ok := made[r.ChallengeID]
			if !ok {
				continue
			}
			outcome := 0.0
			if r.Upheld {
				outcome = 1
			}
			fc[m.role] = append(fc[m.role], forecast{m.conf, outcome})
			c := upheldShare[m.rnd]
			c[1]++
			if r.Upheld {
				c[0]++
			}
			upheldShare[m.rnd] = c
		}
	}
	for _, o := range outs {
		if o.Role != debate.RoleAdvocate || o.Position == nil {
			continue
		}
		if c, ok := upheldShare[o.RoundNumber]; ok && c[1] > 0 {
			fc[o.Role] = append(fc[o.Role], forecast{o.Position.Confidence, 1 - float64(c[0])/float64(c[1])})
		}
	}
	frivolous := frivolousBy(outs)
	out := map[string]float64{}
	for _, role := range debate.IDISRoles {
		u := 1.0
		if f := fc[role]; len(f) > 0 {
			var sum float64
			for _, x := range f {
				sum += (x.p - x.o) * (x.p - x.o)
			}
			u -= sum / float64(len(f))
		}
		pen := s.util(role)
		u -= 0.10*float64(frivolous[role]) + 0.20*float64(pen.GateRejections) + 0.05*float64(pen.QuotaBreaches)
		out[role] = math.Round(math.Max(-1, math.Min(1, u))*1000) / 1000
	}
	_ = v
	return out
}

// Markdown renders the deliverables for people.
func (d *Deliverables) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Investment committee brief: %s\n\n", cmp.Or(d.Company, d.DealID))
	fmt.Fprintf(&b, "Debate `%s` on deal `%s`.\n\n## Consensus\n\n%s\n\n", d.DebateID, d.DealID, d.Summary)
	b.WriteString("## Dissent\n\n")
	if len(d.Dissent) == 0 {
		b.WriteString("No evidence-backed dissent.\n\n")
	}
	for _, x := range d.Dissent {
		fmt.Fprintf(&b, "- **%s**: %s at %.2f — %s\n", x.Agent, x.Recommendation, x.Confidence, x.Reason)
	}
	if len(d.CriticalClaims) > 0 {
		b.WriteString("\n## Critical claims\n\n")
		for _, c := range d.CriticalClaims {
			fmt.Fprintf(&b, "- **%s** (%s): grade %s, %s — %s\n", c.Key, c.ClaimID, c.Grade, c.Verdict, c.Text)
		}
	}
	b.WriteString("\n## Material claims\n\n| key | claim | grade | verdict | action | evidence | defects |\n|---|---|---|---|---|---|---|\n")
	for _, c := range d.ClaimTable {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", c.Key, strings.ReplaceAll(c.Text, "|", "/"), c.Grade, c.Verdict, c.Action,
			strings.Join(c.Evidence, ", "), strings.Join(c.Defects, ", "))
	}
	b.WriteString("\n## Actions\n\n")
	if len(d.Actions) == 0 {
		b.WriteString("None.\n")
	}
	for _, a := range d.Actions {
		fmt.Fprintf(&b, "- [%s] %s\n", a.Type, a.Detail)
	}
	b.WriteString("\n## Utility\n\n")
	for _, role := range debate.IDISRoles {
		fmt.Fprintf(&b, "- %s: %.3f\n", role, d.Utility[role])
	}
	fmt.Fprintf(&b, "\nStop reason: **%s**. Gate: %d accepted, %d rejected (pass rate %.1f%%).\n", d.StopReason, d.Gate.Accepted, d.Gate.Rejected, 100*d.Gate.PassRate)
	return b.String()
}

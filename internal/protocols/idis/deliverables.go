package idis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Deliverables are what the debate hands the investment committee: a
// brief every statement of which is read from the ledger (the transcript,
// the rulings, the stop decision, the flagged defects and review requests)
// and the graded registry, so it cannot say what the debate did not.
type Deliverables struct {
	DebateID   string `json:"debate_id"`
	DealID     string `json:"deal_id"`
	Company    string `json:"company"`
	StopReason string `json:"stop_reason"`
	// StopWhy is the stop decision's reason with claim ids named by key.
	StopWhy string `json:"stop_why"`
	// StopContinue says what would have let the debate go on.
	StopContinue string `json:"stop_would_continue"`
	Rounds       int    `json:"rounds"`
	// Recommendation is the arbiter's final position (the majority's when
	// the arbiter took none).
	Recommendation string  `json:"recommendation"`
	Confidence     float64 `json:"confidence"`
	// Why is the arbiter's strongest argument and how its confidence was
	// computed.
	Why     string `json:"recommendation_why"`
	Summary string `json:"consensus_summary"`
	// Roles are each role's final stance, from its last turn.
	Roles   []RoleStance `json:"roles"`
	Dissent []Dissent    `json:"dissent"`
	// DissentNote says, when no dissent is preserved, which roles differ
	// without the evidence to back it.
	DissentNote string `json:"dissent_note,omitempty"`
	// CriticalClaims are the material claims with grade D or an open FATAL
	// defect that an output relied on (the CRITICAL_DEFECT stop names them).
	CriticalClaims []ClaimRow `json:"critical_claims"`
	ClaimTable     []ClaimRow `json:"claim_table"`
	Actions        []Action   `json:"actions"`
	// WouldChange lists what would change the recommendation: the
	// arbiter's falsifiability rules and counter-hypothesis.
	WouldChange []string           `json:"would_change_recommendation"`
	Glossary    []Term             `json:"glossary"`
	Utility     map[string]float64 `json:"utility"`
	Gate        GateSummary        `json:"gate"`
}

// RoleStance is a role's final position (NO_POSITION when its last turn
// took none) and its strongest argument with the claims behind it.
type RoleStance struct {
	Role       string   `json:"role"`
	Round      int      `json:"round"`
	Position   string   `json:"position"`
	Confidence float64  `json:"confidence"`
	Argument   string   `json:"argument"`
	ClaimIDs   []string `json:"claim_ids"`
	ClaimKeys  []string `json:"claim_keys"`
}

// Dissent is a preserved minority position. It is evidence-backed, by the
// rule the arbiter applies: one of the role's challenges was upheld, or
// its last turn relies on a VERIFIED material claim; Evidence names which.
type Dissent struct {
	Agent          string   `json:"agent"`
	Recommendation string   `json:"recommendation"`
	Confidence     float64  `json:"confidence"`
	ClaimRefs      []string `json:"claim_refs"`
	Reason         string   `json:"reason"`
	// UpheldChallenges are the role's challenges the arbiter upheld.
	UpheldChallenges []string `json:"upheld_challenges,omitempty"`
	// Evidence describes what backs the dissent, for people.
	Evidence []string `json:"evidence"`
}

// ClaimRow is one material claim with its grade, its evidence (named by
// document and locator), the registry's defects and the defects the debate
// established (upheld challenges, flagged defects).
type ClaimRow struct {
	ClaimID     string   `json:"claim_id"`
	Key         string   `json:"claim_key"`
	Text        string   `json:"claim_text"`
	Grade       string   `json:"grade"`
	Verdict     string   `json:"verdict"`
	Action      string   `json:"action"`
	EvidenceIDs []string `json:"evidence_ids"`
	Evidence    []string `json:"evidence"`
	Defects     []string `json:"defects"`
	// DefectTypes are the types of Defects and Debated, for checks.
	DefectTypes []string `json:"defect_types"`
	// Debated are the defects the debate established on the claim:
	// "UNKNOWN_SOURCE (MINOR, upheld sanad_breaker-r1-01)".
	Debated []string `json:"debated"`
}

// Action is something to do before the decision, tied to what in the
// ledger asks for it.
type Action struct {
	Type     string   `json:"type"` // REQUEST_SOURCE, RECONSTRUCT_CHAIN, HUMAN_REVIEW, TEST, QUESTION, ...
	ClaimIDs []string `json:"claim_ids,omitempty"`
	// DefectType is the defect the action cures; it is on every claim of
	// ClaimIDs in the claim table.
	DefectType string `json:"defect_type,omitempty"`
	Detail     string `json:"detail"`
	// Source is what asks for it: a registry defect, an upheld challenge,
	// a flagged defect, a review request, a role's question or test.
	Source string `json:"source"`
}

// Term is a one-line gloss of a grader or debate term the brief uses.
type Term struct {
	Term  string `json:"term"`
	Gloss string `json:"gloss"`
}

// GateSummary counts the outputs the gates let through and refused.
type GateSummary struct {
	Accepted int     `json:"accepted"`
	Rejected int     `json:"rejected"`
	PassRate float64 `json:"pass_rate"`
}

// ruled is a challenge of the transcript with its author and ruling.
type ruled struct {
	ch     debate.Challenge
	role   string
	round  int
	ruling *debate.Ruling
}

func (r ruled) upheld() bool { return r.ruling != nil && r.ruling.Upheld && !r.ruling.Frivolous }

// challengesOf returns the transcript's challenges in order, each id once,
// with the arbiter's first ruling on it.
func challengesOf(outs []debate.AgentOutput) []ruled {
	rulings := map[string]*debate.Ruling{}
	for i := range outs {
		if outs[i].Role != debate.RoleArbiter {
			continue
		}
		for j := range outs[i].Rulings {
			r := &outs[i].Rulings[j]
			if _, ok := rulings[r.ChallengeID]; !ok {
				rulings[r.ChallengeID] = r
			}
		}
	}
	var out []ruled
	seen := map[string]bool{}
	for _, o := range outs {
		if o.Role == debate.RoleArbiter {
			continue
		}
		for _, c := range o.Challenges {
			if seen[c.ChallengeID] {
				continue
			}
			seen[c.ChallengeID] = true
			out = append(out, ruled{ch: c, role: o.Role, round: o.RoundNumber, ruling: rulings[c.ChallengeID]})
		}
	}
	return out
}

// lastTurns returns each role's last accepted output, and its last output
// with a position.
func lastTurns(outs []debate.AgentOutput) (last, positioned map[string]debate.AgentOutput) {
	last, positioned = map[string]debate.AgentOutput{}, map[string]debate.AgentOutput{}
	for _, o := range outs {
		last[o.Role] = o
		if o.Position != nil {
			positioned[o.Role] = o
		}
	}
	return last, positioned
}

// dissentBacking is the arbiter's rule (package rules, arbiter.go): a role's
// dissent is evidence-backed by its upheld challenges, else by the VERIFIED
// material claims its last turn relies on.
func dissentBacking(role string, chs []ruled, last debate.AgentOutput, g *registryIndex) (challenges, claims []string) {
	for _, r := range chs {
		if r.role == role && r.upheld() {
			challenges = append(challenges, r.ch.ChallengeID)
		}
	}
	if len(challenges) > 0 {
		return challenges, nil
	}
	for _, id := range last.ClaimRefs {
		if c := g.claims[id]; c != nil && c.Material() && g.grades[id].Verdict == debate.VerdictVerified {
			claims = appendNew(claims, id)
		}
	}
	return nil, claims
}

func buildDeliverables(debateID string, s *state, v *dealView, outs []debate.AgentOutput) *Deliverables {
	g := newRegistryIndex(v)
	reason := cmp.Or(s.StopReason, "MAX_ROUNDS")
	d := &Deliverables{
		DebateID: debateID, DealID: v.Bundle.Deal.ID, Company: v.Bundle.Deal.CompanyName,
		StopReason: reason, StopWhy: g.human(s.StopWhy), StopContinue: stopContinue(reason, s, g), Rounds: s.Round,
		Utility: utilities(s, outs), Gate: GateSummary{Accepted: s.Accepted, Rejected: s.Rejected, PassRate: s.passRate()},
		Roles: []RoleStance{}, Dissent: []Dissent{}, CriticalClaims: []ClaimRow{}, ClaimTable: []ClaimRow{}, Actions: []Action{},
		WouldChange: []string{}, Glossary: []Term{},
	}
	chs := challengesOf(outs)
	last, positioned := lastTurns(outs)

	// Claim table: the registry's defects, then what the debate
	// established (upheld challenges, flagged defects) on each claim.
	debated := map[string][]string{}
	debatedTypes := map[string][]string{}
	addDebated := func(claimID, typ, text string) {
		debated[claimID] = appendNew(debated[claimID], text)
		debatedTypes[claimID] = appendNew(debatedTypes[claimID], typ)
	}
	for _, r := range chs {
		if !r.upheld() {
			continue
		}
		for _, id := range r.ch.ClaimRefs {
			addDebated(id, r.ch.DefectType, fmt.Sprintf("%s (%s, upheld %s)", r.ch.DefectType, cmp.Or(r.ch.Severity, "MAJOR"), r.ch.ChallengeID))
		}
	}
	for _, f := range s.Flagged {
		addDebated(f.ClaimID, string(f.Type), fmt.Sprintf("%s (%s, flagged by %s)", f.Type, f.Severity, f.Actor))
	}
	rowOf := func(cg debate.ClaimGrade) ClaimRow {
		r := ClaimRow{ClaimID: cg.ClaimID, Key: cg.ClaimKey, Grade: string(cg.Grade), Verdict: string(cg.Verdict), Action: string(cg.Action),
			EvidenceIDs: []string{}, Evidence: []string{}, Defects: []string{}, DefectTypes: []string{}, Debated: []string{}}
		if c := g.claims[cg.ClaimID]; c != nil {
			r.Text = c.Text
		}
		for _, sn := range v.Bundle.Sanads {
			if sn.ClaimID != cg.ClaimID {
				continue
			}
			for _, id := range append([]string{sn.PrimaryEvidenceID}, sn.CorroboratingEvidenceIDs...) {
				if id != "" && !slices.Contains(r.EvidenceIDs, id) {
					r.EvidenceIDs = append(r.EvidenceIDs, id)
					r.Evidence = appendNew(r.Evidence, g.evidenceName(id))
				}
			}
		}
		for _, df := range cg.Defects {
			if !df.Open() {
				continue
			}
			r.Defects = append(r.Defects, string(df.Type)+" ("+string(df.Severity)+")")
			r.DefectTypes = appendNew(r.DefectTypes, string(df.Type))
		}
		r.Debated = append(r.Debated, debated[cg.ClaimID]...)
		for _, t := range debatedTypes[cg.ClaimID] {
			r.DefectTypes = appendNew(r.DefectTypes, t)
		}
		return r
	}
	for _, cg := range v.Grading.Claims {
		c := g.claims[cg.ClaimID]
		if c == nil || !c.Material() {
			continue
		}
		d.ClaimTable = append(d.ClaimTable, rowOf(cg))
	}
	for _, id := range s.ReliedCritical {
		if cg, ok := g.grades[id]; ok {
			d.CriticalClaims = append(d.CriticalClaims, rowOf(cg))
		}
	}

	// Actions, each tied to what asks for it.
	cured := map[string]bool{} // claim id + defect type with an action already
	for _, row := range d.ClaimTable {
		cg := g.grades[row.ClaimID]
		for _, df := range cg.Defects {
			if !df.Open() || cured[row.ClaimID+"\x00"+string(df.Type)] {
				continue
			}
			cured[row.ClaimID+"\x00"+string(df.Type)] = true
			d.Actions = append(d.Actions, Action{Type: string(df.CureProtocol), ClaimIDs: []string{row.ClaimID}, DefectType: string(df.Type),
				Detail: g.human(fmt.Sprintf("%s on %s: %s", df.Type, cg.ClaimKey, df.Description)), Source: "registry defect of " + cg.ClaimKey})
		}
		if cg.Verdict == debate.VerdictBlocked {
			a := Action{Type: "MISSING_DOCUMENT", ClaimIDs: []string{row.ClaimID}, Source: "verdict BLOCKED of " + cg.ClaimKey,
				Detail: fmt.Sprintf("%s has no evidence span: provide the source document", cg.ClaimKey)}
			if slices.Contains(row.DefectTypes, string(debate.DefectMissingLink)) {
				a.DefectType = string(debate.DefectMissingLink)
			}
			d.Actions = append(d.Actions, a)
		}
	}
	for _, r := range chs {
		if !r.upheld() {
			continue
		}
		var ids, keys []string
		for _, id := range r.ch.ClaimRefs {
			if g.claims[id] != nil && !cured[id+"\x00"+r.ch.DefectType] {
				cured[id+"\x00"+r.ch.DefectType] = true
				ids = append(ids, id)
				keys = append(keys, g.key(id))
			}
		}
		if len(ids) == 0 {
			continue
		}
		d.Actions = append(d.Actions, Action{Type: cmp.Or(r.ch.CureProtocol, string(debate.CureRequestSource)), ClaimIDs: ids, DefectType: r.ch.DefectType,
			Detail: g.human(fmt.Sprintf("%s on %s: %s", r.ch.DefectType, strings.Join(keys, ", "), withoutEvidenceList(r.ch.Description))),
			Source: fmt.Sprintf("challenge %s by %s, upheld", r.ch.ChallengeID, r.role)})
	}
	for _, f := range s.Flagged {
		if cured[f.ClaimID+"\x00"+string(f.Type)] {
			continue
		}
		cured[f.ClaimID+"\x00"+string(f.Type)] = true
		d.Actions = append(d.Actions, Action{Type: string(f.CureProtocol), ClaimIDs: []string{f.ClaimID}, DefectType: string(f.Type),
			Detail: g.human(fmt.Sprintf("%s %s", f.Type, f.Description)), Source: "defect flagged by " + f.Actor})
	}
	for _, r := range s.Reviews {
		d.Actions = append(d.Actions, Action{Type: "HUMAN_REVIEW", ClaimIDs: r.ClaimIDs, Detail: g.human(r.Reason),
			Source: fmt.Sprintf("human review requested by the arbiter in round %d", r.Round)})
	}
	for _, q := range s.OpenQuestions {
		src := "open question"
		for _, o := range outs {
			if slices.Contains(o.OpenQuestions, q) {
				src = fmt.Sprintf("question of the %s, round %d", o.Role, o.RoundNumber)
				break
			}
		}
		d.Actions = append(d.Actions, Action{Type: "QUESTION", Detail: g.human(q), Source: src})
	}
	arb, hasArb := last[debate.RoleArbiter]
	if hasArb {
		for _, t := range arb.Muhasabah.FalsifiabilityTests {
			d.Actions = append(d.Actions, Action{Type: "TEST", Detail: g.human(t.TestDescription + " Needs " + lowerFirst(t.RequiredEvidence)),
				Source: fmt.Sprintf("falsifiability test of the arbiter, round %d", arb.RoundNumber)})
			d.WouldChange = append(d.WouldChange, g.human(strings.TrimSuffix(t.TestDescription, ".")+": "+lowerFirst(t.PassFailRule)))
		}
		if h := strings.TrimSpace(arb.Muhasabah.CounterHypothesis); h != "" {
			d.WouldChange = append(d.WouldChange, g.human(h))
		}
	}

	// Recommendation.
	if a, ok := positioned[debate.RoleArbiter]; ok {
		d.Recommendation, d.Confidence = a.Position.Recommendation, a.Position.Confidence
		d.Why = strings.TrimSpace(g.human(argumentOf(a).Text + " " + a.Muhasabah.ConfidenceJustification))
	} else {
		votes := map[string]int{}
		for _, o := range positioned {
			votes[o.Position.Recommendation]++
		}
		best := 0
		for _, rec := range slices.Sorted(maps.Keys(votes)) {
			if votes[rec] > best {
				d.Recommendation, best = rec, votes[rec]
			}
		}
		d.Why = fmt.Sprintf("The arbiter took no position; %d of the roles' final positions are %s.", best, cmp.Or(d.Recommendation, "none"))
	}

	// Each role's final stance, from its last turn.
	for _, role := range debate.IDISRoles {
		o, ok := last[role]
		if !ok {
			continue
		}
		rs := RoleStance{Role: role, Round: o.RoundNumber, Position: NoPosition, Confidence: o.Muhasabah.Confidence, ClaimIDs: []string{}, ClaimKeys: []string{}}
		if o.Position != nil {
			rs.Position, rs.Confidence = o.Position.Recommendation, o.Position.Confidence
		}
		arg := strongestArgument(o, role, chs)
		rs.Argument = g.human(arg.Text)
		for _, id := range arg.ClaimIDs {
			if g.claims[id] != nil && !slices.Contains(rs.ClaimIDs, id) {
				rs.ClaimIDs = append(rs.ClaimIDs, id)
				rs.ClaimKeys = append(rs.ClaimKeys, g.key(id))
			}
		}
		d.Roles = append(d.Roles, rs)
	}

	// Dissent: the roles whose final position differs from the
	// recommendation, with the evidence the arbiter's rule requires.
	var unbacked []string
	for _, role := range debate.IDISRoles {
		o, ok := positioned[role]
		if !ok || role == debate.RoleArbiter || o.Position.Recommendation == d.Recommendation {
			continue
		}
		upheld, claims := dissentBacking(role, chs, last[role], g)
		if len(upheld)+len(claims) == 0 {
			unbacked = append(unbacked, fmt.Sprintf("%s (%s) has no upheld challenge and relies on no VERIFIED material claim", role, o.Position.Recommendation))
			continue
		}
		x := Dissent{Agent: role, Recommendation: o.Position.Recommendation, Confidence: o.Position.Confidence,
			ClaimRefs: o.Muhasabah.SupportedClaimIDs, UpheldChallenges: upheld, Evidence: []string{}}
		x.Reason = g.human(strongestArgument(o, role, chs).Text)
		for _, id := range upheld {
			for _, r := range chs {
				if r.ch.ChallengeID == id {
					x.Evidence = append(x.Evidence, g.human(fmt.Sprintf("challenge %s upheld: %s", id, r.ch.Description)))
				}
			}
		}
		for _, id := range claims {
			x.Evidence = append(x.Evidence, g.claimFact(id))
		}
		d.Dissent = append(d.Dissent, x)
	}
	if len(d.Dissent) == 0 && len(unbacked) > 0 {
		d.DissentNote = strings.Join(unbacked, "; ")
	}
	d.Summary = summary(d)
	d.Glossary = glossary(d.Markdown())
	return d
}

// strongestArgument is a role's strongest argument in its last turn: the
// argument its structured content names, else its worst upheld
// challenge, else its first sentence with the claims it cites.
func strongestArgument(o debate.AgentOutput, role string, chs []ruled) argumentText {
	if a := argumentOf(o); strings.TrimSpace(a.Text) != "" {
		return a
	}
	var best *ruled
	for i := range chs {
		r := &chs[i]
		if r.role == role && r.upheld() && (best == nil || sevRank(r.ch.Severity) < sevRank(best.ch.Severity)) {
			best = r
		}
	}
	if best != nil {
		return argumentText{Text: best.ch.Description, ClaimIDs: best.ch.ClaimRefs}
	}
	return argumentText{Text: firstSentence(o.Content), ClaimIDs: o.ClaimRefs[:min(3, len(o.ClaimRefs))]}
}

// sevRank orders severities worst first; an unknown one ranks as MINOR.
func sevRank(s string) int {
	if i := slices.Index(debate.Severities, debate.Severity(s)); i >= 0 {
		return i
	}
	return 2
}

// argumentText is the "argument" member of a turn's structured content.
type argumentText struct {
	Text     string   `json:"text"`
	ClaimIDs []string `json:"claim_ids"`
}

func argumentOf(o debate.AgentOutput) argumentText {
	var sc struct {
		Argument argumentText `json:"argument"`
	}
	if len(o.StructuredContent) > 0 {
		_ = json.Unmarshal(o.StructuredContent, &sc) // a turn without one falls back
	}
	return sc.Argument
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

// withoutEvidenceList drops the "Evidence: …" list a challenge
// description ends with: the claim table names the evidence.
func withoutEvidenceList(s string) string {
	if i := strings.Index(s, " Evidence: "); i > 0 {
		return s[:i]
	}
	return s
}

// appendNew appends x to xs unless xs holds it already.
func appendNew[T comparable](xs []T, x T) []T {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
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
	if len(d.Dissent) == 0 {
		b.WriteString(" No evidence-backed dissent.")
	} else {
		var who []string
		for _, x := range d.Dissent {
			who = append(who, x.Agent+" ("+x.Recommendation+")")
		}
		fmt.Fprintf(&b, " Evidence-backed dissent preserved: %s.", strings.Join(who, ", "))
	}
	return b.String()
}

// utilities scores each agent: 1 − Brier score of its stated confidences
// against the arbiter's rulings, minus 0.10 per frivolous challenge, 0.20
// per output the gate rejected and 0.05 per call over quota, within [−1, 1].
// A challenger forecasts each of its challenges with the confidence of the
// output that made it (outcome 1 when upheld, 0 when dismissed); the
// advocate forecasts each round with its position's confidence (outcome:
// the share of that round's challenges dismissed). An agent with no ruled
// forecast has no Brier term.
func utilities(s *state, outs []debate.AgentOutput) map[string]float64 {
	type forecast struct{ p, o float64 }
	type challenger struct {
		role string
		conf float64
		rnd  int
	}
	fc := map[string][]forecast{}
	made := map[string]challenger{}
	for _, o := range outs {
		for _, c := range o.Challenges {
			made[c.ChallengeID] = challenger{o.Role, o.Muhasabah.Confidence, o.RoundNumber}
		}
	}
	upheldShare := map[int][2]int{} // round → upheld, total
	frivolous := map[string]int{}   // role → challenges ruled frivolous
	for _, o := range outs {
		for _, r := range o.Rulings {
			m, ok := made[r.ChallengeID]
			if r.Frivolous {
				frivolous[m.role]++
			}
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
	return out
}

// render is the protocol's Deliverables hook: every accepted agent output
// as debate_round<N>_<role>.json (numbered _2, _3... when a role speaks
// twice a round), the deliverables as debate_summary.json, and their
// Markdown.
func render(events []debate.Event, deliverables json.RawMessage) ([]debate.Artifact, string) {
	var arts []debate.Artifact
	perRound := map[string]int{}
	for _, e := range events {
		if e.Type != EventAgentOutput {
			continue
		}
		var o struct {
			Role  string `json:"role"`
			Round int    `json:"round_number"`
		}
		if json.Unmarshal(e.Payload, &o) != nil {
			continue
		}
		name := fmt.Sprintf("debate_round%d_%s", o.Round, o.Role)
		perRound[name]++
		if n := perRound[name]; n > 1 {
			name = fmt.Sprintf("%s_%d", name, n)
		}
		arts = append(arts, debate.Artifact{Name: name + ".json", Content: e.Payload})
	}
	arts = append(arts, debate.Artifact{Name: "debate_summary.json", Content: deliverables})
	var md string
	var dl Deliverables
	if json.Unmarshal(deliverables, &dl) == nil {
		md = dl.Markdown()
	}
	return arts, md
}

package legal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Request is the DATA document of one agent turn: what the agent (rules or
// model) works from. Kind says which turn it is; the other members are
// filled per kind.
type Request struct {
	Kind  string `json:"kind"`
	Round int    `json:"round"`
	// Agent is the agent speaking (answer, critique, revision).
	Agent      string    `json:"agent,omitempty"`
	Query      string    `json:"query,omitempty"`
	DomainHint string    `json:"domain_hint,omitempty"`
	Context    []Passage `json:"context,omitempty"`
	// Own is the agent's latest output (critique, revision).
	Own *Output `json:"own_output,omitempty"`
	// Target is the output to critique (critique); Other the other agent's
	// latest output (revision).
	Target *Output `json:"target_output,omitempty"`
	Other  *Output `json:"other_output,omitempty"`
	// Received are the critiques of Own (revision).
	Received []Critique `json:"critiques_received,omitempty"`
	// Finals and Summary are the supervisor's only input (synthesis).
	Finals  map[string]*Output `json:"final_revisions,omitempty"`
	Summary *Summary           `json:"debate_summary,omitempty"`
}

// ComposeByRules answers a Request's JSON the way the rules backend does:
// the deterministic agents, used when no model is configured (and by
// OpenAI-compatible test servers that answer like a model from the DATA
// block they receive). Returns an error if the request does not parse or
// names an unknown kind.
func ComposeByRules(data json.RawMessage) (json.RawMessage, error) {
	var r Request
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("legal: rules: request: %w", err)
	}
	var out any
	switch r.Kind {
	case KindAnswer:
		out = rulesAnswer(&r)
	case KindCritique:
		out = rulesCritique(&r)
	case KindRevision:
		out = rulesRevision(&r)
	case KindSynthesis:
		out = rulesSynthesis(&r)
	default:
		return nil, fmt.Errorf("legal: rules: unknown kind %q", r.Kind)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("legal: rules: encode: %w", err)
	}
	return b, nil
}

// Confidence levels of the rules agents.
const (
	confTriple     = 0.7  // a claim stated as a knowledge-graph fact
	confText       = 0.6  // a claim from free text
	confPerExtra   = 0.1  // each corroborating source
	confMax        = 0.9  // the rules agents never claim more
	confNoSource   = 0.2  // a claim the context gives no source for
	confDisputed   = 0.65 // an unjustified claim in a conflict, after revision
	confCapped     = 0.7  // an overclaim, after revision
	maxRulesClaims = 8    // §8: 8–10 main claims; the rules agents keep to 8
)

var communities = map[string]struct {
	words []string
	name  string
}{
	DomainAdatMinangkabau: {[]string{"minangkabau", "minang"}, "Minangkabau"},
	DomainAdatBali:        {[]string{"bali", "balinese"}, "Balinese"},
	DomainAdatJawa:        {[]string{"jawa", "java", "javanese"}, "Javanese"},
}

// community returns the adat domain a query names, or "".
func community(query string) string {
	ts := tokens(query)
	for _, d := range []string{DomainAdatMinangkabau, DomainAdatBali, DomainAdatJawa} {
		for _, w := range communities[d].words {
			if ts[w] {
				return d
			}
		}
	}
	return ""
}

// sentence returns the first sentence of s, clipped to 300 characters.
func sentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	return clip(s, 300)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func label(agent string) string {
	if agent == AgentNLA {
		return "national law"
	}
	return "adat law and formal rules"
}

func tripleKey(t *Triple) string {
	if t == nil {
		return ""
	}
	return norm(t.Subject) + "\x00" + norm(t.Predicate) + "\x00" + norm(t.Object)
}

// assumptionFor is the assumption a claim from a passage of domain rests
// on.
func assumptionFor(domain string) string {
	switch domain {
	case DomainNational:
		return "the estate or dispute falls under the national civil code (KUHPerdata) rather than adat or Islamic law"
	case DomainRuleEngine:
		return "the facts given to the rule engine match the case"
	default:
		return "the parties belong to the " + communities[domain].name + " adat community and the property is governed by its adat"
	}
}

// rulesAnswer is an agent's round-1 answer: one claim per fact (passages
// sharing a triple corroborate one claim) of its remit.
func rulesAnswer(r *Request) *Output {
	o := &Output{Round: r.Round, Agent: r.Agent}
	byKey := map[string]int{}
	for _, p := range r.Context {
		if !remit(r.Agent, p.Domain) {
			continue
		}
		k := tripleKey(p.Triple) // "" without a triple, never a key of byKey
		if i, ok := byKey[k]; ok {
			c := &o.Claims[i]
			c.Evidence = append(c.Evidence, p.SourceID)
			c.Confidence = min(confMax, c.Confidence+confPerExtra)
			if a := assumptionFor(p.Domain); !slices.Contains(c.Assumptions, a) {
				c.Assumptions = append(c.Assumptions, a)
			}
			continue
		}
		if len(o.Claims) == maxRulesClaims {
			continue
		}
		if k != "" {
			byKey[k] = len(o.Claims)
		}
		conf, t := confText, (*Triple)(nil)
		if p.Triple != nil {
			tc := *p.Triple
			conf, t = confTriple, &tc
		}
		o.Claims = append(o.Claims, Claim{ID: fmt.Sprintf("C%d", len(o.Claims)+1), Statement: sentence(p.Text),
			Evidence: []string{p.SourceID}, Confidence: conf, Assumptions: []string{assumptionFor(p.Domain)}, Triple: t})
	}
	if len(o.Claims) == 0 {
		o.Claims = append(o.Claims, Claim{ID: "C1", Risk: true, Confidence: confNoSource, Evidence: []string{},
			Statement:   fmt.Sprintf("No %s source in the context addresses this question, so the %s position cannot be established.", label(r.Agent), label(r.Agent)),
			Assumptions: []string{"the retrieval is complete for this domain"}})
	}
	o.Uncertainties = outsideRemit(r)
	o.OpenQuestions = openQuestions(r, o)
	o.Answer = answerText(r.Agent, o.Claims)
	o.normalize()
	return o
}

// outsideRemit notes the context the agent does not weigh, and adat
// sources of another community than the query's.
func outsideRemit(r *Request) []string {
	var out []string
	byDomain := map[string][]string{}
	var order []string
	want := community(r.Query)
	var foreign []string
	for _, p := range r.Context {
		if remit(r.Agent, p.Domain) {
			if want != "" && p.Domain != want && p.Domain != DomainNational && p.Domain != DomainRuleEngine {
				foreign = append(foreign, p.SourceID)
			}
			continue
		}
		if _, ok := byDomain[p.Domain]; !ok {
			order = append(order, p.Domain)
		}
		byDomain[p.Domain] = append(byDomain[p.Domain], p.SourceID)
	}
	for _, d := range order {
		out = append(out, fmt.Sprintf("The context also holds %s sources (%s) outside this agent's remit.", d, strings.Join(byDomain[d], ", ")))
	}
	if len(foreign) > 0 {
		out = append(out, fmt.Sprintf("Sources %s concern another adat community than the query's (%s).", strings.Join(foreign, ", "), communities[want].name))
	}
	if r.DomainHint == "conflict" {
		out = append(out, "The router flags a conflict between national and adat law for this query.")
	}
	return out[:min(len(out), maxListItems)]
}

// openQuestions asks which norm governs each fact the context answers
// differently inside and outside the agent's remit.
func openQuestions(r *Request, o *Output) []string {
	var out []string
	for _, c := range o.Claims {
		for _, p := range r.Context {
			if remit(r.Agent, p.Domain) || !sameFact(c.Triple, p.Triple) || norm(c.Triple.Object) == norm(p.Triple.Object) {
				continue
			}
			q := fmt.Sprintf("Which norm governs the %s of %s: %q or %q?", c.Triple.Predicate, c.Triple.Subject, c.Triple.Object, p.Triple.Object)
			if !slices.Contains(out, q) && len(out) < maxListItems {
				out = append(out, q)
			}
		}
	}
	return out
}

// answerText is the short structured answer: the agent's remit and its
// claims' statements, disputed ones marked.
func answerText(agent string, claims []Claim) string {
	parts := make([]string, 0, len(claims))
	for _, c := range claims {
		s := c.Statement
		if c.Risk {
			s = "(unsupported) " + s
		} else if c.Confidence < HardConfidence && c.Triple != nil {
			s = "(disputed) " + s
		}
		parts = append(parts, s)
	}
	return clip(fmt.Sprintf("%s (%s): %s", agent, label(agent), strings.Join(parts, " ")), maxText)
}

// absolute words mark a claim stated without qualification.
var absolute = []string{"always", "never", "all", "only", "must", "selalu", "hanya", "harus"}

// rulesCritique is an agent's critique of the other's output: missing
// evidence, domain mismatch, conflict with its own claims, overclaiming
// and self-contradiction; in round 1 it adds minor critiques of scope,
// assumptions and corroboration until it has MinCritiquesRound1.
func rulesCritique(r *Request) *CritiqueSet {
	t := r.Target
	cs := &CritiqueSet{Round: r.Round, Agent: r.Agent, Target: other(r.Agent), Critiques: []Critique{}}
	if t == nil {
		return cs
	}
	src := Options{Context: r.Context}.sources()
	want := community(r.Query)
	add := func(claim, issue, sev, desc, fix string) {
		if len(cs.Critiques) < maxCritiques {
			cs.Critiques = append(cs.Critiques, Critique{ID: fmt.Sprintf("K%d", len(cs.Critiques)+1), TargetClaimID: claim,
				IssueType: issue, Severity: sev, Description: desc, SuggestedFix: fix})
		}
	}
	for i, c := range t.Claims {
		if len(c.Evidence) == 0 {
			sev := SeverityMajor
			if c.Confidence >= 0.5 {
				sev = SeverityCritical
			}
			add(c.ID, IssueEvidenceGap, sev, fmt.Sprintf("%s cites no source of the context for: %s", c.ID, clip(c.Statement, 200)),
				fmt.Sprintf("Cite the context source that supports %s, or keep it marked as a risk with a low confidence.", c.ID))
		}
		for _, e := range c.Evidence {
			p := src[e]
			switch {
			case !remit(t.Agent, p.Domain):
				add(c.ID, IssueDomainMismatch, SeverityMajor, fmt.Sprintf("%s cites %s (%s), which is outside %s's remit (%s).", c.ID, e, p.Domain, t.Agent, label(t.Agent)),
					fmt.Sprintf("Ground %s in %s sources, or leave %s to the other agent.", c.ID, label(t.Agent), e))
			case want != "" && p.Domain != want && p.Domain != DomainNational && p.Domain != DomainRuleEngine:
				add(c.ID, IssueDomainMismatch, SeverityMajor, fmt.Sprintf("%s relies on %s (%s adat) but the question concerns %s adat.", c.ID, e, communities[p.Domain].name, communities[want].name),
					fmt.Sprintf("Drop %s or restate it from %s adat sources.", c.ID, communities[want].name))
			}
		}
		if r.Own != nil {
			for _, mine := range r.Own.Claims {
				if !sameFact(c.Triple, mine.Triple) || norm(c.Triple.Object) == norm(mine.Triple.Object) || justified(c) || justified(mine) {
					continue
				}
				sev := SeverityMajor
				if c.Confidence >= HardConfidence {
					sev = SeverityCritical
				}
				add(c.ID, IssueConflict, sev, fmt.Sprintf("%s holds that the %s of %s is %q; %s.%s (%s) holds %q, and %s gives no justification for preferring its norm.",
					c.ID, c.Triple.Predicate, c.Triple.Subject, c.Triple.Object, r.Agent, mine.ID, strings.Join(mine.Evidence, ", "), mine.Triple.Object, c.ID),
					fmt.Sprintf("Justify why the %s norm prevails for the %s of %s, citing a formal rule or jurisprudence from the context, or narrow %s's scope.", t.Agent, c.Triple.Predicate, c.Triple.Subject, c.ID))
			}
		}
		if c.Confidence > 0.8 && len(c.Evidence) < 2 {
			add(c.ID, IssueOverclaim, SeverityMajor, fmt.Sprintf("%s claims confidence %.2f on a single source.", c.ID, c.Confidence),
				fmt.Sprintf("Lower %s's confidence to %.1f or cite a corroborating source.", c.ID, confCapped))
		} else if len(c.Evidence) < 2 && slices.ContainsFunc(absolute, func(w string) bool { return tokens(c.Statement)[w] }) {
			add(c.ID, IssueOverclaim, SeverityMinor, fmt.Sprintf("%s states its rule without qualification on a single source.", c.ID),
				fmt.Sprintf("Qualify %s with the conditions under which the rule applies.", c.ID))
		}
		for _, prev := range t.Claims[:i] {
			if sameFact(c.Triple, prev.Triple) && norm(c.Triple.Object) != norm(prev.Triple.Object) {
				add(c.ID, IssueLogicGap, SeverityMajor, fmt.Sprintf("%s contradicts %s of the same answer on the %s of %s (%q against %q).", c.ID, prev.ID, c.Triple.Predicate, c.Triple.Subject, c.Triple.Object, prev.Triple.Object),
					fmt.Sprintf("Reconcile %s with %s: say which norm applies to which case, or drop one of them.", c.ID, prev.ID))
			}
		}
	}
	if r.Round == 1 {
		pad(cs, t, add)
	}
	return cs
}

// pad adds round 1's minor critiques (scope, assumptions, corroboration)
// until the set has MinCritiquesRound1 (§8: no echo chamber).
func pad(cs *CritiqueSet, t *Output, add func(claim, issue, sev, desc, fix string)) {
	kinds := []func(c Claim){
		func(c Claim) {
			add(c.ID, IssueLogicGap, SeverityMinor, fmt.Sprintf("%s does not state the scope of its rule: which persons and which property it covers.", c.ID),
				fmt.Sprintf("State explicitly which heirs and which kind of property %s covers.", c.ID))
		},
		func(c Claim) {
			if len(c.Assumptions) > 0 {
				add(c.ID, IssueLogicGap, SeverityMinor, fmt.Sprintf("%s rests on the assumption %q, which no context source establishes.", c.ID, clip(c.Assumptions[0], 200)),
					fmt.Sprintf("Ask for the fact that establishes the assumption, or state %s conditionally.", c.ID))
			}
		},
		func(c Claim) {
			if len(c.Evidence) == 1 {
				add(c.ID, IssueEvidenceGap, SeverityMinor, fmt.Sprintf("%s rests on one source (%s) only.", c.ID, c.Evidence[0]),
					fmt.Sprintf("Cite a corroborating context source for %s, or keep its confidence at %.1f or below.", c.ID, confCapped))
			}
		},
		func(c Claim) {
			add(c.ID, IssueOverclaim, SeverityMinor, fmt.Sprintf("%s's confidence %.2f does not discount the open questions of the answer.", c.ID, c.Confidence),
				fmt.Sprintf("Discount %s's confidence for the open questions, or answer them.", c.ID))
		},
	}
	for _, k := range kinds {
		for _, c := range t.Claims {
			if len(cs.Critiques) >= MinCritiquesRound1 {
				return
			}
			k(c)
		}
	}
}

// rulesRevision revises the agent's output for the critiques it received:
// it finds evidence for unsupported claims (or keeps them as risks), drops
// claims outside its remit or the query's community, justifies a
// conflicting claim a formal rule backs (or marks it disputed), caps
// overclaims and drops the later of two self-contradicting claims.
func rulesRevision(r *Request) *Output {
	if r.Own == nil {
		return &Output{Round: r.Round, Agent: r.Agent}
	}
	o := r.Own // decoded for this call alone (ComposeByRules): revised in place
	o.Round, o.Agent = r.Round, r.Agent
	src := Options{Context: r.Context}.sources()
	drop := map[string]bool{}
	note := func(s string) {
		if !slices.Contains(o.Uncertainties, s) && len(o.Uncertainties) < maxListItems {
			o.Uncertainties = append(o.Uncertainties, s)
		}
	}
	for _, k := range r.Received {
		i := slices.IndexFunc(o.Claims, func(c Claim) bool { return c.ID == k.TargetClaimID })
		if i < 0 {
			continue
		}
		c := &o.Claims[i]
		switch k.IssueType {
		case IssueEvidenceGap:
			if len(c.Evidence) > 0 {
				continue
			}
			if id := supporting(r, *c); id != "" {
				c.Evidence, c.Risk = []string{id}, false
				continue
			}
			c.Confidence = min(c.Confidence, confNoSource)
			note(fmt.Sprintf("No context source supports %s; it stays a risk.", c.ID))
		case IssueDomainMismatch:
			drop[c.ID] = true
			note(fmt.Sprintf("Dropped %s after critique %s: %s", c.ID, k.ID, clip(k.Description, 200)))
		case IssueConflict:
			if justified(*c) {
				continue
			}
			if rule := formalRule(r, *c, src); rule != "" {
				if !slices.Contains(c.Evidence, rule) {
					c.Evidence = append(c.Evidence, rule)
				}
				c.Justification = fmt.Sprintf("Formal rule %s (rule engine) applies %q to the %s of %s, as %s holds; this specific rule prevails over the general provision %s cites.",
					rule, c.Triple.Object, c.Triple.Predicate, c.Triple.Subject, c.ID, other(r.Agent))
				continue
			}
			c.Confidence = min(c.Confidence, confDisputed)
			if c.Triple == nil {
				// A critique (a model's, say) may call a claim without a
				// fact conflicting: there is no fact to name.
				note(fmt.Sprintf("%s conflicts with the %s position (critique %s); no context source settles which norm prevails.", c.ID, other(r.Agent), k.ID))
				continue
			}
			note(fmt.Sprintf("%s conflicts with the %s position on the %s of %s; no context source settles which norm prevails.", c.ID, other(r.Agent), c.Triple.Predicate, c.Triple.Subject))
		case IssueOverclaim:
			if k.Severity != SeverityMinor {
				c.Confidence = min(c.Confidence, confCapped)
			}
		case IssueLogicGap:
			if k.Severity != SeverityMinor {
				drop[c.ID] = true
				note(fmt.Sprintf("Dropped %s after critique %s: %s", c.ID, k.ID, clip(k.Description, 200)))
			}
		}
	}
	o.Claims = slices.DeleteFunc(o.Claims, func(c Claim) bool { return drop[c.ID] })
	if len(o.Claims) == 0 {
		o.Claims = append(o.Claims, Claim{ID: "C1", Risk: true, Confidence: confNoSource, Evidence: []string{},
			Statement:   fmt.Sprintf("After the critiques, no %s claim of this answer stands on the context.", label(r.Agent)),
			Assumptions: []string{"the retrieval is complete for this domain"}})
	}
	o.Answer = answerText(r.Agent, o.Claims)
	o.normalize()
	return o
}

// supporting finds an uncited passage of the agent's remit that shares
// most words with a claim (at least three), or "".
func supporting(r *Request, c Claim) string {
	best, score := "", 2
	words := tokens(c.Statement)
	for _, p := range r.Context {
		if !remit(r.Agent, p.Domain) || slices.Contains(c.Evidence, p.SourceID) {
			continue
		}
		n := 0
		for w := range tokens(p.Text) {
			if len(w) > 3 && words[w] {
				n++
			}
		}
		if n > score {
			best, score = p.SourceID, n
		}
	}
	return best
}

// formalRule returns a rule engine source of the agent's remit stating the
// claim's fact, or "".
func formalRule(r *Request, c Claim, src map[string]Passage) string {
	if c.Triple == nil {
		return ""
	}
	for _, e := range c.Evidence {
		if src[e].Domain == DomainRuleEngine {
			return e
		}
	}
	for _, p := range r.Context {
		if p.Domain == DomainRuleEngine && remit(r.Agent, p.Domain) && tripleKey(p.Triple) == tripleKey(c.Triple) {
			return p.SourceID
		}
	}
	return ""
}

// rulesSynthesis is the supervisor's synthesis from the final revisions
// and the summary.
func rulesSynthesis(r *Request) *Synthesis {
	s := &Synthesis{AgreedClaims: []string{}, DisputedClaims: []string{}}
	sum := r.Summary
	if sum == nil {
		return s
	}
	var agreed, disputed []string
	for _, a := range sum.AgreedClaims {
		s.AgreedClaims = append(s.AgreedClaims, ref(AgentNLA, a.NLAClaim), ref(AgentALA, a.ALAClaim))
		agreed = append(agreed, a.Statement)
	}
	for _, d := range sum.DisputedClaims {
		s.DisputedClaims = append(s.DisputedClaims, d.Ref)
		disputed = append(disputed, d.Ref+": "+d.Statement)
	}
	var b strings.Builder
	if len(agreed) > 0 {
		fmt.Fprintf(&b, "Both agents agree: %s ", strings.Join(agreed, " "))
	} else {
		b.WriteString("The agents agree on no claim. ")
	}
	for _, c := range sum.Conflicts {
		if c.Resolved {
			fmt.Fprintf(&b, "On the %s of %s the %s view prevails: %s ", c.Predicate, c.Subject, c.JustifiedBy, clip(c.Justification, 300))
		}
	}
	if len(disputed) > 0 {
		fmt.Fprintf(&b, "Still disputed: %s ", strings.Join(disputed, "; "))
	}
	s.NeedsHumanReview = sum.NeedsHumanReview || len(sum.Risks) > 0
	if s.NeedsHumanReview {
		b.WriteString("A human reviewer must decide the open points before this answer is relied on.")
	}
	s.Answer = clip(strings.TrimSpace(b.String()), maxText)
	s.Rationale = clip(fmt.Sprintf("Debate %s after round %d (criteria held: %s; escalation rules: %s); %d agreed, %d disputed, %d risk claims.",
		sum.Outcome, sum.Rounds, orNone(sum.ConvergenceCriteria), orNone(sum.EscalationRules), len(sum.AgreedClaims), len(sum.DisputedClaims), len(sum.Risks)), maxText)
	return s
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

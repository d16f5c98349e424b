package legal

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocol"
)

// Gate rules. An output that breaks any of them is rejected: it is
// recorded with its violations (EventRejected) and never enters the
// debate.
const (
	// RuleSchema: the output is not the seed's JSON (§3): a missing or
	// unknown field, a wrong round or agent, a bad id, enum or range.
	RuleSchema = "SCHEMA"
	// RuleNoFreeFacts: evidence must name the context's source ids, and a
	// critique must target a claim of the output it critiques.
	RuleNoFreeFacts = "NO_FREE_FACTS"
	// RuleEchoChamber: at least MinCritiquesRound1 critiques per agent in
	// round 1 (§8).
	RuleEchoChamber = "ECHO_CHAMBER"
	// RuleSuggestedFix: every critique carries a suggested_fix (§8).
	RuleSuggestedFix = "SUGGESTED_FIX_REQUIRED"
	// RuleTooManyClaims: at most MaxClaims claims per output (§8).
	RuleTooManyClaims = "TOO_MANY_CLAIMS"
	// RuleUnmarkedRisk: a claim without evidence must be marked as a risk
	// (§1).
	RuleUnmarkedRisk = "UNMARKED_RISK"
	// RuleReviewFlag: the supervisor cannot clear needs_human_review.
	RuleReviewFlag = "REVIEW_FLAG"
)

// Bounds the gates enforce.
const (
	// MaxClaims is the most claims an output may make (§8: 8–10).
	MaxClaims = 10
	// MinCritiquesRound1 is the fewest critiques per agent in round 1 (§8).
	MinCritiquesRound1 = 3
	maxCritiques       = 20
	maxText            = 2000
	maxListItems       = 10
)

var (
	claimID    = regexp.MustCompile(`^C[1-9][0-9]?$`)
	critiqueID = regexp.MustCompile(`^K[1-9][0-9]?$`)
	claimRef   = regexp.MustCompile(`^(NLA|ALA)\.(C[1-9][0-9]?)$`)
	issueTypes = []string{IssueEvidenceGap, IssueLogicGap, IssueConflict, IssueDomainMismatch, IssueOverclaim}
	severities = []string{SeverityCritical, SeverityMajor, SeverityMinor}
)

type violations []debate.Violation

func (v *violations) add(rule, field, format string, args ...any) {
	*v = append(*v, debate.Violation{Rule: rule, Field: field, Detail: fmt.Sprintf(format, args...)})
}

// equal checks that an answer restates the round, agent or target it was
// asked for (an int or a string, shown as Go writes it: 2, "NLA").
func (v *violations) equal(field string, got, want any) {
	if got != want {
		v.add(RuleSchema, field, "must be %#v, got %#v", want, got)
	}
}

// text checks a required bounded text.
func (v *violations) text(field, s string) {
	switch {
	case strings.TrimSpace(s) == "":
		v.add(RuleSchema, field, "required")
	case utf8.RuneCountInString(s) > maxText:
		v.add(RuleSchema, field, "at most %d characters", maxText)
	}
}

// list checks a bounded list of non-empty texts.
func (v *violations) list(field string, items []string) {
	if len(items) > maxListItems {
		v.add(RuleSchema, field, "at most %d items", maxListItems)
	}
	for i, s := range items {
		v.text(fmt.Sprintf("%s[%d]", field, i), s)
	}
}

// checkOutput parses and gates an agent's answer or revision for round and
// agent against the context's sources. The output is returned (with nil
// lists made empty) even when it has violations, nil when it does not
// parse.
func checkOutput(raw json.RawMessage, round int, agent string, sources map[string]Passage) (*Output, []debate.Violation) {
	var o Output
	var v violations
	if err := protocol.DecodeStrict(raw, &o); err != nil {
		v.add(RuleSchema, "output", "not an output object: %v", err)
		return nil, v
	}
	o.normalize()
	v.equal("round", o.Round, round)
	v.equal("agent", o.Agent, agent)
	v.text("answer", o.Answer)
	switch {
	case len(o.Claims) == 0:
		v.add(RuleSchema, "claims", "at least one claim is required")
	case len(o.Claims) > MaxClaims:
		v.add(RuleTooManyClaims, "claims", "at most %d claims per agent, got %d", MaxClaims, len(o.Claims))
	}
	ids := map[string]bool{}
	for i, c := range o.Claims {
		f := fmt.Sprintf("claims[%d]", i)
		switch {
		case !claimID.MatchString(c.ID):
			v.add(RuleSchema, f+".id", "must be C1…C99, got %q", c.ID)
		case ids[c.ID]:
			v.add(RuleSchema, f+".id", "duplicate claim id %q", c.ID)
		}
		ids[c.ID] = true
		v.text(f+".statement", c.Statement)
		if c.Confidence < 0 || c.Confidence > 1 {
			v.add(RuleSchema, f+".confidence", "must be within 0..1, got %g", c.Confidence)
		}
		v.list(f+".assumptions", c.Assumptions)
		cited := map[string]bool{}
		for j, e := range c.Evidence {
			ef := fmt.Sprintf("%s.evidence[%d]", f, j)
			switch {
			case cited[e]:
				v.add(RuleSchema, ef, "duplicate evidence %q", e)
			case sources[e].SourceID == "":
				v.add(RuleNoFreeFacts, ef, "%q is not a source id of the context", e)
			}
			cited[e] = true
		}
		if len(c.Evidence) == 0 && !c.Risk {
			v.add(RuleUnmarkedRisk, f+".risk", "claim %s has no evidence: it must be marked as a risk", c.ID)
		}
		if c.Justification != "" {
			v.text(f+".justification", c.Justification)
		}
		if t := c.Triple; t != nil && (strings.TrimSpace(t.Subject) == "" || strings.TrimSpace(t.Predicate) == "" || strings.TrimSpace(t.Object) == "") {
			v.add(RuleSchema, f+".triple", "subject, predicate and object are required")
		}
	}
	v.list("uncertainties", o.Uncertainties)
	v.list("open_questions", o.OpenQuestions)
	return &o, v
}

// checkCritiques parses and gates an agent's critiques of target's output
// in round.
func checkCritiques(raw json.RawMessage, round int, agent string, target *Output) (*CritiqueSet, []debate.Violation) {
	var cs CritiqueSet
	var v violations
	if err := protocol.DecodeStrict(raw, &cs); err != nil {
		v.add(RuleSchema, "critique", "not a critique object: %v", err)
		return nil, v
	}
	cs.Critiques = protocol.NonNil(cs.Critiques)
	v.equal("round", cs.Round, round)
	v.equal("agent", cs.Agent, agent)
	v.equal("target", cs.Target, target.Agent)
	switch {
	case round == 1 && len(cs.Critiques) < MinCritiquesRound1:
		v.add(RuleEchoChamber, "critiques", "round 1 needs at least %d critiques of the other agent, got %d", MinCritiquesRound1, len(cs.Critiques))
	case len(cs.Critiques) > maxCritiques:
		v.add(RuleSchema, "critiques", "at most %d critiques, got %d", maxCritiques, len(cs.Critiques))
	}
	ids := map[string]bool{}
	for i, k := range cs.Critiques {
		f := fmt.Sprintf("critiques[%d]", i)
		switch {
		case !critiqueID.MatchString(k.ID):
			v.add(RuleSchema, f+".id", "must be K1…K99, got %q", k.ID)
		case ids[k.ID]:
			v.add(RuleSchema, f+".id", "duplicate critique id %q", k.ID)
		}
		ids[k.ID] = true
		if !slices.ContainsFunc(target.Claims, func(c Claim) bool { return c.ID == k.TargetClaimID }) {
			v.add(RuleNoFreeFacts, f+".target_claim_id", "%q is not a claim of %s's round %d output", k.TargetClaimID, target.Agent, target.Round)
		}
		if !slices.Contains(issueTypes, k.IssueType) {
			v.add(RuleSchema, f+".issue_type", "must be one of %s", strings.Join(issueTypes, ", "))
		}
		if !slices.Contains(severities, k.Severity) {
			v.add(RuleSchema, f+".severity", "must be one of %s", strings.Join(severities, ", "))
		}
		v.text(f+".description", k.Description)
		if strings.TrimSpace(k.SuggestedFix) == "" {
			v.add(RuleSuggestedFix, f+".suggested_fix", "a critique without a concrete fix is refused")
		} else {
			v.text(f+".suggested_fix", k.SuggestedFix)
		}
	}
	return &cs, v
}

// checkSynthesis parses and gates the supervisor's answer against the
// final outputs and the summary it was given.
func checkSynthesis(raw json.RawMessage, finals map[string]*Output, sum *Summary) (*Synthesis, []debate.Violation) {
	var s Synthesis
	var v violations
	if err := protocol.DecodeStrict(raw, &s); err != nil {
		v.add(RuleSchema, "synthesis", "not a synthesis object: %v", err)
		return nil, v
	}
	s.AgreedClaims, s.DisputedClaims = protocol.NonNil(s.AgreedClaims), protocol.NonNil(s.DisputedClaims)
	v.text("answer", s.Answer)
	v.text("rationale", s.Rationale)
	for _, refs := range []struct {
		field string
		list  []string
	}{{"agreed_claims", s.AgreedClaims}, {"disputed_claims", s.DisputedClaims}} {
		if len(refs.list) > 2*MaxClaims {
			v.add(RuleSchema, refs.field, "at most %d references", 2*MaxClaims)
		}
		for i, r := range refs.list {
			if !hasClaim(finals, r) {
				v.add(RuleNoFreeFacts, fmt.Sprintf("%s[%d]", refs.field, i), "%q is not a claim of the final revisions (AGENT.Cn)", r)
			}
		}
	}
	if sum.NeedsHumanReview && !s.NeedsHumanReview {
		v.add(RuleReviewFlag, "needs_human_review", "the debate was escalated: the supervisor cannot clear the flag")
	}
	return &s, v
}

// hasClaim reports whether ref ("NLA.C1") names a claim of the outputs.
func hasClaim(outs map[string]*Output, ref string) bool {
	m := claimRef.FindStringSubmatch(ref)
	if m == nil || outs[m[1]] == nil {
		return false
	}
	return slices.ContainsFunc(outs[m[1]].Claims, func(c Claim) bool { return c.ID == m[2] })
}

// normalize makes nil lists empty, so outputs encode as the seed's JSON.
func (o *Output) normalize() {
	o.Claims = protocol.NonNil(o.Claims)
	o.Uncertainties = protocol.NonNil(o.Uncertainties)
	o.OpenQuestions = protocol.NonNil(o.OpenQuestions)
	for i := range o.Claims {
		o.Claims[i].Evidence = protocol.NonNil(o.Claims[i].Evidence)
		o.Claims[i].Assumptions = protocol.NonNil(o.Claims[i].Assumptions)
	}
}

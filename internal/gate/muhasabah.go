package gate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// Rule codes. See the package documentation for what each one means.
const (
	RuleSchema                = "SCHEMA"
	RuleMissingMuhasabah      = "MISSING_MUHASABAH"
	RuleConfidenceRange       = "CONFIDENCE_RANGE"
	RuleNoFreeFacts           = "NO_FREE_FACTS"
	RuleNoFreeFactsUnknownRef = "NO_FREE_FACTS_UNKNOWN_REF"
	RuleUnknownRef            = "UNKNOWN_REF"
	RuleFalsifiabilityMissing = "FALSIFIABILITY_MISSING"
	RuleUncertaintiesMissing  = "UNCERTAINTIES_MISSING"
	RuleOverconfidence        = "OVERCONFIDENCE"
	RuleFrivolousChallenge    = "FRIVOLOUS_CHALLENGE"
)

// Rules lists every rule code Validate can report.
var Rules = []string{
	RuleSchema, RuleMissingMuhasabah, RuleConfidenceRange, RuleNoFreeFacts, RuleNoFreeFactsUnknownRef,
	RuleUnknownRef, RuleFalsifiabilityMissing, RuleUncertaintiesMissing, RuleOverconfidence, RuleFrivolousChallenge,
}

// Confidence thresholds of seed 000 §7.1 (strictly above them).
const (
	// FalsifiabilityThreshold: above it, falsifiability tests are required.
	FalsifiabilityThreshold = 0.50
	// OverconfidenceThreshold: above it, uncertainties are required.
	OverconfidenceThreshold = 0.80
)

// Result is Validate's verdict: Valid is true exactly when Violations is
// empty.
type Result struct {
	Valid      bool
	Violations []debate.Violation
}

// Validate is the fail-closed gate (seed 000 §7.2, seed 001 §4.8): it
// checks out's shape (SCHEMA, the rules ParseOutput applies) and every
// Muḥāsabah rule (Muhasabah) against the deal f describes. The violations
// are sorted by rule, field and detail, without duplicates, at most
// MaxViolationsPerRule per rule. A nil output
// is invalid (SCHEMA and MISSING_MUHASABAH); a nil Facts knows no claim, so
// every reference is unknown. roles are the roles of the output's protocol,
// as for ParseOutput.
func Validate(out *debate.AgentOutput, f *Facts, roles []string) Result {
	var vs []debate.Violation
	if out == nil {
		vs = append(vs, debate.Violation{Rule: RuleSchema, Field: rootPath, Detail: "is missing"})
	} else {
		var v debate.Violations
		checkShape(&v, out, false, roles)
		var ve *debate.ValidationError
		if errors.As(v.Err(), &ve) {
			for _, fv := range ve.Violations {
				vs = append(vs, debate.Violation{Rule: RuleSchema, Field: fv.Field, Detail: fv.Description})
			}
		}
	}
	vs = append(vs, Muhasabah(out, f)...)
	vs = capPerRule(sortViolations(vs), MaxViolationsPerRule)
	return Result{Valid: len(vs) == 0, Violations: vs}
}

// MaxViolationsPerRule bounds how many violations of one rule Validate
// reports (the first ones in sorted order), so that a hostile output cannot
// blow up the rejection record; every broken rule is still reported.
const MaxViolationsPerRule = 32

// capPerRule keeps the first n violations of each rule of a sorted list.
func capPerRule(vs []debate.Violation, n int) []debate.Violation {
	var out []debate.Violation
	rule, count := "", 0
	for _, v := range vs {
		if v.Rule != rule {
			rule, count = v.Rule, 0
		}
		if count < n {
			out = append(out, v)
		}
		count++
	}
	return out
}

// Muhasabah checks the Muḥāsabah rules of seed 000 §3.3 and §7.1 and seed
// 001 §4.8 (see the package documentation for each code): the record is
// present (MISSING_MUHASABAH), confidences lie in [0, 1]
// (CONFIDENCE_RANGE), every reference resolves (UNKNOWN_REF), no text of
// the output (content, structured content at any depth, rulings, open
// questions, evidence requests, challenge descriptions) asserts a free fact
// (NO_FREE_FACTS, NO_FREE_FACTS_UNKNOWN_REF), high confidence and positions come with
// falsifiability tests (FALSIFIABILITY_MISSING), weak sources and high
// confidence with uncertainties (UNCERTAINTIES_MISSING, OVERCONFIDENCE),
// and challenges are not frivolous (FRIVOLOUS_CHALLENGE). The confidence
// the thresholds compare is the higher of the record's and the position's;
// one that is not a number counts as 1.
//
// It returns the violations sorted by rule, field and detail; none when
// the record holds. It does not check the output's shape: Validate does.
func Muhasabah(out *debate.AgentOutput, f *Facts) []debate.Violation {
	if out == nil {
		return []debate.Violation{{Rule: RuleMissingMuhasabah, Field: "muhasabah_record", Detail: "is absent: there is no output"}}
	}
	var vs []debate.Violation
	add := func(rule, field, format string, args ...any) {
		vs = append(vs, debate.Violation{Rule: rule, Field: field, Detail: fmt.Sprintf(format, args...)})
	}
	m := &out.Muhasabah

	if emptyRecord(m) {
		add(RuleMissingMuhasabah, "muhasabah_record", "is absent or empty: it supports no claim or calc, accounts for nothing and states no confidence")
	}

	if !inUnit(m.Confidence) {
		add(RuleConfidenceRange, "muhasabah_record.confidence", "is %v, must be a number within [0, 1]", m.Confidence)
	}
	if out.Position != nil && !inUnit(out.Position.Confidence) {
		add(RuleConfidenceRange, "position.confidence", "is %v, must be a number within [0, 1]", out.Position.Confidence)
	}
	conf := effectiveConfidence(m.Confidence)
	if out.Position != nil {
		conf = max(conf, effectiveConfidence(out.Position.Confidence))
	}

	// Every reference must resolve; the known ones are what the output
	// rests on.
	outRefs, supported := map[string]bool{}, map[string]bool{}
	refs := func(field string, ids []string, isCalc bool, into map[string]bool) {
		for i, id := range ids {
			ok := f.isClaim(id)
			what := "claim"
			if isCalc {
				ok, what = f.isCalc(id), "calc"
			}
			if !ok {
				add(RuleUnknownRef, fmt.Sprintf("%s[%d]", field, i), "%q is not a %s of deal %q", clip(id), what, f.DealID())
				continue
			}
			if into != nil {
				into[id] = true
			}
		}
	}
	refs("claim_refs", out.ClaimRefs, false, outRefs)
	refs("calc_refs", out.CalcRefs, true, outRefs)
	refs("muhasabah_record.supported_claim_ids", m.SupportedClaimIDs, false, supported)
	refs("muhasabah_record.supported_calc_ids", m.SupportedCalcIDs, true, supported)
	for i, r := range out.EvidenceRequests {
		refs(fmt.Sprintf("evidence_requests[%d].claim_refs", i), r.ClaimRefs, false, nil)
	}
	all := maps.Clone(outRefs)
	maps.Copy(all, supported)

	// No-Free-Facts (seed 000 §7.1 rule 1, seed 001 §1.2) on every text
	// the output carries besides its challenges: the content, the
	// structured content at any depth (keys and strings), the rulings'
	// reasons, the open questions and the evidence requests. A fact placed
	// anywhere needs the output's references, and a claim or calc cited
	// anywhere must be among them. Other UUIDs there are not checked
	// against the deal: they may be the debate's own ids (a ruling names
	// its challenge).
	sc := scanText(out.Content, f)
	vs = append(vs, sc.textViolations("content", all, f)...)
	for _, t := range outputTexts(out) {
		tsc := scanText(t.text, f)
		tsc.unknown = nil
		vs = append(vs, tsc.textViolations(t.field, all, f)...)
		sc.merge(tsc)
	}
	if sc.factual() {
		if len(outRefs) == 0 {
			add(RuleNoFreeFacts, "claim_refs", "%s", sc.factDetail("claim_refs and calc_refs name no claim or calc of the deal"))
		}
		if len(supported) == 0 {
			add(RuleNoFreeFacts, "muhasabah_record.supported_claim_ids", "%s", sc.factDetail("the record's supported ids name no claim or calc of the deal"))
		}
	}

	// Challenges: not frivolous, and their descriptions assert no free
	// fact (they may rest on the challenge's own claims and evidence).
	for i, ch := range out.Challenges {
		p := fmt.Sprintf("challenges[%d]", i)
		for _, pr := range challengeProblems(ch, f) {
			add(RuleFrivolousChallenge, p+pr.field, "%s", pr.reason)
		}
		chRefs := maps.Clone(all)
		for _, id := range ch.ClaimRefs {
			if f.isClaim(id) {
				chRefs[id] = true
			}
		}
		for _, id := range ch.EvidenceRefs {
			if f.isClaim(id) || f.isCalc(id) {
				chRefs[id] = true
			}
		}
		dsc := scanText(ch.Description, f)
		vs = append(vs, dsc.textViolations(p+".description", chRefs, f)...)
		if dsc.factual() && len(chRefs) == 0 {
			add(RuleNoFreeFacts, p+".description", "%s", dsc.factDetail("the challenge names no claim or calc of the deal"))
		}
	}

	// Falsifiability (seed 000 §7.1 rule 2; seed 001 §4.8: for
	// recommendations).
	tests := m.FalsifiabilityTests
	if len(tests) == 0 {
		switch {
		case out.Position != nil:
			add(RuleFalsifiabilityMissing, "muhasabah_record.falsifiability_tests", "the output takes a position (%s) without a falsifiability test", clip(out.Position.Recommendation))
		case conf > FalsifiabilityThreshold:
			add(RuleFalsifiabilityMissing, "muhasabah_record.falsifiability_tests", "confidence %.2f is above %.2f without a falsifiability test", conf, FalsifiabilityThreshold)
		}
	}
	// requireAll reports each blank field of a list item under rule.
	requireAll := func(rule, path, why string, fields ...fieldText) {
		for _, fld := range fields {
			if blank(fld.text) {
				add(rule, path+"."+fld.field, "is required: %s", why)
			}
		}
	}
	for i, t := range tests {
		requireAll(RuleFalsifiabilityMissing, fmt.Sprintf("muhasabah_record.falsifiability_tests[%d]", i),
			"a falsifiability test states what it tests, the evidence it needs and its pass/fail rule",
			fieldText{"test_description", t.TestDescription}, fieldText{"required_evidence", t.RequiredEvidence}, fieldText{"pass_fail_rule", t.PassFailRule})
	}

	// Uncertainties (seed 000 §7.1 rules 3 and 4; seed 001 §4.8).
	uncs := m.Uncertainties
	if len(uncs) == 0 {
		if weak := weakSources(out, f); len(weak) > 0 {
			add(RuleUncertaintiesMissing, "muhasabah_record.uncertainties", "rests on weak sources (%s) without acknowledging any uncertainty", weakList(weak))
		}
		if conf > OverconfidenceThreshold {
			add(RuleOverconfidence, "muhasabah_record.uncertainties", "confidence %.2f is above %.2f without uncertainties (a counter-hypothesis does not replace them, seed 001 §4.8)", conf, OverconfidenceThreshold)
		}
	}
	for i, u := range uncs {
		requireAll(RuleUncertaintiesMissing, fmt.Sprintf("muhasabah_record.uncertainties[%d]", i),
			"an uncertainty states the weakness, its impact and its mitigation",
			fieldText{"uncertainty", u.Uncertainty}, fieldText{"impact", u.Impact}, fieldText{"mitigation", u.Mitigation})
	}
	return sortViolations(vs)
}

// emptyRecord reports a record that is the zero value, or says as little:
// no supported id, no text, no list and a zero confidence.
func emptyRecord(m *debate.Muhasabah) bool {
	return len(m.SupportedClaimIDs) == 0 && len(m.SupportedCalcIDs) == 0 && blank(m.EvidenceSummary) &&
		blank(m.CounterHypothesis) && len(m.FalsifiabilityTests) == 0 && len(m.Uncertainties) == 0 &&
		len(m.FailureModes) == 0 && m.Confidence == 0 && blank(m.ConfidenceJustification)
}

// effectiveConfidence is the confidence the thresholds compare: one that
// is not a number counts as 1 (fail-closed), the rest is clamped to [0, 1].
func effectiveConfidence(c float64) float64 {
	if math.IsNaN(c) {
		return 1
	}
	return min(max(c, 0), 1)
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// weakSources lists the claims and calcs the output rests on (claim_refs,
// calc_refs and the record's supported ids) that are weak, sorted by their
// description.
func weakSources(out *debate.AgentOutput, f *Facts) []string {
	seen := map[string]bool{}
	var weak []string
	for _, id := range slices.Concat(out.ClaimRefs, out.Muhasabah.SupportedClaimIDs) {
		c := f.claim(id)
		if c == nil || seen[id] || !c.Weak() {
			continue
		}
		seen[id] = true
		name := cmp.Or(c.Key, id)
		why := fmt.Sprintf("grade %s, %s", c.Grade, c.Corroboration)
		if c.FatalOpen {
			why += ", open FATAL defect"
		}
		weak = append(weak, fmt.Sprintf("claim %s (%s)", name, why))
	}
	for _, id := range slices.Concat(out.CalcRefs, out.Muhasabah.SupportedCalcIDs) {
		if f.calc(id) == nil || seen[id] {
			continue
		}
		seen[id] = true
		if g := f.CalcGrade(id); debate.GradeRank(g) > 0 {
			weak = append(weak, fmt.Sprintf("calc %s (grade %s)", id, g))
		}
	}
	slices.Sort(weak)
	return weak
}

func weakList(weak []string) string {
	const n = 5
	if len(weak) <= n {
		return strings.Join(weak, ", ")
	}
	return strings.Join(weak[:n], ", ") + fmt.Sprintf(" and %d more", len(weak)-n)
}

type problem struct{ field, reason string }

// challengeProblems is the frivolous challenge detector (seed 000 §6.3):
// a challenge must reference at least one claim, and only claims of the
// deal; name a defect type of the taxonomy (and, when given, a known
// severity and cure protocol); cite at least one piece of evidence, each an
// evidence item, span, document or calc of the deal, or another claim (a
// challenge never cites the claim it attacks as its own evidence); and
// describe the defect in at least MinChallengeDescription characters. It
// returns every problem, none for a valid challenge. A nil Facts knows no
// claim: every challenge is frivolous.
func challengeProblems(ch debate.Challenge, f *Facts) []problem {
	var ps []problem
	add := func(field, format string, args ...any) {
		ps = append(ps, problem{field, fmt.Sprintf(format, args...)})
	}
	if len(ch.ClaimRefs) == 0 {
		add(".claim_refs", "challenge must reference specific claim_ids")
	}
	attacked := map[string]bool{}
	for i, id := range ch.ClaimRefs {
		if !f.isClaim(id) {
			add(fmt.Sprintf(".claim_refs[%d]", i), "challenge references %q, which is not a claim of deal %q", clip(id), f.DealID())
			continue
		}
		attacked[id] = true
	}
	switch {
	case blank(ch.DefectType):
		add(".defect_type", "challenge must specify a defect type")
	case !slices.Contains(debate.DefectTypes, debate.DefectType(ch.DefectType)):
		add(".defect_type", "challenge names %q, which is not a defect type of the taxonomy", clip(ch.DefectType))
	}
	if ch.Severity != "" && !slices.Contains(debate.Severities, debate.Severity(ch.Severity)) {
		add(".severity", "challenge names %q, which is not a severity (one of %v)", clip(ch.Severity), debate.Severities)
	}
	if ch.CureProtocol != "" && !slices.Contains(debate.CureProtocols, debate.CureProtocol(ch.CureProtocol)) {
		add(".cure_protocol", "challenge names %q, which is not a cure protocol", clip(ch.CureProtocol))
	}
	if len(ch.EvidenceRefs) == 0 {
		add(".evidence_refs", "challenge must cite evidence for the claimed defect")
	}
	for i, id := range ch.EvidenceRefs {
		switch {
		case f.isEvidence(id):
		case attacked[id]:
			add(fmt.Sprintf(".evidence_refs[%d]", i), "challenge cites the claim it attacks (%q) as its own evidence", clip(id))
		case f.isClaim(id):
		default:
			add(fmt.Sprintf(".evidence_refs[%d]", i), "challenge cites %q, which is no evidence item, span, document, calc or claim of deal %q", clip(id), f.DealID())
		}
	}
	switch n := utf8.RuneCountInString(strings.TrimSpace(ch.Description)); {
	case n == 0:
		add(".description", "challenge must describe the claimed defect")
	case n < MinChallengeDescription:
		add(".description", "challenge description has %d characters, at least %d required", n, MinChallengeDescription)
	}
	return ps
}

// sortViolations sorts by rule, field and detail and drops duplicates.
func sortViolations(vs []debate.Violation) []debate.Violation {
	if len(vs) == 0 {
		return nil
	}
	slices.SortFunc(vs, func(a, b debate.Violation) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Detail, b.Detail))
	})
	return slices.Compact(vs)
}

package stratmaster

import (
	"fmt"
	"slices"

	"github.com/debated/debated/internal/debate"
)

// Feedback actions: what the critic asks the next pass to do. Each maps
// onto a directive (apply).
const (
	ActionGatherEvidence   = "gather_evidence"    // look up the named claims; set aside hypotheses below MinEvidence
	ActionRaiseSourceGrade = "raise_source_grade" // search and cite only evidence of MinGrade or better
	ActionAddCounter       = "add_counter_hypothesis"
	ActionCapConfidence    = "cap_confidence"
	ActionAvoidTerms       = "avoid_terms"
	ActionBroadenResearch  = "broaden_research" // look up every claim of the deal
)

// Feedback is one actionable item of the critic's review.
type Feedback struct {
	Action string `json:"action"`
	// Source is the principle id or the metric name that asked for it.
	Source        string             `json:"source"`
	HypothesisIDs []string           `json:"hypothesis_ids,omitempty"`
	ClaimIDs      []string           `json:"claim_ids,omitempty"`
	MinEvidence   int                `json:"min_evidence,omitempty"`
	MinGrade      debate.SourceGrade `json:"min_grade,omitempty"`
	MaxConfidence float64            `json:"max_confidence,omitempty"`
	Terms         []string           `json:"terms,omitempty"`
	Detail        string             `json:"detail"`
}

// PrincipleResult is a principle's check.
type PrincipleResult struct {
	PrincipleID string   `json:"principle_id"`
	Description string   `json:"description"`
	Rule        Rule     `json:"rule"`
	Passed      bool     `json:"passed"`
	Findings    []string `json:"findings"`
}

// MetricResult is a review metric's score.
type MetricResult struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Passed    bool    `json:"passed"`
}

// Review is the constitutional critic's review of one pass.
type Review struct {
	Pass                int               `json:"pass"`
	ConstitutionID      string            `json:"constitution_id"`
	ConstitutionVersion string            `json:"constitution_version"`
	Passed              bool              `json:"passed"`
	Principles          []PrincipleResult `json:"principles"`
	Metrics             []MetricResult    `json:"metrics"`
	Feedback            []Feedback        `json:"feedback"`
}

// review checks a pass's hypotheses and plan against the constitution. It
// is code, not a prompt: the same work gives the same review whatever the
// backend.
func review(c *Constitution, pass int, hs []Hypothesis, plan *Plan, ev map[string]Evidence) Review {
	r := Review{Pass: pass, ConstitutionID: c.ID, ConstitutionVersion: c.Version,
		Principles: []PrincipleResult{}, Metrics: []MetricResult{}, Feedback: []Feedback{}}
	for _, p := range c.Principles {
		res, fb := checkPrinciple(p, hs, plan, ev)
		r.Principles = append(r.Principles, res)
		if !res.Passed {
			r.Feedback = append(r.Feedback, fb)
		}
	}
	for _, m := range c.ReviewMetrics {
		res, fb := scoreMetric(m, hs, ev)
		r.Metrics = append(r.Metrics, res)
		if !res.Passed {
			r.Feedback = append(r.Feedback, fb)
		}
	}
	r.Passed = len(r.Feedback) == 0
	return r
}

func claimsOf(hs []Hypothesis) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ClaimIDs...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func idsOf(hs []Hypothesis) []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

// checkPrinciple checks one principle and, when it fails, says what to do.
func checkPrinciple(p Principle, hs []Hypothesis, plan *Plan, ev map[string]Evidence) (PrincipleResult, Feedback) {
	res := PrincipleResult{PrincipleID: p.ID, Description: p.Description, Rule: p.Rule, Findings: []string{}}
	fb := Feedback{Source: p.ID}
	var bad []Hypothesis
	switch p.Rule.Kind {
	case RuleMinEvidence:
		for _, h := range hs {
			if len(h.EvidenceIDs) < p.Rule.Int {
				bad = append(bad, h)
				res.Findings = append(res.Findings, fmt.Sprintf("%s cites %d evidence item(s); %d required", h.ID, len(h.EvidenceIDs), p.Rule.Int))
			}
		}
		fb.Action, fb.MinEvidence, fb.ClaimIDs = ActionGatherEvidence, p.Rule.Int, claimsOf(bad)
		fb.Detail = fmt.Sprintf("look up more evidence for %d hypothesis(es) and present only those citing at least %d items", len(bad), p.Rule.Int)
	case RuleMinSourceGrade:
		for _, h := range hs {
			for _, id := range h.EvidenceIDs {
				if debate.GradeRank(ev[id].SourceGrade) > debate.GradeRank(p.Rule.Grade) {
					bad = append(bad, h)
					res.Findings = append(res.Findings, fmt.Sprintf("%s cites %s graded %s; %s or better required", h.ID, id, ev[id].SourceGrade, p.Rule.Grade))
					break
				}
			}
		}
		fb.Action, fb.MinGrade = ActionRaiseSourceGrade, p.Rule.Grade
		fb.Detail = fmt.Sprintf("search and cite only evidence graded %s or better", p.Rule.Grade)
	case RuleRequireCounter:
		if !slices.ContainsFunc(hs, func(h Hypothesis) bool { return h.Stance == StanceCounter }) {
			res.Findings = append(res.Findings, "no counter-hypothesis is presented")
		}
		fb.Action, fb.Detail = ActionAddCounter, "present at least one counter-hypothesis"
	case RuleMaxConfidenceNoA:
		for _, h := range hs {
			if h.Confidence > p.Rule.Float && !slices.ContainsFunc(h.EvidenceIDs, func(id string) bool { return ev[id].SourceGrade == debate.GradeA }) {
				bad = append(bad, h)
				res.Findings = append(res.Findings, fmt.Sprintf("%s has confidence %.2f without grade A evidence; at most %.2f", h.ID, h.Confidence, p.Rule.Float))
			}
		}
		fb.Action, fb.MaxConfidence = ActionCapConfidence, p.Rule.Float
		fb.Detail = fmt.Sprintf("cap the confidence of hypotheses without grade A evidence at %.2f", p.Rule.Float)
	case RuleForbidTerms:
		for _, h := range hs {
			if t := hasTerm(h.Statement, p.Rule.Terms); t != "" {
				bad = append(bad, h)
				res.Findings = append(res.Findings, fmt.Sprintf("%s uses %q", h.ID, t))
			}
		}
		if plan != nil {
			texts := []string{plan.Summary}
			for _, it := range slices.Concat(plan.Recommendations, plan.Risks) {
				texts = append(texts, it.Text)
			}
			for _, s := range texts {
				if t := hasTerm(s, p.Rule.Terms); t != "" {
					res.Findings = append(res.Findings, fmt.Sprintf("the plan uses %q", t))
				}
			}
		}
		fb.Action, fb.Terms = ActionAvoidTerms, p.Rule.Terms
		fb.Detail = "leave the forbidden terms out of hypotheses and plan"
	case RuleMinHypotheses:
		if len(hs) < p.Rule.Int {
			res.Findings = append(res.Findings, fmt.Sprintf("%d hypothesis(es) presented; %d required", len(hs), p.Rule.Int))
		}
		fb.Action = ActionBroadenResearch
		fb.Detail = fmt.Sprintf("broaden the research to reach %d hypotheses", p.Rule.Int)
	}
	fb.HypothesisIDs = idsOf(bad)
	res.Passed = len(res.Findings) == 0
	return res, fb
}

// scoreMetric scores one review metric; a metric passes at or above its
// threshold.
func scoreMetric(m Metric, hs []Hypothesis, ev map[string]Evidence) (MetricResult, Feedback) {
	res := MetricResult{Name: m.Name, Threshold: m.Threshold}
	fb := Feedback{Source: m.Name}
	switch m.Name {
	case MetricHypothesisCount:
		res.Value = float64(len(hs))
		fb.Action, fb.Detail = ActionBroadenResearch, "broaden the research: too few hypotheses"
	case MetricMeanConfidence:
		sum := 0.0
		var weak []Hypothesis
		for _, h := range hs {
			sum += h.Confidence
			if h.Confidence < m.Threshold {
				weak = append(weak, h)
			}
		}
		if len(hs) > 0 {
			res.Value = round2(sum / float64(len(hs)))
		}
		fb.Action, fb.ClaimIDs, fb.HypothesisIDs = ActionGatherEvidence, claimsOf(weak), idsOf(weak)
		fb.Detail = "corroborate the weakest hypotheses"
	case MetricGradeABShare:
		cited := map[string]bool{}
		for _, h := range hs {
			for _, id := range h.EvidenceIDs {
				cited[id] = true
			}
		}
		ab := 0
		for id := range cited {
			if debate.GradeRank(ev[id].SourceGrade) <= debate.GradeRank(debate.GradeB) {
				ab++
			}
		}
		if len(cited) > 0 {
			res.Value = round2(float64(ab) / float64(len(cited)))
		}
		fb.Action, fb.MinGrade = ActionRaiseSourceGrade, debate.GradeB
		fb.Detail = "cite evidence graded A or B"
	case MetricCounterHypotheses:
		for _, h := range hs {
			if h.Stance == StanceCounter {
				res.Value++
			}
		}
		fb.Action, fb.Detail = ActionAddCounter, "present counter-hypotheses"
	}
	res.Passed = res.Value >= m.Threshold
	return res, fb
}

// apply folds the review's feedback into the directives of the next pass.
func (d *Directives) apply(fbs []Feedback) {
	for _, fb := range fbs {
		switch fb.Action {
		case ActionGatherEvidence:
			d.LookupClaims = append(d.LookupClaims, fb.ClaimIDs...)
			d.MinEvidence = max(d.MinEvidence, fb.MinEvidence)
		case ActionRaiseSourceGrade:
			if d.MinGrade == "" || debate.GradeRank(fb.MinGrade) < debate.GradeRank(d.MinGrade) {
				d.MinGrade = fb.MinGrade
			}
		case ActionAddCounter:
			d.RequireCounter = true
		case ActionCapConfidence:
			if d.ConfidenceCap == 0 || fb.MaxConfidence < d.ConfidenceCap {
				d.ConfidenceCap = fb.MaxConfidence
			}
		case ActionAvoidTerms:
			d.AvoidTerms = append(d.AvoidTerms, fb.Terms...)
		case ActionBroadenResearch:
			d.Broaden = true
		}
	}
	slices.Sort(d.LookupClaims)
	d.LookupClaims = slices.Compact(d.LookupClaims)
	slices.Sort(d.AvoidTerms)
	d.AvoidTerms = slices.Compact(d.AvoidTerms)
	d.Feedback = fbs
}

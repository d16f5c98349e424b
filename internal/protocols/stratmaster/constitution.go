package stratmaster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/debated/debated/internal/debate"
)

// Rule kinds: the closed vocabulary of checkable principles. A principle's
// rule is a YAML mapping with exactly one of these keys.
const (
	// RuleMinEvidence (int 1–20): every presented hypothesis cites at least
	// that many distinct evidence items.
	RuleMinEvidence = "min_evidence_per_hypothesis"
	// RuleMinSourceGrade (A–D): every evidence item a presented hypothesis
	// cites has at least that source grade.
	RuleMinSourceGrade = "min_source_grade"
	// RuleRequireCounter (true): at least one counter-hypothesis is
	// presented.
	RuleRequireCounter = "require_counter_hypothesis"
	// RuleMaxConfidenceNoA (above 0, at most 1): a hypothesis without grade A evidence has
	// at most that confidence.
	RuleMaxConfidenceNoA = "max_confidence_without_grade_a"
	// RuleForbidTerms (list of 1–50 terms): no hypothesis statement and no
	// plan text contains one of the terms (case-insensitive, as words).
	RuleForbidTerms = "forbid_terms"
	// RuleMinHypotheses (int 1–100): at least that many hypotheses are
	// presented.
	RuleMinHypotheses = "min_hypotheses"
)

// RuleKinds lists the rule vocabulary.
var RuleKinds = []string{RuleMinEvidence, RuleMinSourceGrade, RuleRequireCounter, RuleMaxConfidenceNoA, RuleForbidTerms, RuleMinHypotheses}

// Review metrics: the closed vocabulary of review_metrics names. A metric
// passes when its value is at least its threshold.
const (
	// MetricHypothesisCount is the number of presented hypotheses.
	MetricHypothesisCount = "hypothesis_count"
	// MetricMeanConfidence is the mean confidence of the presented
	// hypotheses (0 without any).
	MetricMeanConfidence = "mean_confidence"
	// MetricGradeABShare is the share of cited evidence items graded A or B
	// (0 without any).
	MetricGradeABShare = "grade_ab_share"
	// MetricCounterHypotheses is the number of presented
	// counter-hypotheses.
	MetricCounterHypotheses = "counter_hypotheses"
)

// MetricNames lists the review metric vocabulary.
var MetricNames = []string{MetricHypothesisCount, MetricMeanConfidence, MetricGradeABShare, MetricCounterHypotheses}

// maxConstitutionBytes bounds the constitution's YAML text.
const maxConstitutionBytes = 64 << 10

// Constitution is a tenant's constitution: principles as checkable rules and
// the review metrics the critic scores the work with.
type Constitution struct {
	ID            string      `json:"id"`
	Version       string      `json:"version"`
	Principles    []Principle `json:"principles"`
	ReviewMetrics []Metric    `json:"review_metrics"`
}

// Principle is one checkable principle.
type Principle struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Rule        Rule   `json:"rule"`
}

// Rule is a principle's rule: its Kind (one of RuleKinds) and the value of
// that kind. Its JSON form is the YAML's: {"<kind>": value}.
type Rule struct {
	Kind  string
	Int   int
	Grade debate.SourceGrade
	Float float64
	Terms []string
}

// MarshalJSON encodes the rule as {"<kind>": value}.
func (r Rule) MarshalJSON() ([]byte, error) {
	var v any
	switch r.Kind {
	case RuleMinEvidence, RuleMinHypotheses:
		v = r.Int
	case RuleMinSourceGrade:
		v = r.Grade
	case RuleRequireCounter:
		v = true
	case RuleMaxConfidenceNoA:
		v = r.Float
	case RuleForbidTerms:
		v = r.Terms
	default:
		return nil, fmt.Errorf("stratmaster: unknown rule kind %q", r.Kind)
	}
	return json.Marshal(map[string]any{r.Kind: v})
}

// Metric is a review metric and its threshold.
type Metric struct {
	Name      string  `json:"name"`
	Threshold float64 `json:"threshold"`
}

type yamlConstitution struct {
	ID            string          `yaml:"id"`
	Version       string          `yaml:"version"`
	Principles    []yamlPrinciple `yaml:"principles"`
	ReviewMetrics []yamlMetric    `yaml:"review_metrics"`
}

type yamlPrinciple struct {
	ID          string    `yaml:"id"`
	Description string    `yaml:"description"`
	Rule        yaml.Node `yaml:"rule"`
}

type yamlMetric struct {
	Name      string   `yaml:"name"`
	Threshold *float64 `yaml:"threshold"`
}

// ParseConstitution parses and checks a constitution's YAML text. field is
// the field path of the text ("options.constitution"); violations are
// reported under it, e.g. "options.constitution.principles[2].rule".
// Returns a *debate.ValidationError.
func ParseConstitution(text, field string) (*Constitution, error) {
	var v debate.Violations
	if strings.TrimSpace(text) == "" {
		v.Add(field, "required: a YAML constitution (id, version, principles, review_metrics)")
		return nil, v.Err()
	}
	if len(text) > maxConstitutionBytes {
		v.Add(field, "is %d bytes; at most %d", len(text), maxConstitutionBytes)
		return nil, v.Err()
	}
	var y yamlConstitution
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&y); err != nil {
		v.Add(field, "not a valid constitution document: %v", err)
		return nil, v.Err()
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		v.Add(field, "holds more than one YAML document")
		return nil, v.Err()
	}
	c := &Constitution{ID: strings.TrimSpace(y.ID), Version: strings.TrimSpace(y.Version)}
	checkShort(&v, field+".id", c.ID)
	checkShort(&v, field+".version", c.Version)
	if len(y.Principles) == 0 {
		v.Add(field+".principles", "at least one principle is required")
	}
	if len(y.Principles) > 50 {
		v.Add(field+".principles", "at most 50 principles, got %d", len(y.Principles))
	}
	ids := map[string]bool{}
	for i, yp := range y.Principles {
		f := fmt.Sprintf("%s.principles[%d]", field, i)
		p := Principle{ID: strings.TrimSpace(yp.ID), Description: strings.TrimSpace(yp.Description)}
		checkShort(&v, f+".id", p.ID)
		if ids[p.ID] && p.ID != "" {
			v.Add(f+".id", "duplicate principle id %q", p.ID)
		}
		ids[p.ID] = true
		if p.Description == "" {
			v.Add(f+".description", "required")
		} else if len(p.Description) > 1000 {
			v.Add(f+".description", "at most 1000 bytes")
		}
		p.Rule = parseRule(&v, f+".rule", &yp.Rule)
		c.Principles = append(c.Principles, p)
	}
	names := map[string]bool{}
	for i, ym := range y.ReviewMetrics {
		f := fmt.Sprintf("%s.review_metrics[%d]", field, i)
		switch {
		case !slices.Contains(MetricNames, ym.Name):
			v.Add(f+".name", "unknown metric %q; one of %s", ym.Name, strings.Join(MetricNames, ", "))
		case names[ym.Name]:
			v.Add(f+".name", "duplicate metric %q", ym.Name)
		}
		names[ym.Name] = true
		m := Metric{Name: ym.Name}
		switch {
		case ym.Threshold == nil:
			v.Add(f+".threshold", "required")
		case math.IsNaN(*ym.Threshold) || *ym.Threshold < 0 || *ym.Threshold > 1000:
			v.Add(f+".threshold", "must be between 0 and 1000")
		default:
			m.Threshold = *ym.Threshold
		}
		c.ReviewMetrics = append(c.ReviewMetrics, m)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func checkShort(v *debate.Violations, field, s string) {
	switch {
	case s == "":
		v.Add(field, "required")
	case len(s) > 128:
		v.Add(field, "at most 128 bytes")
	}
}

// parseRule reads a rule: a mapping with exactly one key of RuleKinds and
// a value of that kind's type.
func parseRule(v *debate.Violations, field string, n *yaml.Node) Rule {
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		v.Add(field, "must be a mapping with exactly one rule; one of %s", strings.Join(RuleKinds, ", "))
		return Rule{}
	}
	key, val := n.Content[0].Value, n.Content[1]
	r := Rule{Kind: key}
	intIn := func(lo, hi int) {
		if err := val.Decode(&r.Int); err != nil || r.Int < lo || r.Int > hi {
			v.Add(field+"."+key, "must be an integer between %d and %d", lo, hi)
		}
	}
	switch key {
	case RuleMinEvidence:
		intIn(1, 20)
	case RuleMinHypotheses:
		intIn(1, 100)
	case RuleMinSourceGrade:
		var g string
		if err := val.Decode(&g); err != nil || !slices.Contains(debate.SourceGrades, debate.SourceGrade(g)) {
			v.Add(field+"."+key, "must be one of A, B, C, D")
		}
		r.Grade = debate.SourceGrade(g)
	case RuleRequireCounter:
		var b bool
		if err := val.Decode(&b); err != nil || !b {
			v.Add(field+"."+key, "must be true (leave the principle out otherwise)")
		}
	case RuleMaxConfidenceNoA:
		if err := val.Decode(&r.Float); err != nil || math.IsNaN(r.Float) || r.Float <= 0 || r.Float > 1 {
			v.Add(field+"."+key, "must be a number above 0 and at most 1")
		}
	case RuleForbidTerms:
		if err := val.Decode(&r.Terms); err != nil || len(r.Terms) == 0 || len(r.Terms) > 50 {
			v.Add(field+"."+key, "must be a list of 1 to 50 terms")
			break
		}
		for i, t := range r.Terms {
			r.Terms[i] = strings.TrimSpace(t)
			if r.Terms[i] == "" || len(r.Terms[i]) > 100 {
				v.Add(fmt.Sprintf("%s.%s[%d]", field, key, i), "must be 1 to 100 bytes")
			}
		}
	default:
		v.Add(field, "unknown rule %q; one of %s", key, strings.Join(RuleKinds, ", "))
	}
	return r
}

package sanad

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Output keys of the recomputed calcs.
const (
	OutputGrossMarginPercent = "gross_margin_percent"
	OutputRunwayMonths       = "runway_months"
)

// Accepted spellings of calc input names (lower case, '_' between words).
var (
	revenueInputs     = []string{"revenue", "total_revenue", "net_revenue", "revenues", "sales", "arr"}
	cogsInputs        = []string{"cogs", "cost_of_revenue", "cost_of_goods_sold", "cost_of_sales", "cost_of_revenues"}
	grossProfitInputs = []string{"gross_profit"}
	cashInputs        = []string{"cash_balance", "cash", "cash_on_hand", "ending_cash", "cash_and_equivalents"}
	burnInputs        = []string{"monthly_burn", "burn", "net_burn", "monthly_net_burn", "burn_rate", "monthly_burn_rate", "cash_burn"}
)

type calcState struct {
	c        *debate.Calc
	family   Family
	output   map[string]float64
	value    float64
	computed bool
	steps    []debate.Step
}

func (s *calcState) step(rule, format string, args ...any) {
	s.steps = append(s.steps, debate.Step{Rule: rule, Text: fmt.Sprintf(format, args...)})
}

// calcFinding is a claim compared with a calc's recomputed output.
type calcFinding struct {
	calcID string
	output float64
	agree  bool
	detail string
	refs   []string
}

// input finds a calc input by any of its spellings. The arithmetic of a
// calc is in float64: its output is rounded to 1 or 2 decimals anyway.
func input(inputs map[string]debate.Decimal, names []string) (float64, string, bool) {
	norm := make(map[string]string, len(inputs))
	for k := range inputs {
		n := strings.ToLower(strings.TrimSpace(k))
		n = strings.NewReplacer(" ", "_", "-", "_").Replace(n)
		if prev, ok := norm[n]; !ok || k < prev {
			norm[n] = k // deterministic when two spellings collide
		}
	}
	for _, name := range names {
		if k, ok := norm[name]; ok {
			v := inputs[k].Float64()
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, k, false
			}
			return v, k, true
		}
	}
	return 0, "", false
}

// recompute computes a calc's output from its inputs (README: gross margin
// = (revenue - cogs) / revenue × 100, 2 decimals; runway = cash / monthly
// burn, 1 decimal; half-up) and compares it with the claims that state the
// same metric: the calc's input claims of that metric, or, when it names
// none, every claim of the deal of that metric.
func (g *grader) recompute(c *debate.Calc, byID map[string]*claimState, byFamily map[Family][]*claimState) *calcState {
	s := &calcState{c: c, output: map[string]float64{}}
	switch c.Type {
	case debate.CalcGrossMargin:
		s.family = FamilyGrossMargin
		rev, rk, okR := input(c.Inputs, revenueInputs)
		cogs, ck, okC := input(c.Inputs, cogsInputs)
		gp, gk, okG := input(c.Inputs, grossProfitInputs)
		switch {
		case !okR || rev == 0:
			s.step("recompute", "no gross margin: revenue is missing or zero")
		case okC:
			s.value = roundHalfUp((rev-cogs)/rev*100, 0.01)
			s.computed = true
			s.step("recompute", "gross margin = (%s %s - %s %s) / %s × 100 = %s%%", rk, fmtNum(rev), ck, fmtNum(cogs), fmtNum(rev), fmtNum(s.value))
		case okG:
			s.value = roundHalfUp(gp/rev*100, 0.01)
			s.computed = true
			s.step("recompute", "gross margin = %s %s / %s %s × 100 = %s%%", gk, fmtNum(gp), rk, fmtNum(rev), fmtNum(s.value))
		default:
			s.step("recompute", "no gross margin: COGS and gross profit are missing")
		}
		if s.computed {
			s.output[OutputGrossMarginPercent] = s.value
		}
	case debate.CalcRunway:
		s.family = FamilyRunway
		cash, ck, okC := input(c.Inputs, cashInputs)
		burn, bk, okB := input(c.Inputs, burnInputs)
		burn = math.Abs(burn) // burn is often spelled negative
		switch {
		case !okC || !okB || burn == 0:
			s.step("recompute", "no runway: cash or a non-zero monthly burn is missing")
		default:
			s.value = roundHalfUp(cash/burn, 0.1)
			s.computed = true
			s.output[OutputRunwayMonths] = s.value
			s.step("recompute", "runway = %s %s / %s %s = %s months", ck, fmtNum(cash), bk, fmtNum(burn), fmtNum(s.value))
		}
	default:
		s.step("recompute", "calc type %q has no known formula", c.Type)
	}
	if !s.computed {
		return s
	}

	var targets []*claimState
	for _, id := range c.InputClaimIDs {
		if cs, ok := byID[id]; ok && cs.info.hasMetric && cs.info.metric.Family == s.family && !slices.Contains(targets, cs) {
			targets = append(targets, cs)
		}
	}
	if len(targets) == 0 {
		targets = byFamily[s.family]
	}
	refs := g.calcEvidence(c)
	for _, cs := range targets {
		if !cs.info.hasValue {
			continue
		}
		claim := roundHalfUp(cs.info.value, cs.info.precision)
		out := roundHalfUp(s.value, cs.info.precision)
		agree := sameAt(out, claim, cs.info.precision)
		f := calcFinding{calcID: c.ID, output: s.value, agree: agree, refs: refs}
		if agree {
			f.detail = fmt.Sprintf("agrees with claim %s value %s", cs.c.Key, fmtNum(cs.info.value))
			s.step("compare", "claim %s states %s: agrees", cs.c.Key, fmtNum(cs.info.value))
		} else {
			f.detail = fmt.Sprintf("the claim states %s (compared at %s)", fmtNum(cs.info.value), fmtNum(cs.info.precision))
			s.step("compare", "claim %s states %s: INCONSISTENCY", cs.c.Key, fmtNum(cs.info.value))
		}
		cs.calcFindings = append(cs.calcFindings, f)
	}
	return s
}

// calcEvidence lists the evidence items quoting the calc's input cells.
func (g *grader) calcEvidence(c *debate.Calc) []string {
	var refs []string
	for _, span := range sortedValues(c.InputSpanIDs) {
		for _, e := range g.bySpan[span] {
			refs = append(refs, e.ID)
		}
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}

// gradeCalc grades a calc as the worst of its inputs (README rule 6): the
// grades of its input claims and the source grades of the evidence items
// behind its input cells. A reference that resolves to nothing counts as D;
// a cell that no evidence item quotes adds nothing. A calc with no graded
// input at all is D.
func (g *grader) gradeCalc(s *calcState, byID map[string]*claimState) debate.CalcResult {
	worst, graded := 0, false
	consider := func(gr debate.Grade, what string) {
		s.step("grade_input", "%s: %s", what, gr)
		if r := debate.GradeRank(gr); !graded || r > worst {
			worst = r
		}
		graded = true
	}
	ids := slices.Clone(s.c.InputClaimIDs)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if cs, ok := byID[id]; ok {
			consider(cs.result.Grade, "input claim "+cs.c.Key)
		} else {
			consider(debate.GradeD, "input claim "+id+" does not exist")
		}
	}
	keys := make([]string, 0, len(s.c.InputSpanIDs))
	for k := range s.c.InputSpanIDs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		span := s.c.InputSpanIDs[k]
		if _, ok := g.spans[span]; !ok {
			consider(debate.GradeD, fmt.Sprintf("input %s cell %s does not exist", k, span))
			continue
		}
		items := g.bySpan[span]
		if len(items) == 0 {
			s.step("grade_input", "input %s cell %s: no evidence item quotes it", k, span)
			continue
		}
		for _, e := range items {
			gr := e.SourceGrade
			if !validGrade(gr) {
				gr = debate.GradeD
			}
			consider(gr, fmt.Sprintf("input %s cell %s, evidence %s", k, span, e.ID))
		}
	}
	grade := debate.GradeOfRank(worst)
	if !graded {
		grade = debate.GradeD
		s.step("grade", "D: no graded input")
	} else {
		s.step("grade", "%s: the worst of its inputs", grade)
	}
	return debate.CalcResult{CalcID: s.c.ID, Type: s.c.Type, Grade: grade, Output: s.output, Steps: s.steps}
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

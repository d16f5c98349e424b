package sanad

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// claimInfo is what the grader reads a claim as: metric, value in base
// units, period and the precision its value is compared at.
type claimInfo struct {
	metric       Mention
	hasMetric    bool
	metricSource string
	value        float64
	hasValue     bool
	kind         ValueKind
	currency     string
	form         Form
	window       Window
	precision    float64
}

func readClaim(c *debate.Claim) claimInfo {
	var ci claimInfo
	ci.metric, ci.metricSource, ci.hasMetric = claimMetric(c.Predicate, c.Text, c.Key)
	ci.form = ci.metric.Form
	if v := c.Value; v != nil {
		kind, scale, per, cur := unitOf(v.Unit, v.Currency)
		ci.value, ci.hasValue, ci.kind, ci.currency = v.Value.Float64()*scale, true, kind, cur
		switch per {
		case PeriodMonth:
			ci.form = FormMonthly
		case PeriodYear:
			ci.form = FormAnnual
		}
		tw := debate.TimeWindow{}
		if v.TimeWindow != nil {
			tw = *v.TimeWindow
		}
		ci.window = claimWindow(tw.Label, tw.StartDate, tw.EndDate, v.AsOf)
	} else {
		// No structured value: read it from the predicate's right-hand side,
		// else from the text.
		src := c.Text
		if _, rhs, ok := strings.Cut(c.Predicate, "="); ok {
			src = rhs
		}
		if toks := FindValues(src); len(toks) > 0 {
			ci.value, ci.hasValue, ci.kind, ci.currency = toks[0].Value.Num, true, toks[0].Value.Kind, toks[0].Value.Currency
		}
		if w, ok := ParseWindow(c.Predicate + " " + c.Text); ok {
			ci.window = w
		}
	}
	ci.precision = precisionFor(ci.metric.Family, ci.form, ci.value)
	return ci
}

// unitOf reads a claim's unit: "USD", "USD/month", "percent", "months",
// "ratio", "USD thousands", "x".
func unitOf(unit, currency string) (kind ValueKind, scale float64, per Period, cur string) {
	scale = 1
	u := strings.ToLower(strings.TrimSpace(unit))
	cur = strings.ToUpper(strings.TrimSpace(currency))
	for _, p := range []struct {
		mark string
		per  Period
	}{{"/month", PeriodMonth}, {"/mo", PeriodMonth}, {"per month", PeriodMonth}, {"/yr", PeriodYear}, {"/year", PeriodYear}, {"per year", PeriodYear}} {
		if i := strings.Index(u, p.mark); i >= 0 {
			per = p.per
			u = strings.TrimSpace(u[:i])
			break
		}
	}
	for _, s := range []struct {
		mark  string
		scale float64
	}{{" thousands", 1e3}, {" thousand", 1e3}, {" 000s", 1e3}, {" k", 1e3}, {" millions", 1e6}, {" million", 1e6}, {" mm", 1e6}, {" m", 1e6}, {" billions", 1e9}, {" billion", 1e9}, {" bn", 1e9}} {
		if strings.HasSuffix(u, s.mark) {
			scale = s.scale
			u = strings.TrimSpace(strings.TrimSuffix(u, s.mark))
			break
		}
	}
	switch u {
	case "percent", "%", "pct", "percentage", "pp":
		return KindPercent, scale, per, ""
	case "ratio", "fraction", "decimal":
		return KindPercent, 100 * scale, per, ""
	case "months", "month", "mo", "mos":
		return KindMonths, scale, per, ""
	case "x", "multiple", "times":
		return KindMultiple, scale, per, ""
	case "usd", "$", "us$", "dollars":
		return KindCurrency, scale, per, "USD"
	case "eur", "€":
		return KindCurrency, scale, per, "EUR"
	case "gbp", "£":
		return KindCurrency, scale, per, "GBP"
	}
	if len(u) == 3 && strings.EqualFold(u, cur) {
		return KindCurrency, scale, per, cur
	}
	if cur != "" {
		return KindCurrency, scale, per, cur
	}
	return KindBare, scale, per, ""
}

// precisionFor is the rounding step at which values of a metric are
// compared (README rule 4): ARR and revenue $1,000 (their monthly form
// $100), gross margin and NRR 0.01 point, burn and CAC $100, runway 0.1
// month, TAM $1M. Another metric is compared at the precision the claim's
// own value is written with.
func precisionFor(f Family, form Form, v float64) float64 {
	switch f {
	case FamilyARR:
		if form == FormMonthly {
			return 100
		}
		return 1000
	case FamilyGrossMargin, FamilyNRR:
		return 0.01
	case FamilyBurn, FamilyCAC:
		return 100
	case FamilyRunway:
		return 0.1
	case FamilyTAM:
		return 1e6
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', -1, 64)
	if _, frac, ok := strings.Cut(s, "."); ok {
		return math.Pow(10, -float64(min(len(frac), 6)))
	}
	return 1
}

// roundHalfUp rounds x to a multiple of step, halves away from zero. The
// small allowance absorbs binary noise (67.32/0.01 is 6731.999…).
func roundHalfUp(x, step float64) float64 {
	q := x / step
	eps := 1e-9 + 1e-12*math.Abs(q)
	r := math.Floor(math.Abs(q) + 0.5 + eps)
	if q < 0 {
		r = -r
	}
	if step < 1 {
		// Divide by the integer inverse so that 857 × 0.001 does not come
		// out as 0.8570000000000001.
		return r / math.Round(1/step)
	}
	return r * step
}

// sameAt reports whether a and b are equal once rounded to step.
func sameAt(a, b, step float64) bool {
	ra, rb := roundHalfUp(a, step), roundHalfUp(b, step)
	return math.Abs(ra-rb) <= step*1e-6
}

// outcome is what one piece of evidence says about a claim.
type outcome int

const (
	oAgree        outcome = iota // same value at the claim's precision
	oDisagree                    // another value
	oUnitX12                     // the claim is 12 × a monthly figure
	oUnitRelabel                 // the claim is the figure in another form or scale
	oConverted                   // consistent once converted (annual ÷ 12 = monthly claim)
	oWindow                      // another period
	oNoValue                     // names the metric without a value (a header)
	oIncomparable                // a value of another kind (percent vs money)
)

func (o outcome) String() string {
	return [...]string{"agrees", "disagrees", "is the monthly figure ×12", "is relabelled", "agrees after conversion", "speaks of another period", "has no value", "is not comparable"}[o]
}

// compare checks a reading against the claim: period first, then kind,
// form (monthly vs annual) and value at the claim's precision.
func compare(ci *claimInfo, r Reading) (outcome, string) {
	stock := ci.metric.Stock
	if r.Metric != nil {
		stock = r.Metric.Stock
	}
	if !windowsAgree(ci.window, r.Window, stock) {
		return oWindow, fmt.Sprintf("evidence period %s, claim period %s", r.Window, ci.window)
	}
	if r.Value == nil {
		return oNoValue, "names the metric without a value"
	}
	if !ci.hasValue {
		return oIncomparable, "the claim states no value"
	}
	cands := candidates(ci, *r.Value)
	if len(cands) == 0 {
		return oIncomparable, fmt.Sprintf("%s value %q against a %s claim", r.Value.Kind, r.ValueText, ci.kind)
	}
	claim := ci.value
	if ci.metric.Family == FamilyBurn {
		claim = math.Abs(claim) // burn is spelled negative in models
	}
	// Show the reading nearest the claim ("0.725" as 72.5, not 0.725).
	slices.SortStableFunc(cands, func(a, b float64) int {
		return cmp.Compare(math.Abs(a-claim), math.Abs(b-claim))
	})
	p := ci.precision
	same := func(x float64) bool { return sameAt(x, claim, p) }
	anyOf := func(f func(float64) bool) bool {
		for _, c := range cands {
			if f(c) {
				return true
			}
		}
		return false
	}
	ef, cf := r.Form(), ci.form
	show := fmt.Sprintf("%q = %s (claim %s, compared at %s)", r.ValueText, fmtNum(cands[0]), fmtNum(claim), fmtNum(p))
	switch {
	case ef == FormMonthly && cf == FormAnnual:
		switch {
		case anyOf(func(c float64) bool { return same(12 * c) }):
			return oUnitX12, fmt.Sprintf("monthly figure %q ×12 = %s is the annual claim %s", r.ValueText, fmtNum(12*cands[0]), fmtNum(claim))
		case anyOf(same):
			return oUnitRelabel, fmt.Sprintf("monthly figure %q presented as annual", r.ValueText)
		}
		return oDisagree, fmt.Sprintf("monthly figure %q ×12 = %s (claim %s)", r.ValueText, fmtNum(12*cands[0]), fmtNum(claim))
	case ef == FormAnnual && cf == FormMonthly:
		switch {
		case anyOf(same):
			return oUnitRelabel, fmt.Sprintf("annual figure %q presented as monthly", r.ValueText)
		case anyOf(func(c float64) bool { return same(c / 12) }):
			return oConverted, fmt.Sprintf("annual figure %q ÷12 = %s", r.ValueText, fmtNum(cands[0]/12))
		}
		return oDisagree, fmt.Sprintf("annual figure %q ÷12 = %s (claim %s)", r.ValueText, fmtNum(cands[0]/12), fmtNum(claim))
	}
	if anyOf(same) {
		return oAgree, show
	}
	for _, f := range []float64{1e3, 1e6, 1e9} {
		f := f
		if anyOf(func(c float64) bool { return same(c*f) || same(c/f) }) {
			return oUnitRelabel, fmt.Sprintf("%s: off by a factor of %s (thousands or millions read as units)", show, fmtNum(f))
		}
	}
	if r.Metric == nil && cf == FormAnnual && anyOf(func(c float64) bool { return same(12 * c) }) {
		return oUnitX12, fmt.Sprintf("unlabelled figure %q ×12 = %s is the annual claim", r.ValueText, fmtNum(12*cands[0]))
	}
	return oDisagree, show
}

// candidates lists what a value can mean against the claim's kind: a bare
// number against a percentage is either points or a fraction ("0.725" is
// 72.5%). Nil when the kinds cannot be compared.
func candidates(ci *claimInfo, v Value) []float64 {
	n := v.Num
	if ci.metric.Family == FamilyBurn {
		n = math.Abs(n)
	}
	switch ci.kind {
	case KindPercent:
		switch v.Kind {
		case KindPercent:
			return []float64{n}
		case KindBare:
			return []float64{n * 100, n}
		case KindMultiple:
			return []float64{n * 100} // NRR "1.15x"
		}
		return nil
	case KindCurrency:
		if v.Kind == KindCurrency && (v.Currency == "" || ci.currency == "" || v.Currency == ci.currency) || v.Kind == KindBare {
			return []float64{n}
		}
		return nil
	case KindMonths:
		if v.Kind == KindMonths || v.Kind == KindBare {
			return []float64{n}
		}
		return nil
	case KindMultiple:
		if v.Kind == KindMultiple || v.Kind == KindBare {
			return []float64{n}
		}
		return nil
	}
	if v.Kind == KindPercent {
		return nil
	}
	return []float64{n}
}

// fmtNum prints a number without exponent and with thousands separators.
func fmtNum(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if strings.Contains(s, "e") || math.IsInf(x, 0) || math.IsNaN(x) {
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if hasFrac {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

package rules

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// metricNames are the human names of the grader's metrics that do not
// read as their id in lower case (GROSS_MARGIN reads "gross margin").
var metricNames = map[string]string{
	"ARR":  "ARR",
	"CAC":  "CAC",
	"NRR":  "net revenue retention",
	"TAM":  "TAM",
	"COGS": "COGS",
}

// metricName names what a claim measures: the grader's metric, else the
// predicate's function name, else the claim class.
func metricName(c *claimView) string {
	if n, ok := metricNames[c.grade.Metric]; ok {
		return n
	}
	if m := c.grade.Metric; m != "" {
		return strings.ToLower(strings.ReplaceAll(m, "_", " "))
	}
	if p, _, ok := strings.Cut(c.claim.Predicate, "("); ok && strings.TrimSpace(p) != "" {
		return clip(strings.TrimSpace(p), 40)
	}
	return strings.ToLower(strings.ReplaceAll(string(cmp.Or(c.claim.Class, debate.ClaimClassOther)), "_", " ")) + " claim"
}

// formatNumber writes x with thousands separators and at most two
// decimals, trailing zeros dropped: 4500000 → "4,500,000", 72.5 → "72.5".
func formatNumber(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	s := strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64)
	s, neg := strings.CutPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// formatValue writes a claim's value in its unit: "$4,500,000",
// "$350,000/month", "72.5%", "22.5 months".
func formatValue(v *debate.ClaimValue) string {
	if v == nil {
		return ""
	}
	unit := strings.TrimSpace(v.Unit)
	lu := strings.ToLower(unit)
	money := func(x float64) string {
		cur := strings.ToUpper(cmp.Or(v.Currency, unit))
		if strings.HasPrefix(cur, "USD") {
			return "$" + formatNumber(x)
		}
		if c, _, _ := strings.Cut(cur, "/"); c != "" {
			return formatNumber(x) + " " + c
		}
		return formatNumber(x)
	}
	switch {
	case lu == "percent" || lu == "%" || lu == "pct":
		return formatNumber(v.Value.Float64()) + "%"
	case lu == "months" || lu == "month":
		return formatNumber(v.Value.Float64()) + " months"
	case strings.Contains(lu, "/month") || strings.Contains(lu, "/mo"):
		return money(v.Value.Float64()) + "/month"
	case strings.Contains(lu, "/year") || strings.Contains(lu, "/yr"):
		return money(v.Value.Float64()) + "/year"
	case v.Currency != "" || lu == "usd" || lu == "eur" || lu == "gbp":
		return money(v.Value.Float64())
	case unit == "":
		return formatNumber(v.Value.Float64())
	}
	return formatNumber(v.Value.Float64()) + " " + clip(unit, 20)
}

// clip shortens s to at most n runes, with an ellipsis when cut, and
// folds newlines.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func materialityText(c *claimView) string {
	m := cmp.Or(string(c.claim.Materiality), "UNSPECIFIED")
	if c.claim.ICBound {
		return m + ", IC-bound"
	}
	return m
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// plural writes "1 claim" / "2 claims".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// listSome names at most maxListed of xs, then how many more: "a, b and 3
// more". It calls name only on the items it lists (naming a claim
// references it).
func listSome[T any](xs []T, name func(T) string) string {
	parts := mapStrings(first(xs, maxListed), name)
	if len(xs) > maxListed {
		parts = append(parts, fmt.Sprintf("%d more", len(xs)-maxListed))
	}
	return joinList(parts)
}

// mapStrings writes each of xs with f, in order.
func mapStrings[T any](xs []T, f func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// filter returns the xs keep accepts, in order (nil for none).
func filter[T any](xs []T, keep func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// first returns the first n of xs, or all of them when there are fewer.
func first[T any](xs []T, n int) []T { return xs[:min(n, len(xs))] }

// joinList writes "a", "a and b", "a, b and c".
func joinList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// sentence capitalises the first letter and ends s with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if r, n := utf8.DecodeRuneInString(s); unicode.ToUpper(r) != r || r == utf8.RuneError {
		s = strings.ToUpper(string(r)) + s[n:] // already capital: no copy
	}
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, ":") {
		s += "."
	}
	return s
}

// describeEvidence names an evidence item with its document and locator:
// "evidence 1a2b… (FIN_MODEL v1, P&L!B12, grade B)".
func (v *view) describeEvidence(id string) string {
	if c := v.calcBy[id]; c != nil {
		return fmt.Sprintf("calc %s %s (grade %s)", c.calc.Type, id, c.result.Grade)
	}
	if c := v.byID[id]; c != nil {
		return "the record of claim " + c.key()
	}
	e := v.evidence[id]
	if e == nil {
		if s := v.spans[id]; s != nil {
			return "span " + id + v.where(s)
		}
		return "document " + id
	}
	where := ""
	if s := v.spans[e.SourceSpanID]; s != nil {
		where = v.where(s)
	}
	if where == "" {
		return fmt.Sprintf("evidence %s (grade %s)", id, e.SourceGrade)
	}
	return fmt.Sprintf("evidence %s%s, grade %s)", id, strings.TrimSuffix(where, ")"), e.SourceGrade)
}

// where writes a span's document and locator: " (PITCH_DECK v1, page 2)".
func (v *view) where(s *debate.Span) string {
	var parts []string
	if d := v.docs[s.DocumentID]; d != nil {
		parts = append(parts, strings.TrimSpace(string(d.ArtifactType)+" "+d.VersionLabel))
	}
	switch {
	case s.Locator.Cell != "":
		parts = append(parts, clip(s.Locator.Sheet+"!"+s.Locator.Cell, 40))
	case s.Locator.Page > 0:
		parts = append(parts, fmt.Sprintf("page %d", s.Locator.Page))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

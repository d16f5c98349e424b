package sanad

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ValueKind says what a number measures.
type ValueKind int

// Value kinds. A Bare number ("0.725", "4500000") has no mark of its kind;
// comparisons decide what it can be.
const (
	KindBare ValueKind = iota
	KindCurrency
	KindPercent
	KindMonths
	KindMultiple
)

// String names the kind for explanations.
func (k ValueKind) String() string {
	switch k {
	case KindCurrency:
		return "currency"
	case KindPercent:
		return "percent"
	case KindMonths:
		return "months"
	case KindMultiple:
		return "multiple"
	}
	return "bare"
}

// Period is the time basis of a rate ("$350K/mo" is per month).
type Period int

// Periods of a rate.
const (
	PeriodNone Period = iota
	PeriodMonth
	PeriodYear
)

// Value is a number read from text, in base units: currency in units of the
// currency (4.5M is 4500000), percentages in percentage points (72.5% is
// 72.5), durations in months.
type Value struct {
	Num      float64
	Kind     ValueKind
	Currency string // "USD", "EUR", "GBP" when the text names one
	Per      Period // for rates: "$350K/mo", "$4.2M per year"
	// Scaled is true when a suffix or a scale note multiplied the digits
	// ("4.5M", "in thousands").
	Scaled bool
}

// Token is a value found in a text, with its byte range.
type Token struct {
	Value      Value
	Start, End int
}

// ParseValue reads s as a single value: optional sign, currency, digits
// with separators, scale suffix and unit ("$4.5M", "4,500,000", "72.50%",
// "0.725", "22.5 months", "USD 4.5 million", "(1,200)"). Text around the
// value that is not part of it makes ParseValue fail: it reads a cell or a
// number, not a sentence (see FindValues). Something that is not a number
// ("ARR", "N/A", "—", "Q4", "FY25") is never read as one.
func ParseValue(s string) (Value, bool) {
	s = strings.TrimSpace(s)
	toks := scanValues(s, 1)
	if len(toks) != 1 || toks[0].Start != 0 || strings.TrimSpace(s[toks[0].End:]) != "" {
		return Value{}, false
	}
	return toks[0].Value, true
}

// FindValues returns the values in text, in order, skipping anything that
// is part of a date or a period (see ParseWindow) and bare years in text
// that has words. A scale note ("($000)", "in millions") multiplies every
// value without its own suffix.
func FindValues(text string) []Token {
	return findValues(text, findWindows(text, false))
}

// findValues is FindValues with the text's periods already found (bare
// years among them are not masked: a cell "2025" is a number).
func findValues(text string, windows []wtok) []Token {
	masked := maskWith(text, windows)
	scale, scaled := 1.0, false
	if lo, hi, sc, ok := scaleNote(masked); ok {
		// The note's own digits ("$000") are not a value.
		scale, scaled = sc, true
		masked = masked[:lo] + strings.Repeat(" ", hi-lo) + masked[hi:]
	}
	toks := scanValues(masked, -1)
	hasWords := containsLetter(masked)
	out := toks[:0]
	for _, t := range toks {
		if hasWords && isYearLike(masked[t.Start:t.End], t.Value) {
			continue // "Revenue 2025": a year, not an amount
		}
		if scaled && !t.Value.Scaled && (t.Value.Kind == KindBare || t.Value.Kind == KindCurrency) {
			t.Value.Num *= scale
			t.Value.Scaled = true
		}
		out = append(out, t)
	}
	return out
}

func containsLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// isYearLike reports a bare integer 1900..2100 spelled without separators.
func isYearLike(raw string, v Value) bool {
	if v.Kind != KindBare || v.Scaled {
		return false
	}
	raw = strings.TrimSpace(raw)
	if len(raw) != 4 {
		return false
	}
	for _, r := range raw {
		if r < '0' || r > '9' {
			return false
		}
	}
	return v.Num >= 1900 && v.Num <= 2100
}

// scaleNote finds a note that the figures are in thousands or millions,
// and its byte range.
func scaleNote(text string) (lo, hi int, scale float64, ok bool) {
	l := asciiLower(text)
	for _, n := range []struct {
		marks []string
		scale float64
	}{
		{[]string{"($000s)", "($000)", "(000s)", "(000's)", "($ 000)", "($k)", "(usd k)", "(usd 000)", "in thousands", "(thousands)", "usd thousands", "$ thousands", "('000)", "(‘000)", "in $000", "in $k"}, 1e3},
		{[]string{"($m)", "($mm)", "(usd m)", "(usd mm)", "in millions", "(millions)", "usd millions", "$ millions", "in $m", "in $mm"}, 1e6},
		{[]string{"($b)", "($bn)", "(usd bn)", "in billions", "(billions)", "usd billions", "in $bn", "in $b"}, 1e9},
	} {
		for _, m := range n.marks {
			if i := strings.Index(l, m); i >= 0 {
				return i, i + len(m), n.scale, true
			}
		}
	}
	return 0, 0, 1, false
}

// asciiLower lower-cases ASCII letters only, keeping byte offsets.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// currencyPrefixes maps a currency mark written before the digits to its
// code. Longer marks first so "US$" wins over "$".
var currencyPrefixes = []struct{ mark, code string }{
	{"US$", "USD"}, {"USD", "USD"}, {"EUR", "EUR"}, {"GBP", "GBP"}, {"$", "USD"}, {"€", "EUR"}, {"£", "GBP"},
}

// suffixes follow the digits, optionally after one space. Matched
// case-insensitively except where case matters (see matchSuffix).
type suffix struct {
	word  string
	scale float64
	kind  ValueKind
	per   Period
}

var suffixWords = []suffix{
	{"thousand", 1e3, KindBare, 0}, {"million", 1e6, KindBare, 0}, {"billion", 1e9, KindBare, 0},
	{"trillion", 1e12, KindBare, 0},
	{"percent", 1, KindPercent, 0}, {"per cent", 1, KindPercent, 0}, {"pct", 1, KindPercent, 0},
	{"months", 1, KindMonths, 0}, {"month", 1, KindMonths, 0}, {"mths", 1, KindMonths, 0}, {"mos", 1, KindMonths, 0},
	{"mo", 1, KindMonths, 0},
	{"bn", 1e9, KindBare, 0}, {"mn", 1e6, KindBare, 0}, {"mm", 1e6, KindBare, 0},
	{"k", 1e3, KindBare, 0}, {"m", 1e6, KindBare, 0}, {"b", 1e9, KindBare, 0},
	{"x", 1, KindMultiple, 0},
}

// scanValues finds up to limit values (all when limit < 0) in s.
func scanValues(s string, limit int) []Token {
	var out []Token
	for i := 0; i < len(s) && (limit < 0 || len(out) < limit); {
		t, ok := scanAt(s, i)
		if !ok {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			continue
		}
		out = append(out, t)
		i = t.End
	}
	return out
}

// scanAt tries to read a value starting exactly at byte i.
func scanAt(s string, i int) (Token, bool) {
	start := i
	if !leftBoundary(s, i) {
		return Token{}, false
	}
	neg, paren := false, false
	if r, w := utf8.DecodeRuneInString(s[i:]); r == '-' || r == '−' || r == '–' {
		neg = true
		i += w
	} else if r == '(' {
		paren = true
		i += w
	}
	currency := ""
	for _, c := range currencyPrefixes {
		if strings.HasPrefix(s[i:], c.mark) {
			j := i + len(c.mark)
			if j < len(s) && s[j] == ' ' {
				j++
			}
			if j < len(s) && (isDigit(s[j]) || (s[j] == '.' && j+1 < len(s) && isDigit(s[j+1]))) {
				// A letter code must not be glued to a preceding word.
				currency = c.code
				i = j
			}
			break
		}
	}
	if !neg && currency != "" && i < len(s) && s[i] == '-' {
		neg = true // "$-350,000"
		i++
	}
	numStr, j, ok := scanDigits(s, i)
	if !ok {
		return Token{}, false
	}
	num, err := strconv.ParseFloat(numStr, 64)
	if err != nil || math.IsInf(num, 0) || math.IsNaN(num) {
		return Token{}, false
	}
	v := Value{Num: num, Currency: currency}
	if currency != "" {
		v.Kind = KindCurrency
	}
	// Suffixes: scale, then unit, then a trailing currency code or a rate.
	j = matchSuffixes(s, j, &v)
	if paren {
		if j < len(s) && s[j] == ')' {
			j++
			neg = true // accounting negative "(1,200)"
		} else {
			return Token{}, false
		}
	}
	if !rightBoundary(s, j) {
		return Token{}, false
	}
	if neg {
		v.Num = -v.Num
	}
	return Token{Value: v, Start: start, End: j}, true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// leftBoundary: a value does not start inside a word or another number
// ("Q4", "FY25", "v2", "x4" are not values).
func leftBoundary(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == ',' || r == '_' || r == '/' || r == '\'' || r == '’' {
		return false
	}
	if r == '-' || r == '−' || r == '–' {
		// A dash after a digit or letter is a range or a compound ("2024-12").
		if i >= 2 {
			p, _ := utf8.DecodeLastRuneInString(s[:i-utf8.RuneLen(r)])
			if unicode.IsLetter(p) || unicode.IsDigit(p) {
				return false
			}
		}
	}
	return true
}

// rightBoundary: a value must not run into a word, another number, a date
// or a range ("4Q25", "2025-12", "10-20", "12/2025", "3:30").
func rightBoundary(s string, j int) bool {
	if j >= len(s) {
		return true
	}
	r, w := utf8.DecodeRuneInString(s[j:])
	if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
		return false
	}
	if r == '-' || r == '/' || r == ':' || r == '–' || r == '.' || r == ',' {
		if j+w < len(s) {
			n, _ := utf8.DecodeRuneInString(s[j+w:])
			if unicode.IsDigit(n) || (r != '.' && r != ',' && unicode.IsLetter(n)) {
				return false
			}
		}
	}
	return true
}

// scanDigits reads "4,500,000.50", "4500000", ".725", "4.500.000" (dots as
// thousands separators when there are several groups) or "4 500 000" with
// no-break or thin spaces. It returns the number in Go syntax and the end.
func scanDigits(s string, i int) (string, int, bool) {
	var b strings.Builder
	j := i
	intDigits := 0
	for j < len(s) && isDigit(s[j]) {
		b.WriteByte(s[j])
		j++
		intDigits++
	}
	// Thousands groups: a separator followed by exactly three digits.
	sep := ""
	for intDigits > 0 && intDigits <= 3 || sep != "" {
		next := groupSep(s, j, sep)
		if next == "" {
			break
		}
		k := j + len(next)
		if k+3 > len(s) || !isDigit(s[k]) || !isDigit(s[k+1]) || !isDigit(s[k+2]) || (k+3 < len(s) && isDigit(s[k+3])) {
			break
		}
		if next == "." && sep == "" {
			// "4.500" alone is a decimal; dots group only when repeated.
			k2 := k + 3
			if k2 >= len(s) || s[k2] != '.' || k2+4 > len(s) || !isDigit(s[k2+1]) || !isDigit(s[k2+2]) || !isDigit(s[k2+3]) {
				break
			}
		}
		sep = next
		b.WriteString(s[k : k+3])
		j = k + 3
		intDigits += 3
	}
	if sep != "." && j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		b.WriteByte('.')
		j++
		for j < len(s) && isDigit(s[j]) {
			b.WriteByte(s[j])
			j++
		}
	} else if intDigits == 0 {
		return "", i, false
	}
	if b.Len() == 0 || b.String() == "." {
		return "", i, false
	}
	return b.String(), j, true
}

// groupSep returns the thousands separator at j ("," "." or a no-break or
// thin space), or "" when there is none or it differs from want.
func groupSep(s string, j int, want string) string {
	if j >= len(s) {
		return ""
	}
	for _, sep := range []string{",", ".", "\u00a0", "\u202f", "\u2009", "'"} {
		if strings.HasPrefix(s[j:], sep) && (want == "" || want == sep) {
			return sep
		}
	}
	return ""
}

// matchSuffixes reads what follows the digits: a scale ("M", "million"), a
// unit ("%", "months", "x"), a currency code ("USD") and a rate ("/mo",
// "per month", "a year").
func matchSuffixes(s string, j int, v *Value) int {
	// Percent sign, directly or after one space.
	if k := skipSpace(s, j, 1); k < len(s) && s[k] == '%' {
		v.Kind = KindPercent
		return k + 1
	}
	if k, sf, ok := matchSuffix(s, j); ok {
		if sf.scale != 1 {
			v.Num *= sf.scale
			v.Scaled = true
		}
		if sf.kind != KindBare {
			v.Kind = sf.kind
		}
		j = k
	}
	// Trailing currency code: "4,500,000 USD".
	if k := skipSpace(s, j, 1); v.Currency == "" {
		for _, c := range []string{"USD", "EUR", "GBP", "dollars"} {
			if hasPrefixFold(s[k:], c) && wordEnd(s, k+len(c)) {
				v.Currency = strings.ToUpper(c)
				if c == "dollars" {
					v.Currency = "USD"
				}
				v.Kind = KindCurrency
				j = k + len(c)
				break
			}
		}
	}
	// Rate: "/mo", "/month", "per month", "a month", "/yr", "per year".
	if v.Kind == KindCurrency || v.Kind == KindBare {
		k := skipSpace(s, j, 1)
		for _, r := range []struct {
			mark string
			per  Period
		}{
			{"/month", PeriodMonth}, {"/mo", PeriodMonth}, {"per month", PeriodMonth}, {"a month", PeriodMonth},
			{"monthly", PeriodMonth}, {"pm", PeriodMonth},
			{"/yr", PeriodYear}, {"/year", PeriodYear}, {"per year", PeriodYear}, {"a year", PeriodYear}, {"per annum", PeriodYear},
			{"annually", PeriodYear}, {"yearly", PeriodYear}, {"p.a.", PeriodYear}, {"pa", PeriodYear},
		} {
			if hasPrefixFold(s[k:], r.mark) && wordEnd(s, k+len(r.mark)) {
				v.Per = r.per
				j = k + len(r.mark)
				break
			}
		}
	}
	return j
}

// matchSuffix matches one suffix word at j (after at most one space). Case
// matters for single letters only in that "M"/"m" are both millions but
// "mo" is months; a suffix must end at a word boundary.
func matchSuffix(s string, j int) (int, suffix, bool) {
	for _, space := range []int{0, 1} {
		k := skipSpace(s, j, space)
		if space == 1 && k == j {
			continue
		}
		for _, sf := range suffixWords {
			if !hasPrefixFold(s[k:], sf.word) || !wordEnd(s, k+len(sf.word)) {
				continue
			}
			// A single-letter scale must touch the digits or be capital:
			// "4.5 m" is too ambiguous (metres, minutes).
			if len(sf.word) == 1 && space == 1 && sf.word != "x" && (s[k] < 'A' || s[k] > 'Z') {
				continue
			}
			if sf.word == "x" && space == 1 {
				continue
			}
			return k + len(sf.word), sf, true
		}
	}
	return j, suffix{}, false
}

func skipSpace(s string, j, max int) int {
	for n := 0; n < max && j < len(s) && s[j] == ' '; n++ {
		j++
	}
	return j
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// wordEnd: position j is not inside a word.
func wordEnd(s string, j int) bool {
	if j >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[j:])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

package sanad

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Month counts months from year 0: year*12 + month-1. The zero Month means
// unknown (no value of ours is in year 0).
type Month int32

// MonthOf returns the Month of year y, month m (1-12).
func MonthOf(y, m int) Month { return Month(y*12 + m - 1) }

// String renders the month as "Dec 2025", or "?" when unknown.
func (m Month) String() string {
	if m == 0 {
		return "?"
	}
	return fmt.Sprintf("%s %d", time.Month(int(m)%12 + 1).String()[:3], int(m)/12)
}

// Window is the period a figure speaks of, at month granularity. A Point is
// a date ("as of Dec 2025"): Start == End. A range covers Start..End
// inclusive ("FY2025" is Jan 2025..Dec 2025). Trailing marks LTM/TTM, whose
// months may be unknown ("LTM revenue").
type Window struct {
	Label      string
	Start, End Month
	Point      bool
	Trailing   bool
}

// Known reports whether the window says anything.
func (w Window) Known() bool { return w.End != 0 || w.Trailing }

// String renders the window for explanations: "as of Dec 2025", "Jan 2025
// to Dec 2025", "LTM Dec 2024 to Nov 2025", "no period".
func (w Window) String() string {
	switch {
	case !w.Known():
		return "no period"
	case w.Point:
		return "as of " + w.End.String()
	case w.End == 0:
		return "LTM (undated)"
	}
	s := w.Start.String() + " to " + w.End.String()
	if w.Trailing {
		s = "LTM " + s
	}
	return s
}

const monthRE = `(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?`

// Window patterns, tried in this order; text matched by one is not matched
// again by a later one. Compiled once; regexps are safe for concurrent use.
var (
	reMonthRange = regexp.MustCompile(`(?i)\b` + monthRE + `(?:\s*[,/]?\s*((?:19|20)\d{2}))?\s*(?:-|–|—|to|through|thru|until)\s*` + monthRE + `\s*[,/-]?\s*((?:19|20)\d{2})\b`)
	reISORange   = regexp.MustCompile(`(?i)\b((?:19|20)\d{2})-(\d{1,2})(?:-\d{1,2})?\s*(?:-|–|—|to|through|thru|until)\s*((?:19|20)\d{2})-(\d{1,2})(?:-\d{1,2})?\b`)
	reTrailing   = regexp.MustCompile(`(?i)\b(?:ltm|ttm|t12m|trailing[\s-]+(?:twelve|12)[\s-]+months?|last[\s-]+(?:twelve|12)[\s-]+months?)\b`)
	reQuarter    = regexp.MustCompile(`(?i)\bQ([1-4])(?:\s*(?:-\s*)?(?:FY\s*)?((?:19|20)\d{2})|\s*(?:'|’|-|FY\s*)(\d{2})|(\d{2}))\b`)
	reQuarter2   = regexp.MustCompile(`(?i)\b([1-4])Q\s*(?:'|’)?((?:19|20)\d{2}|\d{2})\b`)
	reQuarter3   = regexp.MustCompile(`(?i)\b((?:19|20)\d{2})\s*[-/ ]?\s*Q([1-4])\b`)
	reQuarterBar = regexp.MustCompile(`(?i)\bQ[1-4]\b`)
	reHalf       = regexp.MustCompile(`(?i)\bH([12])(?:\s*(?:-\s*)?(?:FY\s*)?((?:19|20)\d{2})|\s*(?:'|’|FY\s*)(\d{2}))\b`)
	reFiscalYear = regexp.MustCompile(`(?i)\b(?:FY|CY|fiscal\s+year|calendar\s+year|fiscal)\s*(?:-\s*)?(?:'|’)?((?:19|20)\d{2}|\d{2})\b`)
	reYearEnd    = regexp.MustCompile(`(?i)\b(?:year[\s-]end|ye|eoy|end\s+of\s+year)\s*(?:'|’)?((?:19|20)\d{2}|\d{2})\b`)
	reAsOf       = regexp.MustCompile(`(?i)\b(?:as\s+of|as\s+at|at|ending|ended|end\s+of|through|per|on)\s+$`)
	reISODate    = regexp.MustCompile(`\b((?:19|20)\d{2})-(\d{1,2})-(\d{1,2})\b`)
	reUSDate     = regexp.MustCompile(`\b(\d{1,2})/(\d{1,2})/((?:19|20)\d{2})\b`)
	reDotDate    = regexp.MustCompile(`\b(\d{1,2})\.(\d{1,2})\.((?:19|20)\d{2})\b`)
	reLongDate   = regexp.MustCompile(`(?i)\b` + monthRE + `\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{2})\b`)
	reDayMonth   = regexp.MustCompile(`(?i)\b(\d{1,2})\s+` + monthRE + `,?\s+((?:19|20)\d{2})\b`)
	reMonthYear  = regexp.MustCompile(`(?i)\b` + monthRE + `(?:\s*[,/-]?\s*((?:19|20)\d{2})|\s*(?:'|’|-)\s*(\d{2}))\b`)
	reISOMonth   = regexp.MustCompile(`\b((?:19|20)\d{2})-(\d{1,2})\b`)
	reSlashMonth = regexp.MustCompile(`\b(\d{1,2})/((?:19|20)\d{2})\b`)
	reYear       = regexp.MustCompile(`\b((?:19|20)\d{2})\b`)
)

// wtok is a window found in a text, with its byte range.
type wtok struct {
	w          Window
	start, end int
	marker     bool // a bare trailing marker ("LTM") or quarter ("Q4") without dates
	year       bool // a bare year ("Revenue 2025"), found only with withYears
}

// ParseWindow reads the period s speaks of: "FY2025", "Q4 2025", "Dec
// 2025", "as of Dec 2025", "2025-12-31", "LTM Revenue (Dec 2024 - Nov
// 2025)", "H1 2025", "2025". It returns false when s names no period.
func ParseWindow(s string) (Window, bool) {
	w := windowOf(findWindows(s, true))
	return w, w.Known()
}

// maskWindows blanks every date and period in text (same byte length), so
// that their digits are not read as values.
func maskWindows(text string) string {
	return maskWith(text, findWindows(text, false))
}

func maskWith(text string, toks []wtok) string {
	if len(toks) == 0 {
		return text
	}
	b := []byte(text)
	for _, t := range toks {
		if t.year {
			continue
		}
		for i := t.start; i < t.end; i++ {
			b[i] = ' '
		}
	}
	return string(b)
}

// windowOf combines the windows of one text into the period it speaks of:
// the first dated window, made trailing when the text has an LTM marker
// (a date after "LTM" is its end month).
func windowOf(toks []wtok) Window {
	var first *Window
	trailing := false
	for i := range toks {
		t := &toks[i]
		if t.w.Trailing && t.w.End == 0 {
			trailing = true
			continue
		}
		if t.w.End != 0 && first == nil {
			first = &t.w
		}
	}
	switch {
	case first == nil && trailing:
		return Window{Label: "LTM", Trailing: true}
	case first == nil:
		return Window{}
	case trailing:
		w := *first
		w.Trailing = true
		if w.Point || w.Start == w.End {
			w.Start, w.Point = w.End-11, false
		}
		w.Label = "LTM " + w.Label
		return w
	}
	return *first
}

// findWindows finds the dates and periods in text. Bare years count only
// when withYears is set and the text has words (a cell "2025" is a number).
func findWindows(text string, withYears bool) []wtok {
	var toks []wtok
	// used marks the bytes already read as a period, so that a later,
	// looser pattern does not read them again.
	used := make([]bool, len(text))
	taken := func(a, b int) bool {
		for i := a; i < b; i++ {
			if used[i] {
				return true
			}
		}
		return false
	}
	mark := func(a, b int) {
		for i := a; i < b; i++ {
			used[i] = true
		}
	}
	add := func(re *regexp.Regexp, conv func(m []string) (Window, bool), marker bool) {
		for _, loc := range re.FindAllStringSubmatchIndex(text, -1) {
			if taken(loc[0], loc[1]) || inNumber(text, loc[0], loc[1]) {
				continue
			}
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = text[loc[2*i]:loc[2*i+1]]
				}
			}
			w, ok := conv(m)
			if !ok {
				continue
			}
			w.Label = strings.TrimSpace(m[0])
			start := loc[0]
			if !marker && !w.Trailing {
				// "as of Dec 2025": a period after "as of" is its end date;
				// the words are masked with the date.
				if p, ok := asOfBefore(text, start); ok && !taken(p, start) {
					w.Point, w.Start = true, w.End
					start = p
				}
			}
			mark(start, loc[1])
			toks = append(toks, wtok{w: w, start: start, end: loc[1], marker: marker})
		}
	}
	add(reMonthRange, func(m []string) (Window, bool) {
		m2, y2 := monthNum(m[3]), atoi(m[4])
		m1, y1 := monthNum(m[1]), atoi(m[2])
		if y1 == 0 {
			y1 = y2
			if m1 > m2 {
				y1--
			}
		}
		return rangeWindow(MonthOf(y1, m1), MonthOf(y2, m2))
	}, false)
	add(reISORange, func(m []string) (Window, bool) {
		return rangeWindow(monthOK(atoi(m[1]), atoi(m[2])), monthOK(atoi(m[3]), atoi(m[4])))
	}, false)
	add(reTrailing, func([]string) (Window, bool) { return Window{Trailing: true}, true }, true)
	add(reQuarter, func(m []string) (Window, bool) { return quarter(year(m[2]+m[3]+m[4]), atoi(m[1])) }, false)
	add(reQuarter2, func(m []string) (Window, bool) { return quarter(year(m[2]), atoi(m[1])) }, false)
	add(reQuarter3, func(m []string) (Window, bool) { return quarter(atoi(m[1]), atoi(m[2])) }, false)
	add(reHalf, func(m []string) (Window, bool) {
		y, h := year(m[2]+m[3]), atoi(m[1])
		return rangeWindow(MonthOf(y, 6*h-5), MonthOf(y, 6*h))
	}, false)
	add(reFiscalYear, func(m []string) (Window, bool) {
		// Fiscal years are taken as calendar years, as the deal files do.
		y := year(m[1])
		return rangeWindow(MonthOf(y, 1), MonthOf(y, 12))
	}, false)
	add(reYearEnd, func(m []string) (Window, bool) { return pointWindow(monthOK(year(m[1]), 12)) }, false)
	add(reISODate, func(m []string) (Window, bool) { return pointWindow(dateMonth(atoi(m[1]), atoi(m[2]), atoi(m[3]))) }, false)
	add(reUSDate, func(m []string) (Window, bool) { return pointWindow(dateMonth(atoi(m[3]), atoi(m[1]), atoi(m[2]))) }, false)
	// "31.12.2025": day.month.year, as European documents write dates (two
	// dots and a four-digit year: not a decimal).
	add(reDotDate, func(m []string) (Window, bool) { return pointWindow(dateMonth(atoi(m[3]), atoi(m[2]), atoi(m[1]))) }, false)
	add(reLongDate, func(m []string) (Window, bool) { return pointWindow(dateMonth(atoi(m[3]), monthNum(m[1]), atoi(m[2]))) }, false)
	add(reDayMonth, func(m []string) (Window, bool) { return pointWindow(dateMonth(atoi(m[3]), monthNum(m[2]), atoi(m[1]))) }, false)
	add(reMonthYear, func(m []string) (Window, bool) {
		y := atoi(m[2])
		if y == 0 {
			y = year(m[3])
		}
		mo := monthOK(y, monthNum(m[1]))
		return rangeWindow(mo, mo)
	}, false)
	add(reISOMonth, func(m []string) (Window, bool) {
		mo := monthOK(atoi(m[1]), atoi(m[2]))
		return rangeWindow(mo, mo)
	}, false)
	add(reSlashMonth, func(m []string) (Window, bool) {
		mo := monthOK(atoi(m[2]), atoi(m[1]))
		return rangeWindow(mo, mo)
	}, false)
	add(reQuarterBar, func([]string) (Window, bool) { return Window{}, true }, true)
	if withYears && containsLetter(text) {
		// A year is not a year inside an amount ("USD 1900", "2025%").
		amounts := scanValues(text, -1)
		inAmount := func(a, b int) bool {
			for _, v := range amounts {
				if a < v.End && v.Start < b && (v.Value.Kind != KindBare || v.Value.Scaled) {
					return true
				}
			}
			return false
		}
		for _, loc := range reYear.FindAllStringSubmatchIndex(text, -1) {
			if taken(loc[0], loc[1]) || inAmount(loc[0], loc[1]) || inNumber(text, loc[0], loc[1]) {
				continue
			}
			y := atoi(text[loc[2]:loc[3]])
			w, _ := rangeWindow(MonthOf(y, 1), MonthOf(y, 12))
			w.Label = text[loc[0]:loc[1]]
			mark(loc[0], loc[1])
			toks = append(toks, wtok{w: w, start: loc[0], end: loc[1], year: true})
		}
	}
	slices.SortFunc(toks, func(a, b wtok) int { return a.start - b.start })
	return toks
}

// inNumber reports whether the digits at either end of text[a:b] belong to
// a longer number: a decimal ("NRR: 1.2092", "2019.5"), a digit group
// ("1,2019", "2019,500"), a longer run of digits, or an amount right after
// a currency sign ("$2019", "€2025"). Such digits are never a year or a
// date: reading "1.2092" as the year 2092 raised false time-window
// mismatches.
func inNumber(text string, a, b int) bool {
	digit := func(i int) bool { return i >= 0 && i < len(text) && text[i] >= '0' && text[i] <= '9' }
	if digit(a) {
		if digit(a-1) || (a >= 2 && (text[a-1] == '.' || text[a-1] == ',') && digit(a-2)) {
			return true
		}
		if r, _ := utf8.DecodeLastRuneInString(text[:a]); r != utf8.RuneError && strings.ContainsRune("$€£¥₹", r) {
			return true
		}
	}
	if digit(b - 1) {
		if digit(b) || (b+1 < len(text) && (text[b] == '.' || text[b] == ',') && digit(b+1)) {
			return true
		}
	}
	return false
}

// asOfBefore finds "as of", "at", "ending", ... right before byte start
// and returns where it begins. Only a short stretch before start is looked
// at, so that reading a long text stays linear.
func asOfBefore(text string, start int) (int, bool) {
	lo := max(0, start-24)
	mm := reAsOf.FindStringIndex(text[lo:start])
	if mm == nil {
		return 0, false
	}
	p := lo + mm[0]
	if p > 0 && isAlnum(asciiLower(text[p-1 : p])[0]) {
		return 0, false // the match began inside a word cut by the stretch
	}
	return p, true
}

func rangeWindow(a, b Month) (Window, bool) {
	if a == 0 || b == 0 || a > b {
		return Window{}, false
	}
	return Window{Start: a, End: b}, true
}

func pointWindow(m Month) (Window, bool) {
	if m == 0 {
		return Window{}, false
	}
	return Window{Start: m, End: m, Point: true}, true
}

func quarter(y, q int) (Window, bool) {
	if y == 0 || q < 1 || q > 4 {
		return Window{}, false
	}
	return rangeWindow(MonthOf(y, 3*q-2), MonthOf(y, 3*q))
}

func monthOK(y, m int) Month {
	if y < 1900 || y > 2199 || m < 1 || m > 12 {
		return 0
	}
	return MonthOf(y, m)
}

func dateMonth(y, m, d int) Month {
	if d < 1 || d > 31 {
		return 0
	}
	return monthOK(y, m)
}

// year reads a 4-digit year, or a 2-digit one as 20YY.
func year(s string) int {
	s = strings.TrimLeft(s, "'’ ")
	n := atoi(s)
	if len(s) == 2 {
		return 2000 + n
	}
	return n
}

func atoi(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0
	}
	return n
}

func monthNum(s string) int {
	s = strings.ToLower(strings.TrimSuffix(s, "."))
	if len(s) < 3 {
		return 0
	}
	switch s[:3] {
	case "jan":
		return 1
	case "feb":
		return 2
	case "mar":
		return 3
	case "apr":
		return 4
	case "may":
		return 5
	case "jun":
		return 6
	case "jul":
		return 7
	case "aug":
		return 8
	case "sep":
		return 9
	case "oct":
		return 10
	case "nov":
		return 11
	case "dec":
		return 12
	}
	return 0
}

// claimWindow is the period a claim speaks of: its time_window (dates, or
// its label when it has no dates), else its as_of date as a point.
func claimWindow(label, start, end, asOf string) Window {
	s, e := isoMonth(start), isoMonth(end)
	if e != 0 {
		if s == 0 {
			s = e
		}
		w := Window{Label: label, Start: s, End: e}
		if lw, ok := ParseWindow(label); ok && lw.Trailing {
			w.Trailing = true
		}
		return w
	}
	if label != "" {
		if w, ok := ParseWindow(label); ok {
			return w
		}
	}
	if m := isoMonth(asOf); m != 0 {
		return Window{Label: "as of " + asOf, Start: m, End: m, Point: true}
	}
	return Window{}
}

// isoMonth reads the month of "2025-12-31" or "2025-12".
func isoMonth(s string) Month {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "T")
	parts := strings.Split(s, "-")
	if len(parts) < 2 || len(parts[0]) != 4 {
		return 0
	}
	return monthOK(atoi(parts[0]), atoi(parts[1]))
}

// windowsAgree decides whether evidence speaking of ev can corroborate or
// contradict a claim speaking of cl. An unknown window on either side is no
// mismatch. An undated LTM agrees only with another LTM. A stock metric
// (ARR, cash, TAM: a level at a date) compares the end months; a flow
// metric (revenue, burn, margin: an amount over a period) compares a point
// with the period's end and a range with the whole range.
func windowsAgree(cl, ev Window, stock bool) bool {
	if !cl.Known() || !ev.Known() {
		return true
	}
	if cl.End == 0 || ev.End == 0 { // an undated LTM on one side
		return cl.Trailing && ev.Trailing
	}
	if stock || cl.Point || ev.Point {
		return cl.End == ev.End
	}
	return cl.Start == ev.Start && cl.End == ev.End
}

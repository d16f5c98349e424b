package main

import (
	"strconv"
	"strings"
)

// firstOf is the first non-empty string, or "-".
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return "-"
}

// exactNumber prints f with every digit it has and none it lacks, the
// integer part grouped by thousands: 3150000 → "3,150,000", 0.125 →
// "0.125", never "3.15e+06". The wire carries doubles; this is a display
// rule, so a figure reads as the deal file wrote it.
func exactNumber(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	out := sign + b.String()
	if hasFrac {
		out += "." + frac
	}
	return out
}

// currencySymbols are the currencies printed with their sign before the
// figure; others are printed as "1,000 CHF".
var currencySymbols = map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}

// money prints an amount of currency exactly: "$3,150,000", "-$12.5",
// "1,000 CHF"; with no currency, the plain number.
func money(f float64, currency string) string {
	cur := strings.ToUpper(strings.TrimSpace(currency))
	if cur == "" {
		return exactNumber(f)
	}
	if sym, ok := currencySymbols[cur]; ok {
		if f < 0 {
			return "-" + sym + exactNumber(-f)
		}
		return sym + exactNumber(f)
	}
	return exactNumber(f) + " " + cur
}

// quantity prints a claim's value with its unit: money when it names a
// currency, a percentage for "percent", otherwise the number and the unit.
func quantity(v float64, unit, currency string) string {
	switch {
	case currency != "":
		s := money(v, currency)
		if rest, ok := strings.CutPrefix(unit, strings.ToUpper(currency)); ok && rest != "" {
			s += rest // "USD/month" → "$120,000/month"
		}
		return s
	case strings.EqualFold(unit, "percent"):
		return exactNumber(v) + "%"
	case unit == "":
		return exactNumber(v)
	}
	return exactNumber(v) + " " + unit
}

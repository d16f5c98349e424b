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
// "0.125", never "3.15e+06". It is for the figures the wire carries as
// doubles (scores, streamed payloads); exact quantities come as decimal
// strings and are printed with groupDecimal.
func exactNumber(f float64) string {
	return groupDecimal(strconv.FormatFloat(f, 'f', -1, 64))
}

// groupDecimal prints a decimal string ("3150000", "-12.5") with its
// integer part grouped by thousands, every digit kept: "3,150,000",
// "-12.5". Text that is not a plain decimal is printed as it is.
func groupDecimal(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return sign + s
	}
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

// money prints an amount of currency, a decimal string, exactly:
// "$3,150,000", "-$12.5", "1,000 CHF"; with no currency, the plain number.
func money(amount, currency string) string {
	cur := strings.ToUpper(strings.TrimSpace(currency))
	if cur == "" {
		return groupDecimal(amount)
	}
	if sym, ok := currencySymbols[cur]; ok {
		if rest, ok := strings.CutPrefix(amount, "-"); ok {
			return "-" + sym + groupDecimal(rest)
		}
		return sym + groupDecimal(amount)
	}
	return groupDecimal(amount) + " " + cur
}

// quantity prints a claim's value, a decimal string, with its unit: money
// when it names a currency, a percentage for "percent", otherwise the number
// and the unit.
func quantity(v, unit, currency string) string {
	switch {
	case currency != "":
		s := money(v, currency)
		if rest, ok := strings.CutPrefix(unit, strings.ToUpper(currency)); ok && rest != "" {
			s += rest // "USD/month" → "$120,000/month"
		}
		return s
	case strings.EqualFold(unit, "percent"):
		return groupDecimal(v) + "%"
	case unit == "":
		return groupDecimal(v)
	}
	return groupDecimal(v) + " " + unit
}

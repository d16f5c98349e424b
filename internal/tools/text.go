package tools

import (
	"strings"
	"unicode"
)

// Terms of the in-memory search. A text becomes a set of terms: its words,
// lower case, with stop words dropped and numbers kept whole ("12,500,000"
// is one term, "12500000"); the spellings of a metric become one concept
// term, so that a query for "ARR" finds "Revenue FY2025" and one for "GM"
// finds "Gross Margin".

// metricSynonyms maps spellings (lower-case words separated by one space)
// to concept terms. The longest spelling wins, so "net revenue retention"
// is NRR, not revenue.
var metricSynonyms = map[string]string{
	"arr": "metric:revenue", "mrr": "metric:revenue", "revenue": "metric:revenue", "revenues": "metric:revenue",
	"annual recurring revenue": "metric:revenue", "monthly recurring revenue": "metric:revenue",
	"recurring revenue": "metric:revenue", "run rate": "metric:revenue",

	"gross margin": "metric:gross_margin", "gross margins": "metric:gross_margin", "gm": "metric:gross_margin",
	"gross profit margin": "metric:gross_margin",

	"burn": "metric:burn", "burn rate": "metric:burn", "cash burn": "metric:burn", "net burn": "metric:burn",

	"runway": "metric:runway", "cash runway": "metric:runway",

	"cac": "metric:cac", "customer acquisition cost": "metric:cac", "customer acquisition costs": "metric:cac",

	"nrr": "metric:nrr", "ndr": "metric:nrr", "net revenue retention": "metric:nrr",
	"net dollar retention": "metric:nrr", "net retention": "metric:nrr",

	"tam": "metric:tam", "total addressable market": "metric:tam", "addressable market": "metric:tam",
	"market size": "metric:tam",
}

// maxSynonymWords is the most words of a spelling in metricSynonyms.
const maxSynonymWords = 3

var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "has": true, "in": true, "is": true, "it": true, "its": true, "of": true,
	"on": true, "or": true, "that": true, "the": true, "this": true, "to": true, "was": true, "were": true,
	"what": true, "which": true, "with": true,
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// words splits a text into lower-case words: runs of letters and digits. A
// ',' or '.' between two digits joins them, and thousands separators are
// dropped ("12,500,000" → "12500000", "68.50" stays).
func words(s string) []string {
	rs := []rune(strings.ToLower(s))
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case isWordRune(r):
			cur = append(cur, r)
		case (r == ',' || r == '.') && i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]) && len(cur) > 0:
			if r == '.' {
				cur = append(cur, r)
			}
		default:
			flush()
		}
	}
	flush()
	return out
}

// terms returns the search terms of a text in order, with repeats.
func terms(s string) []string {
	ws := words(s)
	var out []string
next:
	for i := 0; i < len(ws); {
		for n := min(maxSynonymWords, len(ws)-i); n >= 1; n-- {
			if c, ok := metricSynonyms[strings.Join(ws[i:i+n], " ")]; ok {
				out = append(out, c)
				i += n
				continue next
			}
		}
		if !stopWords[ws[i]] {
			out = append(out, ws[i])
		}
		i++
	}
	return out
}

// termSet returns the distinct terms of a text.
func termSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, t := range terms(s) {
		set[t] = true
	}
	return set
}

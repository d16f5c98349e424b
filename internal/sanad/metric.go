package sanad

import (
	"slices"
	"strings"
	"unicode"
)

// Family is a metric, whatever its spelling: "ARR", "Annual Recurring
// Revenue" and "revenue" are FamilyARR. The seven families of the deal
// files have constants; every other metric the lexicon knows has a family
// named after it ("CHURN", "COGS"), so that claims about it are compared
// with evidence about it and never with evidence about another metric.
type Family string

// The families with rules of their own (precision, stock or flow, forms).
const (
	FamilyARR         Family = "ARR"
	FamilyGrossMargin Family = "GROSS_MARGIN"
	FamilyBurn        Family = "BURN"
	FamilyRunway      Family = "RUNWAY"
	FamilyCAC         Family = "CAC"
	FamilyNRR         Family = "NRR"
	FamilyTAM         Family = "TAM"
	FamilyCOGS        Family = "COGS"
	FamilyCash        Family = "CASH"
)

// Form is the time basis a metric is stated in: ARR is the annual form of
// recurring revenue and MRR its monthly form; burn is monthly unless said
// otherwise.
type Form int

// Forms.
const (
	FormNone Form = iota
	FormAnnual
	FormMonthly
)

// Mention is a metric named in a text, with its byte range.
type Mention struct {
	Family Family
	Form   Form
	// Stock is true for a level at a date (ARR, cash, runway, TAM), false
	// for an amount over a period (revenue, burn, margin).
	Stock      bool
	Phrase     string
	Start, End int
}

type lexEntry struct {
	phrase string
	family Family
	form   Form
	stock  bool
}

// lexicon maps spellings (lower case, words separated by one space) to
// metrics. Other metrics whose names contain a word of ours ("net revenue
// retention", "cost of revenue", "revenue growth", "LTV/CAC") are listed
// so that the longest spelling wins and "revenue" is not read inside them.
var lexicon = buildLexicon()

func buildLexicon() map[byte][]lexEntry {
	var all []lexEntry
	add := func(f Family, form Form, stock bool, phrases ...string) {
		for _, p := range phrases {
			all = append(all, lexEntry{p, f, form, stock})
		}
	}
	add(FamilyARR, FormAnnual, true, "arr", "annual recurring revenue", "annualized recurring revenue",
		"annualised recurring revenue", "ending arr", "total arr", "run rate", "annual run rate",
		"revenue run rate", "run rate revenue", "annualized revenue", "annualised revenue", "annualized run rate")
	add(FamilyARR, FormAnnual, false, "revenue", "revenues", "total revenue", "total revenues", "net revenue",
		"net revenues", "annual revenue", "annual revenues", "recognized revenue", "recognised revenue", "topline revenue")
	add(FamilyARR, FormMonthly, true, "mrr", "monthly recurring revenue")
	add(FamilyARR, FormMonthly, false, "monthly revenue", "monthly revenues")
	add(FamilyGrossMargin, FormNone, false, "gross margin", "gross margins", "gross profit margin", "gm", "margin",
		"gross margin percent", "gross margin pct")
	add(FamilyBurn, FormMonthly, false, "burn", "burn rate", "monthly burn", "monthly burn rate", "net burn",
		"net burn rate", "monthly net burn", "cash burn", "cash burn rate", "net cash burn", "monthly cash burn",
		"operating burn", "average monthly burn", "avg monthly burn")
	add(FamilyBurn, FormAnnual, false, "annual burn", "annual net burn", "yearly burn", "annual cash burn", "annualized burn")
	add(FamilyRunway, FormNone, true, "runway", "cash runway", "months of runway", "runway months", "months runway")
	add(FamilyCAC, FormNone, false, "cac", "customer acquisition cost", "customer acquisition costs", "blended cac",
		"paid cac", "cost per acquisition", "cost to acquire a customer", "cost of customer acquisition")
	add(FamilyNRR, FormNone, false, "nrr", "net revenue retention", "net revenue retention rate", "net dollar retention",
		"ndr", "net retention", "net retention rate", "dollar based net retention", "net expansion rate", "net dollar retention rate")
	add(FamilyTAM, FormNone, true, "tam", "total addressable market", "addressable market", "total available market",
		"market size", "total market size")
	add(FamilyCOGS, FormNone, false, "cogs", "cost of revenue", "cost of revenues", "cost of goods sold", "cost of sales")
	add(FamilyCash, FormNone, true, "cash", "cash balance", "cash on hand", "cash position", "ending cash", "bank balance",
		"cash and equivalents", "cash and cash equivalents")
	other := func(f Family, stock bool, phrases ...string) { add(f, FormNone, stock, phrases...) }
	other("GROSS_PROFIT", false, "gross profit")
	other("GROWTH", false, "growth", "revenue growth", "arr growth", "yoy growth", "growth rate", "mrr growth", "annual growth")
	other("REVENUE_MULTIPLE", true, "revenue multiple", "arr multiple")
	other("GRR", false, "gross revenue retention", "grr", "gross retention", "gross dollar retention")
	other("REVENUE_PER", false, "revenue per employee", "revenue per customer", "revenue per head")
	other("LTV_CAC", false, "ltv/cac", "ltv:cac", "ltv to cac", "ltv cac", "ltv/cac ratio")
	other("LTV", false, "ltv", "lifetime value", "customer lifetime value")
	other("CAC_PAYBACK", false, "cac payback", "payback", "payback period", "cac payback period")
	other("BURN_MULTIPLE", false, "burn multiple")
	other("GROSS_BURN", false, "gross burn")
	other("OTHER_MARGIN", false, "contribution margin", "operating margin", "ebitda margin", "net margin", "net profit margin")
	other("EBITDA", false, "ebitda", "ebit", "net income", "operating income", "net loss")
	other("OPEX", false, "opex", "operating expenses", "operating expense", "sales and marketing", "s&m", "r&d", "g&a")
	other("SAM", true, "sam", "serviceable addressable market", "serviceable available market")
	other("SOM", true, "som", "serviceable obtainable market")
	other("CHURN", false, "churn", "logo churn", "revenue churn", "churn rate", "logo retention")
	other("HEADCOUNT", true, "headcount", "employees", "fte", "ftes")
	other("CUSTOMERS", true, "customers", "customer count", "paying customers", "logos")
	other("ACV", false, "acv", "arpu", "arpa", "average contract value")
	other("DEFERRED_REVENUE", true, "deferred revenue", "unearned revenue")
	other("NEW_ARR", false, "new arr", "net new arr", "expansion arr", "churned arr", "new mrr", "net new mrr", "expansion mrr")
	other("BOOKINGS", false, "bookings", "pipeline")
	other("VALUATION", true, "valuation", "pre money", "post money")

	idx := map[byte][]lexEntry{}
	for _, e := range all {
		idx[e.phrase[0]] = append(idx[e.phrase[0]], e)
	}
	for k := range idx {
		// Longest spelling first: "net revenue retention" before "net revenue".
		slices.SortStableFunc(idx[k], func(a, b lexEntry) int { return len(b.phrase) - len(a.phrase) })
	}
	return idx
}

// normalized is text in lower case with every run of spaces, hyphens and
// underscores folded to one space, and the byte offset in the original of
// each byte.
type normalized struct {
	s   string
	pos []int
}

func normalize(text string) normalized {
	b := make([]byte, 0, len(text))
	pos := make([]int, 0, len(text)+1)
	space := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '-' || c == '_':
			if !space {
				b = append(b, ' ')
				pos = append(pos, i)
			}
			space = true
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		space = false
		b = append(b, c)
		pos = append(pos, i)
	}
	pos = append(pos, len(text))
	return normalized{s: string(b), pos: pos}
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 }

// FindMetrics returns the metrics named in text, in order. At each word
// start the longest known spelling wins.
func FindMetrics(text string) []Mention {
	n := normalize(text)
	s := n.s
	var out []Mention
	for i := 0; i < len(s); {
		if i > 0 && isAlnum(s[i-1]) || !isAlnum(s[i]) && s[i] != '&' {
			i++
			continue
		}
		matched := false
		for _, e := range lexicon[s[i]] {
			end := i + len(e.phrase)
			if !strings.HasPrefix(s[i:], e.phrase) || end < len(s) && isAlnum(s[end]) {
				continue
			}
			out = append(out, Mention{Family: e.family, Form: e.form, Stock: e.stock, Phrase: e.phrase, Start: n.pos[i], End: n.pos[end]})
			i = end
			matched = true
			break
		}
		if !matched {
			i++
		}
	}
	return out
}

// splitCamel turns a predicate name into words: "GrossMargin" → "Gross
// Margin", "MonthlyBurnUSD" → "Monthly Burn USD", "net_burn" stays.
func splitCamel(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte(' ')
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// legacyKeys is the README's C1..C7 mapping of the deal files, used only
// when neither the predicate nor the text nor the unit names a metric.
var legacyKeys = map[string]Family{
	"C1": FamilyARR, "C2": FamilyGrossMargin, "C3": FamilyBurn, "C4": FamilyRunway,
	"C5": FamilyCAC, "C6": FamilyNRR, "C7": FamilyTAM,
}

// claimMetric reads the metric a claim states, and where it was read: the
// predicate's name ("ARR(Acme, 2025-12) = …"), else the claim text, else
// the legacy claim key mapping.
func claimMetric(predicate, text, key string) (Mention, string, bool) {
	if head, _, ok := strings.Cut(predicate, "("); ok {
		if ms := FindMetrics(splitCamel(strings.TrimSpace(head))); len(ms) > 0 {
			return ms[0], "predicate", true
		}
	}
	if ms := FindMetrics(text); len(ms) > 0 {
		return ms[0], "claim text", true
	}
	if ms := FindMetrics(splitCamel(predicate)); len(ms) > 0 {
		return ms[0], "predicate", true
	}
	if f, ok := legacyKeys[strings.ToUpper(strings.TrimSpace(key))]; ok {
		m := Mention{Family: f, Phrase: key}
		switch f {
		case FamilyARR:
			m.Form, m.Stock = FormAnnual, true
		case FamilyBurn:
			m.Form = FormMonthly
		case FamilyRunway, FamilyTAM:
			m.Stock = true
		}
		return m, "claim key", true
	}
	return Mention{}, "", false
}

package gate

import (
	"strings"

	"github.com/debated/debated/internal/debate"
)

// The No-Free-Facts lexicons. They are read-only after package
// initialisation. Adding a word makes the detector stricter; removing one
// needs a reason in docs/decisions.md.

func set(words string) map[string]bool {
	m := map[string]bool{}
	addAll(m, strings.Fields(words)...)
	return m
}

// addAll adds words to the set m.
func addAll[S ~string](m map[string]bool, words ...S) {
	for _, w := range words {
		m[string(w)] = true
	}
}

// lexicon maps a lower-case word to the kind of fact it asserts.
var lexicon = func() map[string]string {
	m := map[string]string{}
	add := func(kind, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = kind
		}
	}
	add("money", `dollar dollars euro euros pound pounds sterling yen usd eur gbp jpy chf cad aud sgd inr aed sar cny
		k mn mm mln bn bln million millions billion billions trillion trillions thousand thousands`)
	add("percentage", `percent percentage percentages pct bps`)
	add("number word", `two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
		sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds
		dozen dozens half twice thrice double triple quadruple twofold threefold fourfold fivefold tenfold`)
	add("growth", `grew grow grows growing growth doubled doubling tripled tripling quadrupled halved halving
		increased decreased declined rose risen fell fallen surged soared plunged jumped dropped expanded shrank
		shrunk accelerated decelerated cagr yoy qoq mom`)
	add("date or period", `january february march april june july august september october november december
		jan feb mar apr jun jul aug sep sept oct nov dec
		year years yearly annual annually quarter quarters quarterly month months monthly week weeks weekly
		ytd ltm ttm fy cy`)
	add("market size", `tam sam som addressable serviceable marketshare`)
	// "raise" and "raises" are left out: agents "raise a concern" far more
	// often than a round; "raised" and "raising" stay.
	add("funding", `raised raising fundraise fundraising valuation valuations valued
		premoney postmoney seed preseed funding funded investor investors invested backers vc vcs ipo`)
	add("named entity relation", `customer customers client clients partner partners partnership partnerships
		partnered acquired acquisition acquisitions acquirer signed contract contracts contracted loi lois logo
		logos employee employees headcount staff hires hired hiring founder founders founded ceo cto cfo coo cmo
		competitor competitors user users subscriber subscribers mau dau downloads installs pilot pilots patent
		patents lawsuit litigation sued`)
	add("metric", `revenue revenues arr mrr ebitda ebit margin margins burn runway churn retention nrr grr gmv
		bookings cac ltv payback profitable profitability profit profits loss losses cash cashflow cogs opex capex
		income earnings sales price pricing acv arpu gross breakeven`)
	return m
}()

// bigrams are two-word phrases (lower case, one space) that assert a fact.
var bigrams = map[string]string{
	"market size":    "market size",
	"market share":   "market size",
	"market of":      "market size",
	"per cent":       "percentage",
	"basis points":   "percentage",
	"basis point":    "percentage",
	"pre money":      "funding",
	"post money":     "funding",
	"pre seed":       "funding",
	"seed round":     "funding",
	"funding round":  "funding",
	"term sheet":     "funding",
	"cap table":      "funding",
	"led by":         "funding",
	"backed by":      "funding",
	"run rate":       "metric",
	"break even":     "metric",
	"unit economics": "metric",
	"year over":      "growth",
	"month over":     "growth",
	"quarter over":   "growth",
}

// bigramFirst holds the first words of bigrams: only those make the
// classifier build a two-word key.
var bigramFirst = func() map[string]bool {
	m := make(map[string]bool, len(bigrams))
	for k := range bigrams {
		first, _, _ := strings.Cut(k, " ")
		m[first] = true
	}
	return m
}()

// currencyCodes before or after a number make it money.
var currencyCodes = set(`usd eur gbp jpy chf cad aud sgd inr aed sar cny dollars euros`)

// scales after a number make it an amount ("4.5M", "3 bn").
var scales = set(`k m mm mn mln b bn bln million millions billion billions thousand thousands trillion`)

// percentWords after a number make it a percentage.
var percentWords = set(`percent pct bps`)

// months are capitalised month names and abbreviations ("May" is left out:
// at the start of a sentence it is a verb, elsewhere a capitalised word is
// a named entity anyway).
var months = set(`January February March April June July August September October November December
	Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec`)

// openers are words that may be capitalised for opening a sentence
// without naming anything (lower case).
var openers = set(`the this that these those there here it its we our ours us you your they their them he she his
	her i my me a an and but or nor so yet if when while whereas because although though since unless until after
	before once as at by for from in into on onto of off to with within without about above below under over
	between among across against along around beyond despite during except per via given absent pending regarding
	concerning based overall further furthermore moreover however therefore thus hence accordingly consequently
	meanwhile instead otherwise still also again then now first second third finally lastly next last each every
	all any some no not none both either neither only even just more most less least many much few several such
	what which who whom whose why how where whether is are was were be been being do does did has have had can
	could should would will shall must may might let please note yes ok okay other another same similarly
	likewise specifically notably importantly separately additionally alternatively conversely rather indeed
	clearly arguably nothing everything something anything nobody someone everyone unclear until unless
	maintain maintaining keep keeping reserve reserving defer deferring hold holding reject rejecting accept
	accepting dismiss dismissed uphold upheld sustain sustained overrule overruled request requesting requested
	review reviewing verify verifying check checking compare comparing consider considering assume assuming
	suppose supposing agreed agree disagree conclusion decision summary rationale reason reasons support
	supporting source sources chain chains corroboration concern concerns caveat caveats verdict until
	pass invest proceed proceeding recommend recommending recommendation see`)

// vocabulary are the debate's own words, which may be capitalised anywhere
// (lower case).
var vocabulary = set(`sanad sanads isnad matn muhasabah muḥāsabah ahad āḥād mutawatir mutawātir advocate advocates
	arbiter breaker contradiction finder risk officer observer observers committee investment ic idis
	free facts claim claims calc calcs evidence challenge challenges ruling rulings position positions
	recommendation confidence thesis defect defects grade grades verdict round rounds falsifiability uncertainty
	uncertainties counter hypothesis dissent consensus question questions summary gate gates`)

// codes are the debate's own upper-case codes: enumerations of the domain
// and of this package. They never assert a fact.
var codes = func() map[string]bool {
	m := set(`IC IDIS OK ID IDS N/A
		INVEST PASS INVEST_WITH_CONDITIONS
		VERIFIED CONTRADICTED INFLATED UNVERIFIED BLOCKED
		NONE RED_FLAG REQUEST_DATA PARTNER_OVERRIDE_REQUIRED REJECT_NO_FREE_FACTS
		AHAD_1 AHAD_2 MUTAWATIR AHAD
		OPEN CURED WAIVED
		CONSENSUS STABLE_DISSENT EVIDENCE_EXHAUSTED MAX_ROUNDS CRITICAL_DEFECT
		SUCCESS DENIED INVALID ERROR`)
	addAll(m, debate.DefectTypes...)
	addAll(m, debate.Severities...)
	addAll(m, debate.CureProtocols...)
	addAll(m, Rules...)
	// Role ids are codes too: the snake_case ones (sanad_breaker) read
	// as single words.
	addAll(m, strings.Fields(`advocate sanad_breaker contradiction_finder risk_officer arbiter`)...)
	return m
}()

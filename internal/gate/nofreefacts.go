package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// NoFreeFacts applies seed 001 §1.2 to one text: a text that makes any
// factual assertion must rest on at least one claim or calc of this deal,
// and every reference must resolve. refs are the claim and calc ids the
// text rests on (ids, not claim keys). It returns, sorted by rule, field
// and detail:
//
//   - NO_FREE_FACTS_UNKNOWN_REF (field "refs[i]") for every ref that is not
//     a claim or calc of the deal: a reference is checked, never trusted
//     for being there;
//   - NO_FREE_FACTS_UNKNOWN_REF (field "text") for every id the text cites
//     that names nothing in the deal: a UUID, or a token shaped like a
//     claim key ("C12");
//   - NO_FREE_FACTS (field "text") when the text makes a factual assertion
//     and no ref resolves;
//   - NO_FREE_FACTS (field "text") for every claim or calc the text cites
//     (by id or by claim key) that refs do not list.
//
// The detector is deliberately conservative: it prefers false positives
// (a text with a fact needs one valid ref, which any honest output has) to
// a fact slipping through. A text asserts a fact when, once the deal's ids
// and claim keys are set aside, it contains any of: a digit or other
// numeral (money "$4.5M", "USD 12,000", "€3bn"; percentages; counts with
// units "120 customers"; growth "3x"; dates and periods "2025", "Q4 2025",
// "FY2025"; any other figure); a currency or percent sign; a number word
// ("two" and up, "dozen", "million", "half", "twice", "doubled"); a month
// name; a word of the lexicons of money, percentages, growth ("grew",
// "doubled", "declined"), periods ("annual", "quarterly", "LTM"), market
// size ("TAM", "addressable"), funding ("raised", "valuation", "Series A"),
// business relations ("customers", "partners", "investors", "signed") and
// metrics ("revenue", "ARR", "churn", "runway"); an acronym that is not one
// of the debate's own codes (INVEST, BROKEN_CHAIN, IC ...); or a
// capitalised word that is not the first word of a sentence, an opener of a
// clause ("The", "However") or the debate's own vocabulary ("Sanad",
// "Arbiter"), taken as a named entity ("Acme", "Sequoia"). Ids of the deal inside the text (claim and calc ids
// and keys, evidence, span, document and defect ids) are references, not
// facts: the digits of "C1" or of a UUID never count.
//
// A nil Facts knows no ids: every ref is unknown. NoFreeFacts never panics
// and runs in time linear in len(text) + len(refs).
func NoFreeFacts(text string, refs []string, f *Facts) []debate.Violation {
	sc := scanText(text, f)
	var out []debate.Violation
	refSet := make(map[string]bool, len(refs))
	for i, r := range refs {
		if f.isClaim(r) || f.isCalc(r) {
			refSet[r] = true
			continue
		}
		out = append(out, debate.Violation{
			Rule: RuleNoFreeFactsUnknownRef, Field: fmt.Sprintf("refs[%d]", i),
			Detail: fmt.Sprintf("%q is not a claim or calc of deal %q", clip(r), f.DealID()),
		})
	}
	out = append(out, sc.textViolations("text", refSet, f)...)
	if sc.factual() && len(refSet) == 0 {
		out = append(out, debate.Violation{Rule: RuleNoFreeFacts, Field: "text", Detail: sc.factDetail("no claim_id or calc_id of the deal supports it")})
	}
	return sortViolations(out)
}

// scan is what scanText found in a text.
type scan struct {
	// findings are the first few factual assertions (kind and words);
	// facts counts them all.
	findings []finding
	facts    int
	// cited are the claim and calc ids the text cites, by id or key, in
	// order of first appearance; unknown are the id-shaped tokens that name
	// nothing in the deal.
	cited   []string
	unknown []string
}

type finding struct{ kind, text string }

const maxFindings = 3

func (s *scan) factual() bool { return s.facts > 0 }

func (s *scan) fact(kind, text string) {
	s.facts++
	if len(s.findings) < maxFindings {
		s.findings = append(s.findings, finding{kind, clip(text)})
	}
}

// merge adds the facts o found to s (its cited and unknown ids are o's
// own: the caller reports them under o's field).
func (s *scan) merge(o scan) {
	s.facts += o.facts
	for _, fd := range o.findings {
		if len(s.findings) < maxFindings {
			s.findings = append(s.findings, fd)
		}
	}
}

// fieldText is one text of an output and the field it is in.
type fieldText struct{ field, text string }

// outputTexts lists the texts of out that the content's No-Free-Facts
// check covers besides the content itself: every key and string of the
// structured content at any depth (in key order), the rulings' reasons,
// the open questions and the evidence requests' queries. The challenges'
// descriptions are checked with their own references.
//
// A number of the structured content is read through its key, not alone:
// {"arr": 4500000} asserts ARR (the key is a metric word) and needs a
// reference, while {"findings": 0} is the agent's own bookkeeping, as the
// rules backend writes it even on a deal without claims.
func outputTexts(out *debate.AgentOutput) []fieldText {
	var ts []fieldText
	if len(out.StructuredContent) > 0 {
		dec := json.NewDecoder(bytes.NewReader(out.StructuredContent))
		var v any
		if err := dec.Decode(&v); err != nil {
			// Unreadable structured content is a schema matter; its text
			// is still read whole, so that no fact hides in it.
			ts = append(ts, fieldText{"structured_content", string(out.StructuredContent)})
		} else {
			ts = jsonTexts(ts, "structured_content", v)
		}
	}
	for i, r := range out.Rulings {
		ts = append(ts, fieldText{fmt.Sprintf("rulings[%d].reason", i), r.Reason})
	}
	for i, q := range out.OpenQuestions {
		ts = append(ts, fieldText{fmt.Sprintf("open_questions[%d]", i), q})
	}
	for i, r := range out.EvidenceRequests {
		ts = append(ts, fieldText{fmt.Sprintf("evidence_requests[%d].query", i), r.Query})
	}
	return ts
}

// jsonTexts appends the keys and strings of a decoded JSON value, each
// with its path.
func jsonTexts(ts []fieldText, path string, v any) []fieldText {
	switch x := v.(type) {
	case string:
		ts = append(ts, fieldText{path, x})
	case []any:
		for i, e := range x {
			ts = jsonTexts(ts, fmt.Sprintf("%s[%d]", path, i), e)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := path + "." + k
			ts = append(ts, fieldText{p, k})
			ts = jsonTexts(ts, p, x[k])
		}
	}
	return ts
}

// factDetail describes the text's facts for a violation.
func (s *scan) factDetail(why string) string {
	parts := make([]string, 0, len(s.findings))
	for _, fd := range s.findings {
		parts = append(parts, fmt.Sprintf("%s %q", fd.kind, fd.text))
	}
	more := ""
	if s.facts > len(s.findings) {
		more = fmt.Sprintf(" and %d more", s.facts-len(s.findings))
	}
	return fmt.Sprintf("factual assertion (%s%s) but %s", strings.Join(parts, ", "), more, why)
}

// textViolations reports the ids the text cites that are unknown
// (NO_FREE_FACTS_UNKNOWN_REF) or known but missing from refs
// (NO_FREE_FACTS).
func (s *scan) textViolations(field string, refs map[string]bool, f *Facts) []debate.Violation {
	var out []debate.Violation
	for _, u := range s.unknown {
		out = append(out, debate.Violation{Rule: RuleNoFreeFactsUnknownRef, Field: field,
			Detail: fmt.Sprintf("cites %q, which names nothing in deal %q", clip(u), f.DealID())})
	}
	for _, id := range s.cited {
		if refs[id] {
			continue
		}
		what := "calc " + id
		if c := f.claim(id); c != nil {
			what = "claim " + id
			if c.Key != "" {
				what = fmt.Sprintf("claim %s (%s)", c.Key, id)
			}
		}
		out = append(out, debate.Violation{Rule: RuleNoFreeFacts, Field: field,
			Detail: fmt.Sprintf("cites %s, which its references do not list", what)})
	}
	return out
}

// scanText finds the factual assertions of a text and the ids it cites.
func scanText(text string, f *Facts) scan {
	var s scan
	cleaned := stripIDs(text, f, &s)
	buf := tokenBufs.Get().(*[]token)
	toks := tokenize((*buf)[:0], cleaned)
	for i := range toks {
		classify(toks, i, cleaned, &s)
	}
	if cap(toks) <= maxKeptTokens {
		*buf = toks
		tokenBufs.Put(buf)
	}
	return s
}

// tokenBufs keeps token slices between scans: a gate scans every text of
// every output, and nothing keeps a scan's tokens.
var tokenBufs = sync.Pool{New: func() any { return new([]token) }}

// maxKeptTokens bounds the token slices tokenBufs keeps.
const maxKeptTokens = 1 << 14

// isIDSep reports the runes that separate ids in a text.
func isIDSep(r rune) bool {
	if unicode.IsSpace(r) {
		return true
	}
	switch r {
	case ',', ';', '(', ')', '[', ']', '{', '}', '<', '>', '"', '\'', '`', '|', '/', '=',
		'“', '”', '‘', '’', '«', '»':
		return true
	}
	return false
}

// idTrim are the runes trimmed from both ends of an id-like token
// ("C1.", "*C1*").
const idTrim = ".:!?*#~"

// asciiIDSep and asciiIDTrim are isIDSep and idTrim for ASCII bytes: the
// id scan reads most texts a byte at a time.
var asciiIDSep, asciiIDTrim = func() (sep, trim [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		sep[c] = isIDSep(rune(c))
		trim[c] = strings.IndexByte(idTrim, byte(c)) >= 0
	}
	return sep, trim
}()

// idSepAt reports whether the rune at text[i] separates ids, and its
// length.
func idSepAt(text string, i int) (sep bool, n int) {
	if c := text[i]; c < utf8.RuneSelf {
		return asciiIDSep[c], 1
	}
	r, n := utf8.DecodeRuneInString(text[i:])
	return isIDSep(r), n
}

// IDTokens yields the byte ranges [a, b) of text's id-like tokens, in
// order: the runs between separators (spaces, brackets, quotes, commas,
// ...), with ".:!?*#~" trimmed from both ends, skipping runs that trim to
// nothing. It is how the gate reads the ids a text mentions; a backend that
// rewrites ids reads them with it too.
func IDTokens(text string) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := 0; i < len(text); {
			if sep, n := idSepAt(text, i); sep {
				i += n
				continue
			}
			j := i
			for j < len(text) {
				if c := text[j]; c < utf8.RuneSelf { // ASCII without a call
					if asciiIDSep[c] {
						break
					}
					j++
					continue
				}
				sep, n := idSepAt(text, j)
				if sep {
					break
				}
				j += n
			}
			a, b := i, j
			for a < b && asciiIDTrim[text[a]&0x7f] && text[a] < utf8.RuneSelf {
				a++
			}
			for b > a && asciiIDTrim[text[b-1]&0x7f] && text[b-1] < utf8.RuneSelf {
				b--
			}
			i = j
			if a < b && !yield(a, b) {
				return
			}
		}
	}
}

// IDShaped reports a token shaped like an id a deal must hold: a UUID or a
// claim key ("C" and 1 to 4 digits).
func IDShaped(tok string) bool { return debate.IsUUIDText(tok) || isKeyShaped(tok) }

// stripIDs blanks the deal's ids and the id-shaped tokens of text,
// recording them in s; it returns text unchanged when there is none.
func stripIDs(text string, f *Facts, s *scan) string {
	var buf []byte
	seenCited := map[string]bool{}
	seenUnknown := map[string]bool{}
	for a, b := range IDTokens(text) {
		tok := text[a:b]
		ref, known := f.mention(tok)
		switch {
		case known:
			if ref != "" && !seenCited[ref] {
				seenCited[ref] = true
				s.cited = append(s.cited, ref)
			}
		case IDShaped(tok):
			if !seenUnknown[tok] {
				seenUnknown[tok] = true
				s.unknown = append(s.unknown, tok)
			}
		default:
			continue
		}
		if buf == nil {
			buf = []byte(text)
		}
		for k := a; k < b; k++ {
			buf[k] = ' '
		}
	}
	if buf == nil {
		return text
	}
	return string(buf)
}

// isKeyShaped reports a token shaped like a claim key: "C" and 1 to 4
// digits.
func isKeyShaped(s string) bool {
	return len(s) >= 2 && len(s) <= 5 && s[0] == 'C' && allDigits(s[1:])
}

// allDigits reports a non-empty string of ASCII digits.
func allDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// ---- tokens ----

type tokKind uint8

const (
	tWord tokKind = iota
	tNumber
	tCurrency
	tPercent
)

type token struct {
	a, b int // byte range in the cleaned text
	kind tokKind
	// sentStart: the token opens a sentence, line, list item, clause,
	// parenthesis or quotation; sentence: it opens a sentence, line or list
	// item (not a clause, parenthesis or quotation); adjacent: no gap since
	// the previous token.
	sentStart, sentence, adjacent bool
}

func isPercent(r rune) bool {
	return r == '%' || r == '‰' || r == '‱' || r == '٪' || r == '﹪' || r == '％'
}

func isWordRune(r rune) bool {
	if uint32(r) < utf8.RuneSelf {
		return asciiWordRune[r]
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' || unicode.Is(unicode.Mn, r)
}

// asciiWordRune is isWordRune for ASCII.
var asciiWordRune = func() (t [utf8.RuneSelf]bool) {
	for c := range rune(utf8.RuneSelf) {
		t[c] = unicode.IsLetter(c) || unicode.IsNumber(c) || c == '_' || unicode.Is(unicode.Mn, c)
	}
	return t
}()

// runeAt decodes the rune at text[i], ASCII without a call.
func runeAt(text string, i int) (rune, int) {
	if c := text[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(text[i:])
}

// tokenize appends text's tokens to toks.
func tokenize(toks []token, text string) []token {
	// About one token per word and gap: one allocation for most texts.
	toks = slices.Grow(toks, len(text)/4+1)
	sent, sentence := true, true
	lastEnd := -1
	for i := 0; i < len(text); {
		r, n := runeAt(text, i)
		start := i
		i += n
		var k tokKind
		switch {
		case unicode.IsLetter(r) || r == '_':
			k = tWord
			for i < len(text) {
				r2, n2 := runeAt(text, i)
				if !isWordRune(r2) {
					break
				}
				i += n2
			}
		case unicode.IsNumber(r):
			k = tNumber
			for i < len(text) {
				r2, n2 := runeAt(text, i)
				if unicode.IsNumber(r2) {
					i += n2
					continue
				}
				// A '.' or ',' followed by a digit continues the number
				// ("4.5", "12,000").
				if r2 == '.' || r2 == ',' {
					if r3, _ := utf8.DecodeRuneInString(text[i+n2:]); unicode.IsNumber(r3) {
						i += n2
						continue
					}
				}
				break
			}
		case unicode.Is(unicode.Sc, r):
			k = tCurrency
		case isPercent(r):
			k = tPercent
		default:
			switch r {
			case '.', '!', '?', '\n', '\r', '•', '¿', '¡', '。', '؟':
				// A sentence, line or list item opens.
				sent, sentence = true, true
			case ':', ';', '(', '[', '{', '"', '“', '«', '—', '–':
				// A clause, parenthesis or quotation opens: its first
				// word may be capitalised.
				sent = true
			}
			continue
		}
		toks = append(toks, token{kind: k, a: start, b: i, sentStart: sent, sentence: sentence, adjacent: start == lastEnd})
		lastEnd = i
		if k == tWord || k == tNumber {
			sent, sentence = false, false
		}
	}
	return toks
}

// lower returns s in lower case, without allocating when it already is.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

func hasUpper(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsUpper(r) || unicode.IsTitle(r) })
}

// allCaps: every letter is upper case (digits and underscores allowed).
func allCaps(s string) bool {
	return strings.ContainsFunc(s, unicode.IsLetter) &&
		!strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) && !unicode.IsUpper(r) })
}

// titleCase: the first rune is upper (or title) case and no other is upper
// case.
func titleCase(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return s != "" && (unicode.IsUpper(r) || unicode.IsTitle(r)) && !strings.ContainsFunc(s[n:], unicode.IsUpper)
}

func hasDigit(s string) bool { return strings.ContainsFunc(s, unicode.IsNumber) }

func (t token) text(src string) string { return src[t.a:t.b] }

// word returns the i-th token's text if it is a word, else "".
func word(toks []token, i int, src string) string {
	if i < 0 || i >= len(toks) || toks[i].kind != tWord {
		return ""
	}
	return toks[i].text(src)
}

// classify records the fact the i-th token shows, if any.
func classify(toks []token, i int, src string, s *scan) {
	t := toks[i]
	switch t.kind {
	case tCurrency:
		// A currency sign before a number is reported with the number.
		if i+1 < len(toks) && toks[i+1].kind == tNumber {
			return
		}
		s.fact("money", t.text(src))
		return
	case tPercent:
		// A percent sign after a number is reported with the number.
		if i > 0 && toks[i-1].kind == tNumber {
			return
		}
		s.fact("percentage", t.text(src))
		return
	case tNumber:
		classifyNumber(toks, i, src, s)
		return
	}
	w := t.text(src)
	lw := lower(w)
	if utf8.RuneCountInString(w) == 1 {
		// Grades, "I", "a", the "x" of "3x" (reported with its number), the
		// letter of "Series A" (reported with "Series").
		return
	}
	if i > 0 && t.adjacent && toks[i-1].kind == tNumber {
		return // "4.5M", "3x", "120k": reported with the number
	}
	if strings.ContainsRune(w, '_') {
		if codes[w] {
			return
		}
		for _, part := range strings.Split(lw, "_") {
			if kind, ok := lexicon[part]; ok {
				s.fact(kind, w)
				return
			}
		}
		if hasDigit(w) {
			s.fact("figure", w)
		}
		return
	}
	if hasDigit(w) {
		if codes[w] {
			return
		}
		if isPeriod(w) {
			s.fact("date or period", w)
		} else {
			s.fact("figure", w)
		}
		return
	}
	if next := word(toks, i+1, src); next != "" {
		if bigramFirst[lw] {
			if kind, ok := bigrams[lw+" "+lower(next)]; ok {
				s.fact(kind, span(toks, i, i+2, src))
				return
			}
		}
		if lw == "series" && toks[i+1].kind == tWord && utf8.RuneCountInString(next) == 1 && unicode.IsUpper([]rune(next)[0]) {
			s.fact("funding", span(toks, i, i+2, src))
			return
		}
	}
	if kind, ok := lexicon[lw]; ok {
		s.fact(kind, w)
		return
	}
	if !hasUpper(w) {
		return
	}
	switch {
	case codes[w]:
	case (titleCase(w) || allCaps(w)) && vocabulary[lw]:
	case titleCase(w) && months[w]:
		s.fact("date or period", w)
	case t.sentStart && titleCase(w) && openers[lw]:
	case t.sentence && titleCase(w):
		// A sentence's first word is capitalised for the sentence, not
		// for a name ("Introduction to the company."): it is no entity.
		// A name that opens a sentence still counts when it has a second
		// capitalised word ("Sequoia Capital led") or any other fact; a
		// capitalised word opening a clause, parenthesis or quotation
		// counts unless it is an opener ("The deal (Globex) ...").
	case allCaps(w):
		s.fact("acronym", w)
	default:
		s.fact("named entity", w)
	}
}

// classifyNumber names the kind of fact a number shows from its
// neighbours.
func classifyNumber(toks []token, i int, src string, s *scan) {
	first, last := i, i+1
	kind := "number"
	prevWord := lower(word(toks, i-1, src))
	next := word(toks, i+1, src)
	lnext := lower(next)
	if i > 0 && toks[i-1].kind == tCurrency || currencyCodes[prevWord] {
		kind, first = "money", i-1
	}
	switch {
	case i+1 < len(toks) && toks[i+1].kind == tPercent, percentWords[lnext]:
		kind, last = "percentage", i+2
	case scales[lnext] || currencyCodes[lnext]:
		if kind == "number" {
			kind = "amount"
		}
		last = i + 2
	case lnext == "x" || lnext == "times" || lnext == "fold":
		kind, last = "growth", i+2
	case kind == "number" && isYear(toks[i].text(src)):
		kind = "date or period"
	case kind == "number" && next != "" && !hasDigit(next):
		kind, last = "count", i+2
	}
	s.fact(kind, span(toks, first, last, src))
}

// span is the text from token a to token b-1.
func span(toks []token, a, b int, src string) string {
	a, b = max(a, 0), min(b, len(toks))
	return src[toks[a].a:toks[b-1].b]
}

// isYear: four digits from 1900 to 2199 (digit strings of one length
// compare as their numbers).
func isYear(s string) bool { return len(s) == 4 && allDigits(s) && s >= "1900" && s <= "2199" }

// isPeriod: Q1–Q4, H1–H2, FY/CY with a year ("FY2025", "FY25").
func isPeriod(w string) bool {
	u := strings.ToUpper(w)
	switch {
	case len(u) == 2 && u[0] == 'Q' && u[1] >= '1' && u[1] <= '4':
		return true
	case len(u) == 2 && u[0] == 'H' && (u[1] == '1' || u[1] == '2'):
		return true
	case (strings.HasPrefix(u, "FY") || strings.HasPrefix(u, "CY")) && len(u) >= 4 && len(u) <= 6:
		return allDigits(u[2:])
	}
	return false
}

// Package canon canonicalises JSON text by RFC 8785 (the JSON
// Canonicalization Scheme): the form the ledger hashes and signs, the
// engine hashes states in and the tools hash results in.
//
// Transform accepts and produces exactly what github.com/gowebpki/jcs does
// (a differential fuzz test holds it to that, so ledgers sealed with either
// verify with the other), in one pass over the input that writes each
// output byte once and allocates little: it is on the path of every event
// the service seals. Documents nested deeper than MaxFastDepth are handed
// to gowebpki/jcs, whose tree keeps the work linear at any depth.
package canon

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// MaxFastDepth is the deepest nesting of arrays and objects Transform
// canonicalises itself.
const MaxFastDepth = 64

var errTooDeep = errors.New("canon: nested too deep for the fast path")

// Transform returns the RFC 8785 form of the JSON text data, or an error
// if data is not one JSON value (surrounded by optional whitespace) that
// the scheme accepts: numbers must be finite IEEE 754 doubles, strings
// valid UTF-8 without lone surrogates, object keys unique.
func Transform(data []byte) ([]byte, error) {
	if data == nil {
		return nil, errors.New("canon: no JSON data")
	}
	p := parsers.Get().(*parser)
	defer p.release()
	p.in, p.i, p.out = data, 0, make([]byte, 0, len(data))
	if err := p.value(0); err != nil {
		if errors.Is(err, errTooDeep) {
			return jcs.Transform(data)
		}
		return nil, err
	}
	p.skipSpace()
	if p.i < len(p.in) {
		return nil, fmt.Errorf("canon: data after the JSON value at byte %d", p.i)
	}
	return p.out, nil
}

// parsers keeps parsers' scratch space between calls: Transform is on the
// path of every sealed event.
var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxKeptScratch bounds the scratch a pooled parser keeps.
const maxKeptScratch = 1 << 20

type parser struct {
	in  []byte
	i   int
	out []byte
	// The scratch of objects being read, used as stacks: members of the
	// open objects, their decoded keys, and the copy of an object's
	// members being reordered.
	members []member
	keys    []byte
	region  []byte
}

func (p *parser) release() {
	p.in, p.out = nil, nil
	if cap(p.keys)+cap(p.region) > maxKeptScratch || cap(p.members) > maxKeptScratch/32 {
		return // let a parser that met a huge document go
	}
	p.members, p.keys, p.region = p.members[:0], p.keys[:0], p.region[:0]
	parsers.Put(p)
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func (p *parser) skipSpace() {
	for p.i < len(p.in) && isSpace(p.in[p.i]) {
		p.i++
	}
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("canon: at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

// expect skips whitespace and consumes c.
func (p *parser) expect(c byte) error {
	p.skipSpace()
	if p.i >= len(p.in) {
		return p.errorf("unexpected end, expected %q", c)
	}
	if p.in[p.i] != c {
		return p.errorf("expected %q, found %q", c, p.in[p.i])
	}
	p.i++
	return nil
}

func (p *parser) value(depth int) error {
	p.skipSpace()
	if p.i >= len(p.in) {
		return p.errorf("unexpected end")
	}
	switch p.in[p.i] {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case '"':
		p.i++
		return p.str(false)
	default:
		return p.literal()
	}
}

func (p *parser) array(depth int) error {
	if depth > MaxFastDepth {
		return errTooDeep
	}
	p.i++ // [
	p.out = append(p.out, '[')
	for n := 0; ; n++ {
		p.skipSpace()
		if p.i < len(p.in) && p.in[p.i] == ']' {
			p.i++
			p.out = append(p.out, ']')
			return nil
		}
		if n > 0 {
			if err := p.expect(','); err != nil {
				return err
			}
			p.out = append(p.out, ',')
		}
		if err := p.value(depth); err != nil {
			return err
		}
	}
}

// member is one object member as written to out: out[start:end] is
// "key":value, and keys[ks:ke] its decoded key.
type member struct {
	ks, ke     int
	start, end int
}

func (p *parser) key(m member) []byte { return p.keys[m.ks:m.ke] }

func (p *parser) object(depth int) error {
	if depth > MaxFastDepth {
		return errTooDeep
	}
	p.i++ // {
	p.out = append(p.out, '{')
	base, mbase, kbase := len(p.out), len(p.members), len(p.keys)
	defer func() { p.members, p.keys = p.members[:mbase], p.keys[:kbase] }()
	sorted := true
	for {
		p.skipSpace()
		if p.i < len(p.in) && p.in[p.i] == '}' {
			p.i++
			break
		}
		if len(p.members) > mbase {
			if err := p.expect(','); err != nil {
				return err
			}
			p.out = append(p.out, ',')
		}
		if err := p.expect('"'); err != nil {
			return err
		}
		start, ks := len(p.out), len(p.keys)
		if err := p.str(true); err != nil {
			return err
		}
		m := member{ks: ks, ke: len(p.keys), start: start}
		if err := p.expect(':'); err != nil {
			return err
		}
		p.out = append(p.out, ':')
		if err := p.value(depth); err != nil {
			return err
		}
		m.end = len(p.out)
		if n := len(p.members); n > mbase {
			switch c := compareUTF16(p.key(p.members[n-1]), p.key(m)); {
			case c == 0:
				return p.errorf("duplicate key %q", p.key(m))
			case c > 0:
				sorted = false
			}
		}
		p.members = append(p.members, m)
	}
	if !sorted {
		ms := p.members[mbase:]
		slices.SortFunc(ms, func(a, b member) int { return compareUTF16(p.key(a), p.key(b)) })
		for i := 1; i < len(ms); i++ {
			if compareUTF16(p.key(ms[i-1]), p.key(ms[i])) == 0 {
				return p.errorf("duplicate key %q", p.key(ms[i]))
			}
		}
		p.region = append(p.region[:0], p.out[base:]...)
		p.out = p.out[:base]
		for i, m := range ms {
			if i > 0 {
				p.out = append(p.out, ',')
			}
			p.out = append(p.out, p.region[m.start-base:m.end-base]...)
		}
	}
	p.out = append(p.out, '}')
	return nil
}

// compareUTF16 orders UTF-8 strings by their UTF-16 code units, as RFC
// 8785 sorts object keys.
func compareUTF16(a, b []byte) int {
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRune(a)
		rb, nb := utf8.DecodeRune(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				return int(ua) - int(ub)
			}
			return int(ra) - int(rb) // same high surrogate: the low ones order as the runes
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func firstUnit(r rune) rune {
	if r < 0x10000 {
		return r
	}
	hi, _ := utf16.EncodeRune(r)
	return hi
}

// str reads a string whose opening quote is consumed and writes its
// canonical form; with key it also appends the decoded text to p.keys.
func (p *parser) str(key bool) error {
	p.out = append(p.out, '"')
	for {
		// Copy the run of bytes that need no change.
		j, in := p.i, p.in // locals: the loop keeps them in registers
		for j < len(in) && plainASCII[in[j]] {
			j++
		}
		p.out = append(p.out, p.in[p.i:j]...)
		if key {
			p.keys = append(p.keys, p.in[p.i:j]...)
		}
		p.i = j
		if p.i >= len(p.in) {
			return p.errorf("unterminated string")
		}
		c := p.in[p.i]
		switch {
		case c == '"':
			p.i++
			p.out = append(p.out, '"')
			return nil
		case c < 0x20:
			return p.errorf("control character in a string")
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(p.in[p.i:])
			if r == utf8.RuneError && n <= 1 {
				return p.errorf("invalid UTF-8")
			}
			p.out = append(p.out, p.in[p.i:p.i+n]...)
			if key {
				p.keys = append(p.keys, p.in[p.i:p.i+n]...)
			}
			p.i += n
		default: // backslash
			r, err := p.escape()
			if err != nil {
				return err
			}
			p.out = appendRune(p.out, r)
			if key {
				p.keys = utf8.AppendRune(p.keys, r)
			}
		}
	}
}

// plainASCII marks the bytes str copies without decoding them: the plain
// ones below utf8.RuneSelf.
var plainASCII = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = plain[c]
	}
	return t
}()

// escape reads an escape sequence at p.i (the backslash) and returns the
// rune it stands for.
func (p *parser) escape() (rune, error) {
	if p.i+1 >= len(p.in) {
		return 0, p.errorf("unterminated escape")
	}
	c := p.in[p.i+1]
	p.i += 2
	if c == '/' {
		return '/', nil
	}
	for _, e := range shortEscapes {
		if e.esc == c {
			return e.r, nil
		}
	}
	if c != 'u' {
		return 0, p.errorf("unknown escape \\%c", c)
	}
	r, err := p.hex4()
	if err != nil {
		return 0, err
	}
	if !utf16.IsSurrogate(r) {
		return r, nil
	}
	if r > 0xDBFF {
		return 0, p.errorf("lone low surrogate \\u%04x", r)
	}
	if p.i+2 > len(p.in) || p.in[p.i] != '\\' || p.in[p.i+1] != 'u' {
		return 0, p.errorf("high surrogate without its low surrogate")
	}
	p.i += 2
	lo, err := p.hex4()
	if err != nil {
		return 0, err
	}
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, p.errorf("invalid low surrogate \\u%04x", lo)
	}
	return utf16.DecodeRune(r, lo), nil
}

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.in) {
		return 0, p.errorf("short \\u escape")
	}
	var r rune
	for _, c := range p.in[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, p.errorf("bad \\u escape")
		}
	}
	p.i += 4
	return r, nil
}

// shortEscapes are the two-character escapes RFC 8785 writes (and JSON
// reads, with \/ besides): the escape letter of each rune.
var shortEscapes = [...]struct {
	r   rune
	esc byte
}{{'"', '"'}, {'\\', '\\'}, {'\b', 'b'}, {'\f', 'f'}, {'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}}

// appendRune writes r as RFC 8785 does inside a string: the two-character
// escapes, \u00xx for the other control characters, the rest as UTF-8.
func appendRune(out []byte, r rune) []byte {
	for _, e := range shortEscapes {
		if e.r == r {
			return append(out, '\\', e.esc)
		}
	}
	if r < 0x20 {
		const hex = "0123456789abcdef"
		return append(out, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xF])
	}
	return utf8.AppendRune(out, r)
}

// literal reads true, false, null or a number: the token runs to the next
// ',', ']', '}', whitespace or the end.
func (p *parser) literal() error {
	j := p.i
	for j < len(p.in) {
		c := p.in[j]
		if c == ',' || c == ']' || c == '}' || isSpace(c) {
			break
		}
		if c >= utf8.RuneSelf {
			return p.errorf("unexpected non-ASCII character")
		}
		j++
	}
	tok := p.in[p.i:j]
	switch string(tok) {
	case "":
		return p.errorf("missing value")
	case "true", "false", "null":
		p.out = append(p.out, tok...)
		p.i = j
		return nil
	}
	if !isNumber(tok) {
		return p.errorf("invalid literal or number %q", clip(tok))
	}
	p.i = j
	if isPlainInt(tok) || isPlainDecimal(tok) { // already canonical
		p.out = append(p.out, tok...)
		return nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return p.errorf("number out of range %q", clip(tok))
	}
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		return p.errorf("%v", err)
	}
	p.out = append(p.out, s...)
	return nil
}

// isPlainDecimal reports a number (isNumber) with a fraction that ends in
// a nonzero digit, no exponent, at most 15 significant digits and a value
// of at least 1e-6: its double's shortest digits are its own (two
// decimals of 15 digits are two doubles), which RFC 8785 writes as they
// are.
func isPlainDecimal(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	dot := bytes.IndexByte(b, '.')
	if dot < 0 || b[len(b)-1] < '1' || b[len(b)-1] > '9' {
		return false // an integer, an exponent or a trailing zero
	}
	frac := b[dot+1:]
	for _, c := range frac {
		if c < '0' || c > '9' {
			return false
		}
	}
	if dot == 1 && b[0] == '0' { // 0.00…ddd: below 1e-6 RFC 8785 writes an exponent
		zeros := len(frac) - len(bytes.TrimLeft(frac, "0"))
		return zeros <= 5 && len(frac)-zeros <= 15
	}
	return dot+len(frac) <= 15
}

func clip(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "…"
	}
	return string(b)
}

// isNumber matches -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	return i == len(b)
}

// isPlainInt reports an integer of at most 15 digits other than -0: a
// double holds it exactly and RFC 8785 writes it as it is.
func isPlainInt(b []byte) bool {
	d := b
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
		if len(d) == 1 && d[0] == '0' {
			return false
		}
	}
	if len(d) == 0 || len(d) > 15 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

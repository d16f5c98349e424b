package canon

// maxValidDepth is encoding/json's limit on nesting: Valid refuses deeper
// documents as json.Valid does.
const maxValidDepth = 10000

// Valid reports whether data is one JSON value surrounded by optional
// whitespace. It accepts exactly what encoding/json.Valid accepts (a
// differential fuzz test holds it to that), bytes that are not UTF-8 in
// strings included, at a fraction of the cost: the stores check every
// payload they keep.
func Valid(data []byte) bool {
	v := validator{in: data}
	v.space()
	if !v.value(1) {
		return false
	}
	v.space()
	return v.i == len(v.in)
}

// Members calls fn with the key and the value of each member of the JSON
// object data, in order, until fn returns false. The key is the text
// between its quotes as written (escapes are not decoded); the value is
// its JSON text. It returns false, after calling fn for the members before
// the fault, if data is not a JSON object that Valid accepts.
func Members(data []byte, fn func(key, value []byte) bool) bool {
	v := validator{in: data}
	v.space()
	if !v.is('{') {
		return false
	}
	v.i++
	v.space()
	if v.is('}') {
		v.i++
		v.space()
		return v.i == len(v.in)
	}
	for {
		if !v.is('"') {
			return false
		}
		ks := v.i + 1
		if !v.str() {
			return false
		}
		key := v.in[ks : v.i-1]
		v.space()
		if !v.is(':') {
			return false
		}
		v.i++
		v.space()
		vs := v.i
		if !v.value(2) {
			return false
		}
		if !fn(key, v.in[vs:v.i]) {
			return true
		}
		v.space()
		switch {
		case v.is(','):
			v.i++
			v.space()
		case v.is('}'):
			v.i++
			v.space()
			return v.i == len(v.in)
		default:
			return false
		}
	}
}

type validator struct {
	in []byte
	i  int
}

func (v *validator) is(c byte) bool { return v.i < len(v.in) && v.in[v.i] == c }

func (v *validator) space() {
	for v.i < len(v.in) && isSpace(v.in[v.i]) {
		v.i++
	}
}

// value reads one value at nesting depth (1 for the top level, as a value
// inside it opens depth+1).
func (v *validator) value(depth int) bool {
	if v.i >= len(v.in) {
		return false
	}
	switch c := v.in[v.i]; {
	case c == '"':
		return v.str()
	case c == '{':
		return v.object(depth)
	case c == '[':
		return v.array(depth)
	case c == 't':
		return v.word("true")
	case c == 'f':
		return v.word("false")
	case c == 'n':
		return v.word("null")
	case c == '-' || '0' <= c && c <= '9':
		return v.number()
	}
	return false
}

func (v *validator) word(w string) bool {
	if len(v.in)-v.i < len(w) || string(v.in[v.i:v.i+len(w)]) != w {
		return false
	}
	v.i += len(w)
	return true
}

func (v *validator) object(depth int) bool {
	if depth > maxValidDepth {
		return false
	}
	v.i++ // {
	v.space()
	if v.is('}') {
		v.i++
		return true
	}
	for {
		if !v.is('"') || !v.str() {
			return false
		}
		v.space()
		if !v.is(':') {
			return false
		}
		v.i++
		v.space()
		if !v.value(depth + 1) {
			return false
		}
		if more, ok := v.next('}'); !more {
			return ok
		}
	}
}

func (v *validator) array(depth int) bool {
	if depth > maxValidDepth {
		return false
	}
	v.i++ // [
	v.space()
	if v.is(']') {
		v.i++
		return true
	}
	for {
		if !v.value(depth + 1) {
			return false
		}
		if more, ok := v.next(']'); !more {
			return ok
		}
	}
}

// next reads what follows an object's member or an array's element: a
// comma, and more to come, or the closing byte (more false, ok true);
// anything else is not JSON (ok false).
func (v *validator) next(closing byte) (more, ok bool) {
	v.space()
	switch {
	case v.is(','):
		v.i++
		v.space()
		return true, true
	case v.is(closing):
		v.i++
		return false, true
	}
	return false, false
}

// plain marks the bytes a string holds as they are: not a control
// character, quote or backslash.
var plain = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

// str reads a string from its opening quote through its closing one.
func (v *validator) str() bool {
	v.i++ // "
	for v.i < len(v.in) {
		i, in := v.i, v.in // locals: the loop keeps them in registers
		for i < len(in) && plain[in[i]] {
			i++
		}
		v.i = i
		if v.i == len(v.in) {
			return false
		}
		c := v.in[v.i]
		switch {
		case c == '"':
			v.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if v.i+1 >= len(v.in) {
				return false
			}
			switch v.in[v.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				v.i += 2
			case 'u':
				if len(v.in)-v.i < 6 {
					return false
				}
				for _, h := range v.in[v.i+2 : v.i+6] {
					if !isHex(h) {
						return false
					}
				}
				v.i += 6
			default:
				return false
			}
		default:
			v.i++
		}
	}
	return false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (v *validator) number() bool {
	if v.is('-') {
		v.i++
	}
	switch {
	case v.is('0'):
		v.i++
	case v.i < len(v.in) && '1' <= v.in[v.i] && v.in[v.i] <= '9':
		v.digits()
	default:
		return false
	}
	if v.is('.') {
		v.i++
		if !v.digits() {
			return false
		}
	}
	if v.is('e') || v.is('E') {
		v.i++
		if v.is('+') || v.is('-') {
			v.i++
		}
		if !v.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more digits.
func (v *validator) digits() bool {
	s := v.i
	for v.i < len(v.in) && isDigit(v.in[v.i]) {
		v.i++
	}
	return v.i > s
}

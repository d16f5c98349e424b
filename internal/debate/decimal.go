package debate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxDecimalLen is the longest canonical text of a Decimal. It is long
// enough for every finite float64 written out in full (the longest, the
// smallest subnormal, takes 327 characters), so no value the service ever
// stored as a float is out of reach.
const MaxDecimalLen = 512

// DecimalPattern is the canonical text of a Decimal as a regular
// expression: an optional '-', no '+', no exponent, no leading zeros, no
// trailing zeros after the point, and no negative zero. The API checks the
// same pattern (proto/debated/v1/registry.proto).
const DecimalPattern = `^(0|-?[1-9][0-9]*(\.[0-9]*[1-9])?|-?0\.[0-9]*[1-9])$`

// ErrDecimal is the error every Decimal parser wraps.
var ErrDecimal = errors.New("not a decimal number")

// Decimal is an exact decimal number: money and other exact quantities
// (a claim's figure, a calc's inputs, a deal's materiality threshold). It
// holds its canonical text, so it never rounds; the zero value is 0.
//
// Its JSON form is a number. A value that a float64 holds exactly as its
// shortest decimal (every value the service stored before Decimal existed)
// is written as encoding/json writes that float64, so content hashes of
// deals imported earlier do not change; any other value is written digit
// for digit.
type Decimal struct {
	text string // canonical; "" is 0
}

// ParseDecimal reads s in canonical form only (see DecimalPattern and
// MaxDecimalLen), as the API requires. Returns an error wrapping ErrDecimal
// that says what is wrong otherwise.
func ParseDecimal(s string) (Decimal, error) {
	if len(s) > MaxDecimalLen {
		return Decimal{}, fmt.Errorf("%w: longer than %d characters", ErrDecimal, MaxDecimalLen)
	}
	d, err := ReadDecimal(s)
	if err != nil {
		return Decimal{}, err
	}
	if d.String() != s {
		return Decimal{}, fmt.Errorf("%w: %q is not in canonical form (write %s)", ErrDecimal, s, d.String())
	}
	return d, nil
}

// ReadDecimal reads a decimal number as people and JSON write it: an
// optional sign, digits with an optional point, and an optional exponent
// ("3.15e6", "+012.50", "1E-3", ".5"). The value is kept exactly, never
// through a float. Returns an error wrapping ErrDecimal if s is not such a
// number or if its canonical text would exceed MaxDecimalLen.
func ReadDecimal(s string) (Decimal, error) {
	bad := func(why string) (Decimal, error) {
		return Decimal{}, fmt.Errorf("%w: %q %s", ErrDecimal, clipText(s), why)
	}
	if len(s) > 4*MaxDecimalLen {
		return bad("is too long")
	}
	rest := s
	neg := false
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	mant, exp, hasExp := strings.Cut(rest, "e")
	if !hasExp {
		mant, exp, hasExp = strings.Cut(rest, "E")
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return bad("is not a decimal number")
	}
	shift := 0 // power of ten applied to digits
	if hasExp {
		e := exp
		if e != "" && (e[0] == '-' || e[0] == '+') {
			e = e[1:]
		}
		if e == "" || !allDigits(e) {
			return bad("has a malformed exponent")
		}
		n, err := strconv.Atoi(exp)
		if err != nil || n > 4*MaxDecimalLen || n < -4*MaxDecimalLen {
			return bad("is out of range")
		}
		shift = n
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	shift -= len(frac)
	if digits == "" {
		return Decimal{}, nil
	}
	// Trailing zeros of the digits move into the exponent.
	trimmed := strings.TrimRight(digits, "0")
	shift += len(digits) - len(trimmed)
	digits = trimmed

	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case shift >= 0:
		if len(digits)+shift > MaxDecimalLen {
			return bad("is out of range")
		}
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", shift))
	case -shift < len(digits):
		point := len(digits) + shift
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	default:
		if 2-shift > MaxDecimalLen {
			return bad("is out of range")
		}
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -shift-len(digits)))
		b.WriteString(digits)
	}
	if b.Len() > MaxDecimalLen {
		return bad("is out of range")
	}
	return Decimal{text: b.String()}, nil
}

// MustDecimal is ReadDecimal for values known to be valid, such as
// literals in tests. It panics if s is not a decimal number.
func MustDecimal(s string) Decimal {
	d, err := ReadDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DecimalFromFloat returns the shortest decimal that reads back as f,
// the value f was meant to hold when it came from decimal text (0.1 is
// "0.1", not its binary expansion). Returns an error wrapping ErrDecimal if
// f is NaN or infinite.
func DecimalFromFloat(f float64) (Decimal, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Decimal{}, fmt.Errorf("%w: %v is not finite", ErrDecimal, f)
	}
	if f == 0 {
		return Decimal{}, nil // also -0
	}
	return ReadDecimal(strconv.FormatFloat(f, 'f', -1, 64))
}

// String returns the canonical text, e.g. "3150000", "-12.5", "0.035".
func (d Decimal) String() string {
	if d.text == "" {
		return "0"
	}
	return d.text
}

// IsZero reports whether d is 0.
func (d Decimal) IsZero() bool { return d.text == "" }

// Float64 returns the float64 nearest to d, for arithmetic that is
// approximate anyway (grading compares values at a precision). A value
// beyond the float64 range comes back as ±Inf.
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64) // canonical text always parses; range errors give ±Inf
	return f
}

// MarshalJSON writes d as a JSON number (see Decimal).
func (d Decimal) MarshalJSON() ([]byte, error) {
	s := d.String()
	if f, err := strconv.ParseFloat(s, 64); err == nil && strconv.FormatFloat(f, 'f', -1, 64) == s {
		return json.Marshal(f) // as before Decimal: hashes stay the same
	}
	return []byte(s), nil
}

// UnmarshalJSON reads a JSON number, or a string holding one, exactly (see
// ReadDecimal). null leaves d unchanged.
func (d *Decimal) UnmarshalJSON(data []byte) error {
	s := string(data)
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' {
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("%w: %w", ErrDecimal, err)
		}
	}
	x, err := ReadDecimal(s)
	if err != nil {
		return err
	}
	*d = x
	return nil
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Package dectest builds debate.Decimal values from the float literals that
// test fixtures were written with before debate.Decimal existed. It imports
// only the domain package, so both external (package x_test) and internal
// tests of packages below the domain's consumers can use it without cycles.
package dectest

import "github.com/debated/debated/internal/debate"

// F returns the decimal a float literal of a fixture means (its shortest
// text). It panics if f has no decimal form (NaN, ±Inf): fixtures are
// constants, so that is a bug in the test.
func F(f float64) debate.Decimal {
	d, err := debate.DecimalFromFloat(f)
	if err != nil {
		panic(err)
	}
	return d
}

// Map is F over every value of m; nil stays nil. It panics as F does.
func Map(m map[string]float64) map[string]debate.Decimal {
	if m == nil {
		return nil
	}
	out := make(map[string]debate.Decimal, len(m))
	for k, f := range m {
		out[k] = F(f)
	}
	return out
}

package rules_test

import "github.com/debated/debated/internal/debate"

// decf is the decimal a float literal of a fixture means (its shortest
// text); the fixtures predate debate.Decimal.
func decf(f float64) debate.Decimal {
	d, err := debate.DecimalFromFloat(f)
	if err != nil {
		panic(err)
	}
	return d
}

// decimals is decf over a map; nil stays nil.
func decimals(m map[string]float64) map[string]debate.Decimal {
	if m == nil {
		return nil
	}
	out := make(map[string]debate.Decimal, len(m))
	for k, f := range m {
		out[k] = decf(f)
	}
	return out
}

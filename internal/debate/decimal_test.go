package debate_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
)

func TestParseDecimal(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0", "3150000", "-12.5", "0.035", "-0.5", "0.1", "12345678901234567.89",
		"1000000000000000000000", "7", "-7", "10", "100.001"} {
		d, err := debate.ParseDecimal(s)
		if err != nil {
			t.Errorf("ParseDecimal(%q): %v", s, err)
			continue
		}
		if d.String() != s {
			t.Errorf("ParseDecimal(%q).String() = %q", s, d.String())
		}
	}
	for _, s := range []string{"", "-0", "+1", "01", "1.", ".5", "1.50", "1e6", "3.15e+06", "1,000", " 1", "1 ",
		"0x10", "NaN", "Inf", "-", "0.0", "00", "1..2", "--1", "١٢"} {
		if _, err := debate.ParseDecimal(s); !errors.Is(err, debate.ErrDecimal) {
			t.Errorf("ParseDecimal(%q) = %v, want ErrDecimal", s, err)
		}
	}
	if _, err := debate.ParseDecimal("1" + strings.Repeat("0", debate.MaxDecimalLen)); !errors.Is(err, debate.ErrDecimal) {
		t.Errorf("a decimal longer than MaxDecimalLen parses: %v", err)
	}
}

func TestReadDecimal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"3150000", "3150000"},
		{"3.15e6", "3150000"},
		{"3.15E+06", "3150000"},
		{"+012.50", "12.5"},
		{"-0", "0"},
		{"-0.000", "0"},
		{".5", "0.5"},
		{"5.", "5"},
		{"1e-3", "0.001"},
		{"-125e-2", "-1.25"},
		{"1e21", "1000000000000000000000"},
		{"12345678901234567.89", "12345678901234567.89"},
		{"0.1", "0.1"},
		{"1200e-2", "12"},
		{"0e99", "0"},
	} {
		d, err := debate.ReadDecimal(tc.in)
		if err != nil || d.String() != tc.want {
			t.Errorf("ReadDecimal(%q) = %q, %v; want %q", tc.in, d.String(), err, tc.want)
		}
	}
	for _, s := range []string{"", "e5", "1e", "1e+", "1.2.3", "abc", "1e99999999999", "1e600", "1e-600", "+-1", "1_000"} {
		if _, err := debate.ReadDecimal(s); !errors.Is(err, debate.ErrDecimal) {
			t.Errorf("ReadDecimal(%q) = %v, want ErrDecimal", s, err)
		}
	}
}

func TestDecimalFromFloat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {0.1, "0.1"}, {3.15e6, "3150000"}, {-0.5, "-0.5"},
		{1e21, "1000000000000000000000"}, {68.5, "68.5"}, {1.5e-7, "0.00000015"},
	} {
		d, err := debate.DecimalFromFloat(tc.f)
		if err != nil || d.String() != tc.want {
			t.Errorf("DecimalFromFloat(%v) = %q, %v; want %q", tc.f, d.String(), err, tc.want)
		}
		if d.Float64() != tc.f {
			t.Errorf("DecimalFromFloat(%v).Float64() = %v", tc.f, d.Float64())
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := debate.DecimalFromFloat(f); !errors.Is(err, debate.ErrDecimal) {
			t.Errorf("DecimalFromFloat(%v) = %v, want ErrDecimal", f, err)
		}
	}
	// Every finite float fits, the longest included.
	for _, f := range []float64{math.SmallestNonzeroFloat64, -math.MaxFloat64, 1e-300} {
		d, err := debate.DecimalFromFloat(f)
		if err != nil || d.Float64() != f {
			t.Errorf("DecimalFromFloat(%v) = %v, %v", f, d, err)
		}
	}
}

func TestDecimalJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, json string }{
		// A value a float holds as its shortest decimal is written as
		// encoding/json writes that float: hashes of older imports hold.
		{"3150000", "3150000"},
		{"0.1", "0.1"},
		{"1000000000000000000000", "1e+21"},
		{"-0.00000015", "-1.5e-7"},
		{"0", "0"},
		// Any other value is written digit for digit.
		{"12345678901234567.89", "12345678901234567.89"},
		{"9007199254740993", "9007199254740993"},
		{"0.10000000000000000001", "0.10000000000000000001"},
	} {
		d := debate.MustDecimal(tc.in)
		got, err := json.Marshal(d)
		if err != nil || string(got) != tc.json {
			t.Errorf("json.Marshal(%s) = %s, %v; want %s", tc.in, got, err, tc.json)
		}
		var back debate.Decimal
		if err := json.Unmarshal(got, &back); err != nil || back != d {
			t.Errorf("json.Unmarshal(%s) = %v, %v; want %s", got, back, err, tc.in)
		}
	}
	var d debate.Decimal
	if err := json.Unmarshal([]byte(`"-12.50"`), &d); err != nil || d.String() != "-12.5" {
		t.Errorf(`a JSON string reads as its number: %v, %v`, d, err)
	}
	for _, bad := range []string{`true`, `"x"`, `{}`, `[1]`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("json.Unmarshal(%s) into a Decimal succeeded", bad)
		}
	}
}

// legacyBundle is a deal as it was imported when its figures were
// float64: its content hash then is pinned below.
func legacyBundle() *debate.DealBundle {
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	claim := func(id, key string, class debate.ClaimClass, v, unit, cur, asOf string) debate.Claim {
		return debate.Claim{ID: id, Key: key, Class: class, Text: map[string]string{"c1": "ARR", "c2": "GM", "c3": "TAM", "c4": "tiny"}[id],
			Materiality: map[bool]debate.Materiality{true: debate.MaterialityHigh, false: debate.MaterialityLow}[id < "c3"],
			Value:       &debate.ClaimValue{Value: debate.MustDecimal(v), Unit: unit, Currency: cur, AsOf: asOf}, CreatedAt: at, UpdatedAt: at}
	}
	return &debate.DealBundle{
		Deal: debate.Deal{ID: "deal-legacy", CompanyName: "Acme", Stage: "SEED", MaterialityThreshold: debate.MustDecimal("0.1"), CreatedAt: at, UpdatedAt: at},
		Claims: []debate.Claim{
			claim("c1", "C1", debate.ClaimClassFinancial, "3150000", "USD", "USD", "2025-12-31"),
			claim("c2", "C2", debate.ClaimClassFinancial, "0.1", "percent", "", ""),
			claim("c3", "C3", debate.ClaimClassMarketSize, "1e21", "USD", "USD", ""),
			claim("c4", "C4", debate.ClaimClassOther, "-1.5e-7", "x", "", ""),
		},
		Calcs: []debate.Calc{{ID: "k1", Type: debate.CalcGrossMargin, CreatedAt: at,
			Inputs: map[string]debate.Decimal{"revenue": debate.MustDecimal("3150000"), "cogs": debate.MustDecimal("0.1")}}},
	}
}

// legacyHash is legacyBundle's content hash computed by the code before
// debate.Decimal (commit 0d4e30f, float64 figures).
const legacyHash = "badc8d9e3404479da64eefcbf7788d5c6fcc2850028ae90b568e9cb3c3dd8a8f"

func TestContentHashUnchangedByDecimal(t *testing.T) {
	t.Parallel()
	h, err := legacyBundle().ContentHash()
	if err != nil {
		t.Fatal(err)
	}
	if h != legacyHash {
		t.Fatalf("a deal imported with float figures hashes %s now, %s then: re-importing it would not be a no-op", h, legacyHash)
	}
	// A figure a float could not hold changes the hash, as it must.
	b := legacyBundle()
	b.Claims[0].Value.Value = debate.MustDecimal("3150000.000000000001")
	if h2, _ := b.ContentHash(); h2 == legacyHash {
		t.Fatal("a different figure hashes the same")
	}
}

// FuzzReadDecimal checks ReadDecimal against math/big: it never panics,
// keeps the value exactly, and its text is canonical (ParseDecimal takes
// it back and DecimalPattern matches it).
func FuzzReadDecimal(f *testing.F) {
	for _, s := range []string{"0", "3.15e6", "-12.50", "+0.035", ".5", "1e21", "12345678901234567.89", "1e-7", "-0", "1e400", "e", "1.2.3"} {
		f.Add(s)
	}
	pattern := regexp.MustCompile(debate.DecimalPattern)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := debate.ReadDecimal(s)
		if err != nil {
			if !errors.Is(err, debate.ErrDecimal) {
				t.Fatalf("ReadDecimal(%q): error %v does not wrap ErrDecimal", s, err)
			}
			return
		}
		text := d.String()
		if !pattern.MatchString(text) || len(text) > debate.MaxDecimalLen {
			t.Fatalf("ReadDecimal(%q) = %q, not canonical", s, text)
		}
		if back, err := debate.ParseDecimal(text); err != nil || back != d {
			t.Fatalf("ParseDecimal(%q) = %v, %v", text, back, err)
		}
		want, ok := new(big.Rat).SetString(s)
		if !ok {
			return // a form big.Rat does not read ("5.", "+.5"); value checked by the round trip above
		}
		got, _ := new(big.Rat).SetString(text)
		if got.Cmp(want) != 0 {
			t.Fatalf("ReadDecimal(%q) = %q, a different number", s, text)
		}
		if _, err := debate.ParseDecimal(s); (err == nil) != (s == text) {
			t.Fatalf("ParseDecimal(%q) accepts a non-canonical text or refuses its canonical one: %v", s, err)
		}
	})
}

package canon_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/canon"
)

var corpus = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1`, `-1`, `1.0`, `1.5e3`, `1E-7`, `123456789012345`, `1234567890123456789`,
	`9007199254740993`, `1e21`, `1e20`, `0.000001`, `0.0000001`, `-1.25e-8`, `1e400`, `1e-400`, `5e-324`,
	`true`, `false`, `null`, ` {"b" : 1 , "a" : [ 1 , 2 ] } `, `{"a":1,"a":2}`, `{"a":1,"b":{"d":4,"c":3}}`,
	`{"\u00e9":1,"e":2,"\ud83d\ude00":3,"\uffff":4,"\u20ac":5}`, `"\u0000\u001f\u007f\b\f\n\r\t\"\\\/"`,
	`"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"\ud83d\ude00"`, `"é€😀"`, "\"\xff\"", "\"a\x01\"", `"\x"`,
	`[1,]`, `[,1]`, `{,}`, `{"a":1,}`, `[1 2]`, `{"a" 1}`, `{"a":}`, `01`, `1.`, `.5`, `-`, `+1`, `1e`, `1e+`,
	`truex`, `nul`, `[1:2]`, `{"a":1}x`, `{"a":1} `, `  `, ``, `[`, `{`, `"abc`, `[[[[]]]]`, "\u00e9",
	`{"z":{"y":{"x":[{"b":2,"a":1}]}},"a":null}`, `{"amount":"$1,200,000","pct":12.50,"n":[1e2,2.0,-0.0]}`,
	strings.Repeat("[", 70) + strings.Repeat("]", 70),
	strings.Repeat(`{"b":1,"a":`, 70) + "0" + strings.Repeat("}", 70),
}

// check holds Transform to gowebpki/jcs: the same verdict and, when both
// accept, the same bytes.
func check(t *testing.T, in []byte) {
	t.Helper()
	want, werr := jcs.Transform(in)
	got, gerr := canon.Transform(in)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("input %q: jcs error %v, canon error %v", in, werr, gerr)
	}
	if werr == nil && !bytes.Equal(want, got) {
		t.Fatalf("input %q:\n jcs   %s\n canon %s", in, want, got)
	}
}

func TestTransformMatchesJCS(t *testing.T) {
	for _, c := range corpus {
		check(t, []byte(c))
	}
	_, err := canon.Transform(nil)
	require.Error(t, err)
}

// TestTransformOfMarshalledValues: what the service seals (encoding/json
// output of structs and maps, with HTML escapes) canonicalises as jcs does.
func TestTransformOfMarshalledValues(t *testing.T) {
	type inner struct {
		Z     string  `json:"z"`
		A     float64 `json:"a"`
		Claim string  `json:"claim_id"`
	}
	vs := []any{
		map[string]any{"b": []any{1, 2.5, "x<y>&z"}, "a": inner{Z: "ünï\u2028", A: 1e-9, Claim: "c-1"}},
		[]inner{{Z: "\t", A: math.Copysign(0, -1)}, {Z: "😀", A: 123456789.125}},
	}
	for _, v := range vs {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		check(t, b)
	}
}

func FuzzTransformMatchesJCS(f *testing.F) {
	for _, c := range corpus {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		check(t, in)
	})
}

// benchPayload is an agent output of a typical size, for the benchmarks.
func benchPayload(b *testing.B) []byte {
	b.Helper()
	payload, err := json.Marshal(map[string]any{
		"role": "advocate", "round_number": 2, "content": strings.Repeat("The runway is 14 months at the current burn. ", 8),
		"claim_refs": []string{"c-1", "c-2", "c-3"}, "confidence": 0.62,
		"muhasabah": map[string]any{"supported_claim_ids": []string{"c-1"}, "falsifiability_tests": []map[string]any{{"test_description": "ARR below 2.1M", "required_evidence": "audited accounts"}}},
	})
	require.NoError(b, err)
	return payload
}

func BenchmarkTransform(b *testing.B) {
	payload := benchPayload(b)
	b.Run("canon", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := canon.Transform(payload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gowebpki-jcs", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := jcs.Transform(payload); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecimalsMatchJCS: decimals around the plain-decimal fast path (15
// and 16 significant digits, 1e-6 and 1e-7, trailing zeros) come out as
// jcs writes them.
func TestDecimalsMatchJCS(t *testing.T) {
	t.Parallel()
	ins := []string{"0.1", "-0.5", "0.000001", "0.0000001", "-0.0000012", "0.00000123456789012345",
		"1.10", "123456789012345.5", "12345678901234.5", "0.123456789012345", "0.1234567890123456",
		"9007199254740993.5", "100.25", "0.30000000000000004", "1.7976931348623157", "5.0e-1", "0.0"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		ip := strconv.FormatUint(r.Uint64N(1_000_000_000_000), 10)[:1+r.IntN(8)]
		if r.IntN(3) == 0 {
			ip = "0"
		}
		frac := strings.Repeat("0", r.IntN(8)) + strconv.FormatUint(r.Uint64N(1<<53), 10)[:1+r.IntN(12)]
		sign := ""
		if r.IntN(2) == 0 {
			sign = "-"
		}
		ins = append(ins, sign+ip+"."+frac)
	}
	for _, in := range ins {
		check(t, []byte(in))
		check(t, []byte(`{"v":[`+in+`]}`))
	}
}

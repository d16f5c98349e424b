package gate_test

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/debated/debated/internal/gate"
)

// referenceIDTokens is IDTokens as first written, rune by rune: the
// byte-wise scan must find the same tokens.
func referenceIDTokens(text string) [][2]int {
	isSep := func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;()[]{}<>\"'`|/=“”‘’«»", r)
	}
	var out [][2]int
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if isSep(r) {
			i += n
			continue
		}
		j := len(text)
		if k := strings.IndexFunc(text[i:], isSep); k >= 0 {
			j = i + k
		}
		run := text[i:j]
		a := i + len(run) - len(strings.TrimLeft(run, ".:!?*#~"))
		b := i + len(strings.TrimRight(run, ".:!?*#~"))
		i = j
		if a < b {
			out = append(out, [2]int{a, b})
		}
	}
	return out
}

func checkIDTokens(t *testing.T, text string) {
	t.Helper()
	var got [][2]int
	for a, b := range gate.IDTokens(text) {
		got = append(got, [2]int{a, b})
	}
	if want := referenceIDTokens(text); !slices.Equal(got, want) {
		t.Fatalf("IDTokens(%q) = %v, want %v", text, got, want)
	}
}

var idTokenTexts = []string{
	"", " ", "C1", "C1.", "*C1*", "...", "(C12), [C3]; C4: done.", "claim C1\u00a0C2\u0085C3\u2028C4",
	"“C1” «C2» ‘C3’", "a/b=c|d`e'f\"g", "\xffC1\xfe", "é.C1.é", "~#*!?:.", "x.~y", "C1\tC2\nC3\vC4\fC5\rC6",
	"550e8400-e29b-41d4-a716-446655440000.", "\xc3", ".\xc3.", "a\u3000b",
}

func TestIDTokensMatchesReference(t *testing.T) {
	for _, s := range idTokenTexts {
		checkIDTokens(t, s)
	}
}

func FuzzIDTokens(f *testing.F) {
	for _, s := range idTokenTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkIDTokens(t, s) })
}

package canon_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/canon"
)

// validCorpus adds to corpus what json.Valid takes differently from
// RFC 8785: bytes that are not UTF-8, lone surrogates, huge numbers,
// whitespace and the depth limit.
var validCorpus = []string{
	"\"\x80\"", "\"\xed\xa0\x80\"", `1e999999`, `-0.0e-0`, `-01`, `- 1`, `1.e5`, `1e5.5`, "\t\n\r 1 \t\n\r",
	`"\u12"`, `"\u12g4"`, `"\uABCD"`, `"\`, `"a\"`, `tru`, `nulll`, `[true,false,null]`, `{"a":[{"b":[]}]}`,
	`{"a" : 1 , "b" : 2}`, `{"a":1 "b":2}`, `{1:2}`, `[1,2]]`, `{}}`, "\x00", `"` + "\x7f" + `"`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

func checkValid(t *testing.T, in []byte) {
	t.Helper()
	if want, got := json.Valid(in), canon.Valid(in); want != got {
		t.Fatalf("input %q: json.Valid %v, canon.Valid %v", in, want, got)
	}
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, c := range append(corpus, validCorpus...) {
		checkValid(t, []byte(c))
	}
}

func FuzzValidMatchesEncodingJSON(f *testing.F) {
	for _, c := range append(corpus, validCorpus...) {
		if len(c) < 1000 { // the depth limit's documents stall the fuzzer
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkValid(t, in)
	})
}

// TestMembers: the members of an object in order, raw keys and values; a
// stop; false for what is not an object Valid accepts.
func TestMembers(t *testing.T) {
	type kv struct{ k, v string }
	collect := func(in string, stopAt int) ([]kv, bool) {
		var got []kv
		ok := canon.Members([]byte(in), func(k, v []byte) bool {
			got = append(got, kv{string(k), string(v)})
			return len(got) != stopAt
		})
		return got, ok
	}
	got, ok := collect(` { "b" : [1, {"x":"}"}] , "a\"" :"s", "c":null } `, 0)
	require.True(t, ok)
	require.Equal(t, []kv{{"b", `[1, {"x":"}"}]`}, {`a\"`, `"s"`}, {"c", "null"}}, got)

	got, ok = collect(`{"a":1,"b":2,"c":3}`, 2)
	require.True(t, ok)
	require.Equal(t, []kv{{"a", "1"}, {"b", "2"}}, got)

	got, ok = collect(`{}`, 0)
	require.True(t, ok)
	require.Empty(t, got)

	for _, bad := range []string{`[]`, `"a"`, ``, `{"a":1,}`, `{"a":1}x`, `{"a":01}`, `{"a":1`, `{"a" 1}`, `{a:1}`} {
		_, ok := collect(bad, 0)
		require.False(t, ok, bad)
	}
	got, ok = collect(`{"a":1,"b":x}`, 0)
	require.False(t, ok)
	require.Equal(t, []kv{{"a", "1"}}, got, "the members before the fault")
}

func BenchmarkValid(b *testing.B) {
	payload := benchPayload(b)
	b.Run("canon", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if !canon.Valid(payload) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if !json.Valid(payload) {
				b.Fatal("invalid")
			}
		}
	})
}

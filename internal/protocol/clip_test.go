package protocol

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestClip: Clip never splits a character and marks the cut.
func TestClip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"añb", 2, "a…"}, // ñ is 2 bytes: byte 2 is inside it
		{"añb", 3, "añ…"},
		{"日本語", 4, "日…"},
		{"日本語", 0, "…"},
		{"abc", -1, "…"},
	} {
		got := Clip(tc.s, tc.n)
		require.Equal(t, tc.want, got, "%q %d", tc.s, tc.n)
		require.True(t, utf8.ValidString(got))
	}
}

func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "abc", "añb", "日本語", "\xff\xfe"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := Clip(s, n)
		if len(s) <= n {
			if got != s {
				t.Fatalf("Clip(%q, %d) = %q, want it unchanged", s, n, got)
			}
			return
		}
		if !strings.HasSuffix(got, "…") || len(got) > max(n, 0)+len("…") {
			t.Fatalf("Clip(%q, %d) = %q", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q splits a character", s, n, got)
		}
	})
}

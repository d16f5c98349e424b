package rows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

func TestLimit(t *testing.T) {
	t.Parallel()
	for in, want := range map[int]int{-5: 50, 0: 50, 1: 1, 50: 50, 999: 999, 1000: 1000, 1001: 1000, 1 << 40: 1000} {
		require.Equal(t, want, Limit(in), "Limit(%d)", in)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	for _, keys := range [][]string{{"a"}, {"", "id"}, {"C1", "00000000-0000-0000-0005-000000060101"}, {"ü/?&=\x00", "\""}} {
		got, err := DecodeCursor(EncodeCursor(keys...), len(keys))
		require.NoError(t, err)
		require.Equal(t, keys, got)
	}
	got, err := DecodeCursor("", 2)
	require.NoError(t, err)
	require.Nil(t, got, "the empty cursor is the first page")
}

func TestDecodeCursorRejects(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"!", "e30", EncodeCursor("a"), EncodeCursor("a", "b", "c"), "W10", "bnVsbA"} {
		_, err := DecodeCursor(c, 2)
		require.ErrorIs(t, err, debate.ErrInvalid, "cursor %q", c)
		var ve *debate.ValidationError
		require.True(t, errors.As(err, &ve))
		require.Equal(t, "page_token", ve.Violations[0].Field)
	}
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(EncodeCursor("C1", "id"))
	f.Add("")
	f.Add("W10")
	f.Fuzz(func(t *testing.T, c string) {
		keys, err := DecodeCursor(c, 2)
		if err != nil {
			require.ErrorIs(t, err, debate.ErrInvalid)
			return
		}
		if c != "" {
			require.Len(t, keys, 2)
		}
	})
}

func TestTimeText(t *testing.T) {
	t.Parallel()
	in := time.Date(2026, 1, 5, 14, 0, 0, 123456789, time.FixedZone("X", 3600))
	s := TimeText(in)
	require.Equal(t, "2026-01-05T13:00:00.123456Z", s)
	got, err := ParseTimeText(s)
	require.NoError(t, err)
	require.Equal(t, Time(in), got)
	require.Equal(t, "0001-01-01T00:00:00.000000Z", TimeText(time.Time{}))
	_, err = ParseTimeText("yesterday")
	require.Error(t, err)
}

func BenchmarkEncodeBundle10kClaims(b *testing.B) {
	bd := storetest.LargeBundle("deal-bench", 10000)
	at := time.Now()
	for b.Loop() {
		if _, err := EncodeBundle(bd, "hash", at); err != nil {
			b.Fatal(err)
		}
	}
}

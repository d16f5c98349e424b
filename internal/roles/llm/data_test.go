package llm

import (
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"7", 7 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"Mon, 05 Jan 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Mon, 05 Jan 2026 11:00:00 GMT", 0, true},
	} {
		got, ok := retryAfter(tc.h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoffCapped(t *testing.T) {
	t.Parallel()
	b := &Backend{cfg: Config{Retry: Retry{Base: 500 * time.Millisecond, Max: 8 * time.Second}, Rand: func() float64 { return 0.999999 }}}
	for attempt := 1; attempt < 40; attempt++ {
		if d := b.backoff(attempt); d > 8*time.Second || d < 250*time.Millisecond {
			t.Fatalf("backoff(%d) = %v", attempt, d)
		}
	}
}

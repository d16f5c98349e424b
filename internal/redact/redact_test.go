package redact

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestString(t *testing.T) {
	t.Parallel()
	r := New("tenant-key-Zq8vW2", "short") // "short" is below MinSecretLen: ignored
	cases := []struct {
		name, in string
		gone     []string // must not survive
		kept     []string // must survive
	}{
		{"configured secret anywhere", `{"error":{"message":"Incorrect API key provided: tenant-key-Zq8vW2."}}`,
			[]string{"tenant-key-Zq8vW2"}, []string{"Incorrect API key provided"}},
		{"bearer header echoed", "got Authorization: Bearer abc.def-ghi_jkl", []string{"abc.def-ghi_jkl"}, []string{"Bearer"}},
		{"openai key", "invalid key sk-proj-AbC123xyz0987", []string{"sk-proj-AbC123xyz0987", "AbC123"}, []string{"invalid key"}},
		{"service key", "key dbk_3f9a8b7c6d5e4f", []string{"dbk_3f9a8b7c6d5e4f"}, nil},
		{"assignment", `api_key=hunter2hunter2 and "password": "p4ssw0rd!"`, []string{"hunter2hunter2", "p4ssw0rd!"}, []string{"api_key=", `"password": "`}},
		{"assignment forms", `{"apiKey": "abcd1234"} MY_API_KEY=xyz12345&page=2 x-api-key:qwerty99`, []string{"abcd1234", "xyz12345", "qwerty99"},
			[]string{`"apiKey": "`, "MY_API_KEY=", "&page=2", "x-api-key:"}},
		{"random token", "token X9fK2mQ7vL4tR8wZ1nB6yH3cJ5dP0sA echoed", []string{"X9fK2mQ7vL4tR8wZ1nB6yH3cJ5dP0sA"}, []string{"echoed"}},
		{"short configured is not a secret", "a short note", nil, []string{"a short note"}},
		{"uuid kept", "debate 6ba7b810-9dad-11d1-80b4-00c04fd430c8 failed", nil, []string{"6ba7b810-9dad-11d1-80b4-00c04fd430c8"}},
		{"hash kept", "head 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", nil,
			[]string{"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}},
		{"words kept", "wrote debate_round1_advocate.json and critique_round1_ala_on_nla.json", nil,
			[]string{"debate_round1_advocate.json", "critique_round1_ala_on_nla.json"}},
		{"token word kept", "token budget exceeded: token expired", nil, []string{"token budget exceeded: token expired"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := r.String(c.in)
			for _, g := range c.gone {
				require.NotContains(t, got, g)
			}
			for _, k := range c.kept {
				require.Contains(t, got, k)
			}
		})
	}
}

func TestNilRedactorMasksShapes(t *testing.T) {
	t.Parallel()
	var r *Redactor
	r.Add("ignored-because-nil")
	require.Equal(t, "configured-but-unknown", r.Secrets("configured-but-unknown"))
	require.Equal(t, "Bearer "+Mask, r.String("Bearer sk-abcdefgh1234"))
	require.Equal(t, r.String("x sk-abcdefgh1234"), Text("x sk-abcdefgh1234"))
}

func TestLongerSecretMaskedWhole(t *testing.T) {
	t.Parallel()
	r := New("abcdefgh", "abcdefgh-and-more")
	require.Equal(t, "k="+Mask, r.Secrets("k=abcdefgh-and-more"))
}

func TestUpstream(t *testing.T) {
	t.Parallel()
	r := New("my-secret-key-123")
	body := `{"error":{"message":"bad key my-secret-key-123",` + "\n\t" + `"hex":"0123456789abcdef0123456789abcdef"}}` + strings.Repeat("é", 200)
	got := r.Upstream(body, 80)
	require.NotContains(t, got, "my-secret-key-123")
	require.NotContains(t, got, "0123456789abcdef0123456789abcdef", "hex of credential length is masked in upstream text")
	require.NotContains(t, got, "\n")
	require.LessOrEqual(t, len(got), 80+len("…"))
	require.True(t, utf8.ValidString(got))
	require.True(t, strings.HasSuffix(got, "…"))
	require.Equal(t, "short", r.Upstream("short", 80))
}

func FuzzString(f *testing.F) {
	f.Add("Bearer sk-abcdefgh1234 secret-value-99")
	f.Add(`{"api_key":"zzzzzzzzzz"}`)
	f.Fuzz(func(t *testing.T, s string) {
		r := New("secret-value-99")
		out := r.String(s)
		if strings.Contains(s, "secret-value-99") && strings.Contains(out, "secret-value-99") {
			t.Fatalf("configured secret survived: %q", out)
		}
		up := r.Upstream(s, 64)
		if len(up) > 64+len("…") {
			t.Fatalf("excerpt too long: %d", len(up))
		}
	})
}

func TestHandler(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	r := New("configured-secret-1")
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil), r)).With(slog.String("base", "Bearer abcdefghijk"))
	log.WithGroup("g").Warn("call failed: configured-secret-1",
		slog.Any("error", errors.New("401: Incorrect API key provided: configured-secret-1")),
		slog.Group("upstream", slog.String("body", "api_key=configured-secret-1"), slog.Int("status", 401)),
		slog.Any("raw", []byte("sk-abcdef123456")), slog.Any("map", map[string]string{"k": "configured-secret-1"}))
	out := buf.String()
	require.NotContains(t, out, "configured-secret-1")
	require.NotContains(t, out, "abcdefghijk")
	require.NotContains(t, out, "sk-abcdef123456")
	require.Contains(t, out, `"status":401`)
	require.Contains(t, out, "Incorrect API key provided")
}

// BenchmarkHandler is the cost the redacting handler adds to a typical log
// line (message, five attributes, one error).
func BenchmarkHandler(b *testing.B) {
	r := New("sk-deployment-key-0123456789", "tenant-key-abcdefgh")
	for _, h := range []struct {
		name string
		log  *slog.Logger
	}{
		{"plain", slog.New(slog.NewJSONHandler(io.Discard, nil))},
		{"redacting", slog.New(NewHandler(slog.NewJSONHandler(io.Discard, nil), r))},
	} {
		b.Run(h.name, func(b *testing.B) {
			for b.Loop() {
				h.log.Warn("llm call failed", slog.String("debate_id", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
					slog.String("role", "advocate"), slog.Int("attempt", 2), slog.Int("status", 401), slog.Bool("retryable", false),
					slog.Any("error", errors.New("status 401 (unauthorized): Incorrect API key provided: [REDACTED]")))
			}
		})
	}
}

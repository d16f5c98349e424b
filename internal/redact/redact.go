// Package redact removes secrets from text before it is logged or sealed
// into a ledger. A ledger event is never removable (deleting it breaks the
// chain), so what a hostile or careless upstream echoes (a model endpoint
// that returns the bearer key in its 401 body) must be cut out before it
// gets there.
//
// Two kinds of secrets are removed: the configured ones a Redactor knows
// (the deployment's model key, each tenant's model key as the process
// loads it), matched exactly wherever they occur, and anything shaped like
// a credential: "Bearer …", OpenAI-style "sk-…" keys, this service's
// "dbk_…" API keys, "api_key=…"-style assignments and long high-entropy
// tokens. Shapes are the backstop for secrets this process never loaded
// (another replica's tenant key echoed by a shared endpoint).
//
// The package imports only the standard library; a nil *Redactor redacts
// shapes only.
package redact

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// Mask replaces every redacted secret.
const Mask = "[REDACTED]"

// MinSecretLen is the shortest configured secret Add accepts: a shorter one
// would mask ordinary words everywhere, and is no secret anyway.
const MinSecretLen = 8

// Redactor removes configured secrets and credential-shaped tokens from
// text. It is safe for concurrent use; the zero value and nil know no
// configured secret.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string // longest first, so a secret containing another is masked whole
	seen    map[string]bool
}

// New returns a Redactor that knows secrets (see Add).
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		r.Add(s)
	}
	return r
}

// Add makes r mask secret wherever it occurs. Secrets shorter than
// MinSecretLen (after trimming spaces) are ignored. Adding a secret twice
// is harmless.
func (r *Redactor) Add(secret string) {
	secret = strings.TrimSpace(secret)
	if r == nil || len(secret) < MinSecretLen {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[secret] {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[secret] = true
	r.secrets = append(r.secrets, secret)
	sort.SliceStable(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
}

// Secrets masks only the configured secrets in s: for text whose shapes
// are content (a model's answer) rather than diagnostics.
func (r *Redactor) Secrets(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Mask)
		}
	}
	return s
}

// String masks the configured secrets and every credential-shaped token
// in s. Identifiers this service prints (UUIDs, hex hashes) are kept.
func (r *Redactor) String(s string) string {
	return shapes(r.Secrets(s), false)
}

// Upstream returns what may be kept of a text an upstream sent (an error
// body): configured secrets and credential shapes masked, hex runs of
// credential length masked too (some providers' keys are hex), and the
// result clipped to at most n bytes on a rune boundary, with "…" when cut.
func (r *Redactor) Upstream(s string, n int) string {
	s = shapes(r.Secrets(s), true)
	s = strings.Join(strings.Fields(s), " ")
	return clip(s, n)
}

// Text masks credential-shaped tokens in s (no configured secrets): what a
// component that knows no secret can still do.
func Text(s string) string { return shapes(s, false) }

var (
	// bearer matches an Authorization value: the scheme is kept.
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+|%20)[A-Za-z0-9._~+/=\-:]{6,}`)
	// prefixed matches keys with a known prefix: OpenAI-style sk-…
	// (sk-proj-…), this service's dbk_…, and a few common providers'.
	prefixed = regexp.MustCompile(`\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{6,}|\bdbk_[A-Za-z0-9_\-]{6,}|\b(?:ghp|gho|ghs|github_pat|xox[abprs]|AKIA|ASIA|hf|glpat)[_-]?[A-Za-z0-9_\-]{10,}`)
)

func shapes(s string, strict bool) string {
	if len(s) < 6 {
		return s
	}
	// The regexps only run on text that holds what they look for: most
	// log attributes are ids and words, and a log line must stay cheap.
	low := strings.ToLower(s)
	if strings.Contains(low, "bearer") || strings.Contains(low, "basic") {
		s = bearer.ReplaceAllString(s, "${1} "+Mask)
	}
	if containsAny(low, prefixHints) {
		s = prefixed.ReplaceAllString(s, Mask)
	}
	if strings.ContainsAny(s, ":=") && containsAny(low, assignHints) {
		s = maskAssignments(s)
	}
	return maskTokens(s, strict)
}

// Substrings (lower case) without which prefixed and assigned cannot match.
var (
	prefixHints = []string{"sk-", "pk-", "rk-", "dbk_", "ghp", "gho", "ghs", "github_pat", "xox", "akia", "asia", "hf", "glpat"}
	assignHints = []string{"key", "secret", "token", "passw", "authorization"}
)

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// assignNames are the names (lower case, a suffix of the word before the
// ":" or "=") whose value maskAssignments masks.
var assignNames = []string{"apikey", "api_key", "api-key", "accesskey", "access_key", "access-key",
	"secretkey", "secret_key", "secret-key", "clientsecret", "client_secret", "client-secret",
	"secret", "token", "password", "passwd", "authorization"}

// maskAssignments masks the value of "api_key=…", `"apiKey": "…"`,
// "password: …" and the like: the name is kept, a value of 4+ bytes (up to
// a space, quote, comma, semicolon, brace or ampersand) is masked. A value
// already masked, or a "Bearer"/"Basic" scheme whose token the bearer rule
// masked, stays.
func maskAssignments(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ':' && s[i] != '=' {
			continue
		}
		// The name: back over spaces and one quote, then a word.
		k := i
		for k > 0 && (s[k-1] == ' ' || s[k-1] == '\t') {
			k--
		}
		if k > 0 && (s[k-1] == '"' || s[k-1] == '\'') {
			k--
		}
		w := k
		for w > 0 && (isWordByte(s[w-1]) || s[w-1] == '-') {
			w--
		}
		if !hasNameSuffix(strings.ToLower(s[w:k])) {
			continue
		}
		// The value: after spaces and one quote.
		v := i + 1
		for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
			v++
		}
		if v < len(s) && (s[v] == '"' || s[v] == '\'') {
			v++
		}
		e := v
		for e < len(s) && !strings.ContainsRune(" \t\r\n\"',;}&", rune(s[e])) {
			e++
		}
		val := s[v:e]
		if len(val) < 4 || strings.HasPrefix(val, "[REDACTED") || strings.EqualFold(val, "bearer") || strings.EqualFold(val, "basic") {
			continue
		}
		b.WriteString(s[last:v])
		b.WriteString(Mask)
		last, i = e, e-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func hasNameSuffix(word string) bool {
	for _, n := range assignNames {
		if strings.HasSuffix(word, n) {
			return true
		}
	}
	return false
}

// isTokenByte is the alphabet of a credential-like token.
func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '+' || c == '/' || c == '=' || c == '.' || c == '~'
}

// maskTokens masks the runs of 24+ token bytes that look random.
func maskTokens(s string, strict bool) string {
	var b strings.Builder
	last := 0 // s[:last] is written to b (when b is in use)
	for i := 0; i < len(s); {
		if !isTokenByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		if j-i >= 24 && looksSecret(s[i:j], strict) {
			if b.Len() == 0 && last == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:i])
			b.WriteString(Mask)
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// looksSecret reports whether tok (24+ characters of token alphabet) is a
// random credential rather than an identifier or a word: it mixes letters
// and digits and its characters carry at least minEntropy bits each. UUIDs and
// hex (this service's ids and hashes) are kept unless strict (then hex of
// 32+ digits is masked);
// dotted or slashed paths with words are kept (they fail the entropy test).
func looksSecret(tok string, strict bool) bool {
	if strings.Contains(tok, Mask) {
		return false
	}
	if debate.IsUUIDText(tok) {
		return false
	}
	var letters, digits int
	hex := true
	for _, c := range tok {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'f':
			letters++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
			hex = false
		default:
			hex = false
		}
	}
	if letters == 0 || digits == 0 {
		return false
	}
	if hex {
		return strict && len(tok) >= 32
	}
	return entropy(tok) >= minEntropy
}

// minEntropy is the bits per character above which a mixed token counts
// as random: 24 random base-62 characters carry about 4.2, identifiers
// made of words and a number (debate_round1_advocate) about 3.7 or less.
const minEntropy = 3.9

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

func clip(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

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
	// assigned matches "api_key=…", `"apiKey": "…"`, "password: …": the
	// name is kept, the value masked.
	assigned = regexp.MustCompile(`(?i)((?:api[_-]?key|access[_-]?key|secret[_-]?key|client[_-]?secret|secret|token|password|passwd|authorization|x-api-key)["']?\s*[:=]\s*["']?)([^\s"',;}&]{4,})`)
	// candidate is a run that may be a high-entropy token.
	candidate = regexp.MustCompile(`[A-Za-z0-9_\-+/=.~]{24,}`)
	uuidRE    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

func shapes(s string, strict bool) string {
	if s == "" {
		return s
	}
	s = bearer.ReplaceAllString(s, "${1} "+Mask)
	s = prefixed.ReplaceAllString(s, Mask)
	s = assigned.ReplaceAllStringFunc(s, func(m string) string {
		sub := assigned.FindStringSubmatch(m)
		// A scheme (the bearer rule masked its token) or a mask stays.
		if strings.HasPrefix(sub[2], "[REDACTED") || strings.EqualFold(sub[2], "bearer") || strings.EqualFold(sub[2], "basic") {
			return m
		}
		return sub[1] + Mask
	})
	return candidate.ReplaceAllStringFunc(s, func(tok string) string {
		if looksSecret(tok, strict) {
			return Mask
		}
		return tok
	})
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
	if uuidRE.MatchString(tok) {
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

package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/debated/debated/internal/canon"
)

// MaxArgsBytes bounds the arguments of one call. Larger arguments are
// INVALID and recorded in the audit by their digest only.
const MaxArgsBytes = 64 << 10

// malformedExcerptBytes is how much of malformed arguments the audit keeps.
const malformedExcerptBytes = 256

// sha256Ref formats a digest as the ledger writes them: "sha256:<hex>".
func sha256Ref(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// hash is Hash for the invoker's results, whose Output success wrote in
// RFC 8785 form: a SUCCESS result's form is then known without
// canonicalising the output again.
func (r Result) hash() string {
	if r.Status != StatusSuccess || r.Rule != "" || r.Field != "" || r.Error != "" || len(r.Output) == 0 {
		return r.Hash()
	}
	h := sha256.New()
	h.Write([]byte(`{"output":`))
	h.Write(r.Output)
	h.Write([]byte(`,"status":"` + StatusSuccess + `"}`))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// canonicalArgs returns the audit form of a call's arguments and whether
// they are a well-formed JSON object. Well-formed arguments are recorded in
// RFC 8785 form; no arguments (empty or null) are {}. Anything else (not
// JSON, not an object, duplicate keys, invalid UTF-8, larger than
// MaxArgsBytes) is recorded as
// {"malformed":true,"bytes":N,"sha256":"sha256:…","excerpt":"…"} with the
// first 256 bytes as text, so the ledger stays bounded and valid while still
// pinning what was sent.
func canonicalArgs(raw []byte) (json.RawMessage, bool) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return json.RawMessage(`{}`), true
	}
	if len(raw) <= MaxArgsBytes && utf8.Valid(raw) && isObject(raw) {
		if c, err := canon.Transform(raw); err == nil {
			return c, true
		}
	}
	excerpt := raw[:min(len(raw), malformedExcerptBytes)]
	m := map[string]any{
		"malformed": true,
		"bytes":     len(raw),
		"sha256":    sha256Ref(raw),
		"excerpt":   strings.ToValidUTF8(string(excerpt), "\uFFFD"),
	}
	c, err := canon.Marshal(m)
	if err != nil { // cannot happen: valid UTF-8 strings and integers
		return json.RawMessage(`{"malformed":true}`), false
	}
	return c, false
}

// isObject reports whether raw starts, after white space, with '{'.
func isObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

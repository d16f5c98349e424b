// Package rows is what the PostgreSQL and SQLite stores share: the JSON
// records in which they keep each resource of a claim registry, the column
// values beside them, the keyset pagination cursor and the checks both
// stores make on their input, so that the two stores cannot drift apart.
//
// Records are private DTOs with explicit JSON names (the names of the deal
// files' layout) rather than the domain structs, which carry no tags: the
// stored format then changes only when this package says so. Times inside
// records keep their nanoseconds; times kept in columns (tenants, API keys,
// a deal's import time) keep microseconds, PostgreSQL's precision, in both
// stores (see Time). Every time comes back in UTC.
package rows

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/debated/debated/internal/debate"
)

// Page limits: a Page.Limit of 0 or less asks for DefaultLimit items, one
// above MaxLimit gets MaxLimit.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Limit returns the number of items a page of l holds.
func Limit(l int) int {
	switch {
	case l <= 0:
		return DefaultLimit
	case l > MaxLimit:
		return MaxLimit
	default:
		return l
	}
}

// EncodeCursor returns the opaque cursor that resumes a list after the item
// whose sort key is keys.
func EncodeCursor(keys ...string) string {
	data, _ := json.Marshal(keys) // a []string always marshals
	return base64.RawURLEncoding.EncodeToString(data)
}

// DecodeCursor returns the n sort-key values in cursor, or nil for the empty
// cursor (the first page). Returns a *debate.ValidationError on field
// "page_token" if cursor is not one EncodeCursor made with n keys.
func DecodeCursor(cursor string, n int) ([]string, error) {
	if cursor == "" {
		return nil, nil
	}
	bad := &debate.ValidationError{Violations: []debate.FieldViolation{{
		Field: "page_token", Description: "is not a page token this list returned",
	}}}
	data, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, bad
	}
	var keys []string
	if err := json.Unmarshal(data, &keys); err != nil || len(keys) != n {
		return nil, bad
	}
	return keys, nil
}

// Time returns t as both stores keep a time in a column: in UTC, truncated
// to the microsecond (PostgreSQL's timestamptz precision).
func Time(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// TimeText is the SQLite spelling of Time(t): RFC 3339, UTC, microseconds,
// fixed width.
func TimeText(t time.Time) string { return Time(t).Format(timeLayout) }

// ParseTimeText reverses TimeText.
func ParseTimeText(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// CheckTenant returns a *debate.ValidationError if t cannot be stored.
func CheckTenant(t debate.Tenant) error {
	var v debate.Violations
	checkID(&v, "tenant.id", t.ID)
	checkText(&v, "tenant.name", t.Name, debate.MaxShortTextLen)
	return v.Err()
}

// CheckAPIKey returns a *debate.ValidationError if k cannot be stored.
func CheckAPIKey(k debate.APIKey) error {
	var v debate.Violations
	checkID(&v, "api_key.id", k.ID)
	checkID(&v, "api_key.tenant_id", k.TenantID)
	checkText(&v, "api_key.name", k.Name, debate.MaxShortTextLen)
	checkText(&v, "api_key.prefix", k.Prefix, debate.MaxShortTextLen)
	if len(k.Hash) == 0 {
		v.Add("api_key.hash", "is required")
	}
	for i, s := range k.Scopes {
		if !debate.ValidScope(s) {
			v.Add(fmt.Sprintf("api_key.scopes[%d]", i), "unknown scope %q", string(s))
		}
	}
	return v.Err()
}

// Scopes returns the stored spelling of scopes; ScopesOf reverses it. A key
// without scopes reads back with nil Scopes.
func Scopes(scopes []debate.Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

// ScopesOf reverses Scopes.
func ScopesOf(ss []string) []debate.Scope {
	if len(ss) == 0 {
		return nil
	}
	out := make([]debate.Scope, len(ss))
	for i, s := range ss {
		out[i] = debate.Scope(s)
	}
	return out
}

func checkID(v *debate.Violations, field, id string) {
	if !debate.ValidID(id) {
		v.Add(field, "must be 1 to %d printable characters without spaces", debate.MaxIDLen)
	}
}

// checkText refuses NUL: PostgreSQL cannot store it in text or jsonb, and
// both stores must accept the same inputs.
func checkText(v *debate.Violations, field, s string, limit int) {
	switch {
	case len(s) > limit:
		v.Add(field, "is %d bytes long, at most %d allowed", len(s), limit)
	case strings.IndexByte(s, 0) >= 0:
		v.Add(field, "contains a NUL character")
	}
}

// nul is how encoding/json spells a NUL character inside a string.
var nul = []byte(`\u0000`)

// marshal encodes a record, refusing NUL characters for the reason given at
// checkText. kind and index (-1 for none) name the record in an error; the
// name is formatted only then, as imports marshal many records.
func marshal(kind string, index int, rec any) (string, error) {
	data, err := json.Marshal(rec)
	if err == nil && !bytes.Contains(data, nul) {
		return string(data), nil
	}
	field := kind
	if index >= 0 {
		field = fmt.Sprintf("%s[%d]", kind, index)
	}
	desc := "contains a NUL character"
	if err != nil {
		desc = err.Error()
	}
	return "", &debate.ValidationError{Violations: []debate.FieldViolation{{Field: field, Description: desc}}}
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// builtins are the tools of this package: the parameters of each one's
// seed 000 §4 signature (any other member is INVALID) and the method that
// runs it, whose error is the cause of an ERROR result.
var builtins = map[string]struct {
	fields []string
	run    func(inv *Invoker, ctx context.Context, c call, a *args) (any, *bad, error)
}{
	LookupClaim:        {[]string{"claim_id", "include_sanad", "include_evidence"}, (*Invoker).lookupClaim},
	LookupCalc:         {[]string{"calc_id", "include_inputs"}, (*Invoker).lookupCalc},
	SearchEvidence:     {[]string{"query", "deal_id", "claim_class", "min_grade", "limit"}, (*Invoker).searchEvidence},
	FlagDefect:         {[]string{"claim_id", "defect_type", "severity", "description", "evidence_refs", "cure_protocol"}, (*Invoker).flagDefect},
	RequestHumanReview: {[]string{"claim_ids", "reason", "priority", "required_role"}, (*Invoker).requestHumanReview},
	QueryEnrichment:    {[]string{"entity_type", "entity_name", "data_points"}, (*Invoker).queryEnrichment},
}

// Bounds of argument values.
const (
	maxQueryLen      = debate.MaxShortTextLen // search_evidence query, entity_name, data points
	maxDataPoints    = 32
	maxRoleLen       = 64
	maxSearchLimit   = 50
	defaultSearchLim = 10
)

// violations accumulates bad arguments in the order they were found.
type violations []debate.FieldViolation

func (v *violations) Add(field, format string, args ...any) {
	*v = append(*v, debate.FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// bad is a refused call: its rule and the violations found.
type bad struct {
	rule string
	list violations
}

func (b *bad) result() Result {
	parts := make([]string, 0, len(b.list))
	for _, fv := range b.list {
		parts = append(parts, fv.Field+": "+fv.Description)
	}
	return refusal(StatusInvalid, b.rule, b.list[0].Field, strings.Join(parts, "; "))
}

// args are a call's arguments by name, and what is wrong with them: v
// are the type and shape violations (RuleArguments), req the unmet
// requirements (RuleRequirement) and missing the ids that name nothing of
// this deal (RuleNotFound).
type args struct {
	m               map[string]json.RawMessage
	v, req, missing violations
}

// parseArgs checks that raw is a JSON object naming only the tool's
// parameters.
func parseArgs(raw json.RawMessage, wellFormed bool, allowed []string) (*args, *bad) {
	a := &args{m: map[string]json.RawMessage{}}
	switch {
	case len(raw) > MaxArgsBytes:
		a.v.Add("args", "are %d bytes long, at most %d allowed", len(raw), MaxArgsBytes)
	case !wellFormed:
		a.v.Add("args", "must be one JSON object with distinct member names (UTF-8)")
	case len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null":
		if err := json.Unmarshal(raw, &a.m); err != nil {
			a.v.Add("args", "must be a JSON object")
		}
	}
	if b := a.done(); b != nil {
		return nil, b
	}
	for _, k := range slices.Sorted(maps.Keys(a.m)) {
		if !slices.Contains(allowed, k) {
			a.v.Add(printable(k), "unknown field (the fields are %s)", strings.Join(allowed, ", "))
		}
	}
	if b := a.done(); b != nil {
		return nil, b
	}
	return a, nil
}

// printable makes a member name fit for a field path: quoted when empty,
// cut at 64 bytes, valid UTF-8.
func printable(s string) string {
	if s == "" {
		return `""`
	}
	return strings.ToValidUTF8(s[:min(len(s), 64)], "\uFFFD")
}

// present reports whether name was given a non-null value.
func (a *args) present(name string) bool {
	raw, ok := a.m[name]
	return ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// decode decodes member name into dst when present, recording a type
// violation otherwise.
func (a *args) decode(name string, dst any, kind string) bool {
	if !a.present(name) {
		return false
	}
	if err := json.Unmarshal(a.m[name], dst); err != nil {
		a.v.Add(name, "must be %s", kind)
		return false
	}
	return true
}

// optional returns member name decoded as kind, or def when it is absent,
// null or not of that kind (a type violation is then recorded).
func optional[T any](a *args, name, kind string, def T) T {
	v := def
	if !a.decode(name, &v, kind) {
		return def
	}
	return v
}

func (a *args) str(name string) string             { return optional(a, name, "a string", "") }
func (a *args) boolean(name string, def bool) bool { return optional(a, name, "a boolean", def) }
func (a *args) integer(name string, def int) int   { return optional(a, name, "an integer", def) }
func (a *args) strs(name string) []string {
	return optional[[]string](a, name, "an array of strings", nil)
}

// id checks a required id argument.
func (a *args) id(name, s string) {
	switch {
	case s == "":
		if !a.hasViolation(name) {
			a.v.Add(name, "is required")
		}
	case !debate.ValidID(s):
		a.v.Add(name, "must be 1 to %d printable characters without spaces", debate.MaxIDLen)
	}
}

// ids checks a list of ids: at least min, at most max, each valid.
func (a *args) ids(name string, ss []string, min, max int) {
	if a.hasViolation(name) {
		return
	}
	switch {
	case len(ss) < min:
		a.v.Add(name, "needs at least %d id(s)", min)
	case len(ss) > max:
		a.v.Add(name, "has %d ids, at most %d allowed", len(ss), max)
	default:
		for i, s := range ss {
			a.id(fmt.Sprintf("%s[%d]", name, i), s)
		}
	}
}

// text checks a text argument: required or not, at most limit bytes, no
// NUL.
func (a *args) text(name, s string, required bool, limit int) {
	switch {
	case strings.TrimSpace(s) == "":
		if required && !a.hasViolation(name) {
			a.v.Add(name, "is required")
		}
	case len(s) > limit:
		a.v.Add(name, "is %d bytes long, at most %d allowed", len(s), limit)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		a.v.Add(name, "must be UTF-8 text without NUL characters")
	}
}

// enum checks an enumeration argument; empty passes unless required.
func enum[E ~string](a *args, name string, e E, valid []E, required bool) {
	if a.hasViolation(name) {
		return
	}
	if e == "" {
		if required {
			a.v.Add(name, "is required")
		}
		return
	}
	if !slices.Contains(valid, e) {
		names := make([]string, len(valid))
		for i, x := range valid {
			names[i] = string(x)
		}
		a.v.Add(name, "must be one of %s", strings.Join(names, ", "))
	}
}

// hasViolation reports whether name already has a (type) violation.
func (a *args) hasViolation(name string) bool {
	return slices.ContainsFunc(a.v, func(fv debate.FieldViolation) bool { return fv.Field == name })
}

// found records that field's id names nothing of this deal unless ok. The
// message never says whether the id exists elsewhere.
func (a *args) found(field string, ok bool, what string) {
	if !ok {
		a.missing.Add(field, "no %s with this id in this deal", what)
	}
}

// done returns the refusal of the call's first kind of violation, in the
// order arguments, requirements, ids not found; nil without any.
func (a *args) done() *bad {
	switch {
	case len(a.v) > 0:
		return &bad{RuleArguments, a.v}
	case len(a.req) > 0:
		return &bad{RuleRequirement, a.req}
	case len(a.missing) > 0:
		return &bad{RuleNotFound, a.missing}
	}
	return nil
}

// dedupe drops repeated strings, keeping first occurrences in order.
func dedupe(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

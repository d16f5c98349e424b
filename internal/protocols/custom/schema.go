package custom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// A role's output schema is a subset of JSON Schema that the server checks
// itself (the schema gate), so that a model's answer is checked by code and
// not by the model's endpoint honouring response_format: one type per
// schema (object, array, string, number, integer or boolean), properties,
// required, items, enum (of strings), additionalProperties (a boolean), the
// bounds minimum, maximum, minLength, maxLength, minItems and maxItems,
// and the annotations title and description. Anything else ($ref, oneOf,
// pattern …) is refused at registration: nothing in a schema reaches the
// network or runs.
var schemaKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "items": true, "enum": true,
	"additionalProperties": true, "minimum": true, "maximum": true, "minLength": true,
	"maxLength": true, "minItems": true, "maxItems": true, "title": true, "description": true,
}

var schemaTypes = []string{"object", "array", "string", "number", "integer", "boolean"}

// RuleSchema is the violation rule of the schema gate.
const RuleSchema = "SCHEMA"

// decodeSchema decodes a schema object, its numbers as json.Number.
func decodeSchema(raw json.RawMessage) (map[string]any, error) {
	v, err := decodeValue(raw)
	m, ok := v.(map[string]any)
	if err == nil && !ok {
		err = errors.New("not an object")
	}
	return m, err
}

// checkOutputSchema validates a role's output schema at registration.
func checkOutputSchema(v *debate.Violations, path string, raw json.RawMessage) {
	switch {
	case len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null":
		v.Add(path, "required: the JSON schema of the role's answer")
		return
	case len(raw) > MaxSchemaBytes:
		v.Add(path, "is %d bytes, more than %d", len(raw), MaxSchemaBytes)
		return
	}
	m, err := decodeSchema(raw)
	if err != nil {
		v.Add(path, "must be a JSON schema object")
		return
	}
	if m["type"] != "object" {
		v.Add(path+".type", "the answer's schema must be of type object")
	}
	props, _ := m["properties"].(map[string]any)
	if len(props) == 0 {
		v.Add(path+".properties", "the answer's schema must declare its properties")
	}
	for _, reserved := range []string{fieldRefs, fieldMuhasabah, fieldToolCalls} {
		if _, ok := props[reserved]; ok {
			v.Add(path+".properties."+reserved, "%q is reserved: the server adds it for the gates and tools that need it", reserved)
		}
	}
	checkSchema(v, path, m, 1)
}

func checkSchema(v *debate.Violations, path string, m map[string]any, depth int) {
	if depth > MaxSchemaDepth {
		v.Add(path, "nested deeper than %d levels", MaxSchemaDepth)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !schemaKeywords[k] {
			v.Add(path+"."+k, "keyword not supported; the keywords are %s", strings.Join(slices.Sorted(maps.Keys(schemaKeywords)), ", "))
		}
	}
	typ, _ := m["type"].(string)
	if !slices.Contains(schemaTypes, typ) {
		v.Add(path+".type", "must be one of %s", strings.Join(schemaTypes, ", "))
	}
	// The keywords whose value is a plain JSON value.
	for _, kw := range []struct {
		names []string
		want  string
		ok    func(any) bool
	}{
		{[]string{"title", "description"}, "a string", is[string]},
		{[]string{"minimum", "maximum"}, "a number", is[json.Number]},
		{[]string{"minLength", "maxLength", "minItems", "maxItems"}, "a non-negative integer", isNonNegInt},
		{[]string{"additionalProperties"}, "true or false", is[bool]},
	} {
		for _, k := range kw.names {
			if x, ok := m[k]; ok && !kw.ok(x) {
				v.Add(path+"."+k, "must be %s", kw.want)
			}
		}
	}
	if x, ok := m["enum"]; ok {
		arr, ok := x.([]any)
		if !ok || len(arr) == 0 {
			v.Add(path+".enum", "must be a non-empty list of strings")
		}
		for i, e := range arr {
			if _, ok := e.(string); !ok {
				v.Add(fmt.Sprintf("%s.enum[%d]", path, i), "must be a string")
			}
		}
		if typ != "string" && typ != "" {
			v.Add(path+".enum", "only a string schema has an enum")
		}
	}
	if x, ok := m["properties"]; ok {
		props, ok := x.(map[string]any)
		if !ok {
			v.Add(path+".properties", "must be an object of schemas")
		}
		for _, k := range slices.Sorted(maps.Keys(props)) {
			sub, ok := props[k].(map[string]any)
			if !ok {
				v.Add(path+".properties."+k, "must be a schema object")
				continue
			}
			if !fieldRE.MatchString(k) {
				v.Add(path+".properties."+k, "a property name must match %s", fieldRE)
			}
			checkSchema(v, path+".properties."+k, sub, depth+1)
		}
		if typ != "object" {
			v.Add(path+".properties", "only an object schema has properties")
		}
	}
	if x, ok := m["required"]; ok {
		arr, ok := x.([]any)
		if !ok {
			v.Add(path+".required", "must be a list of property names")
		}
		props, _ := m["properties"].(map[string]any)
		for i, e := range arr {
			s, ok := e.(string)
			if _, declared := props[s]; !ok || !declared {
				v.Add(fmt.Sprintf("%s.required[%d]", path, i), "must name a declared property")
			}
		}
	}
	if x, ok := m["items"]; ok {
		sub, ok := x.(map[string]any)
		if !ok {
			v.Add(path+".items", "must be a schema object")
		} else {
			checkSchema(v, path+".items", sub, depth+1)
		}
		if typ != "array" {
			v.Add(path+".items", "only an array schema has items")
		}
	}
}

func is[T any](x any) bool {
	_, ok := x.(T)
	return ok
}

func isNonNegInt(x any) bool {
	n, _ := x.(json.Number)
	i, err := n.Int64()
	return err == nil && i >= 0
}

// schemaHasField reports whether an (object) schema declares property f.
func schemaHasField(raw json.RawMessage, f string) bool {
	m, err := decodeSchema(raw)
	if err != nil {
		return false
	}
	props, _ := m["properties"].(map[string]any)
	_, ok := props[f]
	return ok
}

// validate checks val against the schema s (already checked at
// registration) and returns the violations by path.
func validate(path string, val any, s map[string]any) []debate.Violation {
	var out []debate.Violation
	bad := func(p, format string, args ...any) {
		out = append(out, debate.Violation{Rule: RuleSchema, Field: p, Detail: fmt.Sprintf(format, args...)})
	}
	num := func(k string) (float64, bool) {
		n, ok := s[k].(json.Number)
		if !ok {
			return 0, false
		}
		f, err := n.Float64()
		return f, err == nil
	}
	switch typ, _ := s["type"].(string); typ {
	case "object":
		m, ok := val.(map[string]any)
		if !ok {
			bad(path, "must be an object")
			return out
		}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if k, _ := r.(string); k != "" {
				if _, ok := m[k]; !ok {
					bad(join(path, k), "required")
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			sub, ok := props[k].(map[string]any)
			if !ok {
				if s["additionalProperties"] == false {
					bad(join(path, k), "not a property of the schema")
				}
				continue
			}
			out = append(out, validate(join(path, k), m[k], sub)...)
		}
	case "array":
		arr, ok := val.([]any)
		if !ok {
			bad(path, "must be an array")
			return out
		}
		if n, ok := num("minItems"); ok && float64(len(arr)) < n {
			bad(path, "has %d items, fewer than %v", len(arr), n)
		}
		if n, ok := num("maxItems"); ok && float64(len(arr)) > n {
			bad(path, "has %d items, more than %v", len(arr), n)
		}
		if sub, ok := s["items"].(map[string]any); ok {
			for i, e := range arr {
				out = append(out, validate(fmt.Sprintf("%s[%d]", path, i), e, sub)...)
			}
		}
	case "string":
		str, ok := val.(string)
		if !ok {
			bad(path, "must be a string")
			return out
		}
		n := utf8.RuneCountInString(str)
		if l, ok := num("minLength"); ok && float64(n) < l {
			bad(path, "is %d characters, fewer than %v", n, l)
		}
		if l, ok := num("maxLength"); ok && float64(n) > l {
			bad(path, "is %d characters, more than %v", n, l)
		}
		if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, any(str)) {
			parts := make([]string, len(enum))
			for i, e := range enum {
				parts[i] = fmt.Sprint(e)
			}
			bad(path, "must be one of %s", strings.Join(parts, ", "))
		}
	case "number", "integer":
		n, ok := val.(json.Number)
		if !ok {
			bad(path, "must be a number")
			return out
		}
		f, err := n.Float64()
		if err != nil {
			bad(path, "must be a finite number")
			return out
		}
		if _, err := n.Int64(); typ == "integer" && err != nil {
			bad(path, "must be an integer")
		}
		if m, ok := num("minimum"); ok && f < m {
			bad(path, "is %v, less than %v", f, m)
		}
		if m, ok := num("maximum"); ok && f > m {
			bad(path, "is %v, more than %v", f, m)
		}
	case "boolean":
		if _, ok := val.(bool); !ok {
			bad(path, "must be true or false")
		}
	}
	return out
}

// refsSchema, muhasabahSchema and toolCallsSchema are what the server adds
// to a role's schema for its gates and tools.
var (
	refsSchema = map[string]any{"type": "array", "items": map[string]any{"type": "string"},
		"description": "the ids of the deal's claims and calcs the answer rests on"}
	muhasabahSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"supported_claim_ids": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"supported_calc_ids":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"falsifiability_tests": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
				"test_description": map[string]any{"type": "string"}, "required_evidence": map[string]any{"type": "string"},
				"pass_fail_rule": map[string]any{"type": "string"}}}},
			"uncertainties": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
				"uncertainty": map[string]any{"type": "string"}, "impact": map[string]any{"type": "string"},
				"mitigation": map[string]any{"type": "string"}}}},
			"confidence":               map[string]any{"type": "number", "minimum": json.Number("0"), "maximum": json.Number("1")},
			"confidence_justification": map[string]any{"type": "string"},
		},
		"required": []any{"supported_claim_ids", "confidence"},
	}
	toolCallsSchema = map[string]any{"type": "array", "description": "server tools to call before answering; answer without it once you have what you need",
		"items": map[string]any{"type": "object", "properties": map[string]any{
			"tool": map[string]any{"type": "string"}, "args": map[string]any{"type": "object"}}, "required": []any{"tool", "args"}}}
)

// answerSchema is the schema a role answers with: its output schema plus
// refs (no_free_facts), muhasabah_record (muhasabah) and tool_calls (a role
// with tools).
func answerSchema(r *Role) (map[string]any, error) {
	m, err := decodeSchema(r.Output)
	if err != nil {
		return nil, err
	}
	props := maps.Clone(m["properties"].(map[string]any))
	req, _ := m["required"].([]any)
	req = slices.Clone(req)
	if slices.Contains(r.Gates, GateNoFreeFacts) {
		props[fieldRefs] = refsSchema
		req = append(req, fieldRefs)
	}
	if slices.Contains(r.Gates, GateMuhasabah) {
		props[fieldMuhasabah] = muhasabahSchema
		req = append(req, fieldMuhasabah)
	}
	if len(r.Tools) > 0 {
		props[fieldToolCalls] = toolCallsSchema
	}
	out := maps.Clone(m)
	out["properties"] = props
	if len(req) > 0 {
		out["required"] = req
	}
	return out, nil
}

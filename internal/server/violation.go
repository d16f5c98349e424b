package server

import (
	"fmt"
	"strings"

	"buf.build/go/protovalidate"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// violationText says what is wrong with a field in plain English, from the
// rule it broke and the rule's value: "must not be empty" rather than
// protovalidate's "value length must be at least 1 characters". A rule it
// does not know keeps protovalidate's words without their leading "value".
func violationText(v *protovalidate.Violation) string {
	text := ruleText(v)
	if text == "" {
		text = strings.TrimPrefix(v.Proto.GetMessage(), "value ")
	}
	if v.Proto.GetForKey() {
		text = "key " + text
	}
	return text
}

// sizeRules are the rules that bound a size, by rule id, with the words of
// their text: "must be at least 3 characters", "must have at most 8 items".
var sizeRules = map[string]struct{ verb, bound, unit string }{
	"string.min_len":     {"be", "at least", "character"},
	"string.max_len":     {"be", "at most", "character"},
	"string.len":         {"be", "exactly", "character"},
	"string.min_bytes":   {"be", "at least", "byte"},
	"string.max_bytes":   {"be", "at most", "byte"},
	"repeated.min_items": {"have", "at least", "item"},
	"repeated.max_items": {"have", "at most", "item"},
	"map.min_pairs":      {"have", "at least", "entry"},
	"map.max_pairs":      {"have", "at most", "entry"},
}

func ruleText(v *protovalidate.Violation) string {
	id := v.Proto.GetRuleId()
	kind, rule, _ := strings.Cut(id, ".")
	n, hasN := ruleCount(v.RuleValue)
	if size, ok := sizeRules[id]; ok && hasN {
		if size.bound == "at least" && n == 1 {
			return "must not be empty"
		}
		return "must " + size.verb + " " + size.bound + " " + plural(n, size.unit)
	}
	switch {
	case id == "required":
		return "is required"
	case kind == "string" && rule == "pattern":
		return fmt.Sprintf("must match the pattern %s", v.RuleValue.String())
	case kind == "string" && (rule == "in" || rule == "not_in"):
		return oneOf(rule, listText(v.RuleValue, nil))
	case kind == "repeated" && rule == "unique":
		return "must not repeat an item"
	case kind == "enum" && rule == "defined_only":
		return "must be one of " + enumNames(v.FieldDescriptor)
	case kind == "enum" && (rule == "in" || rule == "not_in"):
		return oneOf(rule, listText(v.RuleValue, v.FieldDescriptor))
	case rule == "finite":
		return "must be a finite number"
	case isNumeric(kind):
		return numericText(v.Proto.GetMessage())
	}
	return ""
}

// ruleCount reads a rule's value as a count (min_len, max_items, …).
func ruleCount(rv protoreflect.Value) (uint64, bool) {
	if !rv.IsValid() {
		return 0, false
	}
	switch x := rv.Interface().(type) {
	case uint64:
		return x, true
	case uint32:
		return uint64(x), true
	case int64:
		return uint64(max(x, 0)), x >= 0
	case int32:
		return uint64(max(x, 0)), x >= 0
	}
	return 0, false
}

// plural is "1 character", "3 characters", "2 entries".
func plural(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func oneOf(rule, values string) string {
	if rule == "not_in" {
		return "must not be one of " + values
	}
	return "must be one of " + values
}

// listText renders a list rule value; enum numbers are named by fd's enum.
func listText(rv protoreflect.Value, fd protoreflect.FieldDescriptor) string {
	if !rv.IsValid() {
		return ""
	}
	l, ok := rv.Interface().(protoreflect.List)
	if !ok {
		return rv.String()
	}
	parts := make([]string, 0, l.Len())
	for i := range l.Len() {
		e := l.Get(i)
		if fd != nil && fd.Enum() != nil {
			if ev := fd.Enum().Values().ByNumber(protoreflect.EnumNumber(e.Int())); ev != nil {
				parts = append(parts, string(ev.Name()))
				continue
			}
		}
		parts = append(parts, fmt.Sprintf("%q", e.String()))
	}
	return strings.Join(parts, ", ")
}

// enumNames lists the values of fd's enum, without the zero "unspecified".
func enumNames(fd protoreflect.FieldDescriptor) string {
	if fd == nil || fd.Enum() == nil {
		return "the defined values"
	}
	vals := fd.Enum().Values()
	parts := make([]string, 0, vals.Len())
	for i := range vals.Len() {
		if vals.Get(i).Number() == 0 {
			continue
		}
		parts = append(parts, string(vals.Get(i).Name()))
	}
	return strings.Join(parts, ", ")
}

func isNumeric(kind string) bool {
	switch kind {
	case "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64", "float", "double":
		return true
	}
	return false
}

// numericWords shortens protovalidate's comparisons.
var numericWords = strings.NewReplacer(
	"value must be ", "must be ",
	"greater than or equal to ", "at least ",
	"less than or equal to ", "at most ",
)

// numericText rewrites protovalidate's message of a numeric range rule:
// "value must be greater than or equal to 0" reads "must be at least 0".
func numericText(msg string) string {
	return numericWords.Replace(msg)
}

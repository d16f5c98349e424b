package canon

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

var rawMessage = reflect.TypeFor[json.RawMessage]()

// RoundTrips reports whether v, encoded by encoding/json and canonicalised
// (Marshal), decodes by encoding/json as v again, which a holder of v and
// its encoding can then use instead of decoding it. When unsure it says no:
// invalid UTF-8 (the encoder replaces it), a RawMessage not in canonical
// form, nil where null is written, an empty slice that is not nil, -0, an
// integer a double does not hold exactly, and other kinds (maps,
// interfaces, unsigned integers, float32).
func RoundTrips(v any) bool { return roundTrips(reflect.ValueOf(v), false) }

// roundTrips is RoundTrips of v, where omit says v's field is omitempty.
func roundTrips(v reflect.Value, omit bool) bool {
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Bool:
		return true
	case reflect.Int, reflect.Int64: // RFC 8785 numbers are doubles
		return v.Int() >= -1<<53 && v.Int() <= 1<<53
	case reflect.Float64:
		return v.Float() != 0 || !math.Signbit(v.Float())
	case reflect.Pointer:
		return v.IsNil() || roundTrips(v.Elem(), false)
	case reflect.Slice:
		if v.Type() == rawMessage && !v.IsNil() {
			c, err := Transform(v.Bytes())
			return err == nil && bytes.Equal(c, v.Bytes())
		}
		if v.IsNil() {
			return omit || v.Type() != rawMessage
		}
		ok := v.Len() > 0
		for i := 0; ok && i < v.Len(); i++ {
			ok = roundTrips(v.Index(i), false)
		}
		return ok
	case reflect.Struct:
		omits, ok := fieldsOf(v.Type())
		for i := 0; ok && i < len(omits); i++ {
			ok = roundTrips(v.Field(i), omits[i])
		}
		return ok
	}
	return false
}

// structFields caches fieldsOf.
var structFields sync.Map // reflect.Type → []bool, or nil

// fieldsOf returns whether each field of struct type t is omitempty, or
// false if a field is one RoundTrips says no to (unexported, embedded,
// skipped or encoded as a string).
func fieldsOf(t reflect.Type) ([]bool, bool) {
	if f, ok := structFields.Load(t); ok {
		omits := f.([]bool)
		return omits, omits != nil
	}
	omits := make([]bool, t.NumField())
	for i := range omits {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || f.Anonymous || name == "-" || strings.Contains(opts, "string") {
			omits = nil
			break
		}
		omits[i] = strings.Contains(opts, "omitempty")
	}
	structFields.Store(t, omits)
	return omits, omits != nil
}

package canon

import (
	"bytes"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

var (
	rawMessage      = reflect.TypeFor[json.RawMessage]()
	timeType        = reflect.TypeFor[time.Time]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// RoundTrips reports whether v, encoded by encoding/json and canonicalised
// (Marshal), decodes by encoding/json as v again, which a holder of v and
// its encoding can then use instead of decoding it. When unsure it says no:
// invalid UTF-8 (the encoder replaces it), a RawMessage not in canonical
// form, nil where null is written, an empty slice that is not nil, -0, an
// integer a double does not hold exactly, and other kinds (maps,
// interfaces, unsigned integers, float32).
func RoundTrips(v any) bool { return roundTrips(reflect.ValueOf(v), false, false) }

// DecodesOnto reports whether v, a pointer to a struct, encoded by Marshal
// decodes by encoding/json onto a copy of *base (what decoding starts from,
// of v's type) as *v again. A member the encoding writes must be as
// RoundTrips would have it, where maps with string keys, empty slices and
// UTC times are also allowed, and base's field
// must hold nothing the decoding would leave (it is a scalar, zero or an
// empty map); a field the encoding omits must be as base has it (nil or
// not, -0 or 0).
func DecodesOnto(v, base any) bool {
	rv, rb := reflect.ValueOf(v), reflect.ValueOf(base)
	if rv.Kind() != reflect.Pointer || rv.Type() != rb.Type() || rv.IsNil() || rb.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return false
	}
	rv, rb = rv.Elem(), rb.Elem()
	omits, ok := fieldsOf(rv.Type())
	for i := 0; ok && i < len(omits); i++ {
		f, b := rv.Field(i), rb.Field(i)
		if omits[i] && empty(f) {
			ok = sameEmpty(f, b)
			continue
		}
		ok = (b.Kind() <= reflect.Float64 || b.Kind() == reflect.String || b.IsZero() || b.Kind() == reflect.Map && b.Len() == 0) &&
			roundTrips(f, omits[i], true)
	}
	return ok
}

// empty is encoding/json's test for the fields omitempty leaves out.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// sameEmpty reports whether base's field b is the empty field f as it is.
func sameEmpty(f, b reflect.Value) bool {
	switch f.Kind() {
	case reflect.Map, reflect.Slice:
		return f.IsNil() == b.IsNil() && b.Len() == 0
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(f.Float()) == math.Float64bits(b.Float())
	}
	return b.IsZero()
}

// roundTrips is RoundTrips of v, where omit says v's field is omitempty;
// full allows maps, empty slices and times (DecodesOnto).
func roundTrips(v reflect.Value, omit, full bool) bool {
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
		return v.IsNil() || roundTrips(v.Elem(), false, full)
	case reflect.Slice:
		if v.Type() == rawMessage && !v.IsNil() {
			c, err := Transform(v.Bytes())
			return err == nil && bytes.Equal(c, v.Bytes())
		}
		if v.IsNil() {
			return omit || v.Type() != rawMessage
		}
		ok := v.Len() > 0 || full && !omit // [] decodes as an empty slice
		for i := 0; ok && i < v.Len(); i++ {
			ok = roundTrips(v.Index(i), false, full)
		}
		return ok
	case reflect.Map:
		k := v.Type().Key()
		if !full || k.Kind() != reflect.String || reflect.PointerTo(k).Implements(textUnmarshaler) {
			return false
		}
		if v.Len() == 0 {
			return v.IsNil() || !omit // null and {} decode as nil and an empty map
		}
		for it := v.MapRange(); it.Next(); {
			if !utf8.ValidString(it.Key().String()) || !roundTrips(it.Value(), false, true) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if v.Type() == timeType {
			// A UTC time has no monotonic reading: setting a location
			// drops it.
			t, _ := v.Interface().(time.Time)
			return full && t.Location() == time.UTC && t.Year() >= 0 && t.Year() <= 9999
		}
		omits, ok := fieldsOf(v.Type())
		for i := 0; ok && i < len(omits); i++ {
			ok = roundTrips(v.Field(i), omits[i], full)
		}
		return ok
	}
	return false
}

// structFields caches fieldsOf.
var structFields sync.Map // reflect.Type → []bool, or nil

// fieldsOf returns whether each field of struct type t is omitempty, or
// false if a field is one RoundTrips says no to (unexported, embedded,
// skipped, encoded as a string or omitzero).
func fieldsOf(t reflect.Type) ([]bool, bool) {
	if f, ok := structFields.Load(t); ok {
		omits := f.([]bool)
		return omits, omits != nil
	}
	omits := make([]bool, t.NumField())
	for i := range omits {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || f.Anonymous || name == "-" || strings.Contains(opts, "string") || strings.Contains(opts, "omitzero") {
			omits = nil
			break
		}
		omits[i] = strings.Contains(opts, "omitempty")
	}
	structFields.Store(t, omits)
	return omits, omits != nil
}

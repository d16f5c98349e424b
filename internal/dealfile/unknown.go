package dealfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Warning is a member of a deal file that the layout does not define: it is
// ignored on import (or refused with Options.Strict). Path names it as the
// import request would ("claims[3].created_by_tool"), or the file for a
// member beside the file's list ("claims.json: exported_at").
type Warning struct {
	Path    string
	Message string
}

func (w Warning) String() string { return w.Path + ": " + w.Message }

// Options change how a deal directory is read.
type Options struct {
	// Strict refuses unknown members (each a violation naming its path)
	// instead of returning them as warnings.
	Strict bool
}

// rawMessageType is skipped by the walk: such members are decoded, and
// checked, separately (a sanad's transmission chain).
var rawMessageType = reflect.TypeFor[json.RawMessage]()

// unknownMembers records a warning for every member of the JSON object data,
// and of the objects nested in it, that typ (a struct type) has no field
// for. Member names match json tags case-insensitively, as encoding/json
// matches them. Data that is not an object gives nothing: decode reports it.
func (p *parser) unknownMembers(path string, data []byte, typ reflect.Type) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if !startsWith(data, '{') || json.Unmarshal(data, &obj) != nil {
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys) // warnings in a stable order
		for _, k := range keys {
			f, ok := fieldByTag(typ, k)
			if !ok {
				p.warn(joinPath(path, k), "unknown field, ignored")
				continue
			}
			if f.Type != rawMessageType {
				p.unknownMembers(joinPath(path, k), obj[k], f.Type)
			}
		}
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 || typ == rawMessageType {
			return
		}
		var arr []json.RawMessage
		if !startsWith(data, '[') || json.Unmarshal(data, &arr) != nil {
			return
		}
		for i, raw := range arr {
			p.unknownMembers(fmt.Sprintf("%s[%d]", path, i), raw, typ.Elem())
		}
	}
}

// fieldByTag returns the field of the struct type typ whose json name is
// name, ignoring case.
func fieldByTag(typ reflect.Type, name string) (reflect.StructField, bool) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if strings.EqualFold(tag, name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func (p *parser) warn(path, msg string) {
	if p.strict {
		p.v.Add(path, "%s (strict import refuses unknown fields)", strings.TrimSuffix(msg, ", ignored"))
		return
	}
	p.warnings = append(p.warnings, Warning{Path: path, Message: msg})
}

// startsWith reports whether the JSON text data starts with c.
func startsWith(data []byte, c byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == c
}

// Package dealfile reads and writes a deal's claim registry in the directory
// layout of the GDBS benchmark:
//
//	deal.json        the deal
//	claims.json      {"claims": [...]}
//	evidence.json    {"evidence_items": [...]}
//	spans.json       {"spans": [...]}
//	sanads.json      {"sanads": [...]}
//	documents.json   {"documents": [...]}
//	calcs.json       {"calc_sanads": [...]}   optional
//	enrichment.json  {"enrichment_records": [...]}   optional
//
// It checks JSON syntax and types only. Enumerations, ids and limits are
// checked by (*debate.DealBundle).Validate, and references that do not
// resolve are data for the grader, never an import error. Unknown fields
// (every tenant_id among them: the tenant is always the caller's) are
// ignored and reported as warnings, or refused with Options.Strict. A JSON null
// reads as the empty value; times are RFC 3339.
package dealfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/debated/debated/internal/debate"
)

// File names of the layout.
const (
	DealFile      = "deal.json"
	ClaimsFile    = "claims.json"
	EvidenceFile  = "evidence.json"
	SpansFile     = "spans.json"
	SanadsFile    = "sanads.json"
	DocumentsFile = "documents.json"
	CalcsFile     = "calcs.json"
)

// requiredFiles must be present; calcs.json may be absent (no calcs).
var requiredFiles = []string{DealFile, ClaimsFile, EvidenceFile, SpansFile, SanadsFile, DocumentsFile}

// Load reads the deal directory dir. A missing required file is reported as
// a *debate.ValidationError naming the file, like every malformed file; other
// I/O errors are returned wrapped.
func Load(dir string) (*debate.DealBundle, error) {
	b, _, err := LoadOptions(dir, Options{})
	return b, err
}

// LoadOptions reads the deal directory dir as Load does, and returns the
// warnings of every unknown member (with opts.Strict: violations instead).
func LoadOptions(dir string, opts Options) (*debate.DealBundle, []Warning, error) {
	files := make(map[string][]byte, 8)
	for _, name := range append(requiredFiles, CalcsFile, EnrichmentFile) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // Parse reports a missing required file
		}
		if err != nil {
			return nil, nil, fmt.Errorf("dealfile: read %s: %w", name, err)
		}
		files[name] = data
	}
	return ParseOptions(files, opts)
}

// Parse decodes the files of one deal, keyed by file name (deal.json,
// claims.json, ...); other keys are ignored. It returns a
// *debate.ValidationError (errors.Is(err, debate.ErrInvalid)) naming every
// problem found: a missing required file, a syntax error (file and byte
// offset), or a value of the wrong JSON type (its field path in the gRPC
// request's naming, e.g. "claims[3].claim_id"). Parse never panics.
func Parse(files map[string][]byte) (*debate.DealBundle, error) {
	b, _, err := ParseOptions(files, Options{})
	return b, err
}

// ParseOptions decodes the files as Parse does, and returns a warning for
// every member of a file that the layout does not define (with opts.Strict,
// a violation instead).
func ParseOptions(files map[string][]byte, opts Options) (*debate.DealBundle, []Warning, error) {
	p := &parser{strict: opts.Strict}
	for _, name := range requiredFiles {
		if _, ok := files[name]; !ok {
			p.v.Add(name, "is missing")
		}
	}
	b := &debate.DealBundle{}
	if data, ok := files[DealFile]; ok {
		var d dealJSON
		if p.decode(DealFile, "deal", data, &d) {
			b.Deal = d.toDomain(p, "deal")
		}
	}
	for i, raw := range p.list(files, ClaimsFile, "claims", "claims") {
		path := fmt.Sprintf("claims[%d]", i)
		var c claimJSON
		if p.decode(ClaimsFile, path, raw, &c) {
			b.Claims = append(b.Claims, c.toDomain(p, path))
		}
	}
	for i, raw := range p.list(files, EvidenceFile, "evidence_items", "evidence_items") {
		path := fmt.Sprintf("evidence_items[%d]", i)
		var e evidenceJSON
		if p.decode(EvidenceFile, path, raw, &e) {
			b.Evidence = append(b.Evidence, e.toDomain(p, path))
		}
	}
	for i, raw := range p.list(files, SpansFile, "spans", "spans") {
		path := fmt.Sprintf("spans[%d]", i)
		var s spanJSON
		if p.decode(SpansFile, path, raw, &s) {
			b.Spans = append(b.Spans, s.toDomain(p, path))
		}
	}
	for i, raw := range p.list(files, SanadsFile, "sanads", "sanads") {
		path := fmt.Sprintf("sanads[%d]", i)
		var s sanadJSON
		if p.decode(SanadsFile, path, raw, &s) {
			b.Sanads = append(b.Sanads, s.toDomain(p, path))
		}
	}
	for i, raw := range p.list(files, DocumentsFile, "documents", "documents") {
		path := fmt.Sprintf("documents[%d]", i)
		var d documentJSON
		if p.decode(DocumentsFile, path, raw, &d) {
			b.Documents = append(b.Documents, d.toDomain(p, path))
		}
	}
	for i, raw := range p.list(files, CalcsFile, "calc_sanads", "calcs") {
		path := fmt.Sprintf("calcs[%d]", i)
		var c calcJSON
		if p.decode(CalcsFile, path, raw, &c) {
			b.Calcs = append(b.Calcs, c.toDomain(p, path))
		}
	}
	for i, raw := range p.list(files, EnrichmentFile, "enrichment_records", "enrichment_records") {
		path := fmt.Sprintf("enrichment_records[%d]", i)
		var r enrichmentJSON
		if p.decode(EnrichmentFile, path, raw, &r) {
			b.Enrichment = append(b.Enrichment, r.toDomain())
		}
	}
	if err := p.v.Err(); err != nil {
		return nil, nil, err
	}
	return b, p.warnings, nil
}

// parser accumulates violations and warnings while decoding.
type parser struct {
	v        debate.Violations
	strict   bool
	warnings []Warning
}

// list returns the elements of the array under key in file name, each
// undecoded so that a type error can be attributed to its index. A bare
// top-level array is accepted too (hand-written files). A missing file or a
// null gives no elements.
func (p *parser) list(files map[string][]byte, name, key, path string) []json.RawMessage {
	data, ok := files[name]
	if !ok {
		return nil
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var out []json.RawMessage
		p.decode(name, path, data, &out)
		return out
	}
	var wrapper map[string]json.RawMessage
	if !p.decode(name, "", data, &wrapper) {
		return nil
	}
	var out []json.RawMessage
	if raw, ok := wrapper[key]; ok {
		p.decode(name, path, raw, &out)
	}
	members := make([]string, 0, len(wrapper))
	for k := range wrapper {
		if k != key {
			members = append(members, k)
		}
	}
	slices.Sort(members)
	for _, k := range members {
		p.warn(name+": "+k, "unknown member beside "+strconv.Quote(key)+", ignored")
	}
	return out
}

// decode unmarshals data into dst and records a violation on failure.
// Syntax errors name the file and byte offset; type errors name the field
// path under prefix. It reports whether decoding succeeded.
func (p *parser) decode(file, prefix string, data []byte, dst any) bool {
	err := json.Unmarshal(data, dst)
	if err == nil {
		if t := reflect.TypeOf(dst).Elem(); t.Kind() == reflect.Struct {
			p.unknownMembers(prefix, data, t)
		}
		return true
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		p.v.Add(file, "malformed JSON at byte offset %d of %s: %v", syn.Offset, where(prefix), syn)
	case errors.As(err, &typ):
		field := joinPath(prefix, typ.Field)
		if field == "" {
			field = file
		}
		p.v.Add(field, "has a JSON %s where %s expected (in %s)", typ.Value, jsonKind(typ.Type.String()), file)
	default:
		p.v.Add(file, "cannot decode %s: %v", where(prefix), err)
	}
	return false
}

func where(prefix string) string {
	if prefix == "" {
		return "the file"
	}
	return prefix
}

func joinPath(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	}
	return prefix + "." + field
}

// jsonKind names the JSON type a Go type expects, for error messages.
func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]") && goType != "[]uint8":
		return "an array is"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "JSON"), strings.HasPrefix(goType, "struct"):
		return "an object is"
	case goType == "string":
		return "a string is"
	case goType == "bool":
		return "a boolean is"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer is"
	case strings.HasPrefix(goType, "float"), goType == "dealfile.number":
		return "a number is"
	}
	return "a " + goType + " is"
}

// timeField parses an optional RFC 3339 time; "" and null are the zero time.
func (p *parser) timeField(path string, s *string) time.Time {
	if s == nil || *s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		p.v.Add(path, "is not an RFC 3339 time: %q", *s)
		return time.Time{}
	}
	return t
}

// decimal reads an exact quantity as written; absent or null is 0.
func (p *parser) decimal(path string, n number) debate.Decimal {
	if n == "" {
		return debate.Decimal{}
	}
	d, err := debate.ReadDecimal(string(n))
	if err != nil {
		p.v.Add(path, "%v", err)
	}
	return d
}

// decimals reads a map of exact quantities with decimal; nil stays nil.
func (p *parser) decimals(path string, m map[string]number) map[string]debate.Decimal {
	if m == nil {
		return nil
	}
	out := make(map[string]debate.Decimal, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out[k] = p.decimal(fmt.Sprintf("%s[%q]", path, k), m[k])
	}
	return out
}

// nodes decodes each chain node separately so that a type error names its
// index.
func (p *parser) nodes(prefix string, raws []json.RawMessage) []debate.ChainNode {
	var out []debate.ChainNode
	for j, raw := range raws {
		path := fmt.Sprintf("%s.transmission_chain[%d]", prefix, j)
		var n nodeJSON
		if p.decode(SanadsFile, path, raw, &n) {
			out = append(out, debate.ChainNode{
				ID:        n.NodeID,
				Type:      debate.ChainNodeType(n.NodeType),
				InputRefs: n.InputRefs,
				OutputRef: n.OutputRef,
			})
		}
	}
	return out
}

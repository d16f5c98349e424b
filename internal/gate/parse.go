package gate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// Limits of one agent output. They bound the work a single (possibly
// hostile) model answer can cause; ParseOutput and Validate enforce them.
const (
	// MaxOutputBytes bounds the JSON document ParseOutput accepts.
	MaxOutputBytes = 1 << 20
	// MaxContentLen bounds content and structured_content, in bytes.
	MaxContentLen = 64 << 10
	// MaxTextLen bounds every other prose field (descriptions, summaries,
	// reasons, questions), in bytes.
	MaxTextLen = debate.MaxTextLen
	// MaxShortTextLen bounds short fields (enumerations, queries, tool
	// names, timestamps), in bytes.
	MaxShortTextLen = debate.MaxShortTextLen
	// MaxRefs bounds every list of ids.
	MaxRefs = debate.MaxRefs
	// MaxChallenges, MaxRulings, MaxEvidenceRequests, MaxOpenQuestions and
	// MaxToolCalls bound those lists of an output.
	MaxChallenges       = 64
	MaxRulings          = 64
	MaxEvidenceRequests = 32
	MaxOpenQuestions    = 64
	MaxToolCalls        = 64
	// MaxRecordItems bounds the record's falsifiability tests,
	// uncertainties and failure modes (each).
	MaxRecordItems = 32
	// MaxToolArgsLen bounds one tool call's arguments, in bytes.
	MaxToolArgsLen = 16 << 10
	// MaxDepth bounds the nesting of the JSON document.
	MaxDepth = 32
	// MinChallengeDescription is the shortest challenge description, in
	// characters after trimming: the same bar as flag_defect's
	// description_min_chars (seed 000 §6.2), since an upheld challenge
	// becomes a flagged defect.
	MinChallengeDescription = 50
)

// ParseOutput parses the JSON form of an agent output (seed 000 §3.2)
// strictly: the document must be one JSON object of valid UTF-8 of at most
// MaxOutputBytes, nested at most MaxDepth deep; every key must be a field
// of the schema spelled exactly (no case folding), appear once and not be
// null; agent_id, role, content, claim_refs (an array, possibly empty) and
// muhasabah_record with supported_claim_ids (possibly empty) and
// confidence are required; the record's and the position's confidence must
// lie within [0, 1]; and the shape rules of Validate's SCHEMA code hold
// (limits, ids, enumerations). structured_content and tool arguments must
// be JSON objects; they are returned in compact canonical form, and lists
// the schema marks optional come back nil when empty, so an accepted output
// re-marshals and re-parses to the same value.
//
// ParseOutput checks shape only: whether the output's references resolve
// and its Muḥāsabah holds is Validate's business. Every error is a
// *debate.ValidationError (errors.Is(err, debate.ErrInvalid)) naming the
// JSON path of each bad field ("muhasabah_record.confidence",
// "challenges[2].claim_refs"); a document that is not JSON names the path
// reached when the syntax broke ("agent_output" at the top). roles are the
// roles of the output's protocol; any other role is a SCHEMA violation.
func ParseOutput(data []byte, roles []string) (*debate.AgentOutput, error) {
	var v debate.Violations
	switch {
	case len(data) > MaxOutputBytes:
		v.Add(rootPath, "is %d bytes long, at most %d allowed", len(data), MaxOutputBytes)
	case !utf8.Valid(data):
		v.Add(rootPath, "is not valid UTF-8")
	default:
		w := &walker{dec: json.NewDecoder(bytes.NewReader(data)), v: &v}
		w.dec.UseNumber()
		if err := w.document(); err != nil {
			v.Add(err.path, "%s", err.msg)
		}
	}
	if v.Len() > 0 {
		return nil, v.Err()
	}
	var out debate.AgentOutput
	if err := json.Unmarshal(data, &out); err != nil {
		// The walk accepted what encoding/json refuses: report, never panic.
		v.Add(rootPath, "cannot be decoded: %v", err)
		return nil, v.Err()
	}
	normalize(&out)
	checkShape(&v, &out, true, roles)
	if err := v.Err(); err != nil {
		return nil, err
	}
	return &out, nil
}

const rootPath = "agent_output"

// normalize puts the free-form JSON fields in the form json.Marshal writes
// them and drops empty optional lists (which marshal as absent), so that
// parse(marshal(parse(x))) equals parse(x).
func normalize(out *debate.AgentOutput) {
	out.StructuredContent = canonicalJSON(out.StructuredContent)
	for i := range out.ToolCalls {
		out.ToolCalls[i].Args = canonicalJSON(out.ToolCalls[i].Args)
	}
	out.CalcRefs = nilIfEmpty(out.CalcRefs)
	out.ToolCalls = nilIfEmpty(out.ToolCalls)
	out.Challenges = nilIfEmpty(out.Challenges)
	out.Rulings = nilIfEmpty(out.Rulings)
	out.EvidenceRequests = nilIfEmpty(out.EvidenceRequests)
	for i := range out.EvidenceRequests {
		out.EvidenceRequests[i].ClaimRefs = nilIfEmpty(out.EvidenceRequests[i].ClaimRefs)
	}
	out.OpenQuestions = nilIfEmpty(out.OpenQuestions)
	m := &out.Muhasabah
	m.SupportedCalcIDs = nilIfEmpty(m.SupportedCalcIDs)
	m.FalsifiabilityTests = nilIfEmpty(m.FalsifiabilityTests)
	m.Uncertainties = nilIfEmpty(m.Uncertainties)
	m.FailureModes = nilIfEmpty(m.FailureModes)
}

func canonicalJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return raw
	}
	return b
}

func nilIfEmpty[T any](xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

// ---- the schema walk ----

type jkind uint8

const (
	jString jkind = iota
	jNumber
	jInt
	jBool
	jArray
	jObject
	jFree // any JSON object
	jAny  // any JSON value, null included
)

type jspec struct {
	kind     jkind
	elem     *jspec
	fields   map[string]*jspec
	required []string
}

// anyValue and freeObject read through what the schema does not describe.
var (
	anyValue   = &jspec{kind: jAny}
	freeObject = &jspec{kind: jFree}
)

// outputSchema is debate.AgentOutput's JSON form, read from its tags: a
// member is required unless it is omitempty or listed in optionalMembers,
// and "model", which the backend sets, is not the agent's to write.
var outputSchema = schemaOf(reflect.TypeFor[debate.AgentOutput]())

// optionalMembers are the members, by Go type and JSON name, that an
// output may leave out although they are never omitted when written.
var optionalMembers = map[string]bool{
	"AgentOutput.round_number":             true,
	"FalsifiabilityTest.test_description":  true,
	"FalsifiabilityTest.required_evidence": true,
	"FalsifiabilityTest.pass_fail_rule":    true,
	"Uncertainty.uncertainty":              true,
	"Uncertainty.impact":                   true,
	"Uncertainty.mitigation":               true,
}

// schemaOf is the schema of a type of debate.AgentOutput: json.RawMessage
// is a free-form object, a pointer its element's.
func schemaOf(t reflect.Type) *jspec {
	switch t.Kind() {
	case reflect.String:
		return &jspec{kind: jString}
	case reflect.Int:
		return &jspec{kind: jInt}
	case reflect.Float64:
		return &jspec{kind: jNumber}
	case reflect.Bool:
		return &jspec{kind: jBool}
	case reflect.Pointer:
		return schemaOf(t.Elem())
	case reflect.Slice:
		if t == reflect.TypeFor[json.RawMessage]() {
			return &jspec{kind: jFree}
		}
		return &jspec{kind: jArray, elem: schemaOf(t.Elem())}
	}
	s := &jspec{kind: jObject, fields: map[string]*jspec{}}
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "model" {
			continue
		}
		s.fields[name] = schemaOf(t.Field(i).Type)
		if opts != "omitempty" && !optionalMembers[t.Name()+"."+name] {
			s.required = append(s.required, name)
		}
	}
	return s
}

// walkErr stops the walk: the document is not JSON or too deep.
type walkErr struct{ path, msg string }

type walker struct {
	dec   *json.Decoder
	v     *debate.Violations
	depth int
}

// maxWalkViolations stops collecting after this many schema violations.
const maxWalkViolations = 64

func (w *walker) document() *walkErr {
	tok, err := w.dec.Token()
	if err != nil {
		return syntaxErr(rootPath, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return &walkErr{rootPath, "must be a JSON object"}
	}
	if e := w.object("", outputSchema); e != nil {
		return e
	}
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		return &walkErr{rootPath, "has data after the JSON object"}
	}
	return nil
}

func syntaxErr(path string, err error) *walkErr {
	path = cmp.Or(path, rootPath)
	if errors.Is(err, io.EOF) {
		return &walkErr{path, "is not valid JSON: unexpected end of input"}
	}
	return &walkErr{path, "is not valid JSON: " + err.Error()}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (w *walker) add(path, format string, args ...any) {
	if w.v.Len() < maxWalkViolations {
		w.v.Add(path, format, args...)
	}
}

// descend enters a nested array or object, failing past MaxDepth; the
// caller defers w.ascend.
func (w *walker) descend(path string) *walkErr {
	w.depth++
	if w.depth > MaxDepth {
		return &walkErr{path, fmt.Sprintf("is nested more than %d levels deep", MaxDepth)}
	}
	return nil
}

func (w *walker) ascend() { w.depth-- }

// object walks the members of an object whose '{' was read. A free-form
// object (jFree) takes any members, but no duplicate keys at any level.
func (w *walker) object(path string, s *jspec) *walkErr {
	defer w.ascend()
	if e := w.descend(path); e != nil {
		return e
	}
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return syntaxErr(path, err)
		}
		key, _ := tok.(string)
		p := join(path, key)
		if seen[key] {
			w.add(p, "appears more than once")
		}
		seen[key] = true
		fs, ok := s.fields[key]
		if !ok {
			if s.kind != jFree {
				w.add(p, "is not a field of the schema")
			}
			fs = anyValue
		}
		if e := w.value(p, fs); e != nil {
			return e
		}
	}
	if _, err := w.dec.Token(); err != nil { // '}'
		return syntaxErr(path, err)
	}
	for _, r := range s.required {
		if !seen[r] {
			w.add(join(path, r), "is required")
		}
	}
	return nil
}

// array walks the elements of an array whose '[' was read.
func (w *walker) array(path string, elem *jspec) *walkErr {
	defer w.ascend()
	if e := w.descend(path); e != nil {
		return e
	}
	for i := 0; w.dec.More(); i++ {
		if e := w.value(fmt.Sprintf("%s[%d]", path, i), elem); e != nil {
			return e
		}
	}
	if _, err := w.dec.Token(); err != nil { // ']'
		return syntaxErr(path, err)
	}
	return nil
}

// value walks the next value against s. A value of the wrong type (or any
// value, for jAny) is still read through, checking it is well formed,
// without duplicate keys and not too deep.
func (w *walker) value(path string, s *jspec) *walkErr {
	tok, err := w.dec.Token()
	if err != nil {
		return syntaxErr(path, err)
	}
	if s.kind == jAny {
		return w.skipTok(path, tok)
	}
	if tok == nil {
		w.add(path, "must not be null")
		return nil
	}
	switch s.kind {
	case jString:
		if _, ok := tok.(string); !ok {
			w.add(path, "must be a string")
			return w.skipTok(path, tok)
		}
	case jBool:
		if _, ok := tok.(bool); !ok {
			w.add(path, "must be true or false")
			return w.skipTok(path, tok)
		}
	case jNumber, jInt:
		n, ok := tok.(json.Number)
		if !ok {
			w.add(path, "must be a number")
			return w.skipTok(path, tok)
		}
		if s.kind == jInt {
			if _, err := strconv.ParseInt(string(n), 10, strconv.IntSize); err != nil {
				w.add(path, "must be an integer")
			}
			return nil
		}
		if x, err := strconv.ParseFloat(string(n), 64); err != nil || math.IsInf(x, 0) {
			w.add(path, "must be a finite number")
		}
	case jArray:
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			w.add(path, "must be an array")
			return w.skipTok(path, tok)
		}
		return w.array(path, s.elem)
	case jObject, jFree:
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			w.add(path, "must be a JSON object")
			return w.skipTok(path, tok)
		}
		return w.object(path, s)
	}
	return nil
}

// skipTok reads through the rest of a value whose first token was read,
// whatever it holds.
func (w *walker) skipTok(path string, tok json.Token) *walkErr {
	switch tok {
	case json.Delim('{'):
		return w.object(path, freeObject)
	case json.Delim('['):
		return w.array(path, anyValue)
	}
	return nil
}

// ---- shape rules (SCHEMA), shared by ParseOutput and Validate ----

// checkShape records the SCHEMA violations of out. withConfidence adds the
// confidence ranges (ParseOutput); Validate reports those as
// CONFIDENCE_RANGE instead.
func checkShape(v *debate.Violations, out *debate.AgentOutput, withConfidence bool, roles []string) {
	checkID(v, "agent_id", out.AgentID)
	switch {
	case out.Role == "":
		v.Add("role", "is required")
	case !slices.Contains(roles, out.Role):
		v.Add("role", "unknown role %q (one of %v)", clip(out.Role), roles)
	}
	if out.RoundNumber < 0 {
		v.Add("round_number", "must not be negative")
	}
	checkProse(v, "content", out.Content, MaxContentLen, true)
	if len(out.StructuredContent) > 0 {
		checkObject(v, "structured_content", out.StructuredContent, MaxContentLen)
	}
	checkRefList(v, "claim_refs", out.ClaimRefs)
	checkRefList(v, "calc_refs", out.CalcRefs)

	checkList(v, "tool_calls", out.ToolCalls, MaxToolCalls, func(p string, _ int, tc debate.ToolCall) {
		checkID(v, p+".tool", tc.Tool)
		checkObject(v, p+".args", tc.Args, MaxToolArgsLen)
	})

	m := &out.Muhasabah
	checkRefList(v, "muhasabah_record.supported_claim_ids", m.SupportedClaimIDs)
	checkRefList(v, "muhasabah_record.supported_calc_ids", m.SupportedCalcIDs)
	checkProse(v, "muhasabah_record.evidence_summary", m.EvidenceSummary, MaxTextLen, false)
	checkProse(v, "muhasabah_record.counter_hypothesis", m.CounterHypothesis, MaxTextLen, false)
	checkProse(v, "muhasabah_record.confidence_justification", m.ConfidenceJustification, MaxTextLen, false)
	checkList(v, "muhasabah_record.falsifiability_tests", m.FalsifiabilityTests, MaxRecordItems, func(p string, _ int, t debate.FalsifiabilityTest) {
		checkProse(v, p+".test_description", t.TestDescription, MaxTextLen, false)
		checkProse(v, p+".required_evidence", t.RequiredEvidence, MaxTextLen, false)
		checkProse(v, p+".pass_fail_rule", t.PassFailRule, MaxTextLen, false)
	})
	checkList(v, "muhasabah_record.uncertainties", m.Uncertainties, MaxRecordItems, func(p string, _ int, u debate.Uncertainty) {
		checkProse(v, p+".uncertainty", u.Uncertainty, MaxTextLen, false)
		checkProse(v, p+".impact", u.Impact, MaxTextLen, false)
		checkProse(v, p+".mitigation", u.Mitigation, MaxTextLen, false)
	})
	checkList(v, "muhasabah_record.failure_modes", m.FailureModes, MaxRecordItems, func(p string, _ int, s string) {
		checkProse(v, p, s, MaxTextLen, true)
	})
	if withConfidence && !inUnit(m.Confidence) {
		v.Add("muhasabah_record.confidence", "must be a number within [0, 1]")
	}

	if p := out.Position; p != nil {
		switch {
		case p.Recommendation == "":
			v.Add("position.recommendation", "is required")
		case !slices.Contains(recommendations, p.Recommendation):
			v.Add("position.recommendation", "unknown recommendation %q (one of %v)", clip(p.Recommendation), recommendations)
		}
		if withConfidence && !inUnit(p.Confidence) {
			v.Add("position.confidence", "must be a number within [0, 1]")
		}
	}

	challengeIDs := map[string]int{}
	checkList(v, "challenges", out.Challenges, MaxChallenges, func(p string, i int, ch debate.Challenge) {
		checkID(v, p+".challenge_id", ch.ChallengeID)
		if j, dup := challengeIDs[ch.ChallengeID]; dup && ch.ChallengeID != "" {
			v.Add(p+".challenge_id", "repeats the id of challenges[%d]", j)
		} else {
			challengeIDs[ch.ChallengeID] = i
		}
		checkRefList(v, p+".claim_refs", ch.ClaimRefs)
		checkRefList(v, p+".evidence_refs", ch.EvidenceRefs)
		checkProse(v, p+".defect_type", ch.DefectType, MaxShortTextLen, false)
		checkProse(v, p+".severity", ch.Severity, MaxShortTextLen, false)
		checkProse(v, p+".cure_protocol", ch.CureProtocol, MaxShortTextLen, false)
		checkProse(v, p+".description", ch.Description, MaxTextLen, false)
	})
	checkList(v, "rulings", out.Rulings, MaxRulings, func(p string, _ int, r debate.Ruling) {
		checkID(v, p+".challenge_id", r.ChallengeID)
		checkProse(v, p+".reason", r.Reason, MaxTextLen, true)
	})
	checkList(v, "evidence_requests", out.EvidenceRequests, MaxEvidenceRequests, func(p string, _ int, r debate.EvidenceRequest) {
		checkProse(v, p+".query", r.Query, MaxShortTextLen, true)
		checkRefList(v, p+".claim_refs", r.ClaimRefs)
	})
	checkList(v, "open_questions", out.OpenQuestions, MaxOpenQuestions, func(p string, _ int, q string) {
		checkProse(v, p, q, MaxTextLen, true)
	})
	if out.Timestamp != "" {
		if _, err := time.Parse(time.RFC3339Nano, out.Timestamp); err != nil || len(out.Timestamp) > MaxShortTextLen {
			v.Add("timestamp", "must be an RFC 3339 date-time")
		}
	}
}

var recommendations = []string{debate.RecommendInvest, debate.RecommendConditional, debate.RecommendPass}

func inUnit(x float64) bool { return x >= 0 && x <= 1 } // false for NaN

func checkID(v *debate.Violations, field, id string) {
	switch {
	case id == "":
		v.Add(field, "is required")
	case !debate.ValidID(id):
		v.Add(field, "must be 1 to %d printable characters without spaces", debate.MaxIDLen)
	}
}

// checkRefList checks a list of ids: at most MaxRefs, each a valid id.
func checkRefList(v *debate.Violations, field string, ids []string) {
	checkList(v, field, ids, MaxRefs, func(p string, _ int, id string) { checkID(v, p, id) })
}

// checkList checks a list: at most limit entries, then each with check,
// given its path ("field[i]") and index.
func checkList[T any](v *debate.Violations, field string, xs []T, limit int, check func(path string, i int, x T)) {
	if len(xs) > limit {
		v.Add(field, "has %d entries, at most %d allowed", len(xs), limit)
		return
	}
	for i, x := range xs {
		check(field+"["+strconv.Itoa(i)+"]", i, x)
	}
}

// checkProse checks a text: within limit bytes, valid UTF-8, no NUL, and
// not blank when required.
func checkProse(v *debate.Violations, field, s string, limit int, required bool) {
	switch {
	case len(s) > limit:
		v.Add(field, "is %d bytes long, at most %d allowed", len(s), limit)
	case !utf8.ValidString(s):
		v.Add(field, "is not valid UTF-8")
	case strings.ContainsRune(s, 0):
		v.Add(field, "contains a NUL character")
	case required && strings.TrimSpace(s) == "":
		v.Add(field, "is required")
	}
}

// checkObject checks a free-form JSON field: a JSON object within limit
// bytes.
func checkObject(v *debate.Violations, field string, raw json.RawMessage, limit int) {
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(raw) > limit:
		v.Add(field, "is %d bytes long, at most %d allowed", len(raw), limit)
	case len(trimmed) == 0:
		v.Add(field, "is required (a JSON object)")
	case trimmed[0] != '{' || !json.Valid(trimmed):
		v.Add(field, "must be a JSON object")
	}
}

// clip shortens a value quoted in an error message.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

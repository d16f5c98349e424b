package orchestrator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/debated/debated/internal/canon"
)

var errNotObject = errors.New("not a JSON object")

// canonical returns the RFC 8785 form of a JSON value and its hex SHA-256.
// The checkpoint stores this form, so a state that a database hands back
// with reordered keys or other spacing still hashes the same.
func canonical(raw []byte) ([]byte, string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, "", errors.New("empty JSON")
	}
	c, err := canon.Transform(raw)
	if err != nil {
		return nil, "", err
	}
	return c, hashHex(c), nil
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonicalObject is canonical for values that must be JSON objects.
func canonicalObject(raw []byte) (json.RawMessage, error) {
	if !isObject(raw) {
		return nil, errNotObject
	}
	c, _, err := canonical(raw)
	return c, err
}

// isObject reports whether raw starts, after whitespace, with '{'.
func isObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// marshalPayload encodes an event payload, which must be a JSON object; nil
// is {}. Raw JSON is checked for validity and used as is: the ledger
// canonicalises payloads when it seals them.
func marshalPayload(p any) (json.RawMessage, error) {
	var raw []byte
	switch x := p.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		if !isObject(b) {
			return nil, errNotObject
		}
		return b, nil
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !isObject(raw) || !json.Valid(raw) {
		return nil, errNotObject
	}
	return bytes.Clone(raw), nil
}

// idRefs are the payload members that node.completed collects.
type idRefs struct {
	ClaimID   string   `json:"claim_id"`
	ClaimIDs  []string `json:"claim_ids"`
	DefectID  string   `json:"defect_id"`
	DefectIDs []string `json:"defect_ids"`
}

var (
	claimKey  = []byte(`"claim_id`)
	defectKey = []byte(`"defect_id`)
)

// collectRefs appends the claim and defect ids a payload reports. Members of
// another JSON type are ignored: the collection is an audit convenience, not
// a validation.
func collectRefs(payload []byte, claims, defects *orderedSet) {
	if !bytes.Contains(payload, claimKey) && !bytes.Contains(payload, defectKey) {
		return
	}
	var r idRefs
	_ = json.Unmarshal(payload, &r) // partial results are kept on a type mismatch
	claims.add(r.ClaimID)
	claims.add(r.ClaimIDs...)
	defects.add(r.DefectID)
	defects.add(r.DefectIDs...)
}

// orderedSet keeps distinct non-empty strings in first-seen order.
type orderedSet struct {
	list []string
	seen map[string]bool
}

func (s *orderedSet) add(xs ...string) {
	for _, x := range xs {
		if x == "" || s.seen[x] {
			continue
		}
		if s.seen == nil {
			s.seen = map[string]bool{}
		}
		s.seen[x] = true
		s.list = append(s.list, x)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// panicError is a recovered panic as an error. Its text omits the stack
// (logged instead), so it is reproducible and leaks no internals.
func panicError(v any) error { return fmt.Errorf("panic: %v", v) }

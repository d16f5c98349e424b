package orchestrator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/debated/debated/internal/canon"
	"github.com/debated/debated/internal/debate"
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

// checkpointState returns a checkpoint's state in canonical form and its
// hash. The state the previous step wrote is its canonical form already
// (and the store keeps it byte for byte): when its bytes hash to the
// recorded OutputHash they are that form, and it is not canonicalised
// again; otherwise (a store that reformats JSON, an old checkpoint) it is.
func checkpointState(cp *debate.Checkpoint) ([]byte, string, error) {
	var want [sha256.Size]byte
	if n, err := hex.Decode(want[:], []byte(cp.OutputHash)); err == nil && n == len(want) && len(cp.State) > 0 &&
		sha256.Sum256(cp.State) == want {
		return cp.State, cp.OutputHash, nil
	}
	return canonical(cp.State)
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
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

// marshalPayload encodes an event payload, which must be a JSON object, in
// its RFC 8785 form; nil or empty is {}. This is the one encoding of the
// payload: the bytes are the event's payload and what the ledger hashes
// (see CanonicalSealer), and they are made once per event.
func marshalPayload(p any) (json.RawMessage, error) {
	var raw []byte
	switch x := p.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case canon.Text: // canonical already
		if !isObject(x.Bytes()) {
			return nil, errNotObject
		}
		return x.Bytes(), nil
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		if c, err := canon.Marshal(p); err == nil && isObject(c) {
			return c, nil
		}
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !isObject(raw) {
		return nil, errNotObject
	}
	// Transform validates and writes a new buffer: the caller's bytes are
	// never kept.
	c, err := canon.Transform(raw)
	if err != nil && !json.Valid(raw) {
		return nil, errNotObject
	}
	return c, err
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
	r := decodeRefs(payload)
	claims.add(r.ClaimID)
	claims.add(r.ClaimIDs...)
	defects.add(r.DefectID)
	defects.add(r.DefectIDs...)
}

// decodeRefs decodes payload's idRefs as json.Unmarshal does (keys match
// without regard to case, the last of a repeated key wins, partial results
// are kept on a type mismatch, and invalid JSON gives nothing), decoding
// the four members alone rather than the whole payload: every event of a
// step passes here.
func decodeRefs(payload []byte) idRefs {
	var r idRefs
	ok := canon.Members(payload, func(key, value []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &k) != nil {
				return true
			}
			key = []byte(k)
		}
		var into any
		switch {
		case bytes.EqualFold(key, []byte("claim_id")):
			into = &r.ClaimID
		case bytes.EqualFold(key, []byte("claim_ids")):
			into = &r.ClaimIDs
		case bytes.EqualFold(key, []byte("defect_id")):
			into = &r.DefectID
		case bytes.EqualFold(key, []byte("defect_ids")):
			into = &r.DefectIDs
		default:
			return true
		}
		_ = json.Unmarshal(value, into) // partial results are kept on a type mismatch
		return true
	})
	if !ok {
		return idRefs{}
	}
	return r
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

// panicError is a recovered panic as an error. Its text omits the stack
// (logged instead), so it is reproducible and leaks no internals.
func panicError(v any) error { return fmt.Errorf("panic: %v", v) }

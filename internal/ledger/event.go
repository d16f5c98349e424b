package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/debated/debated/internal/debate"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/debated/debated/internal/canon"
)

// GenesisHash is the PrevHash of the first event of every ledger.
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// maxInt is the largest integer that RFC 8785 writes exactly (2^53 - 1):
// numbers are IEEE 754 doubles there, so seq and round must stay below it or
// two different values would canonicalise, and hash, alike.
const maxInt = 1<<53 - 1

// Sentinel errors. Callers branch on them with errors.Is.
var (
	// ErrInvalidEvent: an event cannot be sealed as given (a missing or
	// malformed field, a payload that is not a JSON object). The wrapped
	// message names the field.
	ErrInvalidEvent = errors.New("ledger: invalid event")
	// ErrChainMismatch: the event does not belong after prev (another debate
	// or tenant, or prev is not a sealed event).
	ErrChainMismatch = errors.New("ledger: event does not extend the chain")
	// ErrWrongSigner: the signer's key belongs to another tenant or actor
	// than the event's.
	ErrWrongSigner = errors.New("ledger: signer does not match the event's tenant and actor")
)

// Event is one entry of a debate's ledger. Its JSON form (snake_case) is the
// one bundled by an export and read by `debatectl verify`.
type Event = debate.Event

// Seal returns e completed as the event after prev (nil for the first event
// of a debate): Seq is prev.Seq+1 (or 1), PrevHash is prev.Hash (or
// GenesisHash), Payload is replaced by its canonical form ({} when nil), Time
// is normalised to UTC and truncated to microseconds (the precision of
// PostgreSQL timestamps, so a stored event still re-hashes), and KeyID, Hash
// and Signature come from s. Whatever e carries in those fields is ignored.
// Seal is deterministic: the same inputs give the same bytes.
//
// It returns an error wrapping ErrInvalidEvent if a field of e is unusable
// (empty debate, tenant, type or actor; a NUL byte or invalid UTF-8 in a
// string; a negative round; a zero time or one outside years 0-9999; a
// payload that is not a JSON object), ErrChainMismatch if prev belongs to
// another debate or tenant or is not sealed, ErrWrongSigner if s holds
// another tenant's or actor's key, or the signer's error.
func Seal(prev *Event, e Event, s Signer) (Event, error) {
	payload, err := preparePayload(e.Payload)
	if err != nil {
		return Event{}, err
	}
	e, sum, err := chain(prev, e, s, payload)
	if err != nil {
		return Event{}, err
	}
	return sign(e, sum, s)
}

// preparePayload is the canonical payload Seal hashes, or Seal's error for
// a payload it refuses.
func preparePayload(p json.RawMessage) (json.RawMessage, error) {
	payload, err := canonicalPayload(p)
	if err != nil {
		return nil, fmt.Errorf("%w: payload: %w", ErrInvalidEvent, err)
	}
	return payload, nil
}

// chain places e after prev with its canonical payload: seq, prev_hash,
// time, key id, and the hash it returns (see Seal).
func chain(prev *Event, e Event, s Signer, payload json.RawMessage) (Event, [32]byte, error) {
	var sum [32]byte
	if s == nil {
		return Event{}, sum, fmt.Errorf("%w: no signer", ErrInvalidEvent)
	}
	e.Seq, e.PrevHash = 1, GenesisHash
	if prev != nil {
		switch {
		case prev.DebateID != e.DebateID:
			return Event{}, sum, fmt.Errorf("%w: debate %q follows an event of debate %q", ErrChainMismatch, e.DebateID, prev.DebateID)
		case prev.TenantID != e.TenantID:
			return Event{}, sum, fmt.Errorf("%w: tenant %q follows an event of tenant %q", ErrChainMismatch, e.TenantID, prev.TenantID)
		case !debate.IsHashHex(prev.Hash):
			return Event{}, sum, fmt.Errorf("%w: previous event has no valid hash", ErrChainMismatch)
		case prev.Seq < 1 || prev.Seq >= maxInt:
			return Event{}, sum, fmt.Errorf("%w: previous event has seq %d", ErrChainMismatch, prev.Seq)
		}
		e.Seq, e.PrevHash = prev.Seq+1, prev.Hash
	}
	e.Time = e.Time.UTC().Truncate(time.Microsecond)
	if tenant, actor := signerOf(s); tenant != e.TenantID || actor != e.Actor {
		return Event{}, sum, fmt.Errorf("%w: key of tenant %q actor %q, event of tenant %q actor %q",
			ErrWrongSigner, tenant, actor, e.TenantID, e.Actor)
	}
	e.KeyID = s.KeyID()
	if err := checkFields(&e); err != nil {
		return Event{}, sum, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	e.Payload = payload
	sum = sumEvent(&e, payload)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	e.Hash = string(h[:])
	return e, sum, nil
}

// signerOf returns the tenant and actor of s's key; the keyring's signers
// answer without copying the key (PublicKeyInfo does).
func signerOf(s Signer) (tenant, actor string) {
	if ks, ok := s.(*keySigner); ok {
		return ks.info.TenantID, ks.info.Actor
	}
	info := s.PublicKeyInfo()
	return info.TenantID, info.Actor
}

// sign adds the signature of the event's hash sum.
func sign(e Event, sum [32]byte, s Signer) (Event, error) {
	sig, err := s.Sign(sum[:])
	if err != nil {
		return Event{}, fmt.Errorf("ledger: sign event: %w", err)
	}
	e.Signature = encodeSig(sig)
	return e, nil
}

// ComputeHash returns the hex hash of e as Seal defines it (see the package
// documentation), whatever e.Hash says. It returns an error wrapping
// ErrInvalidEvent for an event that Seal would not have produced.
func ComputeHash(e *Event) (string, error) {
	if err := checkFields(e); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	sum, err := hashEvent(e)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	return hex.EncodeToString(sum[:]), nil
}

// checkFields reports the first field of e that no sealed event can carry.
// The payload is checked by hashEvent.
func checkFields(e *Event) error {
	for _, f := range []struct {
		name, value string
		required    bool
	}{
		{"debate_id", e.DebateID, true},
		{"tenant_id", e.TenantID, true},
		{"type", e.Type, true},
		{"actor", e.Actor, true},
		{"node", e.Node, false},
		{"key_id", e.KeyID, true},
	} {
		if err := checkName(f.value, f.required); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	switch {
	case e.Seq < 1 || e.Seq > maxInt:
		return fmt.Errorf("seq %d out of range", e.Seq)
	case e.Round < 0 || e.Round > maxInt:
		return fmt.Errorf("round %d out of range", e.Round)
	case e.Time.IsZero():
		return errors.New("time is not set")
	case e.Time.UTC().Year() < 0 || e.Time.UTC().Year() > 9999:
		return errors.New("time is outside years 0-9999")
	case !debate.IsHashHex(e.PrevHash):
		return errors.New("prev_hash is not 64 lowercase hex digits")
	}
	return nil
}

// checkName accepts a non-empty (unless optional) valid UTF-8 string without
// NUL bytes. NUL is refused because key derivation joins tenant and actor
// with it.
func checkName(s string, required bool) error {
	switch {
	case s == "" && required:
		return errors.New("empty")
	case !utf8.ValidString(s):
		return errors.New("not valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return errors.New("contains a NUL byte")
	}
	return nil
}

// canonicalPayload returns the RFC 8785 form of a payload that must be a
// JSON object; nil or empty means {}.
func canonicalPayload(p json.RawMessage) (json.RawMessage, error) {
	if len(p) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !isObject(p) {
		return nil, errors.New("not a JSON object")
	}
	c, err := canon.Transform(p)
	if err != nil {
		return nil, fmt.Errorf("not canonicalisable JSON: %w", err)
	}
	return c, nil
}

// isObject reports whether p starts, after whitespace, with '{'. The rest is
// validated by the canonicaliser.
func isObject(p []byte) bool {
	for _, c := range p {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// hashEvent returns the SHA-256 of the canonical hashed object of e. It
// assumes checkFields(e) passed and fails only on a bad payload.
func hashEvent(e *Event) ([32]byte, error) {
	payload, err := canonicalPayload(e.Payload)
	if err != nil {
		return [32]byte{}, fmt.Errorf("payload: %w", err)
	}
	return sumEvent(e, payload), nil
}

// sumEvent is sha256.Sum256(canonicalEvent(e, payload)) without the copy
// of the payload: the members before and after it are written to the hash
// around it.
func sumEvent(e *Event, payload []byte) [32]byte {
	var buf [512]byte
	h := sha256.New()
	b := appendHead(buf[:0], e)
	h.Write(b)
	h.Write(payload)
	h.Write(appendTail(b[:0], e))
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// canonicalEvent writes the RFC 8785 form of the hashed object of e (see
// the package documentation) given its canonical payload. The members are
// written in RFC 8785 order (sorted by UTF-16 code units, which for these
// ASCII names is byte order); strings are escaped as RFC 8785 requires (they
// are valid UTF-8, checked by checkFields) and seq and round are integers
// below 2^53, which RFC 8785 writes in plain decimal. The tests check this
// against canon.Transform of the same object.
func canonicalEvent(e *Event, payload []byte) []byte {
	b := make([]byte, 0, 384+len(e.Actor)+len(e.DebateID)+len(e.Node)+len(e.TenantID)+len(e.Type)+len(payload))
	b = appendHead(b, e)
	b = append(b, payload...)
	return appendTail(b, e)
}

// appendHead appends the members of canonicalEvent before the payload's
// value.
func appendHead(b []byte, e *Event) []byte {
	b = append(b, `{"actor":`...)
	b = appendString(b, e.Actor)
	b = append(b, `,"debate_id":`...)
	b = appendString(b, e.DebateID)
	b = append(b, `,"key_id":`...)
	b = appendString(b, e.KeyID)
	b = append(b, `,"node":`...)
	b = appendString(b, e.Node)
	return append(b, `,"payload":`...)
}

// appendTail appends the members of canonicalEvent after the payload's
// value.
func appendTail(b []byte, e *Event) []byte {
	b = append(b, `,"prev_hash":`...)
	b = appendString(b, e.PrevHash)
	b = append(b, `,"round":`...)
	b = strconv.AppendInt(b, int64(e.Round), 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"tenant_id":`...)
	b = appendString(b, e.TenantID)
	b = append(b, `,"time":"`...)
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","type":`...)
	b = appendString(b, e.Type)
	return append(b, '}')
}

// appendString appends the RFC 8785 (ECMAScript JSON.stringify) form of a
// valid UTF-8 string: only '"', '\\' and control characters are escaped,
// the latter as \b \t \n \f \r or \u00xx in lowercase hex.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := range len(s) {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

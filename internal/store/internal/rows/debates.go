package rows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/debated/debated/internal/canon"
	"github.com/debated/debated/internal/debate"
)

// Debates, their ledgers, checkpoints and human gates.
//
// What a round trip keeps and what it normalises:
//   - JSON (a debate's Options, an event's Payload, a checkpoint's State) is
//     stored and returned byte for byte: an event's hash covers its payload,
//     so a store must never re-encode it (PostgreSQL keeps it as json, not
//     jsonb, which would reorder keys and drop whitespace). Nil Options and
//     State stay nil; a nil Payload is stored as {}, which is what the
//     ledger hashes for it.
//   - every time comes back in UTC to the microsecond (see Time). An event's
//     Time must already be a whole microsecond (the ledger seals it so): a
//     time the store would round no longer hashes, so it is refused.
//   - a gate without claim ids comes back with nil ClaimIDs.
//   - the tenant of every row is the tenant of the context, never a field of
//     the input.

// Event list limits: a limit of 0 or less asks for DefaultDebateEventLimit
// events, one above MaxDebateEventLimit gets MaxDebateEventLimit.
const (
	DefaultDebateEventLimit = 500
	MaxDebateEventLimit     = 5000
)

// MaxStepEvents bounds the events of one StepCommit.
const MaxStepEvents = 5000

// DebateEventLimit returns the number of events an EventList page asked
// with limit l holds.
func DebateEventLimit(l int) int {
	switch {
	case l <= 0:
		return DefaultDebateEventLimit
	case l > MaxDebateEventLimit:
		return MaxDebateEventLimit
	default:
		return l
	}
}

// NewDebate checks d and returns it as DebateCreate stores it and the read
// methods return it: TenantID tenant, Status queued, LastSeq 0, times in
// UTC to the microsecond, UpdatedAt CreatedAt when zero, empty Options nil.
// Every other field is kept: HeadHash is the fence of the first StepCommit.
//
// Returns a *debate.ValidationError if an id is not a valid id, if Protocol
// is empty, if a text is too long or holds a NUL character, if Options is
// not valid UTF-8 JSON, if CreatedAt is zero, or if Round or Attempt is
// negative or too large.
func NewDebate(tenant string, d debate.Debate) (debate.Debate, error) {
	var v debate.Violations
	checkID(&v, "debate.debate_id", d.ID)
	checkID(&v, "debate.deal_id", d.DealID)
	if d.Protocol == "" {
		v.Add("debate.protocol", "is required")
	}
	checkText(&v, "debate.protocol", d.Protocol, debate.MaxShortTextLen)
	checkText(&v, "debate.idempotency_key", d.IdempotencyKey, debate.MaxShortTextLen)
	checkText(&v, "debate.request_hash", d.RequestHash, debate.MaxShortTextLen)
	checkText(&v, "debate.stop_reason", d.StopReason, debate.MaxShortTextLen)
	checkText(&v, "debate.error", d.Error, debate.MaxTextLen)
	checkText(&v, "debate.next_node", d.NextNode, debate.MaxShortTextLen)
	checkText(&v, "debate.head_hash", d.HeadHash, debate.MaxShortTextLen)
	checkInt32(&v, "debate.round", d.Round)
	checkInt32(&v, "debate.attempt", d.Attempt)
	if len(d.Options) == 0 {
		d.Options = nil
	} else {
		checkJSON(&v, "debate.options", d.Options)
	}
	if d.CreatedAt.IsZero() {
		v.Add("debate.created_at", "is required")
	}
	checkTime(&v, "debate.created_at", d.CreatedAt)
	checkTime(&v, "debate.updated_at", d.UpdatedAt)
	if err := v.Err(); err != nil {
		return debate.Debate{}, err
	}
	d.TenantID = tenant
	d.Status = debate.DebateQueued
	d.LastSeq = 0
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = d.CreatedAt
	}
	d.CreatedAt, d.UpdatedAt = Time(d.CreatedAt), Time(d.UpdatedAt)
	d.Options = bytes.Clone(d.Options)
	return d, nil
}

// EventColumns are the debate_events rows of one step, column by column.
type EventColumns struct {
	Seqs                                   []int64
	Types, Actors, Nodes                   []string
	Rounds                                 []int32
	Payloads                               []string // the JSON, byte for byte
	Times                                  []time.Time
	PrevHashes, Hashes, KeyIDs, Signatures []string
}

// Len is the number of events.
func (e *EventColumns) Len() int { return len(e.Seqs) }

// Append adds the events of o after e's.
func (e *EventColumns) Append(o *EventColumns) {
	e.Seqs = append(e.Seqs, o.Seqs...)
	e.Types = append(e.Types, o.Types...)
	e.Actors = append(e.Actors, o.Actors...)
	e.Nodes = append(e.Nodes, o.Nodes...)
	e.Rounds = append(e.Rounds, o.Rounds...)
	e.Payloads = append(e.Payloads, o.Payloads...)
	e.Times = append(e.Times, o.Times...)
	e.PrevHashes = append(e.PrevHashes, o.PrevHashes...)
	e.Hashes = append(e.Hashes, o.Hashes...)
	e.KeyIDs = append(e.KeyIDs, o.KeyIDs...)
	e.Signatures = append(e.Signatures, o.Signatures...)
}

// Step is a StepCommit checked and ready to store.
type Step struct {
	DebateID   string
	ExpectSeq  int64
	ExpectHash string
	Events     EventColumns
	// LastSeq and HeadHash are the debate's head after the step: those of
	// its last event, or the expected ones when it has none.
	LastSeq  int64
	HeadHash string
	// Checkpoint, OpenGate and ResolveGate are nil when the step has none;
	// otherwise copies with DebateID set and times stamped (see NewStep).
	Checkpoint  *debate.Checkpoint
	OpenGate    *debate.HumanGate
	ResolveGate *debate.HumanGate
	Status      debate.DebateStatus
	StopReason  string
	Error       string
	Round       int32
	// CompletesRounds is how many rounds the step completes (its
	// round.completed events): the debate's rounds_completed grows by it.
	CompletesRounds int32
	NextNode        string
	Attempt         int32
	At              time.Time // Time(c.At)
	Enqueue         bool
}

// NewStep checks c, committed by tenant, and turns it into a Step. It
// changes nothing the caller holds.
//
// The events must carry seqs c.ExpectSeq+1, c.ExpectSeq+2, ... in order,
// the step's tenant and debate, a type, a time that is a whole
// microsecond, a payload that is UTF-8 JSON (nil means {}), and chain:
// each PrevHash is the Hash of the event before it, and the first one's is
// c.ExpectHash when c.ExpectSeq > 0 (the head of a debate without events is
// whatever DebateCreate stored, so it is not compared). The checkpoint's
// Seq must be the step's last seq and its Step at least 1; its CreatedAt
// defaults to c.At. An opened gate must be open (empty means open), its
// CreatedAt defaults to c.At; a resolved gate must be approved or rejected,
// its ResolvedAt defaults to c.At. Every time is kept in UTC to the
// microsecond.
//
// Returns a *debate.ValidationError naming every bad field.
func NewStep(tenant string, c debate.StepCommit) (*Step, error) {
	var v debate.Violations
	checkID(&v, "debate_id", c.DebateID)
	if c.ExpectSeq < 0 {
		v.Add("expect_seq", "must not be negative")
	}
	checkText(&v, "expect_hash", c.ExpectHash, debate.MaxShortTextLen)
	if !slices.Contains(debate.DebateStatuses, c.Status) {
		v.Add("status", "unknown debate status %q", string(c.Status))
	}
	checkText(&v, "stop_reason", c.StopReason, debate.MaxShortTextLen)
	checkText(&v, "error", c.Error, debate.MaxTextLen)
	checkText(&v, "next_node", c.NextNode, debate.MaxShortTextLen)
	checkInt32(&v, "round", c.Round)
	checkInt32(&v, "attempt", c.Attempt)
	if c.At.IsZero() {
		v.Add("at", "is required")
	}
	checkTime(&v, "at", c.At)
	if len(c.Events) > MaxStepEvents {
		v.Add("events", "holds %d events, at most %d allowed", len(c.Events), MaxStepEvents)
		return nil, v.Err() // do not walk an oversized list
	}
	at := Time(c.At)
	s := &Step{
		DebateID: c.DebateID, ExpectSeq: c.ExpectSeq, ExpectHash: c.ExpectHash,
		LastSeq: c.ExpectSeq, HeadHash: c.ExpectHash,
		Status: c.Status, StopReason: c.StopReason, Error: c.Error, Round: int32(c.Round), NextNode: c.NextNode,
		Attempt: int32(c.Attempt), At: at, Enqueue: c.Enqueue,
		CompletesRounds: int32(c.RoundsCompleted()), //nolint:gosec // at most MaxStepEvents, checked above
	}

	ev := &s.Events
	n := len(c.Events)
	ev.Seqs, ev.Rounds, ev.Times = make([]int64, 0, n), make([]int32, 0, n), make([]time.Time, 0, n)
	ev.Types, ev.Actors, ev.Nodes, ev.Payloads = make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	ev.PrevHashes, ev.Hashes, ev.KeyIDs, ev.Signatures = make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	for i, e := range c.Events {
		// Fields are named relative to the event; the path is added only
		// to an event with violations (most steps have none).
		mark := v.Len()
		if want := c.ExpectSeq + int64(i) + 1; e.Seq != want {
			v.Add("seq", "is %d, want %d: the seqs of a step follow the expected head without gaps", e.Seq, want)
		}
		if e.TenantID != tenant {
			v.Add("tenant_id", "is %q, not the tenant of the request", e.TenantID)
		}
		if e.DebateID != c.DebateID {
			v.Add("debate_id", "is %q, not the debate of the step %q", e.DebateID, c.DebateID)
		}
		if e.Type == "" {
			v.Add("type", "is required")
		}
		checkText(&v, "type", e.Type, debate.MaxShortTextLen)
		checkText(&v, "actor", e.Actor, debate.MaxShortTextLen)
		checkText(&v, "node", e.Node, debate.MaxShortTextLen)
		checkInt32(&v, "round", e.Round)
		payload := e.Payload
		if len(payload) == 0 {
			payload = json.RawMessage(`{}`)
		} else {
			checkJSON(&v, "payload", payload)
		}
		switch {
		case e.Time.IsZero():
			v.Add("time", "is required")
		case !Time(e.Time).Equal(e.Time):
			v.Add("time", "has a fraction below the microsecond, which the store cannot keep (seal events with package ledger)")
		default:
			checkTime(&v, "time", e.Time)
		}
		checkText(&v, "prev_hash", e.PrevHash, debate.MaxShortTextLen)
		checkText(&v, "hash", e.Hash, debate.MaxShortTextLen)
		checkText(&v, "key_id", e.KeyID, debate.MaxShortTextLen)
		checkText(&v, "signature", e.Signature, debate.MaxShortTextLen)
		switch {
		case i > 0 && e.PrevHash != c.Events[i-1].Hash:
			v.Add("prev_hash", "is not the hash of events[%d]: the events do not chain", i-1)
		case i == 0 && c.ExpectSeq > 0 && e.PrevHash != c.ExpectHash:
			v.Add("prev_hash", "is not the expected head hash: the events do not extend the ledger")
		}
		if v.Len() > mark {
			v.Prefix(mark, "events["+strconv.Itoa(i)+"].")
		}
		ev.Seqs = append(ev.Seqs, e.Seq)
		ev.Types = append(ev.Types, e.Type)
		ev.Actors = append(ev.Actors, e.Actor)
		ev.Nodes = append(ev.Nodes, e.Node)
		ev.Rounds = append(ev.Rounds, int32(e.Round))
		ev.Payloads = append(ev.Payloads, string(payload))
		ev.Times = append(ev.Times, Time(e.Time))
		ev.PrevHashes = append(ev.PrevHashes, e.PrevHash)
		ev.Hashes = append(ev.Hashes, e.Hash)
		ev.KeyIDs = append(ev.KeyIDs, e.KeyID)
		ev.Signatures = append(ev.Signatures, e.Signature)
	}
	if n > 0 {
		s.LastSeq, s.HeadHash = c.Events[n-1].Seq, c.Events[n-1].Hash
	}

	if cp := c.Checkpoint; cp != nil {
		if cp.DebateID != "" && cp.DebateID != c.DebateID {
			v.Add("checkpoint.debate_id", "is %q, not the debate of the step %q", cp.DebateID, c.DebateID)
		}
		if cp.Step < 1 || cp.Step > math.MaxInt32 {
			v.Add("checkpoint.step", "is %d, must be 1 to %d", cp.Step, math.MaxInt32)
		}
		if cp.Seq != s.LastSeq {
			v.Add("checkpoint.seq", "is %d, not the step's last seq %d", cp.Seq, s.LastSeq)
		}
		checkText(&v, "checkpoint.node", cp.Node, debate.MaxShortTextLen)
		checkText(&v, "checkpoint.next_node", cp.NextNode, debate.MaxShortTextLen)
		checkInt32(&v, "checkpoint.round", cp.Round)
		checkText(&v, "checkpoint.input_hash", cp.InputHash, debate.MaxShortTextLen)
		checkText(&v, "checkpoint.output_hash", cp.OutputHash, debate.MaxShortTextLen)
		x := *cp
		x.DebateID = c.DebateID
		if len(x.State) == 0 {
			x.State = nil
		} else {
			checkJSON(&v, "checkpoint.state", x.State)
			x.State = bytes.Clone(x.State)
		}
		if x.CreatedAt.IsZero() {
			x.CreatedAt = at
		}
		checkTime(&v, "checkpoint.created_at", x.CreatedAt)
		x.CreatedAt = Time(x.CreatedAt)
		s.Checkpoint = &x
	}

	if g := c.OpenGate; g != nil {
		checkGate(&v, "open_gate", c.DebateID, g)
		if g.Status != "" && g.Status != debate.GateOpen {
			v.Add("open_gate.status", "is %q: a gate opens as %q", string(g.Status), string(debate.GateOpen))
		}
		checkText(&v, "open_gate.reason", g.Reason, debate.MaxTextLen)
		checkText(&v, "open_gate.node", g.Node, debate.MaxShortTextLen)
		for i, id := range g.ClaimIDs {
			checkID(&v, fmt.Sprintf("open_gate.claim_ids[%d]", i), id)
		}
		x := *g
		x.DebateID, x.Status = c.DebateID, debate.GateOpen
		x.ClaimIDs = slices.Clone(x.ClaimIDs)
		if len(x.ClaimIDs) == 0 {
			x.ClaimIDs = nil
		}
		if x.CreatedAt.IsZero() {
			x.CreatedAt = at
		}
		checkTime(&v, "open_gate.created_at", x.CreatedAt)
		x.CreatedAt = Time(x.CreatedAt)
		x.Resolution, x.ResolvedBy, x.ResolvedAt = "", "", nil
		s.OpenGate = &x
	}

	if g := c.ResolveGate; g != nil {
		checkGate(&v, "resolve_gate", c.DebateID, g)
		switch {
		case g.Status == debate.GateCancelled && c.Status != debate.DebateAborted:
			v.Add("resolve_gate.status", "is %q, which only an abort sets", string(g.Status))
		case g.Status != debate.GateApproved && g.Status != debate.GateRejected && g.Status != debate.GateCancelled:
			v.Add("resolve_gate.status", "is %q, must be %q, %q or %q", string(g.Status), string(debate.GateApproved), string(debate.GateRejected), string(debate.GateCancelled))
		}
		checkText(&v, "resolve_gate.resolution", g.Resolution, debate.MaxTextLen)
		checkText(&v, "resolve_gate.resolved_by", g.ResolvedBy, debate.MaxShortTextLen)
		x := *g
		x.DebateID = c.DebateID
		resolved := at
		if x.ResolvedAt != nil && !x.ResolvedAt.IsZero() {
			checkTime(&v, "resolve_gate.resolved_at", *x.ResolvedAt)
			resolved = Time(*x.ResolvedAt)
		}
		x.ResolvedAt = &resolved
		s.ResolveGate = &x
		if c.OpenGate != nil && c.OpenGate.ID == g.ID {
			// The stores would disagree on whether the gate exists yet.
			v.Add("resolve_gate.gate_id", "is the gate this step opens: resolve it in a later step")
		}
	}

	if err := v.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

func checkGate(v *debate.Violations, field, debateID string, g *debate.HumanGate) {
	checkID(v, field+".gate_id", g.ID)
	if g.DebateID != "" && g.DebateID != debateID {
		v.Add(field+".debate_id", "is %q, not the debate of the step %q", g.DebateID, debateID)
	}
}

// checkJSON refuses what one store would keep and the other refuse: JSON
// that does not parse, and bytes that are not UTF-8 (PostgreSQL refuses
// them, encoding/json would let them through). A NUL can only appear
// escaped in valid JSON, which PostgreSQL's json type keeps as it is.
// canon.Valid is json.Valid's verdict at a quarter of its cost: every event
// payload and checkpoint state passes here.
func checkJSON(v *debate.Violations, field string, data []byte) {
	switch {
	case !utf8.Valid(data):
		v.Add(field, "is not valid UTF-8")
	case !canon.Valid(data):
		v.Add(field, "is not valid JSON")
	}
}

// checkTime refuses a time outside the years 1 to 9999: SQLite keeps
// times as fixed-width RFC 3339 text, which has four digits for the year.
func checkTime(v *debate.Violations, field string, t time.Time) {
	if y := t.UTC().Year(); !t.IsZero() && (y < 1 || y > 9999) {
		v.Add(field, "is in the year %d, outside 1 to 9999", y)
	}
}

// checkInt32 refuses a count that PostgreSQL's integer columns cannot hold.
func checkInt32(v *debate.Violations, field string, n int) {
	if n < 0 || n > math.MaxInt32 {
		v.Add(field, "is %d, must be 0 to %d", n, math.MaxInt32)
	}
}

// EncodeDebateCursor returns the cursor that resumes a debate list after d:
// its creation time (as TimeText) and id.
func EncodeDebateCursor(d debate.Debate) string { return EncodeCursor(TimeText(d.CreatedAt), d.ID) }

// DecodeDebateCursor reverses EncodeDebateCursor; ok is false for the
// empty cursor (the first page). Returns a *debate.ValidationError on field
// "page_token" if cursor is not one EncodeDebateCursor made.
func DecodeDebateCursor(cursor string) (createdAt time.Time, id string, ok bool, err error) {
	keys, err := DecodeCursor(cursor, 2)
	if err != nil || keys == nil {
		return time.Time{}, "", false, err
	}
	createdAt, err = time.Parse(timeLayout, keys[0])
	if err != nil || keys[1] == "" {
		return time.Time{}, "", false, &debate.ValidationError{Violations: []debate.FieldViolation{{
			Field: "page_token", Description: "is not a page token this list returned",
		}}}
	}
	return createdAt.UTC(), keys[1], true, nil
}

// ClaimIDsText is the SQLite spelling of a gate's claim ids: a JSON array,
// [] for none.
func ClaimIDsText(ids []string) string {
	if len(ids) == 0 {
		return "[]"
	}
	data, _ := json.Marshal(ids) // a []string always marshals
	return string(data)
}

// ClaimIDsOfText reverses ClaimIDsText; no ids come back nil.
func ClaimIDsOfText(s string) ([]string, error) {
	var ids []string
	if err := json.Unmarshal([]byte(s), &ids); err != nil {
		return nil, fmt.Errorf("stored claim ids %q: %w", s, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return ids, nil
}

// ClaimIDs returns the PostgreSQL spelling of a gate's claim ids, a text
// array, never nil.
func ClaimIDs(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// ClaimIDsOf reverses ClaimIDs; no ids come back nil.
func ClaimIDsOf(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	return ids
}

// NotifyPayload is the payload of the notification a commit that wrote
// events sends: "<tenant_id>/<debate_id>", with '%' and '/' inside either
// id escaped as %25 and %2F so that the one '/' left separates them (ids
// may contain '/').
func NotifyPayload(tenantID, debateID string) string {
	return escapeID(tenantID) + "/" + escapeID(debateID)
}

// ParseNotifyPayload reverses NotifyPayload; ok is false for a payload it
// did not make.
func ParseNotifyPayload(payload string) (tenantID, debateID string, ok bool) {
	t, d, found := strings.Cut(payload, "/")
	if !found || strings.Contains(d, "/") {
		return "", "", false
	}
	t, okT := unescapeID(t)
	d, okD := unescapeID(d)
	if !okT || !okD || t == "" || d == "" {
		return "", "", false
	}
	return t, d, true
}

var idEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

func escapeID(id string) string {
	if !strings.ContainsAny(id, "%/") {
		return id
	}
	return idEscaper.Replace(id)
}

func unescapeID(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "%25"):
			b.WriteByte('%')
		case strings.HasPrefix(s[i:], "%2F"):
			b.WriteByte('/')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

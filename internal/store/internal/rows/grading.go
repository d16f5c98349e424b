package rows

import (
	"fmt"
	"reflect"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tlog"
)

// Gradings, defect records and deal events.
//
// Unlike the registry's records, a grading (debate.DealGrading) and a defect
// record (debate.Defect) are stored as the JSON of the whole domain struct,
// under its Go field names, not through a DTO of this package: the grader
// still adds fields to them, and a field added to the domain is then stored
// and read back without a change here. The price is that renaming or
// retyping a field of those structs changes the stored format, which then
// needs a migration of the stored JSON. TestGradingRoundTripEveryField fills
// every field, so a field that does not survive JSON fails it.
//
// What a round trip keeps and what it normalises:
//   - every time comes back in UTC, its monotonic reading dropped; times
//     inside the JSON keep their nanoseconds, times in columns (graded_at,
//     an event's CreatedAt) are truncated to the microsecond (see Time);
//   - nil and empty slices and maps stay distinct (null and [] or {});
//   - an event's Payload (map[string]any) comes back as encoding/json
//     decodes into any: numbers as float64 (integers above 2^53 lose
//     precision), objects as map[string]any, arrays as []any;
//   - NaN and ±Inf cannot be stored (JSON has no spelling for them), nor can
//     a NUL character (PostgreSQL refuses it): both are a
//     *debate.ValidationError; PostgreSQL's jsonb stores -0 as 0.

// DefaultEventLimit is the page size of an event list asked with a limit of
// 0 or less; MaxLimit caps it.
const DefaultEventLimit = 100

// EventLimit returns the number of events a page asked with limit l holds.
func EventLimit(l int) int {
	switch {
	case l <= 0:
		return DefaultEventLimit
	case l > MaxLimit:
		return MaxLimit
	default:
		return l
	}
}

// DefectRows are the defects rows a grading upserts, column by column. The
// records' CreatedAt and UpdatedAt are authoritative; the created_at and
// updated_at columns repeat them, to the microsecond, for queries.
type DefectRows struct {
	IDs, ClaimIDs, Statuses, Records []string
	CreatedAts, UpdatedAts           []time.Time
}

// EventRows are the deal_events rows a grading appends, column by column.
type EventRows struct {
	Seqs                    []int64
	Types, Actors, Payloads []string
	CreatedAts              []time.Time // Time(...)
	// The chain, set by SealEvents: "" (stored as NULL) for every event
	// when the store has no sealer.
	PrevHashes, Hashes, KeyIDs, Signatures []string
}

// GradingWrite is everything a grading writes, ready to store, and what the
// store returns once it is written.
type GradingWrite struct {
	GradedAt    time.Time // Time(at)
	GradingJSON string
	Defects     DefectRows
	Events      EventRows

	// Grading is the grading as a read returns it: decoded from
	// GradingJSON.
	Grading *debate.DealGrading
	// Appended are the events as a read returns them: Seq, DealID and
	// CreatedAt set, Payload decoded from its JSON.
	Appended []debate.DealEvent
}

// EncodeGrading checks what a GradeFunc returned for deal dealID and turns
// it into rows. stored are the deal's defect records as the GradeFunc
// received them; lastSeq is the deal's last event seq (0 for none).
//
// It sets next.DealID to dealID when empty. Every upserted record gets
// UpdatedAt at, and, when its CreatedAt is zero, the CreatedAt of the stored
// record with its id, or at for a new one. Events get seq lastSeq+1,
// lastSeq+2, ... in order, DealID dealID, and CreatedAt at when zero. It
// changes nothing the caller holds.
//
// Returns a *debate.ValidationError if next is nil or names another deal,
// if a record's id is not a valid id or two records share an id, if an
// event has no type, or if a value cannot be stored (a NUL character, NaN
// or ±Inf, a payload JSON cannot encode).
func EncodeGrading(dealID string, at time.Time, next *debate.DealGrading, upsert, stored []debate.Defect, events []debate.DealEvent, lastSeq int64) (*GradingWrite, error) {
	var v debate.Violations
	if next == nil {
		v.Add("grading", "is required")
		return nil, v.Err()
	}
	if next.DealID != "" && next.DealID != dealID {
		v.Add("grading.deal_id", "is %q, not the graded deal %q", next.DealID, dealID)
		return nil, v.Err()
	}
	w := &GradingWrite{GradedAt: Time(at)}
	g := *next
	g.DealID = dealID
	var err error
	if w.GradingJSON, err = marshal("grading", -1, g); err != nil {
		return nil, err
	}
	if w.Grading, err = DecodeGrading([]byte(w.GradingJSON)); err != nil {
		return nil, err
	}

	createdAt := make(map[string]time.Time, len(stored))
	for _, d := range stored {
		createdAt[d.ID] = d.CreatedAt
	}
	seen := make(map[string]int, len(upsert))
	for i, d := range upsert {
		field := fmt.Sprintf("upsert[%d]", i)
		checkID(&v, field+".id", d.ID)
		if j, dup := seen[d.ID]; dup {
			v.Add(field+".id", "%q is also the id of upsert[%d]", d.ID, j)
		}
		seen[d.ID] = i
		if d.CreatedAt.IsZero() {
			d.CreatedAt = createdAt[d.ID]
			if d.CreatedAt.IsZero() {
				d.CreatedAt = at
			}
		}
		d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), at.UTC()
		rec, err := marshal("upsert", i, d)
		if err != nil {
			return nil, err
		}
		r := &w.Defects
		r.IDs = append(r.IDs, d.ID)
		r.ClaimIDs = append(r.ClaimIDs, d.ClaimID)
		r.Statuses = append(r.Statuses, string(d.Status))
		r.Records = append(r.Records, rec)
		r.CreatedAts = append(r.CreatedAts, Time(d.CreatedAt))
		r.UpdatedAts = append(r.UpdatedAts, Time(d.UpdatedAt))
	}

	for i, e := range events {
		field := fmt.Sprintf("events[%d]", i)
		if e.Type == "" {
			v.Add(field+".type", "is required")
		}
		checkText(&v, field+".type", e.Type, debate.MaxShortTextLen)
		checkText(&v, field+".actor", e.Actor, debate.MaxShortTextLen)
		payload, err := marshal(field+".payload", -1, e.Payload)
		if err != nil {
			return nil, err
		}
		if e.CreatedAt.IsZero() {
			e.CreatedAt = at
		}
		seq := lastSeq + int64(i) + 1
		r := &w.Events
		r.Seqs = append(r.Seqs, seq)
		r.Types = append(r.Types, e.Type)
		r.Actors = append(r.Actors, e.Actor)
		r.Payloads = append(r.Payloads, payload)
		r.CreatedAts = append(r.CreatedAts, Time(e.CreatedAt))
		r.PrevHashes = append(r.PrevHashes, "")
		r.Hashes = append(r.Hashes, "")
		r.KeyIDs = append(r.KeyIDs, "")
		r.Signatures = append(r.Signatures, "")
		stored, err := DecodeEvent(dealID, seq, e.Type, e.Actor, []byte(payload), e.CreatedAt)
		if err != nil {
			return nil, err
		}
		w.Appended = append(w.Appended, stored)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return w, nil
}

// SealEvents chains and signs the events of w with sealer, after the
// deal's last chained event of hash prevHash ("" for none): it is the one
// place where both stores turn a grading's events into chained rows, inside
// the transaction that appends them. The events are sealed as a read will
// return them (w.Appended), so that what is read back re-hashes. A nil
// sealer leaves the events unchained (legacy rows); every deployment's
// store has one (cmd/debated). It returns the sealer's error.
func SealEvents(w *GradingWrite, sealer debate.DealSealer, tenantID, prevHash string) error {
	if sealer == nil || len(w.Appended) == 0 {
		return nil
	}
	sealed, err := sealer.SealDeal(tenantID, prevHash, w.Appended)
	if err != nil {
		return err
	}
	for i, e := range sealed {
		r := &w.Events
		r.PrevHashes[i], r.Hashes[i], r.KeyIDs[i], r.Signatures[i] = e.PrevHash, e.Hash, e.KeyID, e.Signature
	}
	w.Appended = sealed
	return nil
}

// DecodeGrading returns the grading stored as data, every time in UTC.
func DecodeGrading(data []byte) (*debate.DealGrading, error) {
	g := &debate.DealGrading{}
	if err := unmarshal("grading", data, g); err != nil {
		return nil, err
	}
	timesToUTC(reflect.ValueOf(g).Elem())
	return g, nil
}

// DecodeDefect returns the defect record stored as data, every time in
// UTC.
func DecodeDefect(data []byte) (debate.Defect, error) {
	var d debate.Defect
	if err := unmarshal("defect", data, &d); err != nil {
		return debate.Defect{}, err
	}
	timesToUTC(reflect.ValueOf(&d).Elem())
	return d, nil
}

// DecodeEvent assembles a deal event from its deal_events row: createdAt in
// UTC to the microsecond, the payload decoded from its JSON.
func DecodeEvent(dealID string, seq int64, eventType, actor string, payload []byte, createdAt time.Time) (debate.DealEvent, error) {
	e := debate.DealEvent{Seq: seq, DealID: dealID, Type: eventType, Actor: actor, CreatedAt: Time(createdAt)}
	if err := unmarshal("deal event payload", payload, &e.Payload); err != nil {
		return debate.DealEvent{}, err
	}
	return e, nil
}

var timeType = reflect.TypeFor[time.Time]()

// timesToUTC sets every time.Time reachable from v through exported fields,
// pointers, slices, arrays and maps to UTC, so that a time stored with an
// offset comes back as UTC whichever field of a growing struct holds it.
// v must be addressable. Values inside interfaces are left alone: JSON
// decodes no time into them.
func timesToUTC(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(v.Interface().(time.Time).UTC()))
			return
		}
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				timesToUTC(f)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			timesToUTC(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			timesToUTC(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() || !holdsTime(v.Type().Elem(), map[reflect.Type]bool{}) {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			elem := reflect.New(v.Type().Elem()).Elem()
			elem.Set(iter.Value())
			timesToUTC(elem)
			v.SetMapIndex(iter.Key(), elem)
		}
	}
}

// holdsTime reports whether a value of type t can hold a time.Time that
// timesToUTC would reach.
func holdsTime(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == timeType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holdsTime(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsTime(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// DealLeaf returns the transparency-log leaf of the deal log's new head
// after w: its last chained event. ok is false when w appends no chained
// event (nothing new to log, or a store without a sealer).
func DealLeaf(dealID string, w *GradingWrite) (leaf tlog.Leaf, ok bool) {
	e := w.Events
	n := len(e.Seqs)
	if n == 0 || e.Hashes[n-1] == "" {
		return tlog.Leaf{}, false
	}
	return tlog.Leaf{Kind: tlog.KindDeal, Subject: dealID, Seq: e.Seqs[n-1], Hash: e.Hashes[n-1]}, true
}

package rows

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// fill sets every exported field reachable from v to a non-zero value,
// slices and maps to two elements, times to distinct instants in a zone
// other than UTC with nanoseconds. n makes the values distinct.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == timeType {
			zone := time.FixedZone("X", (*n%5+1)*3600)
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 123456789+*n, zone)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), n)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(t, k, n)
			fill(t, e, n)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.125)
	default:
		t.Fatalf("rows: a %s field (%s) cannot be filled: does it survive JSON? extend fill and the store", v.Kind(), v.Type())
	}
}

// utc returns a copy of v's value with every time in UTC, as a store
// returns it.
func utc[T any](x T) T {
	timesToUTC(reflect.ValueOf(&x).Elem())
	return x
}

// TestGradingRoundTripEveryField: every field of a grading and of a defect
// record, including any added after this test was written, survives the
// stored JSON, times in UTC.
func TestGradingRoundTripEveryField(t *testing.T) {
	t.Parallel()
	var g debate.DealGrading
	n := 0
	fill(t, reflect.ValueOf(&g).Elem(), &n)
	g.DealID = "deal-1"
	at := time.Date(2026, 2, 3, 4, 5, 6, 7, time.FixedZone("Y", -7200))
	var d debate.Defect
	fill(t, reflect.ValueOf(&d).Elem(), &n)

	w, err := EncodeGrading("deal-1", at, &g, []debate.Defect{d}, nil, nil, 0)
	require.NoError(t, err)
	require.Equal(t, utc(g), *w.Grading)
	require.Equal(t, time.UTC, w.Grading.Claims[1].Defects[0].CreatedAt.Location())
	again, err := DecodeGrading([]byte(w.GradingJSON))
	require.NoError(t, err)
	require.Equal(t, w.Grading, again)

	got, err := DecodeDefect([]byte(w.Defects.Records[0]))
	require.NoError(t, err)
	want := utc(d)
	want.UpdatedAt = at.UTC()
	require.Equal(t, want, got, "the record keeps its CreatedAt; UpdatedAt is the grading time")
	require.Equal(t, []string{d.ID}, w.Defects.IDs)
	require.Equal(t, []string{d.ClaimID}, w.Defects.ClaimIDs)
	require.Equal(t, []string{string(d.Status)}, w.Defects.Statuses)
	require.Equal(t, []time.Time{Time(d.CreatedAt)}, w.Defects.CreatedAts)
	require.Equal(t, []time.Time{Time(at)}, w.Defects.UpdatedAts)
}

// TestGradingKeepsNilAndEmpty: nil and empty lists and maps stay distinct.
func TestGradingKeepsNilAndEmpty(t *testing.T) {
	t.Parallel()
	g := &debate.DealGrading{
		DealID:           "d",
		Claims:           []debate.ClaimGrade{{ClaimID: "c", Defects: []debate.Defect{}, Steps: nil}},
		Defects:          nil,
		BlockedClaimKeys: []string{},
		Calcs:            []debate.CalcResult{{CalcID: "x", Output: map[string]float64{}}, {CalcID: "y"}},
	}
	w, err := EncodeGrading("d", time.Unix(0, 0), g, nil, nil, nil, 0)
	require.NoError(t, err)
	require.Equal(t, g, w.Grading)
	require.NotNil(t, w.Grading.Claims[0].Defects)
	require.Nil(t, w.Grading.Claims[0].Steps)
	require.Nil(t, w.Grading.Defects)
	require.NotNil(t, w.Grading.BlockedClaimKeys)
	require.NotNil(t, w.Grading.Calcs[0].Output)
	require.Nil(t, w.Grading.Calcs[1].Output)
}

func TestEncodeGradingStampsAndNumbers(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 10, 0, 0, 999999999, time.FixedZone("Z1", 3600))
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	given := time.Date(2026, 2, 1, 0, 0, 0, 5000, time.UTC)
	stored := []debate.Defect{{ID: "a", CreatedAt: old, UpdatedAt: old}}
	upsert := []debate.Defect{
		{ID: "a", Status: debate.DefectCured},     // existing, CreatedAt zero: keeps the stored one
		{ID: "b", Status: debate.DefectOpen},      // new, CreatedAt zero: at
		{ID: "c", CreatedAt: given, ClaimID: "x"}, // given: kept
	}
	events := []debate.DealEvent{
		{Type: debate.EventDefectCured, Actor: debate.ActorGrader, DealID: "other", Seq: 99,
			Payload: map[string]any{"n": 3, "list": []string{"a"}, "nested": map[string]int{"k": 1}}},
		{Type: debate.EventDefectCreated, CreatedAt: given},
		{Type: debate.EventDefectFlagged, Payload: map[string]any{}},
	}
	w, err := EncodeGrading("deal", at, &debate.DealGrading{}, upsert, stored, events, 41)
	require.NoError(t, err)
	require.Equal(t, "deal", w.Grading.DealID)
	require.Equal(t, Time(at), w.GradedAt)
	require.Equal(t, []time.Time{old, Time(at), given}, w.Defects.CreatedAts)
	require.True(t, upsert[0].CreatedAt.IsZero(), "the caller's records are not changed")

	require.Equal(t, []int64{42, 43, 44}, w.Events.Seqs)
	require.Equal(t, []debate.DealEvent{
		{Seq: 42, DealID: "deal", Type: debate.EventDefectCured, Actor: debate.ActorGrader, CreatedAt: Time(at),
			Payload: map[string]any{"n": float64(3), "list": []any{"a"}, "nested": map[string]any{"k": float64(1)}}},
		{Seq: 43, DealID: "deal", Type: debate.EventDefectCreated, CreatedAt: given},
		{Seq: 44, DealID: "deal", Type: debate.EventDefectFlagged, CreatedAt: Time(at), Payload: map[string]any{}},
	}, w.Appended)
	require.Equal(t, "null", w.Events.Payloads[1])
}

func TestEncodeGradingRejects(t *testing.T) {
	t.Parallel()
	ok := &debate.DealGrading{}
	for name, c := range map[string]struct {
		next   *debate.DealGrading
		upsert []debate.Defect
		events []debate.DealEvent
		field  string
	}{
		"nil grading":   {next: nil, field: "grading"},
		"other deal":    {next: &debate.DealGrading{DealID: "other"}, field: "grading.deal_id"},
		"NUL":           {next: &debate.DealGrading{Claims: []debate.ClaimGrade{{Steps: []debate.Step{{Text: "a\x00"}}}}}, field: "grading"},
		"NaN":           {next: &debate.DealGrading{SanadCoverage: math.NaN()}, field: "grading"},
		"empty id":      {next: ok, upsert: []debate.Defect{{ID: ""}}, field: "upsert[0].id"},
		"duplicate id":  {next: ok, upsert: []debate.Defect{{ID: "a"}, {ID: "b"}, {ID: "a"}}, field: "upsert[2].id"},
		"record NUL":    {next: ok, upsert: []debate.Defect{{ID: "a", Reason: "\x00"}}, field: "upsert[0]"},
		"no type":       {next: ok, events: []debate.DealEvent{{Actor: "x"}}, field: "events[0].type"},
		"payload NUL":   {next: ok, events: []debate.DealEvent{{Type: "t"}, {Type: "t", Payload: map[string]any{"a": "\x00"}}}, field: "events[1].payload"},
		"payload type":  {next: ok, events: []debate.DealEvent{{Type: "t", Payload: map[string]any{"f": func() {}}}}, field: "events[0].payload"},
		"payload +Inf":  {next: ok, events: []debate.DealEvent{{Type: "t", Payload: map[string]any{"f": math.Inf(1)}}}, field: "events[0].payload"},
		"actor too big": {next: ok, events: []debate.DealEvent{{Type: "t", Actor: string(make([]byte, 600))}}, field: "events[0].actor"},
	} {
		_, err := EncodeGrading("deal", time.Now(), c.next, c.upsert, nil, c.events, 0)
		require.ErrorIs(t, err, debate.ErrInvalid, name)
		var ve *debate.ValidationError
		require.ErrorAs(t, err, &ve, name)
		require.Equal(t, c.field, ve.Violations[0].Field, name)
	}
}

func TestEventLimit(t *testing.T) {
	t.Parallel()
	for in, want := range map[int]int{-1: 100, 0: 100, 1: 1, 100: 100, 1000: 1000, 1001: 1000} {
		require.Equal(t, want, EventLimit(in), "EventLimit(%d)", in)
	}
}

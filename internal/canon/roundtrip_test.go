package canon

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

type rtInner struct {
	N int             `json:"n"`
	F float64         `json:"f"`
	R json.RawMessage `json:"r,omitempty"`
	S []string        `json:"s,omitempty"`
}

type rtOuter struct {
	Text  string          `json:"text"`
	Raw   json.RawMessage `json:"raw"`
	In    *rtInner        `json:"in,omitempty"`
	List  []rtInner       `json:"list"`
	Empty []string        `json:"empty"`
}

// TestRoundTrips: when RoundTrips says yes, decoding Marshal's text gives
// the value back; it says no to what the round trip changes.
func TestRoundTrips(t *testing.T) {
	ok := rtOuter{Text: "é <&> \u2028", Raw: json.RawMessage(`{"a":[1,2.5]}`),
		In: &rtInner{N: 1 << 53, F: 1e21}, List: []rtInner{{R: json.RawMessage(`"x"`), S: []string{"a"}}}}
	for name, c := range map[string]struct {
		v    rtOuter
		want bool
	}{
		"ok":            {ok, true},
		"no pointer":    {rtOuter{Raw: json.RawMessage(`null`)}, true},
		"nil raw":       {rtOuter{}, false},
		"raw not canon": {rtOuter{Raw: json.RawMessage(`{"b":1,"a":2}`)}, false},
		"invalid UTF-8": {rtOuter{Text: "\xff", Raw: json.RawMessage(`1`)}, false},
		"empty slice":   {rtOuter{Raw: json.RawMessage(`1`), Empty: []string{}}, false},
		"minus zero":    {rtOuter{Raw: json.RawMessage(`1`), In: &rtInner{F: math.Copysign(0, -1)}}, false},
		"huge int":      {rtOuter{Raw: json.RawMessage(`1`), In: &rtInner{N: 1<<53 + 1}}, false},
	} {
		if got := RoundTrips(c.v); got != c.want {
			t.Errorf("%s: RoundTrips = %v, want %v", name, got, c.want)
		}
		if !c.want {
			continue
		}
		b, err := Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		var back rtOuter
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c.v) {
			t.Errorf("%s: decoded %+v, %v; want %+v", name, back, err, c.v)
		}
	}
	if RoundTrips(map[string]int{}) || RoundTrips(nil) || RoundTrips(struct{ a int }{}) ||
		RoundTrips(struct {
			N int `json:",string"`
		}{}) {
		t.Error("RoundTrips says yes to a map, nil, an unexported field or a string-encoded one")
	}
}

type doState struct {
	Max    int                       `json:"max"`
	Round  int                       `json:"round,omitempty"`
	Conf   map[string]float64        `json:"conf,omitempty"`
	Usage  map[string]map[string]int `json:"usage,omitempty"`
	Ptrs   map[string]*rtInner       `json:"ptrs,omitempty"`
	List   []string                  `json:"list,omitempty"`
	Refs   []string                  `json:"refs"`
	At     time.Time                 `json:"at"`
	F      float64                   `json:"f,omitempty"`
	In     *rtInner                  `json:"in,omitempty"`
	Always map[string]int            `json:"always"`
}

// newDoState is the base decoding starts from: two maps never nil.
func newDoState() *doState {
	return &doState{Conf: map[string]float64{}, Usage: map[string]map[string]int{}}
}

// TestDecodesOnto: when DecodesOnto says yes, decoding Marshal's text onto
// the base gives the value back (times, maps and -0 compared exactly); it
// says no to what the decoding changes (DeepEqual compares times exactly).
func TestDecodesOnto(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 26, 20, 0, 0, 123456789, time.UTC)
	full := func() *doState {
		s := newDoState()
		s.Max, s.Round, s.Conf["a"], s.Usage["r"] = 5, 2, 0.75, map[string]int{"t": 1}
		s.Usage["empty"], s.Usage["nil"] = map[string]int{}, nil
		s.Ptrs, s.List, s.Refs, s.At, s.F = map[string]*rtInner{"p": {N: 1}, "nil": nil}, []string{"x"}, []string{}, at, 1e21
		s.In, s.Always = &rtInner{S: []string{"é"}}, map[string]int{}
		return s
	}
	for name, c := range map[string]struct {
		edit func(s *doState)
		want bool
	}{
		"full":                   {func(*doState) {}, true},
		"base":                   {func(s *doState) { *s = *newDoState() }, true},
		"nil where base has {}":  {func(s *doState) { s.Conf = nil }, false},
		"nil map written":        {func(s *doState) { s.Always = nil }, true},
		"nil slice written":      {func(s *doState) { s.Refs = nil }, true},
		"empty slice omitted":    {func(s *doState) { s.List = []string{} }, false},
		"empty map omitted":      {func(s *doState) { s.Ptrs = map[string]*rtInner{} }, false},
		"local time":             {func(s *doState) { s.At = at.In(time.FixedZone("x", 3600)) }, false},
		"the clock, local":       {func(s *doState) { s.At = time.Now() }, false},
		"time now, rounded":      {func(s *doState) { s.At = time.Now().UTC().Round(0) }, true},
		"omitted minus zero":     {func(s *doState) { s.F = math.Copysign(0, -1) }, false},
		"invalid UTF-8 key":      {func(s *doState) { s.Conf["\xff"] = 1 }, false},
		"huge int in a map":      {func(s *doState) { s.Usage["r"]["t"] = 1<<53 + 1 }, false},
		"nested empty not nil":   {func(s *doState) { s.In.S = []string{} }, false},
		"minus zero in a map":    {func(s *doState) { s.Conf["z"] = math.Copysign(0, -1) }, false},
		"nil pointer in the map": {func(s *doState) { s.Ptrs["q"] = nil }, true},
	} {
		v := full()
		c.edit(v)
		if got := DecodesOnto(v, newDoState()); got != c.want {
			t.Errorf("%s: DecodesOnto = %v, want %v", name, got, c.want)
		}
		b, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		back := newDoState()
		if err := json.Unmarshal(b, back); err != nil {
			t.Fatal(err)
		}
		same := reflect.DeepEqual(back, v) && math.Float64bits(back.F) == math.Float64bits(v.F)
		if c.want && !same {
			t.Errorf("%s: decoded %+v; want %+v", name, back, v)
		}
	}
	base := newDoState()
	base.Round = 3 // omitted at 0, where decoding leaves base's 3
	if DecodesOnto(&doState{}, base) || DecodesOnto(doState{}, newDoState()) || DecodesOnto(&doState{}, &rtOuter{}) {
		t.Error("DecodesOnto says yes to a field base leaves, a struct that is no pointer or another type")
	}
	withMap := newDoState()
	withMap.Conf["kept"] = 1 // decoding merges into base's map
	if v := full(); DecodesOnto(v, withMap) {
		t.Error("DecodesOnto says yes onto a base map that decoding keeps members of")
	}
}

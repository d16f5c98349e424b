package canon

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
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

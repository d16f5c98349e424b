package canon

import (
	"encoding/json"
	"math"
	"testing"
)

func TestMarshalIsTransformOfJSONMarshal(t *testing.T) {
	type inner struct {
		B string          `json:"b"`
		A float64         `json:"a"`
		R json.RawMessage `json:"r,omitempty"`
	}
	for _, v := range []any{
		map[string]any{"z": 1, "a": []any{"<&>", 1e21, 0.1}, "m": map[string]int{"y": 2, "x": 1}},
		inner{B: "é\u2028\xff", A: 1.5, R: json.RawMessage(`{"d": 1, "c": [ true ]}`)},
		[]int{3, 1},
		"text",
	} {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Transform(raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Marshal(v)
		if err != nil || string(got) != string(want) {
			t.Fatalf("Marshal(%v) = %s, %v; want %s", v, got, err, want)
		}
	}
	if _, err := Marshal(math.NaN()); err == nil {
		t.Fatal("Marshal(NaN): no error")
	}
	if _, err := Marshal(json.RawMessage(`{"a":1,"a":2}`)); err == nil {
		t.Fatal("Marshal with duplicate keys: no error")
	}
}

// TestText: Encode is Marshal, and a Text encodes as its text.
func TestText(t *testing.T) {
	t.Parallel()
	v := map[string]any{"b": 1e21, "a": "<&>"}
	want, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Encode(v)
	if err != nil || string(got.Bytes()) != string(want) {
		t.Fatalf("Encode = %s, %v; want %s", got.Bytes(), err, want)
	}
	outer, err := Marshal(map[string]any{"t": got, "zero": Text{}})
	if err != nil || string(outer) != `{"t":`+string(want)+`,"zero":null}` {
		t.Fatalf("a Text inside a value encodes as %s, %v", outer, err)
	}
}

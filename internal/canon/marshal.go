package canon

import (
	"bytes"
	"encoding/json"
	"sync"
)

// encoders keeps the buffers Marshal encodes into.
var encoders = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Marshal returns the RFC 8785 form of v's encoding/json encoding: what
// Transform returns for json.Marshal(v), without allocating the
// intermediate text, which is dropped at once (event payloads and tool
// results are encoded this way).
func Marshal(v any) ([]byte, error) {
	b := encoders.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= maxKeptScratch {
			b.Reset()
			encoders.Put(b)
		}
	}()
	// Encode writes json.Marshal's text and a newline, which Transform
	// skips as whitespace.
	if err := json.NewEncoder(b).Encode(v); err != nil {
		return nil, err
	}
	return Transform(b.Bytes())
}

// Text is a JSON text in RFC 8785 form. Only this package makes one
// (Encode), so a holder may store and hash its bytes as they are instead of
// canonicalising them again. It encodes as itself.
type Text struct{ b []byte }

// Encode is Marshal as a Text.
func Encode(v any) (Text, error) {
	b, err := Marshal(v)
	return Text{b}, err
}

// Bytes returns the text, which must not be changed.
func (t Text) Bytes() []byte { return t.b }

// MarshalJSON returns the text (null for the zero Text).
func (t Text) MarshalJSON() ([]byte, error) {
	if t.b == nil {
		return []byte("null"), nil
	}
	return t.b, nil
}

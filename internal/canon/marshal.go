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

package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Markers of the DATA block. EncodeData escapes '<', '>' and '`' inside the
// JSON, so no text of the deal can spell them and close the block.
const (
	DataOpen  = "<<<DATA>>>"
	DataClose = "<<<END DATA>>>"
)

// EncodeData marshals v as JSON in which '<', '>', '&' and '`' appear only
// as \u escapes (they can only occur inside strings), so the document
// cannot spell a DATA marker or a code fence.
func EncodeData(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // escapes <, > and & (SetEscapeHTML defaults to true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(bytes.TrimSpace(buf.Bytes()), []byte("`"), []byte(`\u0060`)), nil
}

// WriteDataBlock writes v (encoded by EncodeData) as a fenced JSON document
// between the DATA markers. The caller labels the block as untrusted data.
func WriteDataBlock(sb *strings.Builder, v any) error {
	doc, err := EncodeData(v)
	if err != nil {
		return fmt.Errorf("llm: encode data: %w", err)
	}
	sb.WriteString(DataOpen + "\n```json\n")
	sb.Write(doc)
	sb.WriteString("\n```\n" + DataClose + "\n")
	return nil
}

// ViolationList renders violations as JSON lines (their details quote
// model output, so they are encoded like data), at most 32 of them.
func ViolationList(vs []debate.Violation) string {
	var sb strings.Builder
	for i, v := range vs {
		if i == 32 {
			fmt.Fprintf(&sb, "(and %d more)\n", len(vs)-i)
			break
		}
		b, _ := EncodeData(v) // compact: one line
		sb.Write(b)
		sb.WriteByte('\n')
	}
	return sb.String()
}

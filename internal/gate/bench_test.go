package gate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// BenchmarkValidate gates a typical output of the corpus (several claims,
// a record with tests and uncertainties).
func BenchmarkValidate(b *testing.B) {
	fx := setup(b)
	corpus := validCorpus(64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if res := Validate(corpus[i%len(corpus)], fx.facts, debate.IDISRoles); !res.Valid {
			b.Fatal(res.Violations)
		}
	}
}

// BenchmarkValidateLargeContent gates an output whose content is at the
// 64 KiB limit, the worst case of the No-Free-Facts scan.
func BenchmarkValidateLargeContent(b *testing.B) {
	fx := setup(b)
	o := baseOutput()
	sentence := "The downside case hinges on ARR of $4.5M for FY2025 (C1) and Acme's 120 customers. "
	o.Content = strings.Repeat(sentence, MaxContentLen/len(sentence))
	require.True(b, Validate(o, fx.facts, debate.IDISRoles).Valid)
	b.SetBytes(int64(len(o.Content)))
	b.ReportAllocs()
	for b.Loop() {
		Validate(o, fx.facts, debate.IDISRoles)
	}
}

// BenchmarkParseAndValidate is the gate as a model-backed agent meets it:
// parse the wire form, then validate.
func BenchmarkParseAndValidate(b *testing.B) {
	fx := setup(b)
	corpus := validCorpus(64)
	docs := make([][]byte, len(corpus))
	for i, o := range corpus {
		data, err := json.Marshal(o)
		require.NoError(b, err)
		docs[i] = data
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		out, err := ParseOutput(docs[i%len(docs)], debate.IDISRoles)
		if err != nil {
			b.Fatal(err)
		}
		if res := Validate(out, fx.facts, debate.IDISRoles); !res.Valid {
			b.Fatal(res.Violations)
		}
	}
}

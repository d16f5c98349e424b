package custom

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/store/storetest"
)

// BenchmarkParse measures registering-time work on the red-team example:
// YAML to JSON, strict decoding and validation.
func BenchmarkParse(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocols", "redteam-review.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(raw, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck measures the gates of one answer (schema, No-Free-Facts
// over every text, Muḥāsabah): the per-turn cost the protocol adds to a
// model call.
func BenchmarkCheck(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocols", "redteam-review.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	d, err := Parse(raw, nil)
	if err != nil {
		b.Fatal(err)
	}
	r := d.role("attacker")
	s, err := answerSchema(r)
	if err != nil {
		b.Fatal(err)
	}
	p := &proto{doc: d, schemas: map[string]map[string]any{"attacker": s}}
	bundle := storetest.SampleBundle("deal-x")
	facts := gate.NewFacts(bundle, nil)
	c := bundle.Claims[0]
	answer := []byte(`{"attacks":[{"claim_id":"` + c.ID + `","attack":"the evidence for ` + c.Key + ` is thin"}],"severity":"HIGH",` +
		`"refs":["` + c.ID + `"],"muhasabah_record":{"supported_claim_ids":["` + c.ID + `"],"confidence":0.5,` +
		`"falsifiability_tests":[{"test_description":"check the source","required_evidence":"the source","pass_fail_rule":"fails if it disagrees"}],` +
		`"uncertainties":[{"uncertainty":"stale source","impact":"medium","mitigation":"ask again"}]}}`)
	if vs := p.check(r, answer, facts, true); len(vs) > 0 {
		b.Fatalf("the benchmark's answer fails its gates: %v", vs)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.check(r, answer, facts, true)
	}
}

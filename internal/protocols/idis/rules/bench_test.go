package rules_test

import (
	"context"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/store/storetest"
)

// BenchmarkTurn measures one turn of each role on the sample deal and on a
// 5,000-claim deal, without tools.
func BenchmarkTurn(b *testing.B) {
	for _, tc := range []struct {
		name string
		deal *debate.DealBundle
	}{
		{"sample", storetest.SampleBundle("3f8a2c1e-9b4d-4e6f-8a0c-1d2e3f4a5b6c")},
		{"large_5000", storetest.LargeBundle("7c1e3a5b-2d4f-4a6c-8e0b-9f1a2b3c4d5e", 5000)},
	} {
		g := sanad.Grade(tc.deal)
		for _, role := range debate.IDISRoles {
			r := rules.New()[role]
			b.Run(tc.name+"/"+role, func(b *testing.B) {
				in := input(tc.deal, g, 1, nil, nil)
				for b.Loop() {
					if _, err := r.Turn(context.Background(), in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

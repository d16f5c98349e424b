package sanad

import (
	"testing"
)

// TestGDBS grades the ten GDBS deals (shared/testdata/gdbs beside the
// repository, or $GDBS_DIR) and compares every outcome with expected/. The
// data is read in place, never copied into the repository.
func TestGDBS(t *testing.T) {
	t.Parallel()
	for _, d := range gdbsDeals(t) {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			b := loadDeal(t, d.dir)
			g := Grade(b)
			if diffs := diffOutcome(OutcomeOf(g), loadExpected(t, d.expected)); len(diffs) > 0 {
				t.Errorf("%s differs from expected:\n%v\n\nexplanation:\n%s", d.name, diffs, explain(g))
			}
		})
	}
}

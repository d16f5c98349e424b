package rules_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/testutil/gdbs"
)

// TestGateAcceptsEveryOutput runs internal/gate's fail-closed Validate (the
// gate the engine applies) over five-round debates on the authored deals
// and every GDBS deal: every rules output passes, each against the grading
// it was produced from.
func TestGateAcceptsEveryOutput(t *testing.T) {
	t.Parallel()
	deals := map[string]*debate.DealBundle{}
	for _, tc := range authored(t) {
		deals[tc.name] = tc.deal
	}
	root, ok := gdbs.Find()
	dirs, _ := filepath.Glob(filepath.Join(root, "deals", "*"))
	if !ok || len(dirs) == 0 {
		t.Logf("GDBS data not found; gating the authored deals only")
		dirs = nil
	}
	for _, dir := range dirs {
		b, err := dealfile.Load(dir)
		require.NoError(t, err)
		deals["gdbs/"+filepath.Base(dir)] = b
	}
	total := 0
	for name, b := range deals {
		run := simulate(t, b, 5)
		for i := range run.outputs {
			o := run.outputs[i]
			res := gate.Validate(&o, gate.NewFacts(b, run.gradings[i]), debate.IDISRoles)
			require.True(t, res.Valid, "%s %s round %d: %v", name, o.Role, o.RoundNumber, res.Violations)
			total++
		}
	}
	t.Logf("gate.Validate accepted %d of %d outputs", total, total)
}

// TestStopRulesCanFire replays the debates through the gate's stop rule
// (seed 001 §3) as the protocol does after each round: a clean deal
// reaches CONSENSUS, a deal whose claims are merely weak settles into
// STABLE_DISSENT, a deal with a contradicted CRITICAL claim stops at
// CRITICAL_DEFECT.
func TestStopRulesCanFire(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		deal   *debate.DealBundle
		reason string
		round  int
	}{
		{"clean", cleanDeal(), gate.StopConsensus, 1},
		{"short_runway", shortRunwayDeal(), gate.StopStableDissent, 2},
		{"inconsistency", inconsistentDeal(), gate.StopCriticalDefect, 1},
	}
	for _, tc := range cases {
		run := simulate(t, tc.deal, 5)
		positions := map[string][]gate.PositionBand{}
		reason, round := "", 0
		for r := 1; r <= 5 && reason == ""; r++ {
			var upTo []debate.AgentOutput
			last := map[string]debate.AgentOutput{}
			for _, o := range run.outputs {
				if o.RoundNumber <= r {
					upTo = append(upTo, o)
				}
				if o.RoundNumber == r {
					last[o.Role] = o // the advocate's rebuttal replaces its opening
				}
			}
			var confs []float64
			for _, role := range debate.IDISRoles {
				o := last[role]
				confs = append(confs, o.Muhasabah.Confidence)
				if o.Position != nil {
					positions[role] = append(positions[role], gate.BandOf(*o.Position))
				}
			}
			reason, _ = gate.StopCondition(gate.StopState{Round: r, MaxRounds: 5, Confidences: confs, Positions: positions,
				ReliedOnCritical: gate.ReliedOnCritical(upTo, gate.NewFacts(tc.deal, run.grading))})
			round = r
		}
		require.Equal(t, tc.reason, reason, tc.name)
		require.Equal(t, tc.round, round, tc.name)
	}
}

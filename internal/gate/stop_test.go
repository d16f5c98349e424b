package gate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

func pb(rec string, band float64) PositionBand { return PositionBand{Recommendation: rec, Band: band} }

// Conditions that hold, alone, for the stop rules.
var (
	critical  = func(s *StopState) { s.ReliedOnCritical = []string{claimID(4)} }
	lastRound = func(s *StopState) { s.Round, s.MaxRounds = 5, 5 }
	consensus = func(s *StopState) { s.Confidences = []float64{0.70, 0.75, 0.80} }
	stable    = func(s *StopState) {
		s.Positions = map[string][]PositionBand{
			debate.RoleAdvocate:    {pb("INVEST", 0.8), pb("INVEST", 0.8)},
			debate.RoleRiskOfficer: {pb("INVEST", 0.5), pb("PASS", 0.3), pb("PASS", 0.3)},
		}
	}
	exhausted = func(s *StopState) { s.EvidenceRequested, s.NewEvidenceFound, s.OpenQuestions = true, false, 2 }
)

// neutral is a state in which no stop rule holds.
func neutral() StopState {
	return StopState{Round: 2, MaxRounds: 5, Confidences: []float64{0.3, 0.9}}
}

func TestStopConditionPriority(t *testing.T) {
	t.Parallel()
	conds := []struct {
		reason string
		apply  func(*StopState)
	}{
		{StopCriticalDefect, critical},
		{StopMaxRounds, lastRound},
		{StopConsensus, consensus},
		{StopStableDissent, stable},
		{StopEvidenceExhausted, exhausted},
	}
	require.Equal(t, StopReasons, []string{conds[0].reason, conds[1].reason, conds[2].reason, conds[3].reason, conds[4].reason})

	// Every subset of the five conditions: the highest-priority one wins.
	for mask := 0; mask < 1<<len(conds); mask++ {
		s := neutral()
		want := ""
		for i := len(conds) - 1; i >= 0; i-- {
			if mask&(1<<i) != 0 {
				conds[i].apply(&s)
				want = conds[i].reason
			}
		}
		reason, why := StopCondition(s)
		require.Equal(t, want, reason, "mask %05b", mask)
		if want == "" {
			require.Empty(t, why)
		} else {
			require.NotEmpty(t, why)
		}
	}

	t.Run("all at once", func(t *testing.T) {
		t.Parallel()
		s := neutral()
		for _, c := range conds {
			c.apply(&s)
		}
		reason, why := StopCondition(s)
		require.Equal(t, StopCriticalDefect, reason)
		require.Contains(t, why, claimID(4))
	})
}

func TestStopConditions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(*StopState)
		want   string
	}{
		{"nothing holds", func(*StopState) {}, ""},

		{"relied-on critical claim", critical, StopCriticalDefect},

		{"round reaches the limit", func(s *StopState) { s.Round, s.MaxRounds = 3, 3 }, StopMaxRounds},
		{"round beyond the limit", func(s *StopState) { s.Round, s.MaxRounds = 4, 3 }, StopMaxRounds},
		{"round below the limit", func(s *StopState) { s.Round, s.MaxRounds = 2, 3 }, ""},
		{"no limit means 5", func(s *StopState) { s.Round, s.MaxRounds = 5, 0 }, StopMaxRounds},
		{"limit above 5 is 5", func(s *StopState) { s.Round, s.MaxRounds = 5, 9 }, StopMaxRounds},
		{"round 4 of 5", func(s *StopState) { s.Round, s.MaxRounds = 4, 0 }, ""},

		{"span of exactly 0.10", func(s *StopState) { s.Confidences = []float64{0.7, 0.8} }, StopConsensus},
		{"span of 0.10 with float error", func(s *StopState) { s.Confidences = []float64{0.1 + 0.2, 0.4} }, StopConsensus},
		{"identical confidences", func(s *StopState) { s.Confidences = []float64{0.6, 0.6, 0.6, 0.6} }, StopConsensus},
		{"span of 0.11", func(s *StopState) { s.Confidences = []float64{0.7, 0.81} }, ""},
		{"one agent is no consensus", func(s *StopState) { s.Confidences = []float64{0.7} }, ""},
		{"no agent is no consensus", func(s *StopState) { s.Confidences = nil }, ""},
		{"NaN breaks consensus", func(s *StopState) { s.Confidences = []float64{0.7, math.NaN()} }, ""},
		{"out of range breaks consensus", func(s *StopState) { s.Confidences = []float64{1.05, 1.0} }, ""},

		{"positions unchanged for 2 rounds", stable, StopStableDissent},
		{"one round of history is not enough", func(s *StopState) {
			s.Positions = map[string][]PositionBand{debate.RoleAdvocate: {pb("INVEST", 0.8)}}
		}, ""},
		{"one agent still moving", func(s *StopState) {
			stable(s)
			s.Positions[debate.RoleArbiter] = []PositionBand{pb("PASS", 0.4), pb("PASS", 0.5)}
		}, ""},
		{"recommendation changed", func(s *StopState) {
			s.Positions = map[string][]PositionBand{debate.RoleAdvocate: {pb("INVEST", 0.8), pb("PASS", 0.8)}}
		}, ""},
		{"agent with too short a history", func(s *StopState) {
			stable(s)
			s.Positions[debate.RoleArbiter] = []PositionBand{pb("PASS", 0.4)}
		}, ""},
		{"no positions", func(s *StopState) { s.Positions = map[string][]PositionBand{} }, ""},

		{"evidence exhausted", exhausted, StopEvidenceExhausted},
		{"new evidence found", func(s *StopState) { exhausted(s); s.NewEvidenceFound = true }, ""},
		{"no evidence requested", func(s *StopState) { exhausted(s); s.EvidenceRequested = false }, ""},
		{"no open question", func(s *StopState) { exhausted(s); s.OpenQuestions = 0 }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := neutral()
			tc.mutate(&s)
			reason, _ := StopCondition(s)
			require.Equal(t, tc.want, reason)
		})
	}

	t.Run("why is deterministic", func(t *testing.T) {
		t.Parallel()
		s := neutral()
		stable(&s)
		_, a := StopCondition(s)
		for range 20 {
			_, b := StopCondition(s)
			require.Equal(t, a, b)
		}
		require.Equal(t, "no agent changed position in the last 2 rounds: advocate INVEST at 0.8, risk_officer PASS at 0.3", a)
		s = neutral()
		s.ReliedOnCritical = []string{"b", "a", "b"}
		_, why := StopCondition(s)
		require.Contains(t, why, "2 material claim(s)")
		require.Contains(t, why, ": a, b")
	})
}

func TestBand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ conf, band float64 }{
		{0, 0}, {0.05, 0}, {0.1, 0.1}, {0.3, 0.3}, {0.69, 0.6}, {0.7, 0.7}, {0.71, 0.7}, {0.79, 0.7}, {0.99, 0.9}, {1, 1},
		{-0.5, 0}, {1.5, 1}, {0.1 + 0.2, 0.3},
	} {
		require.Equal(t, tc.band, Band(tc.conf), "conf %v", tc.conf)
	}
	require.Equal(t, -1.0, Band(math.NaN()))
	require.Equal(t, PositionBand{Recommendation: "PASS", Band: 0.4}, BandOf(debate.Position{Recommendation: "PASS", Confidence: 0.45}))
	// Moving inside a band is no change; crossing one is.
	require.Equal(t, Band(0.71), Band(0.78))
	require.NotEqual(t, Band(0.69), Band(0.71))
}

func TestReliedOnCritical(t *testing.T) {
	t.Parallel()
	fx := setup(t)
	out := func(claims, supported, calcs []string, challenged ...string) debate.AgentOutput {
		o := debate.AgentOutput{ClaimRefs: claims, CalcRefs: calcs, Muhasabah: debate.Muhasabah{SupportedClaimIDs: supported}}
		for _, c := range challenged {
			o.Challenges = append(o.Challenges, debate.Challenge{ClaimRefs: []string{c}})
		}
		return o
	}
	c := claimID
	cases := []struct {
		name    string
		outputs []debate.AgentOutput
		want    []string
	}{
		{"no outputs", nil, nil},
		{"strong claims only", []debate.AgentOutput{out([]string{c(1), c(8)}, nil, nil)}, nil},
		{"weak but not material or not D", []debate.AgentOutput{out([]string{c(2), c(3), c(5), c(7)}, nil, nil)}, nil},
		{"material grade D in claim_refs", []debate.AgentOutput{out([]string{c(1), c(4)}, nil, nil)}, []string{c(4)}},
		{"material with open FATAL in supported ids", []debate.AgentOutput{out(nil, []string{c(6)}, nil)}, []string{c(6)}},
		{"through a calc's inputs", []debate.AgentOutput{out(nil, nil, []string{calcID(1)})}, nil},
		{"across outputs, sorted, once", []debate.AgentOutput{out([]string{c(6)}, nil, nil), out([]string{c(4), c(6)}, []string{c(4)}, nil)}, []string{c(4), c(6)}},
		{"a challenged claim is attacked, not relied on", []debate.AgentOutput{out([]string{c(4)}, []string{c(4)}, nil, c(4))}, nil},
		{"attacked by one output, relied on by another", []debate.AgentOutput{out([]string{c(4)}, nil, nil, c(4)), out([]string{c(4)}, nil, nil)}, []string{c(4)}},
		{"unknown ids are ignored", []debate.AgentOutput{out([]string{"nope", otherDealClaim}, nil, []string{"calc-x"})}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, ReliedOnCritical(tc.outputs, fx.facts))
		})
	}

	t.Run("a calc with a critical input", func(t *testing.T) {
		t.Parallel()
		f := setup(t).facts
		f.AddDefect(debate.Defect{ID: "d-fatal-c2", ClaimID: claimID(2), Type: debate.DefectBrokenChain, Severity: debate.SeverityFatal, Status: debate.DefectOpen})
		require.Equal(t, []string{claimID(2)}, ReliedOnCritical([]debate.AgentOutput{out(nil, nil, []string{calcID(1)})}, f))
	})
}

// StopReasons lists the stop reasons, highest priority first.
var StopReasons = []string{StopCriticalDefect, StopMaxRounds, StopConsensus, StopStableDissent, StopEvidenceExhausted}

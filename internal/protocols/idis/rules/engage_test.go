package rules_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/sanad"
	"github.com/stretchr/testify/require"
)

// TestTurnsAnswerEachOther: over three rounds of every authored deal, no
// two turns carry the same text; the advocate's rebuttal answers each
// challenge of its round by id with a concession (and its consequence), a
// rebuttal with uncited evidence, a narrowing or a contest, and revises its
// confidence when a challenge stands; the arbiter's rulings weigh that
// answer; a challenger says in the next round what became of its
// challenges.
func TestTurnsAnswerEachOther(t *testing.T) {
	t.Parallel()
	for _, tc := range authored(t) {
		run := simulate(t, tc.deal, 3)
		seen := map[string]bool{}
		for _, o := range run.outputs {
			require.False(t, seen[o.Content], "%s: %s round %d repeats a turn", tc.name, o.Role, o.RoundNumber)
			seen[o.Content] = true
			if o.Position != nil {
				require.NotEmpty(t, o.Position.Recommendation, tc.name)
			}
		}
		for r := 1; r <= 3; r++ {
			var chs []debate.Challenge
			var opening, rebuttal, arbiter *debate.AgentOutput
			for i := range run.outputs {
				o := &run.outputs[i]
				if o.RoundNumber != r {
					continue
				}
				switch o.Role {
				case debate.RoleAdvocate:
					if opening == nil {
						opening = o
					} else {
						rebuttal = o
					}
				case debate.RoleArbiter:
					arbiter = o
				default:
					chs = append(chs, o.Challenges...)
				}
			}
			require.NotNil(t, rebuttal, tc.name)
			stands := false
			for _, ch := range chs {
				i := strings.Index(rebuttal.Content, "On "+ch.ChallengeID+" by ")
				require.GreaterOrEqual(t, i, 0, "%s: the rebuttal answers %s", tc.name, ch.ChallengeID)
				rest := rebuttal.Content[i:]
				if j := strings.Index(rest[3:], " On "); j > 0 {
					rest = rest[:j+3]
				}
				kind := ""
				for _, k := range []string{"conceded;", "rebutted with", "narrowed,", "contested"} {
					if strings.Contains(rest, k) {
						kind = k
					}
				}
				require.NotEmpty(t, kind, "%s: %q", tc.name, rest)
				if ch.DefectType == string(debate.DefectInconsistency) {
					require.Equal(t, "conceded;", kind, "%s: a contradicted claim is conceded", tc.name)
				}
				stands = stands || kind == "narrowed,"
				var ruling *debate.Ruling
				for k := range arbiter.Rulings {
					if arbiter.Rulings[k].ChallengeID == ch.ChallengeID {
						ruling = &arbiter.Rulings[k]
					}
				}
				require.NotNil(t, ruling, "%s: the arbiter rules on %s", tc.name, ch.ChallengeID)
				require.Contains(t, ruling.Reason, "advocate", "%s: the ruling on %s weighs the advocate's answer", tc.name, ch.ChallengeID)
				require.Contains(t, arbiter.Content, "On "+ch.ChallengeID+" by ", tc.name)
			}
			if stands {
				require.Less(t, rebuttal.Position.Confidence, opening.Position.Confidence, "%s round %d: a narrowed claim lowers the confidence", tc.name, r)
			}
			if r == 1 && len(chs) > 0 {
				// Round 2: each challenger with a round-1 challenge says what
				// became of it.
				for _, o := range run.outputs {
					if o.RoundNumber != 2 || o.Role == debate.RoleAdvocate || o.Role == debate.RoleArbiter {
						continue
					}
					had := false
					for _, ch := range chs {
						had = had || strings.HasPrefix(ch.ChallengeID, o.Role+"-r1-")
					}
					if had {
						require.Regexp(t, `Withdrawn: |Escalated, |Resting on the concessions: `, o.Content, "%s: %s follows up", tc.name, o.Role)
					}
				}
			}
		}
	}
}

// TestContradictionFinderAbstainsOnNothing: with no mismatch, the
// contradiction finder takes no position instead of "dissenting INVEST".
func TestContradictionFinderAbstainsOnNothing(t *testing.T) {
	t.Parallel()
	b := cleanDeal()
	out := turn(t, debate.RoleContradictionFinder, b, sanad.Grade(b), 1, nil, nil)
	require.Nil(t, out.Position)
	require.NotContains(t, out.Content, "Position INVEST")
	var st struct {
		Argument struct {
			Text string `json:"text"`
		} `json:"argument"`
	}
	require.NoError(t, json.Unmarshal(out.StructuredContent, &st))
	require.NotEmpty(t, st.Argument.Text)
}

// TestDirectionOfTests: a counter-hypothesis or test about a metric where
// lower is better (CAC, burn) points up, one where higher is better (ARR,
// runway) points down.
func TestDirectionOfTests(t *testing.T) {
	t.Parallel()
	specs := standardSpecs("Ashgrove Labs", figures{3_000_000, 70, 200_000, 26, 1500, 110, 9e9}, debate.GradeB)
	specs[1].mat = debate.MaterialityMedium // burn becomes the third heaviest claim
	specs[4].grade = debate.GradeD          // CAC becomes the weakest
	b := buildDeal("direction", "Ashgrove Labs", specs)
	out := turn(t, debate.RoleAdvocate, b, sanad.Grade(b), 1, nil, nil)
	require.Contains(t, out.Muhasabah.CounterHypothesis, "claim C5 (CAC)")
	require.Contains(t, out.Muhasabah.CounterHypothesis, "could place it higher")
	rules := map[string]string{}
	for _, ft := range out.Muhasabah.FalsifiabilityTests {
		rules[ft.TestDescription] = ft.PassFailRule
	}
	require.Contains(t, rules["Reconcile burn of claim C3 with an independent source."], "more than 5% above $200,000/month")
	require.Contains(t, rules["Reconcile ARR of claim C1 with an independent source."], "more than 5% below $3,000,000")
	require.Contains(t, rules["Reconcile runway of claim C4 with an independent source."], "more than 2 months below 26 months")
}

package gate

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

const corpusSize = 240

// TestValidCorpusPasses: the gate passes at least 98% of a corpus of valid
// outputs (seed 000 §9.2), and in fact all of them, both as Go values and
// through their JSON wire form.
func TestValidCorpusPasses(t *testing.T) {
	t.Parallel()
	fx := setup(t)
	corpus := validCorpus(corpusSize)
	require.GreaterOrEqual(t, len(corpus), 200)

	passed := 0
	for i, o := range corpus {
		res := Validate(o, fx.facts, debate.IDISRoles)
		if !res.Valid {
			t.Logf("output %d rejected: %+v\ncontent: %s", i, res.Violations, o.Content)
			continue
		}
		data, err := json.Marshal(o)
		require.NoError(t, err)
		parsed, err := ParseOutput(data, debate.IDISRoles)
		if err != nil {
			t.Logf("output %d does not parse: %v", i, err)
			continue
		}
		if res := Validate(parsed, fx.facts, debate.IDISRoles); !res.Valid {
			t.Logf("output %d rejected after parsing: %+v", i, res.Violations)
			continue
		}
		passed++
	}
	rate := float64(passed) / float64(len(corpus))
	t.Logf("pass rate %d/%d = %.3f", passed, len(corpus), rate)
	require.GreaterOrEqual(t, rate, 0.98)
	require.Equal(t, len(corpus), passed, "every valid output of the corpus should pass")
}

// TestValidCorpusIsVaried: the corpus exercises every role, positions,
// challenges, rulings, calcs, weak sources and outputs without references.
func TestValidCorpusIsVaried(t *testing.T) {
	t.Parallel()
	corpus := validCorpus(corpusSize)
	count := map[string]int{}
	contents := map[string]bool{}
	for _, o := range corpus {
		count["role:"+o.Role]++
		contents[o.Content] = true
		if o.Position != nil {
			count["position"]++
		}
		if len(o.Challenges) > 0 {
			count["challenge"]++
		}
		if len(o.Rulings) > 0 {
			count["ruling"]++
		}
		if len(o.CalcRefs) > 0 {
			count["calc"]++
		}
		if len(o.ClaimRefs) == 0 {
			count["no refs"]++
		}
		if len(o.Muhasabah.Uncertainties) > 0 {
			count["uncertainties"]++
		}
		if o.Muhasabah.Confidence > 0.8 {
			count["high confidence"]++
		}
	}
	for _, k := range []string{"role:advocate", "role:sanad_breaker", "role:contradiction_finder", "role:risk_officer", "role:arbiter",
		"position", "challenge", "ruling", "calc", "no refs", "uncertainties", "high confidence"} {
		require.GreaterOrEqual(t, count[k], 10, k)
	}
	require.Greater(t, len(contents), corpusSize*3/4, "contents should be varied")
}

// breaker turns a valid output into one that breaks a rule; it returns
// false when the output does not lend itself to the mutation.
type breaker func(o *debate.AgentOutput, k int) bool

func factualOutput(o *debate.AgentOutput) bool { return len(o.ClaimRefs) > 0 }

var breakers = map[string][]breaker{
	RuleSchema: {
		func(o *debate.AgentOutput, _ int) bool { o.AgentID = ""; return true },
		func(o *debate.AgentOutput, _ int) bool { o.AgentID = "has space"; return true },
		func(o *debate.AgentOutput, _ int) bool { o.Role = "cheerleader"; return true },
		func(o *debate.AgentOutput, _ int) bool { o.Content = "  \n "; return true },
		func(o *debate.AgentOutput, _ int) bool { o.Content += "\x00"; return true },
		func(o *debate.AgentOutput, _ int) bool { o.Content = strings.Repeat("a", MaxContentLen+1); return true },
		func(o *debate.AgentOutput, _ int) bool { o.RoundNumber = -1; return true },
		func(o *debate.AgentOutput, _ int) bool { o.Timestamp = "yesterday"; return true },
		func(o *debate.AgentOutput, _ int) bool { o.StructuredContent = json.RawMessage(`[1,2]`); return true },
		func(o *debate.AgentOutput, _ int) bool {
			o.ToolCalls = append(o.ToolCalls, debate.ToolCall{Tool: "lookup_claim", Args: json.RawMessage(`"C1"`)})
			return true
		},
		func(o *debate.AgentOutput, _ int) bool {
			if o.Position == nil {
				return false
			}
			o.Position.Recommendation = "STRONG_BUY"
			return true
		},
		func(o *debate.AgentOutput, _ int) bool {
			if len(o.Challenges) == 0 {
				return false
			}
			o.Challenges = append(o.Challenges, o.Challenges[0])
			return true
		},
		func(o *debate.AgentOutput, _ int) bool {
			if len(o.Rulings) == 0 {
				return false
			}
			o.Rulings[0].Reason = ""
			return true
		},
		func(o *debate.AgentOutput, _ int) bool { o.OpenQuestions = append(o.OpenQuestions, " "); return true },
		func(o *debate.AgentOutput, _ int) bool {
			for range MaxChallenges + 1 {
				o.Challenges = append(o.Challenges, debate.Challenge{})
			}
			return true
		},
	},
	RuleMissingMuhasabah: {
		func(o *debate.AgentOutput, _ int) bool { o.Muhasabah = debate.Muhasabah{}; return true },
		func(o *debate.AgentOutput, _ int) bool {
			o.Muhasabah = debate.Muhasabah{SupportedClaimIDs: []string{}}
			return true
		},
	},
	RuleConfidenceRange: {
		func(o *debate.AgentOutput, k int) bool { o.Muhasabah.Confidence = -0.01 * float64(1+k); return true },
		func(o *debate.AgentOutput, k int) bool { o.Muhasabah.Confidence = 1 + 0.1*float64(1+k); return true },
		func(o *debate.AgentOutput, _ int) bool { o.Muhasabah.Confidence = math.NaN(); return true },
		func(o *debate.AgentOutput, _ int) bool { o.Muhasabah.Confidence = math.Inf(1); return true },
		func(o *debate.AgentOutput, _ int) bool {
			if o.Position == nil {
				return false
			}
			o.Position.Confidence = 1.5
			return true
		},
	},
	RuleNoFreeFacts: {
		// Factual content with its references removed.
		func(o *debate.AgentOutput, _ int) bool {
			if !factualOutput(o) {
				return false
			}
			o.ClaimRefs, o.CalcRefs = []string{}, nil
			return true
		},
		// Factual content whose record supports nothing.
		func(o *debate.AgentOutput, _ int) bool {
			if !factualOutput(o) {
				return false
			}
			o.Muhasabah.SupportedClaimIDs, o.Muhasabah.SupportedCalcIDs = []string{}, nil
			return true
		},
		// A fact added to an output that references nothing.
		func(o *debate.AgentOutput, k int) bool {
			if factualOutput(o) {
				return false
			}
			facts := []string{"Revenue grew 3x in 2025.", "Acme signed a pilot.", "The company raised a Series B.", "Churn is below five percent.",
				"The TAM is large.", "They have 40 engineers.", "Sequoia led the round.", "Burn doubled last quarter.", "Q4 was the best quarter.", "EBITDA turned positive."}
			o.Content += " " + facts[k%len(facts)]
			return true
		},
		// The text cites a claim of the deal its references do not list.
		func(o *debate.AgentOutput, k int) bool {
			for n := 1; n <= len(authored); n++ {
				id := claimID(n)
				if !contains(o.ClaimRefs, id) && !contains(o.Muhasabah.SupportedClaimIDs, id) {
					if k%2 == 0 {
						o.Content += " See also " + authored[n-1].key + "."
					} else {
						o.Content += " See also claim " + id + "."
					}
					return true
				}
			}
			return false
		},
		// A challenge description with a fact, and a challenge that names
		// no claim of the deal, in an output that references nothing.
		func(o *debate.AgentOutput, k int) bool {
			if factualOutput(o) {
				return false
			}
			o.Challenges = []debate.Challenge{{ChallengeID: fmt.Sprintf("ch-x-%d", k), ClaimRefs: []string{}, DefectType: "INCONSISTENCY", EvidenceRefs: []string{evID(1)},
				Description: "Revenue of $4.5M in the deck disagrees with the model's figure for the same fiscal year."}}
			return true
		},
	},
	RuleNoFreeFactsUnknownRef: {
		func(o *debate.AgentOutput, k int) bool {
			o.Content += fmt.Sprintf(" Per claim 00000000-0000-4000-8000-%012d, the case holds.", 900+k)
			return true
		},
		func(o *debate.AgentOutput, k int) bool {
			o.Content += fmt.Sprintf(" This follows from C%d.", 20+k)
			return true
		},
		func(o *debate.AgentOutput, _ int) bool {
			if len(o.Challenges) == 0 {
				return false
			}
			o.Challenges[0].Description += " It also conflicts with C42."
			return true
		},
	},
	RuleUnknownRef: {
		func(o *debate.AgentOutput, _ int) bool {
			o.ClaimRefs = append(o.ClaimRefs, otherDealClaim)
			return true
		},
		func(o *debate.AgentOutput, _ int) bool { o.CalcRefs = append(o.CalcRefs, claimID(1)); return true },  // a claim is not a calc
		func(o *debate.AgentOutput, _ int) bool { o.ClaimRefs = append(o.ClaimRefs, calcID(1)); return true }, // a calc is not a claim
		func(o *debate.AgentOutput, _ int) bool { o.ClaimRefs = append(o.ClaimRefs, "C1"); return true },      // a key is not an id
		func(o *debate.AgentOutput, _ int) bool {
			o.Muhasabah.SupportedClaimIDs = append(o.Muhasabah.SupportedClaimIDs, otherDealClaim)
			return true
		},
		func(o *debate.AgentOutput, _ int) bool {
			o.Muhasabah.SupportedCalcIDs = append(o.Muhasabah.SupportedCalcIDs, "calc-404")
			return true
		},
		func(o *debate.AgentOutput, _ int) bool {
			o.EvidenceRequests = append(o.EvidenceRequests, debate.EvidenceRequest{Query: "bank statements", ClaimRefs: []string{otherDealClaim}})
			return true
		},
	},
	RuleFalsifiabilityMissing: {
		func(o *debate.AgentOutput, _ int) bool {
			if o.Position == nil && o.Muhasabah.Confidence <= 0.5 {
				return false
			}
			o.Muhasabah.FalsifiabilityTests = nil
			return true
		},
		func(o *debate.AgentOutput, k int) bool {
			if len(o.Muhasabah.FalsifiabilityTests) == 0 {
				return false
			}
			t := &o.Muhasabah.FalsifiabilityTests[0]
			switch k % 3 {
			case 0:
				t.TestDescription = ""
			case 1:
				t.RequiredEvidence = " "
			default:
				t.PassFailRule = ""
			}
			return true
		},
		// A position without tests, whatever the confidence.
		func(o *debate.AgentOutput, _ int) bool {
			if !factualOutput(o) {
				return false
			}
			o.Muhasabah.Confidence = 0.3
			o.Position = &debate.Position{Recommendation: debate.RecommendPass, Confidence: 0.3}
			o.Muhasabah.FalsifiabilityTests = nil
			return true
		},
	},
	RuleUncertaintiesMissing: {
		func(o *debate.AgentOutput, _ int) bool {
			if !restsOnWeak(o) {
				return false
			}
			o.Muhasabah.Uncertainties = nil
			return true
		},
		func(o *debate.AgentOutput, k int) bool {
			if len(o.Muhasabah.Uncertainties) == 0 {
				return false
			}
			u := &o.Muhasabah.Uncertainties[0]
			switch k % 3 {
			case 0:
				u.Uncertainty = ""
			case 1:
				u.Impact = ""
			default:
				u.Mitigation = "\t"
			}
			return true
		},
	},
	RuleOverconfidence: {
		// Above 0.80 with a counter-hypothesis but no uncertainties: seed
		// 001 §4.8's stricter rule rejects it.
		func(o *debate.AgentOutput, k int) bool {
			o.Muhasabah.Confidence = 0.81 + 0.01*float64(k%19)
			if o.Position != nil {
				o.Position.Confidence = o.Muhasabah.Confidence
			}
			o.Muhasabah.Uncertainties = nil
			o.Muhasabah.CounterHypothesis = "The figures may reflect a one-off contract."
			if len(o.Muhasabah.FalsifiabilityTests) == 0 {
				o.Muhasabah.FalsifiabilityTests = []debate.FalsifiabilityTest{{TestDescription: "t", RequiredEvidence: "e", PassFailRule: "r"}}
			}
			return true
		},
		// The position's confidence counts too.
		func(o *debate.AgentOutput, _ int) bool {
			if o.Position == nil {
				return false
			}
			o.Position.Confidence = 0.95
			o.Muhasabah.Uncertainties = nil
			return true
		},
	},
	RuleFrivolousChallenge: {
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.ClaimRefs = []string{} })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.ClaimRefs = []string{otherDealClaim} })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.DefectType = "" })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.DefectType = "VIBES" })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.EvidenceRefs = nil })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.EvidenceRefs = []string{"ev-missing"} })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.EvidenceRefs = []string{c.ClaimRefs[0]} })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.Description = "" })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.Description = "Looks wrong to me." })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.Severity = "CATASTROPHIC" })
		},
		func(o *debate.AgentOutput, _ int) bool {
			return mutChallenge(o, func(c *debate.Challenge) { c.CureProtocol = "IGNORE" })
		},
	},
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func mutChallenge(o *debate.AgentOutput, f func(*debate.Challenge)) bool {
	if len(o.Challenges) == 0 {
		return false
	}
	f(&o.Challenges[0])
	return true
}

func restsOnWeak(o *debate.AgentOutput) bool {
	for _, id := range o.ClaimRefs {
		for n := 1; n <= len(authored); n++ {
			if claimID(n) == id && !strongClaim(n) {
				return true
			}
		}
	}
	for _, id := range o.CalcRefs {
		if id != calcID(3) {
			return true
		}
	}
	return false
}

// TestInvalidCorpusRejected: for every rule, a corpus of outputs that break
// it (at least 10 each, from varied valid outputs and varied mutations) is
// rejected 100%, each with that rule's code.
func TestInvalidCorpusRejected(t *testing.T) {
	t.Parallel()
	fx := setup(t)
	corpus := validCorpus(corpusSize)
	const perRule = 20
	for _, rule := range Rules {
		bs := breakers[rule]
		require.NotEmpty(t, bs, "no breaker for %s", rule)
		made := 0
		for i := 0; made < perRule && i < len(corpus)*len(bs); i++ {
			o := clone(t, corpus[(i*7+len(rule))%len(corpus)])
			k := i
			if !bs[i%len(bs)](o, k) {
				continue
			}
			made++
			res := Validate(o, fx.facts, debate.IDISRoles)
			require.False(t, res.Valid, "%s case %d accepted", rule, made)
			require.True(t, hasRule(res.Violations, rule), "%s case %d: got %v", rule, made, res.Violations)
		}
		require.GreaterOrEqual(t, made, 10, "%s: too few cases", rule)
	}
}

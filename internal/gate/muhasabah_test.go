package gate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// baseOutput is valid: it rests on C1 (grade A, MUTAWATIR) at confidence
// 0.40, takes no position and needs neither tests nor uncertainties.
func baseOutput() *debate.AgentOutput {
	return &debate.AgentOutput{
		AgentID:   debate.RoleRiskOfficer,
		Role:      debate.RoleRiskOfficer,
		Content:   "The downside case hinges on ARR of $4.5M for FY2025 (C1).",
		ClaimRefs: []string{claimID(1)},
		Muhasabah: debate.Muhasabah{SupportedClaimIDs: []string{claimID(1)}, Confidence: 0.4},
	}
}

func tests1() []debate.FalsifiabilityTest {
	return []debate.FalsifiabilityTest{{TestDescription: "Audit confirms ARR", RequiredEvidence: "FY2025 audit", PassFailRule: "Fail if ARR is 5% lower"}}
}

func uncertainties1() []debate.Uncertainty {
	return []debate.Uncertainty{{Uncertainty: "Single source", Impact: "ARR overstated", Mitigation: "Request the audit"}}
}

func validChallenge() debate.Challenge {
	return debate.Challenge{
		ChallengeID:  "ch-1",
		ClaimRefs:    []string{claimID(2)},
		DefectType:   string(debate.DefectInconsistency),
		EvidenceRefs: []string{evID(2)},
		Description:  "The margin in the deck disagrees with the one recomputed from the model inputs.",
	}
}

func TestMuhasabahValidationRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		rule  string
		fires bool
		// field, when set, is the field the violation must name.
		field  string
		mutate func(o *debate.AgentOutput)
	}{
		// MISSING_MUHASABAH
		{"zero record", RuleMissingMuhasabah, true, "muhasabah_record", func(o *debate.AgentOutput) { o.Muhasabah = debate.Muhasabah{} }},
		{"record with empty lists only", RuleMissingMuhasabah, true, "", func(o *debate.AgentOutput) {
			o.Muhasabah = debate.Muhasabah{SupportedClaimIDs: []string{}, FailureModes: []string{}}
		}},
		{"sparse but present record", RuleMissingMuhasabah, false, "", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs = "I defer to the next round.", nil
			o.Muhasabah = debate.Muhasabah{Confidence: 0.2, ConfidenceJustification: "Nothing new."}
		}},

		// CONFIDENCE_RANGE
		{"negative confidence", RuleConfidenceRange, true, "muhasabah_record.confidence", func(o *debate.AgentOutput) { o.Muhasabah.Confidence = -0.1 }},
		{"confidence above one", RuleConfidenceRange, true, "muhasabah_record.confidence", func(o *debate.AgentOutput) { o.Muhasabah.Confidence = 1.1 }},
		{"NaN confidence", RuleConfidenceRange, true, "muhasabah_record.confidence", func(o *debate.AgentOutput) { o.Muhasabah.Confidence = math.NaN() }},
		{"position confidence above one", RuleConfidenceRange, true, "position.confidence", func(o *debate.AgentOutput) {
			o.Position = &debate.Position{Recommendation: debate.RecommendPass, Confidence: 1.2}
			o.Muhasabah.FalsifiabilityTests = tests1()
			o.Muhasabah.Uncertainties = uncertainties1()
		}},
		{"confidence zero", RuleConfidenceRange, false, "", func(o *debate.AgentOutput) { o.Muhasabah.Confidence = 0 }},
		{"confidence one", RuleConfidenceRange, false, "", func(o *debate.AgentOutput) {
			o.Muhasabah.Confidence = 1
			o.Muhasabah.FalsifiabilityTests = tests1()
			o.Muhasabah.Uncertainties = uncertainties1()
		}},

		// NO_FREE_FACTS
		{"facts without claim_refs", RuleNoFreeFacts, true, "claim_refs", func(o *debate.AgentOutput) { o.ClaimRefs = []string{} }},
		{"facts without supported ids", RuleNoFreeFacts, true, "muhasabah_record.supported_claim_ids", func(o *debate.AgentOutput) {
			o.Muhasabah.SupportedClaimIDs = []string{}
		}},
		{"facts with only unknown refs", RuleNoFreeFacts, true, "claim_refs", func(o *debate.AgentOutput) {
			o.ClaimRefs = []string{otherDealClaim}
			o.Muhasabah.SupportedClaimIDs = []string{otherDealClaim}
		}},
		{"content cites an unlisted claim", RuleNoFreeFacts, true, "content", func(o *debate.AgentOutput) { o.Content += " Runway is in C5." }},
		{"challenge description with a free fact", RuleNoFreeFacts, true, "challenges[0].description", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs, o.Muhasabah.SupportedClaimIDs = "I have a challenge.", nil, nil
			o.Muhasabah.ConfidenceJustification = "Procedural."
			ch := validChallenge()
			ch.ClaimRefs = []string{otherDealClaim}
			o.Challenges = []debate.Challenge{ch}
		}},
		{"facts resting on a calc", RuleNoFreeFacts, false, "", func(o *debate.AgentOutput) {
			o.Content = "Capital efficiency is 0.375x (calc " + calcID(3) + ")."
			o.ClaimRefs, o.CalcRefs = []string{}, []string{calcID(3)}
			o.Muhasabah.SupportedClaimIDs, o.Muhasabah.SupportedCalcIDs = []string{}, []string{calcID(3)}
		}},
		{"no facts, no refs", RuleNoFreeFacts, false, "", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs, o.Muhasabah.SupportedClaimIDs = "I defer to the next round.", nil, nil
		}},
		// Every text the output carries is read, not only the content.
		{"facts only in structured content", RuleNoFreeFacts, true, "claim_refs", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs, o.Muhasabah.SupportedClaimIDs = "I defer to the next round.", nil, nil
			o.StructuredContent = []byte(`{"summary":"ARR reached $4.5M in FY2025"}`)
		}},
		{"facts deep in structured content", RuleNoFreeFacts, true, "muhasabah_record.supported_claim_ids", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs, o.Muhasabah.SupportedClaimIDs = "I defer to the next round.", nil, nil
			o.StructuredContent = []byte(`{"sections":[{"title":"Overview","body":["fine",{"note":"The round was led by Sequoia."}]}]}`)
		}},
		{"a fact in a structured key", RuleNoFreeFacts, true, "claim_refs", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs, o.Muhasabah.SupportedClaimIDs = "I defer to the next round.", nil, nil
			o.StructuredContent = []byte(`{"arr_usd":4500000}`)
		}},
		{"structured content cites an unlisted claim", RuleNoFreeFacts, true, "structured_content.table[0].claim", func(o *debate.AgentOutput) {
			o.StructuredContent = []byte(`{"table":[{"claim":"C5"}]}`)
		}},
		{"facts only in an open question", RuleNoFreeFacts, true, "claim_refs", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs, o.Muhasabah.SupportedClaimIDs = "I defer to the next round.", nil, nil
			o.OpenQuestions = []string{"Why did churn double to 9% in Q4 2025?"}
		}},
		{"facts only in a ruling's reason", RuleNoFreeFacts, true, "claim_refs", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs, o.Muhasabah.SupportedClaimIDs = "I defer to the next round.", nil, nil
			o.Rulings = []debate.Ruling{{ChallengeID: "ch-1", Reason: "Dismissed: Globex renewed at $2M."}}
		}},
		{"bookkeeping in structured content", RuleNoFreeFacts, false, "", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs, o.Muhasabah.SupportedClaimIDs = "I defer to the next round.", nil, nil
			o.StructuredContent = []byte(`{"turn":"opening","findings":0,"new_challenges":2,"challenge_ids":["00000000-dead-beef-0000-000000000001"]}`)
		}},
		{"structured facts resting on the refs", RuleNoFreeFacts, false, "", func(o *debate.AgentOutput) {
			o.StructuredContent = []byte(`{"sections":[{"title":"ARR","body":"ARR of $4.5M (C1)"}]}`)
		}},
		{"text cites a claim of the record", RuleNoFreeFacts, false, "", func(o *debate.AgentOutput) {
			o.Content += " Customers are in C3."
			o.Muhasabah.SupportedClaimIDs = append(o.Muhasabah.SupportedClaimIDs, claimID(3))
			o.Muhasabah.Uncertainties = uncertainties1()
		}},

		// NO_FREE_FACTS_UNKNOWN_REF
		{"content cites an unknown UUID", RuleNoFreeFactsUnknownRef, true, "content", func(o *debate.AgentOutput) {
			o.Content += " See 00000000-0000-4000-8000-000000000999."
		}},
		{"content cites an unknown key", RuleNoFreeFactsUnknownRef, true, "content", func(o *debate.AgentOutput) { o.Content += " See C99." }},
		{"content cites evidence of the deal", RuleNoFreeFactsUnknownRef, false, "", func(o *debate.AgentOutput) { o.Content += " See " + evID(1) + "." }},

		// UNKNOWN_REF
		{"claim of another deal", RuleUnknownRef, true, "claim_refs[1]", func(o *debate.AgentOutput) { o.ClaimRefs = append(o.ClaimRefs, otherDealClaim) }},
		{"claim id as a calc", RuleUnknownRef, true, "calc_refs[0]", func(o *debate.AgentOutput) { o.CalcRefs = []string{claimID(1)} }},
		{"claim key as an id", RuleUnknownRef, true, "claim_refs[1]", func(o *debate.AgentOutput) { o.ClaimRefs = append(o.ClaimRefs, "C1") }},
		{"unknown supported claim", RuleUnknownRef, true, "muhasabah_record.supported_claim_ids[1]", func(o *debate.AgentOutput) {
			o.Muhasabah.SupportedClaimIDs = append(o.Muhasabah.SupportedClaimIDs, otherDealClaim)
		}},
		{"unknown supported calc", RuleUnknownRef, true, "muhasabah_record.supported_calc_ids[0]", func(o *debate.AgentOutput) {
			o.Muhasabah.SupportedCalcIDs = []string{"calc-404"}
		}},
		{"unknown claim in an evidence request", RuleUnknownRef, true, "evidence_requests[0].claim_refs[0]", func(o *debate.AgentOutput) {
			o.EvidenceRequests = []debate.EvidenceRequest{{Query: "audit", ClaimRefs: []string{otherDealClaim}}}
		}},
		{"every ref known", RuleUnknownRef, false, "", func(o *debate.AgentOutput) {
			o.CalcRefs = []string{calcID(3)}
			o.EvidenceRequests = []debate.EvidenceRequest{{Query: "audit", ClaimRefs: []string{claimID(1)}}}
		}},

		// FALSIFIABILITY_MISSING
		{"confidence above 0.50 without tests", RuleFalsifiabilityMissing, true, "muhasabah_record.falsifiability_tests", func(o *debate.AgentOutput) {
			o.Muhasabah.Confidence = 0.51
		}},
		{"position without tests", RuleFalsifiabilityMissing, true, "muhasabah_record.falsifiability_tests", func(o *debate.AgentOutput) {
			o.Position = &debate.Position{Recommendation: debate.RecommendPass, Confidence: 0.2}
		}},
		{"position confidence above 0.50 without tests", RuleFalsifiabilityMissing, true, "", func(o *debate.AgentOutput) {
			o.Position = &debate.Position{Recommendation: debate.RecommendInvest, Confidence: 0.6}
		}},
		{"test without a pass/fail rule", RuleFalsifiabilityMissing, true, "muhasabah_record.falsifiability_tests[0].pass_fail_rule", func(o *debate.AgentOutput) {
			o.Muhasabah.FalsifiabilityTests = tests1()
			o.Muhasabah.FalsifiabilityTests[0].PassFailRule = " "
		}},
		{"test without required evidence", RuleFalsifiabilityMissing, true, "muhasabah_record.falsifiability_tests[0].required_evidence", func(o *debate.AgentOutput) {
			o.Muhasabah.FalsifiabilityTests = tests1()
			o.Muhasabah.FalsifiabilityTests[0].RequiredEvidence = ""
		}},
		{"confidence 0.50 needs no test", RuleFalsifiabilityMissing, false, "", func(o *debate.AgentOutput) { o.Muhasabah.Confidence = 0.5 }},
		{"position with a test", RuleFalsifiabilityMissing, false, "", func(o *debate.AgentOutput) {
			o.Position = &debate.Position{Recommendation: debate.RecommendInvest, Confidence: 0.7}
			o.Muhasabah.Confidence = 0.7
			o.Muhasabah.FalsifiabilityTests = tests1()
		}},

		// UNCERTAINTIES_MISSING
		{"rests on a grade B claim", RuleUncertaintiesMissing, true, "muhasabah_record.uncertainties", func(o *debate.AgentOutput) {
			o.Content += " Margin is 72.5% (C2)."
			o.ClaimRefs = append(o.ClaimRefs, claimID(2))
			o.Muhasabah.SupportedClaimIDs = append(o.Muhasabah.SupportedClaimIDs, claimID(2))
		}},
		{"rests on an āḥād claim", RuleUncertaintiesMissing, true, "", func(o *debate.AgentOutput) {
			o.Content, o.ClaimRefs, o.Muhasabah.SupportedClaimIDs = "They serve 120 customers.", []string{claimID(3)}, []string{claimID(3)}
		}},
		{"rests on a claim with an open FATAL defect", RuleUncertaintiesMissing, true, "", func(o *debate.AgentOutput) {
			o.Muhasabah.SupportedClaimIDs = append(o.Muhasabah.SupportedClaimIDs, claimID(6))
		}},
		{"rests on a grade B calc", RuleUncertaintiesMissing, true, "", func(o *debate.AgentOutput) {
			o.CalcRefs = []string{calcID(1)}
		}},
		{"uncertainty without impact", RuleUncertaintiesMissing, true, "muhasabah_record.uncertainties[0].impact", func(o *debate.AgentOutput) {
			o.Muhasabah.Uncertainties = uncertainties1()
			o.Muhasabah.Uncertainties[0].Impact = ""
		}},
		{"strong sources only", RuleUncertaintiesMissing, false, "", func(o *debate.AgentOutput) {
			o.ClaimRefs = append(o.ClaimRefs, claimID(8))
			o.CalcRefs = []string{calcID(3)}
		}},
		{"weak source acknowledged", RuleUncertaintiesMissing, false, "", func(o *debate.AgentOutput) {
			o.ClaimRefs = append(o.ClaimRefs, claimID(2))
			o.Muhasabah.Uncertainties = uncertainties1()
		}},

		// OVERCONFIDENCE
		{"0.85 with a counter-hypothesis but no uncertainty", RuleOverconfidence, true, "muhasabah_record.uncertainties", func(o *debate.AgentOutput) {
			o.Muhasabah.Confidence = 0.85
			o.Muhasabah.CounterHypothesis = "ARR may include services."
			o.Muhasabah.FalsifiabilityTests = tests1()
		}},
		{"position at 0.90", RuleOverconfidence, true, "", func(o *debate.AgentOutput) {
			o.Position = &debate.Position{Recommendation: debate.RecommendInvest, Confidence: 0.9}
			o.Muhasabah.FalsifiabilityTests = tests1()
		}},
		{"NaN counts as certain", RuleOverconfidence, true, "", func(o *debate.AgentOutput) { o.Muhasabah.Confidence = math.NaN() }},
		{"0.80 is not overconfident", RuleOverconfidence, false, "", func(o *debate.AgentOutput) {
			o.Muhasabah.Confidence = 0.8
			o.Muhasabah.FalsifiabilityTests = tests1()
		}},
		{"0.95 with uncertainties", RuleOverconfidence, false, "", func(o *debate.AgentOutput) {
			o.Muhasabah.Confidence = 0.95
			o.Muhasabah.FalsifiabilityTests = tests1()
			o.Muhasabah.Uncertainties = uncertainties1()
		}},

		// FRIVOLOUS_CHALLENGE
		{"challenge without evidence", RuleFrivolousChallenge, true, "challenges[0].evidence_refs", func(o *debate.AgentOutput) {
			ch := validChallenge()
			ch.EvidenceRefs = nil
			o.Challenges = []debate.Challenge{ch}
		}},
		{"challenge of an unknown claim", RuleFrivolousChallenge, true, "challenges[1].claim_refs[0]", func(o *debate.AgentOutput) {
			ch := validChallenge()
			ch.ChallengeID, ch.ClaimRefs = "ch-2", []string{"nope"}
			o.Challenges = []debate.Challenge{validChallenge(), ch}
		}},
		{"valid challenge", RuleFrivolousChallenge, false, "", func(o *debate.AgentOutput) { o.Challenges = []debate.Challenge{validChallenge()} }},

		// SCHEMA
		{"unknown role", RuleSchema, true, "role", func(o *debate.AgentOutput) { o.Role = "intern" }},
		{"tool call without args", RuleSchema, true, "tool_calls[0].args", func(o *debate.AgentOutput) {
			o.ToolCalls = []debate.ToolCall{{Tool: "lookup_claim"}}
		}},
		{"base shape", RuleSchema, false, "", func(*debate.AgentOutput) {}},
	}
	fx := setup(t)
	require.True(t, Validate(baseOutput(), fx.facts, debate.IDISRoles).Valid, "%v", Validate(baseOutput(), fx.facts, debate.IDISRoles).Violations)
	covered := map[string][2]bool{}
	for _, tc := range cases {
		c := covered[tc.rule]
		if tc.fires {
			c[0] = true
		} else {
			c[1] = true
		}
		covered[tc.rule] = c
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := baseOutput()
			tc.mutate(o)
			res := Validate(o, fx.facts, debate.IDISRoles)
			if !tc.fires {
				require.False(t, hasRule(res.Violations, tc.rule), "%v", res.Violations)
				// The near misses are valid outputs.
				require.True(t, res.Valid, "%v", res.Violations)
				return
			}
			require.False(t, res.Valid)
			require.True(t, hasRule(res.Violations, tc.rule), "%v", res.Violations)
			if tc.field != "" {
				require.True(t, hasViolation(res.Violations, tc.rule, tc.field), "%v", res.Violations)
			}
			if tc.rule != RuleSchema {
				require.True(t, hasRule(Muhasabah(o, fx.facts), tc.rule), "Muhasabah reports it too")
			}
		})
	}
	for _, rule := range Rules {
		require.Equal(t, [2]bool{true, true}, covered[rule], "rule %s needs a positive and a negative case", rule)
	}
}

func TestFrivolousChallengeDetection(t *testing.T) {
	t.Parallel()
	fx := setup(t)
	desc50 := strings.Repeat("d", MinChallengeDescription)
	cases := []struct {
		name   string
		mutate func(c *debate.Challenge)
		// reason is empty for a valid challenge, else a part of the reason.
		reason string
	}{
		{"valid", func(*debate.Challenge) {}, ""},
		{"evidence is a span", func(c *debate.Challenge) { c.EvidenceRefs = []string{spanID(2)} }, ""},
		{"evidence is a document", func(c *debate.Challenge) { c.EvidenceRefs = []string{docID(1)} }, ""},
		{"evidence is a calc", func(c *debate.Challenge) { c.EvidenceRefs = []string{calcID(1)} }, ""},
		{"evidence is another claim", func(c *debate.Challenge) { c.EvidenceRefs = []string{claimID(1)} }, ""},
		{"several claims", func(c *debate.Challenge) { c.ClaimRefs = []string{claimID(2), claimID(3)} }, ""},
		{"severity and cure", func(c *debate.Challenge) { c.Severity, c.CureProtocol = "MAJOR", "REQUEST_SOURCE" }, ""},
		{"description of exactly the minimum", func(c *debate.Challenge) { c.Description = "  " + desc50 + "  " }, ""},

		{"no claims", func(c *debate.Challenge) { c.ClaimRefs = nil }, "must reference specific claim_ids"},
		{"unknown claim", func(c *debate.Challenge) { c.ClaimRefs = []string{otherDealClaim} }, "is not a claim of deal"},
		{"claim key instead of id", func(c *debate.Challenge) { c.ClaimRefs = []string{"C2"} }, "is not a claim of deal"},
		{"one known and one unknown claim", func(c *debate.Challenge) { c.ClaimRefs = append(c.ClaimRefs, "nope") }, "is not a claim of deal"},
		{"no defect type", func(c *debate.Challenge) { c.DefectType = "" }, "must specify a defect type"},
		{"unknown defect type", func(c *debate.Challenge) { c.DefectType = "BAD_VIBES" }, "not a defect type"},
		{"defect type in lower case", func(c *debate.Challenge) { c.DefectType = "inconsistency" }, "not a defect type"},
		{"unknown severity", func(c *debate.Challenge) { c.Severity = "SEVERE" }, "not a severity"},
		{"unknown cure protocol", func(c *debate.Challenge) { c.CureProtocol = "PRAY" }, "not a cure protocol"},
		{"no evidence", func(c *debate.Challenge) { c.EvidenceRefs = []string{} }, "must cite evidence"},
		{"unknown evidence", func(c *debate.Challenge) { c.EvidenceRefs = []string{"ev-404"} }, "no evidence item"},
		{"one known and one unknown evidence", func(c *debate.Challenge) { c.EvidenceRefs = append(c.EvidenceRefs, "ev-404") }, "no evidence item"},
		{"the attacked claim as its own evidence", func(c *debate.Challenge) { c.EvidenceRefs = []string{claimID(2)} }, "claim it attacks"},
		{"no description", func(c *debate.Challenge) { c.Description = "  " }, "must describe"},
		{"one-liner description", func(c *debate.Challenge) { c.Description = desc50[1:] }, "at least 50"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := validChallenge()
			tc.mutate(&c)
			ok, reason := ValidateChallenge(c, fx.facts)
			if tc.reason == "" {
				require.True(t, ok, reason)
				require.Empty(t, reason)
				return
			}
			require.False(t, ok)
			require.Contains(t, reason, tc.reason)

			// Inside an output, the gate rejects it as frivolous.
			o := baseOutput()
			o.Challenges = []debate.Challenge{c}
			res := Validate(o, fx.facts, debate.IDISRoles)
			require.False(t, res.Valid)
			require.True(t, hasRule(res.Violations, RuleFrivolousChallenge), "%v", res.Violations)
		})
	}

	t.Run("every reason is given", func(t *testing.T) {
		t.Parallel()
		ok, reason := ValidateChallenge(debate.Challenge{}, fx.facts)
		require.False(t, ok)
		for _, part := range []string{"claim_ids", "defect type", "cite evidence", "describe"} {
			require.Contains(t, reason, part)
		}
	})

	t.Run("without facts every challenge is frivolous", func(t *testing.T) {
		t.Parallel()
		ok, _ := ValidateChallenge(validChallenge(), nil)
		require.False(t, ok)
	})
}

func TestValidate(t *testing.T) {
	t.Parallel()
	fx := setup(t)

	t.Run("nil output", func(t *testing.T) {
		t.Parallel()
		res := Validate(nil, fx.facts, debate.IDISRoles)
		require.False(t, res.Valid)
		require.ElementsMatch(t, []string{RuleSchema, RuleMissingMuhasabah}, rules(res.Violations))
	})

	t.Run("nil facts reject every reference", func(t *testing.T) {
		t.Parallel()
		res := Validate(baseOutput(), nil, debate.IDISRoles)
		require.False(t, res.Valid)
		require.True(t, hasRule(res.Violations, RuleUnknownRef))
		require.True(t, hasRule(res.Violations, RuleNoFreeFacts))
	})

	t.Run("violations sorted, without duplicates, deterministic", func(t *testing.T) {
		t.Parallel()
		o := baseOutput()
		o.Role = "intern"
		o.ClaimRefs = []string{"x", "x", otherDealClaim}
		o.Muhasabah.Confidence = 0.95
		o.Content += " See C77 and C77 and C5."
		o.Challenges = []debate.Challenge{{ChallengeID: "c"}}
		a := Validate(o, fx.facts, debate.IDISRoles)
		b := Validate(o, fx.facts, debate.IDISRoles)
		require.Equal(t, a, b)
		require.False(t, a.Valid)
		var keys []string
		for _, v := range a.Violations {
			keys = append(keys, v.Rule+"\x00"+v.Field+"\x00"+v.Detail)
		}
		require.IsIncreasing(t, keys, "sorted and unique")
		for _, rule := range []string{RuleSchema, RuleUnknownRef, RuleNoFreeFacts, RuleNoFreeFactsUnknownRef,
			RuleFalsifiabilityMissing, RuleOverconfidence, RuleFrivolousChallenge} {
			require.True(t, hasRule(a.Violations, rule), rule)
		}
	})

	t.Run("valid output has no violations", func(t *testing.T) {
		t.Parallel()
		res := Validate(baseOutput(), fx.facts, debate.IDISRoles)
		require.True(t, res.Valid)
		require.Empty(t, res.Violations)
	})
}

func TestValidateCapsViolationsPerRule(t *testing.T) {
	t.Parallel()
	fx := setup(t)
	o := baseOutput()
	for i := range 100 {
		o.ClaimRefs = append(o.ClaimRefs, fmt.Sprintf("unknown-%03d", i))
	}
	o.Role = "intern"
	res := Validate(o, fx.facts, debate.IDISRoles)
	require.False(t, res.Valid)
	n := 0
	for _, v := range res.Violations {
		if v.Rule == RuleUnknownRef {
			n++
		}
	}
	require.Equal(t, MaxViolationsPerRule, n)
	require.True(t, hasRule(res.Violations, RuleSchema), "every broken rule is still reported")
}

// ValidateChallenge returns true and "" for a valid challenge, else false
// and every reason challengeProblems finds, joined by "; ".
func ValidateChallenge(ch debate.Challenge, f *Facts) (ok bool, reason string) {
	problems := challengeProblems(ch, f)
	if len(problems) == 0 {
		return true, ""
	}
	reasons := make([]string, len(problems))
	for i, p := range problems {
		reasons[i] = p.reason
	}
	return false, strings.Join(reasons, "; ")
}

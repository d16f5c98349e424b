package legal

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAnswerChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		before, after string
		want          float64
	}{
		{"same words", "Children inherit equally.", "children INHERIT equally", 0},
		{"both empty", "", "", 0},
		{"nothing in common", "sons inherit", "daughters receive half", 1},
		// {a b c d e f g} vs {a b c d e f g h}: 7/8 alike.
		{"one word added", "a b c d e f g", "a b c d e f g h", 0.125},
		// {a … g} vs {a … f, x}: 6 of 8 alike.
		{"one word replaced", "a b c d e f g", "a b c d e f x", 0.25},
		{"punctuation and order ignored", "pusaka, tinggi: clan", "clan pusaka tinggi", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.InDelta(t, tc.want, AnswerChange(tc.before, tc.after), 1e-9)
		})
	}
	require.Less(t, AnswerChange("a b c d e f g", "a b c d e f g h"), StableChange, "one new word in eight is stable")
	require.GreaterOrEqual(t, AnswerChange("a b c d e f g", "a b c d e f x"), StableChange, "one replaced word in seven is not")
}

func fact(s, p, o string) *Triple { return &Triple{Subject: s, Predicate: p, Object: o} }

func out(agent string, claims ...Claim) *Output {
	o := &Output{Round: 2, Agent: agent, Answer: agent + " answer", Claims: claims}
	o.normalize()
	return o
}

func TestConflicts(t *testing.T) {
	t.Parallel()
	land := func(obj string) *Triple { return fact("Family land", "passes to", obj) }
	nla := out(AgentNLA, Claim{ID: "C1", Evidence: []string{"n1"}, Confidence: 0.8, Triple: land("children equally")},
		Claim{ID: "C2", Evidence: []string{"n2"}, Confidence: 0.9, Triple: fact("x", "y", "z")})
	ala := out(AgentALA, Claim{ID: "C1", Evidence: []string{"a1"}, Confidence: 0.7, Triple: land("sons")},
		Claim{ID: "C2", Evidence: []string{"a2"}, Confidence: 0.7, Triple: fact("X", "Y", "z")})
	cs := Conflicts(nla, ala)
	require.Len(t, cs, 1, "same subject and predicate, different object; case and spacing do not matter")
	require.Equal(t, "family land", cs[0].Subject)
	require.False(t, cs[0].Resolved)
	require.True(t, cs[0].Hard, "both sides at 0.7 or more")

	ala.Claims[0].Confidence = 0.65
	require.False(t, Conflicts(nla, ala)[0].Hard, "a side below 0.7 makes it soft")

	ala.Claims[0].Justification = "rule r1 applies to ancestral land"
	c := Conflicts(nla, ala)[0]
	require.True(t, c.Resolved)
	require.Equal(t, AgentALA, c.JustifiedBy)

	ala.Claims[0].Evidence = []string{}
	require.False(t, Conflicts(nla, ala)[0].Resolved, "a justification needs evidence")
	require.Empty(t, Conflicts(nil, ala))
}

// calmOutputs are two outputs that agree on one fact.
func calmOutputs() map[string]*Output {
	return map[string]*Output{
		AgentNLA: out(AgentNLA, Claim{ID: "C1", Evidence: []string{"n1"}, Confidence: 0.7, Triple: fact("s", "p", "o")}),
		AgentALA: out(AgentALA, Claim{ID: "C1", Evidence: []string{"a1"}, Confidence: 0.7, Triple: fact("s", "p", "o")}),
	}
}

// conflicting are two outputs in a soft, unresolved conflict.
func conflicting(conf float64) map[string]*Output {
	return map[string]*Output{
		AgentNLA: out(AgentNLA, Claim{ID: "C1", Evidence: []string{"n1"}, Confidence: conf, Triple: fact("s", "p", "equal")}),
		AgentALA: out(AgentALA, Claim{ID: "C1", Evidence: []string{"a1"}, Confidence: conf, Triple: fact("s", "p", "sons")}),
	}
}

func crit(sev, issue string) Critique {
	return Critique{ID: "K1", TargetClaimID: "C1", IssueType: issue, Severity: sev, Description: "d", SuggestedFix: "f"}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	unstable := map[string]float64{AgentNLA: 0.4, AgentALA: 0.02}
	stable := map[string]float64{AgentNLA: 0.1, AgentALA: 0.149}
	twoMajor := []Critique{crit(SeverityMajor, IssueOverclaim), crit(SeverityMajor, IssueLogicGap)}
	for _, tc := range []struct {
		name       string
		s          Signals
		outcome    string
		criteria   []string
		escalation []string
	}{
		{
			name:    "round 1 always goes on to the revision",
			s:       Signals{Round: 1, MaxRounds: 2, Critiques: []Critique{crit(SeverityCritical, IssueConflict)}, Outputs: conflicting(0.9)},
			outcome: OutcomeContinue,
		},
		{
			name:       "a rejected output escalates at once",
			s:          Signals{Round: 1, MaxRounds: 2, Outputs: calmOutputs(), Rejected: true},
			outcome:    OutcomeEscalated,
			escalation: []string{EscalateRejected},
		},
		{
			name:     "converges by severity alone: one MAJOR, a conflict, an unstable answer",
			s:        Signals{Round: 2, MaxRounds: 3, Critiques: []Critique{crit(SeverityMajor, IssueConflict), crit(SeverityMinor, IssueLogicGap)}, Change: unstable, Outputs: conflicting(0.6)},
			outcome:  OutcomeConverged,
			criteria: []string{CriterionSeverity},
		},
		{
			name:     "converges by no domain conflict alone: two MAJOR, an unstable answer",
			s:        Signals{Round: 2, MaxRounds: 3, Critiques: twoMajor, Change: unstable, Outputs: calmOutputs()},
			outcome:  OutcomeConverged,
			criteria: []string{CriterionNoConflict},
		},
		{
			name:     "converges by stability alone: two MAJOR, a conflict, answers changed under 15%",
			s:        Signals{Round: 2, MaxRounds: 3, Critiques: twoMajor, Change: stable, Outputs: conflicting(0.6)},
			outcome:  OutcomeConverged,
			criteria: []string{CriterionStable},
		},
		{
			name:       "stability does not hold under a CRITICAL critique",
			s:          Signals{Round: 3, MaxRounds: 3, Critiques: []Critique{crit(SeverityCritical, IssueLogicGap), crit(SeverityMajor, IssueOverclaim)}, Change: stable, Outputs: conflicting(0.6)},
			outcome:    OutcomeEscalated,
			escalation: []string{EscalateNotConverged},
		},
		{
			name:     "a MAJOR conflict critique is an unresolved domain conflict, even without triples",
			s:        Signals{Round: 2, MaxRounds: 3, Critiques: []Critique{crit(SeverityMajor, IssueConflict), crit(SeverityMajor, IssueLogicGap)}, Change: stable, Outputs: calmOutputs()},
			outcome:  OutcomeConverged,
			criteria: []string{CriterionStable},
		},
		{
			name:    "round 2 of 3 with no criterion goes on to round 3",
			s:       Signals{Round: 2, MaxRounds: 3, Critiques: twoMajor, Change: unstable, Outputs: conflicting(0.6)},
			outcome: OutcomeContinue,
		},
		{
			name:       "round 2 of 2 with no criterion escalates",
			s:          Signals{Round: 2, MaxRounds: 2, Critiques: twoMajor, Change: unstable, Outputs: conflicting(0.6)},
			outcome:    OutcomeEscalated,
			escalation: []string{EscalateNotConverged},
		},
		{
			name:       "escalates on a CRITICAL evidence critique, even with no domain conflict",
			s:          Signals{Round: 2, MaxRounds: 3, Critiques: []Critique{crit(SeverityCritical, IssueEvidenceGap)}, Change: stable, Outputs: calmOutputs()},
			outcome:    OutcomeEscalated,
			escalation: []string{EscalateCritical},
		},
		{
			name:       "escalates on a CRITICAL norm conflict critique",
			s:          Signals{Round: 2, MaxRounds: 3, Critiques: []Critique{crit(SeverityCritical, IssueConflict)}, Change: stable, Outputs: conflicting(0.6)},
			outcome:    OutcomeEscalated,
			escalation: []string{EscalateCritical},
		},
		{
			name:       "escalates on a hard contradiction, even with no critique",
			s:          Signals{Round: 2, MaxRounds: 3, Change: stable, Outputs: conflicting(0.8)},
			outcome:    OutcomeEscalated,
			escalation: []string{EscalateContradiction},
		},
		{
			name: "escalates when over 30% of an agent's claims lack evidence",
			s: Signals{Round: 2, MaxRounds: 3, Change: stable, Outputs: map[string]*Output{
				AgentNLA: calmOutputs()[AgentNLA],
				AgentALA: out(AgentALA, Claim{ID: "C1", Evidence: []string{"a1"}, Confidence: 0.7},
					Claim{ID: "C2", Evidence: []string{"a2"}, Confidence: 0.7}, Claim{ID: "C3", Risk: true, Confidence: 0.2}),
			}},
			outcome:    OutcomeEscalated,
			escalation: []string{EscalateEvidence},
		},
		{
			name: "30% exactly is not over 30%",
			s: Signals{Round: 2, MaxRounds: 3, Change: stable, Outputs: map[string]*Output{
				AgentNLA: calmOutputs()[AgentNLA],
				AgentALA: out(AgentALA, Claim{ID: "C1", Evidence: []string{"a"}}, Claim{ID: "C2", Evidence: []string{"a"}}, Claim{ID: "C3", Evidence: []string{"a"}},
					Claim{ID: "C4", Evidence: []string{"a"}}, Claim{ID: "C5", Evidence: []string{"a"}}, Claim{ID: "C6", Evidence: []string{"a"}},
					Claim{ID: "C7", Evidence: []string{"a"}}, Claim{ID: "C8", Risk: true}, Claim{ID: "C9", Risk: true}, Claim{ID: "C10", Risk: true}),
			}},
			outcome:  OutcomeConverged,
			criteria: []string{CriterionSeverity, CriterionNoConflict, CriterionStable},
		},
		{
			name:       "every rule that fires is recorded",
			s:          Signals{Round: 2, MaxRounds: 3, Critiques: []Critique{crit(SeverityCritical, IssueConflict)}, Change: stable, Outputs: conflicting(0.9)},
			outcome:    OutcomeEscalated,
			escalation: []string{EscalateCritical, EscalateContradiction},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Decide(tc.s)
			require.Equal(t, tc.outcome, d.Outcome)
			require.Equal(t, tc.s.Round, d.Round)
			if tc.outcome == OutcomeConverged {
				require.Equal(t, tc.criteria, d.Criteria)
			}
			require.Equal(t, append([]string{}, tc.escalation...), d.Escalation)
			require.Equal(t, tc.outcome == OutcomeEscalated, d.NeedsHumanReview)
		})
	}
}

func TestCalm(t *testing.T) {
	t.Parallel()
	calm := Signals{Round: 2, MaxRounds: 3, Critiques: []Critique{crit(SeverityMajor, IssueOverclaim)},
		Change: map[string]float64{AgentNLA: 0, AgentALA: 0.1}, Outputs: calmOutputs()}
	require.True(t, Calm(calm), "every criterion holds: the revisions need no second critique")
	for name, mutate := range map[string]func(s *Signals){
		"a second MAJOR":  func(s *Signals) { s.Critiques = append(s.Critiques, crit(SeverityMajor, IssueLogicGap)) },
		"a conflict":      func(s *Signals) { s.Outputs = conflicting(0.5) },
		"a moving answer": func(s *Signals) { s.Change = map[string]float64{AgentNLA: 0.5} },
	} {
		s := calm
		mutate(&s)
		require.False(t, Calm(s), name)
	}
}

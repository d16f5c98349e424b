package stratmaster

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

func TestFingerprint(t *testing.T) {
	t.Parallel()
	a := Fingerprint("ARR is  $12.5M", []string{"e2", "e1"})
	require.Equal(t, a, Fingerprint(" arr is $12.5m ", []string{"e1", "e2", "e1"}), "canonical statement, sorted distinct ids")
	require.NotEqual(t, a, Fingerprint("ARR is $12.5M", []string{"e1"}), "the evidence counts")
	require.NotEqual(t, a, Fingerprint("ARR is $13M", []string{"e1", "e2"}), "the statement counts")
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, a)
	require.Regexp(t, `^h-[0-9a-f]{12}$`, hypothesisID(a))
}

// TestDebateThresholds covers both sides of every debate trigger.
func TestDebateThresholds(t *testing.T) {
	t.Parallel()
	ev := map[string]Evidence{
		"a": {EvidenceID: "a", SourceGrade: debate.GradeA}, "b": {EvidenceID: "b", SourceGrade: debate.GradeB},
		"c": {EvidenceID: "c", SourceGrade: debate.GradeC},
	}
	h := func(conf float64, stance, claim string, evs ...string) Hypothesis {
		return Hypothesis{ID: "h", Stance: stance, Confidence: conf, ClaimIDs: []string{claim}, EvidenceIDs: evs}
	}
	for _, tc := range []struct {
		name     string
		hs       []Hypothesis
		verdicts map[string]debate.Verdict
		debate   bool
	}{
		{"at the confidence threshold", []Hypothesis{h(DebateConfidenceThreshold, StanceSupports, "x", "a", "b")}, nil, false},
		{"just below it", []Hypothesis{h(DebateConfidenceThreshold-0.01, StanceSupports, "x", "a", "b")}, nil, true},
		{"grades one rank apart", []Hypothesis{h(0.8, StanceSupports, "x", "a", "b")}, nil, false},
		{"grades two ranks apart", []Hypothesis{h(0.8, StanceSupports, "x", "a", "c")}, nil, true},
		{"verified claim", []Hypothesis{h(0.8, StanceSupports, "x", "a")}, map[string]debate.Verdict{"x": debate.VerdictVerified}, false},
		{"contradicted claim", []Hypothesis{h(0.8, StanceSupports, "x", "a")}, map[string]debate.Verdict{"x": debate.VerdictContradicted}, true},
		{"inflated claim", []Hypothesis{h(0.8, StanceSupports, "x", "a")}, map[string]debate.Verdict{"x": debate.VerdictInflated}, true},
		{"supported and countered", []Hypothesis{h(0.8, StanceSupports, "x", "a"), h(0.8, StanceCounter, "x", "a")}, nil, true},
		{"countered elsewhere", []Hypothesis{h(0.8, StanceSupports, "x", "a"), h(0.8, StanceCounter, "y", "a")}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reasons := debateReasons(tc.hs, ev, tc.verdicts)
			require.Equal(t, tc.debate, len(reasons) > 0, "%v", reasons)
		})
	}
}

// TestReview checks each rule and metric on work that passes and on work
// that fails it, and that the failing one yields its feedback.
func TestReview(t *testing.T) {
	t.Parallel()
	c, err := ParseConstitution(fullConstitution, "c")
	require.NoError(t, err)
	ev := map[string]Evidence{
		"a": {EvidenceID: "a", SourceGrade: debate.GradeA}, "b": {EvidenceID: "b", SourceGrade: debate.GradeB},
		"c": {EvidenceID: "c", SourceGrade: debate.GradeC},
	}
	good := []Hypothesis{
		{ID: "h1", Statement: "ARR grew", Stance: StanceSupports, ClaimIDs: []string{"x"}, EvidenceIDs: []string{"a", "b"}, Confidence: 0.9},
		{ID: "h2", Statement: "ARR may not hold", Stance: StanceCounter, ClaimIDs: []string{"x"}, EvidenceIDs: []string{"a", "b"}, Confidence: 0.3},
	}
	plan := &Plan{Summary: "fine", Recommendations: []PlanItem{{Text: "Act on h1", HypothesisIDs: []string{"h1"}}}}
	r := review(c, 1, good, plan, ev)
	require.True(t, r.Passed, "%+v", r)
	require.Empty(t, r.Feedback)

	bad := []Hypothesis{
		{ID: "h1", Statement: "Returns are guaranteed", Stance: StanceSupports, ClaimIDs: []string{"x"}, EvidenceIDs: []string{"c"}, Confidence: 0.8},
	}
	r = review(c, 2, bad, &Plan{Summary: "A risk-free bet"}, ev)
	require.False(t, r.Passed)
	failed := map[string]bool{}
	for _, p := range r.Principles {
		failed[p.PrincipleID] = !p.Passed
	}
	require.Equal(t, map[string]bool{"P1": true, "P2": true, "P3": true, "P4": true, "P5": true, "P6": true}, failed)
	for _, m := range r.Metrics {
		require.Equal(t, m.Name == MetricMeanConfidence, m.Passed, "%s: only the mean confidence (0.8) passes", m.Name)
	}
	actions := map[string]bool{}
	for _, fb := range r.Feedback {
		actions[fb.Action] = true
	}
	for _, a := range []string{ActionGatherEvidence, ActionRaiseSourceGrade, ActionAddCounter, ActionCapConfidence, ActionAvoidTerms, ActionBroadenResearch} {
		require.True(t, actions[a], a)
	}

	var d Directives
	d.apply(r.Feedback)
	require.Equal(t, []string{"x"}, d.LookupClaims)
	require.Equal(t, 2, d.MinEvidence)
	require.Equal(t, debate.GradeB, d.MinGrade)
	require.True(t, d.RequireCounter)
	require.InDelta(t, 0.7, d.ConfidenceCap, 1e-9)
	require.Equal(t, []string{"guaranteed", "risk-free"}, d.AvoidTerms)
	require.True(t, d.Broaden)
}

// TestRulesFollowDirectives: the rules synthesiser and strategist honour
// the critic's directives.
func TestRulesFollowDirectives(t *testing.T) {
	t.Parallel()
	data := synthData{
		Evidence: []Evidence{
			{EvidenceID: "a", SourceGrade: debate.GradeB, ClaimIDs: []string{"x"}},
			{EvidenceID: "b", SourceGrade: debate.GradeC, ClaimIDs: []string{"x", "y"}},
		},
		Claims: []gradedClaim{
			{ClaimID: "x", Key: "C1", Text: "Revenue is guaranteed to double", Grade: debate.GradeB, Verdict: debate.VerdictVerified},
			{ClaimID: "y", Key: "C2", Text: "Churn is 2%", Grade: debate.GradeC, Verdict: debate.VerdictUnverified},
		},
	}
	plain := ruleSynthesise(data)
	require.Len(t, plain.Hypotheses, 2)
	require.Empty(t, plain.SetAside)

	data.Directives = Directives{MinEvidence: 2, RequireCounter: true, ConfidenceCap: 0.6}
	got := ruleSynthesise(data)
	require.Len(t, got.Hypotheses, 2, "C1 and its counter-hypothesis")
	require.Equal(t, StanceCounter, got.Hypotheses[1].Stance)
	require.LessOrEqual(t, got.Hypotheses[0].Confidence, 0.6)
	require.Len(t, got.SetAside, 1, "C2 has a single source")

	data.Directives = Directives{AvoidTerms: []string{"Guaranteed"}, MinGrade: debate.GradeB}
	got = ruleSynthesise(data)
	require.Empty(t, got.Hypotheses, "C1 uses the term and C2 has no grade B evidence")
	require.Len(t, got.SetAside, 1)

	p := rulePlan(planData{Pass: 1, Hypotheses: []Hypothesis{{ID: "h-1", Statement: "A guaranteed win", Stance: StanceSupports, Confidence: 0.8}},
		Directives: Directives{AvoidTerms: []string{"guaranteed"}}})
	require.Empty(t, hasTerm(p.Recommendations[0].Text, []string{"guaranteed"}))
	require.Contains(t, p.Recommendations[0].Text, "h-1")

	_, err := Rules("nope", json.RawMessage(`{}`))
	require.Error(t, err)
	_, err = Rules(SchemaPlan, json.RawMessage(`[`))
	require.Error(t, err)
}

func TestHasTerm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want string
	}{
		{"a guaranteed return", "guaranteed"},
		{"GUARANTEED.", "guaranteed"},
		{"unguaranteed", ""},
		{"guaranteedly", ""},
		{"risk-free bet", "risk-free"},
		{"", ""},
	} {
		require.Equal(t, tc.want, hasTerm(tc.text, []string{"guaranteed", "risk-free"}), tc.text)
	}
}

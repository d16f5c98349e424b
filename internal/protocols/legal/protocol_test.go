package legal

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocol"
)

// seedNames are the artifacts every debate of two rounds or more emits
// (seed §7).
var seedNames = []string{
	"debate_round1_nla.json", "debate_round1_ala.json",
	"critique_round1_nla_on_ala.json", "critique_round1_ala_on_nla.json",
	"debate_round2_nla.json", "debate_round2_ala.json",
	"debate_summary.json",
}

// requireSound checks what holds for every finished debate: the seed's
// artifact names, round 1's gates, evidence from the context only, the
// supervisor after the last check, and deliverables that list the
// artifacts.
func requireSound(t *testing.T, r *result, opts json.RawMessage) {
	t.Helper()
	arts := r.artifacts()
	have := slices.Sorted(maps.Keys(arts))
	for _, n := range seedNames {
		require.Contains(t, have, n)
	}
	var names []string
	for _, e := range r.events {
		if e.Type == EventArtifact {
			var a struct{ Name string }
			require.NoError(t, json.Unmarshal(e.Payload, &a))
			names = append(names, a.Name)
		}
	}
	require.Equal(t, names, r.del.Artifacts, "the deliverables list every artifact, in order")
	o, err := protocol.ParseOptions(opts, defaults, check)
	require.NoError(t, err)
	src := o.sources()
	for name, content := range arts {
		var probe struct {
			Claims    []Claim    `json:"claims"`
			Critiques []Critique `json:"critiques"`
			Round     int        `json:"round"`
		}
		require.NoError(t, json.Unmarshal(content, &probe))
		require.LessOrEqual(t, len(probe.Claims), MaxClaims, name)
		for _, c := range probe.Claims {
			for _, e := range c.Evidence {
				require.Contains(t, src, e, "%s: evidence names a context source", name)
			}
			require.True(t, len(c.Evidence) > 0 || c.Risk, "%s: a claim without evidence is a risk", name)
		}
		for _, k := range probe.Critiques {
			require.NotEmpty(t, k.SuggestedFix, name)
		}
		if probe.Round == 1 && probe.Critiques != nil {
			require.GreaterOrEqual(t, len(probe.Critiques), MinCritiquesRound1, name)
		}
	}
	var lastCheck, synth int64
	for _, e := range r.events {
		switch e.Type {
		case EventDecision:
			lastCheck = e.Seq
		case EventSynthesis:
			require.Zero(t, synth, "one synthesis")
			synth = e.Seq
		}
	}
	require.Greater(t, synth, lastCheck, "the supervisor runs only after the debate")
	require.NotNil(t, r.del.Synthesis)
	require.Contains(t, r.del.Markdown, "# Legal debate:")
	require.Zero(t, r.count(EventRejected))
}

func outputOf(t *testing.T, r *result, name string) Output {
	t.Helper()
	var o Output
	require.NoError(t, json.Unmarshal(r.artifacts()[name], &o))
	return o
}

// TestFixtureCases runs the testdata cases through the engine with the
// rules backend: each ends as the seed's rules say it must.
func TestFixtureCases(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})

	t.Run("Minangkabau pusaka tinggi: the formal rule justifies adat, converged in round 2", func(t *testing.T) {
		opts := fixture(t, "minangkabau_pusaka", 2)
		r := b.debate(t, opts)
		requireSound(t, r, opts)
		require.Equal(t, debate.DebateCompleted, r.d.Status)
		require.Equal(t, ReasonConverged, r.d.StopReason)
		ds := r.decisions(t)
		require.Len(t, ds, 2)
		require.Equal(t, OutcomeContinue, ds[0].Outcome)
		require.Positive(t, ds[0].Critical, "round 1 found the norm conflict CRITICAL")
		require.Equal(t, []string{CriterionSeverity, CriterionNoConflict}, ds[1].Criteria)
		require.GreaterOrEqual(t, ds[1].AnswerChange[AgentALA], StableChange, "ALA dropped its Balinese claim")
		require.Contains(t, slices.Collect(maps.Keys(r.artifacts())), "critique_round2_nla_on_ala.json", "round 1's CRITICAL critiques make the revisions critiqued again")
		ala := outputOf(t, r, "debate_round2_ala.json")
		for _, c := range ala.Claims {
			require.NotContains(t, c.Evidence, "bali-purusa-noise", "the domain mismatch was revised away")
		}
		sum := r.del.Summary
		require.False(t, r.del.NeedsHumanReview)
		require.Len(t, sum.Conflicts, 1)
		require.True(t, sum.Conflicts[0].Resolved)
		require.Equal(t, AgentALA, sum.Conflicts[0].JustifiedBy)
		require.Contains(t, sum.Conflicts[0].Justification, "rule-pusaka-01")
		require.Equal(t, []AgreedClaim{{NLAClaim: "C2", ALAClaim: "C2", Statement: sum.AgreedClaims[0].Statement,
			Evidence: []string{"minang-pencaharian", "nat-jurisprudence-pencaharian"}}}, sum.AgreedClaims, "both give self-acquired property to the children")
		require.Empty(t, sum.DisputedClaims)
	})

	t.Run("Bali purusa against equal shares: not converged after round 2, escalated", func(t *testing.T) {
		opts := fixture(t, "bali_purusa", 2)
		r := b.debate(t, opts)
		requireSound(t, r, opts)
		require.Equal(t, debate.DebateNeedsReview, r.d.Status)
		require.Equal(t, ReasonEscalated, r.d.StopReason)
		last := r.decisions(t)[1]
		require.Equal(t, []string{EscalateNotConverged}, last.Escalation)
		require.Equal(t, 2, last.Major)
		require.True(t, r.del.NeedsHumanReview)
		require.True(t, r.del.Synthesis.NeedsHumanReview)
		var refs []string
		for _, d := range r.del.Summary.DisputedClaims {
			refs = append(refs, d.Ref)
		}
		require.Equal(t, []string{"NLA.C1", "ALA.C1"}, refs)
		ala := outputOf(t, r, "debate_round2_ala.json")
		require.Len(t, ala.Claims, 1, "ALA dropped the claim contradicting its own purusa claim")
	})

	t.Run("Bali with 3 rounds: round 3 runs and the answers settle", func(t *testing.T) {
		opts := fixture(t, "bali_purusa", 3)
		r := b.debate(t, opts)
		requireSound(t, r, opts)
		ds := r.decisions(t)
		require.Len(t, ds, 3)
		require.Equal(t, []string{OutcomeContinue, OutcomeContinue, OutcomeConverged}, []string{ds[0].Outcome, ds[1].Outcome, ds[2].Outcome})
		require.Equal(t, []string{CriterionStable}, ds[2].Criteria, "stable dissent: the revisions stopped moving")
		for _, n := range []string{"debate_round3_nla.json", "debate_round3_ala.json", "critique_round3_nla_on_ala.json", "critique_round3_ala_on_nla.json"} {
			require.Contains(t, slices.Collect(maps.Keys(r.artifacts())), n)
		}
		require.Equal(t, debate.DebateCompleted, r.d.Status)
		require.Equal(t, 3, r.del.Summary.Rounds)
		require.Len(t, r.del.Summary.DisputedClaims, 2, "converged is not agreed: the dispute is reported")
	})

	t.Run("Javanese gono-gini: consensus, the calm revisions are not critiqued again", func(t *testing.T) {
		opts := fixture(t, "jawa_gonogini", 2)
		r := b.debate(t, opts)
		requireSound(t, r, opts)
		require.Equal(t, ReasonConverged, r.d.StopReason)
		require.Equal(t, []string{CriterionSeverity, CriterionNoConflict, CriterionStable}, r.decisions(t)[1].Criteria)
		require.NotContains(t, slices.Collect(maps.Keys(r.artifacts())), "critique_round2_nla_on_ala.json")
		require.Len(t, r.del.Summary.AgreedClaims, 2)
		require.Empty(t, r.del.Summary.Conflicts)
		require.ElementsMatch(t, []string{"NLA.C1", "ALA.C2", "NLA.C2", "ALA.C1"}, r.del.Synthesis.AgreedClaims)
	})

	t.Run("Javanese adoption without an adat source: escalated for missing evidence", func(t *testing.T) {
		opts := fixture(t, "jawa_adoption_no_adat_source", 2)
		r := b.debate(t, opts)
		requireSound(t, r, opts)
		require.Equal(t, ReasonEscalated, r.d.StopReason)
		require.Equal(t, []string{EscalateEvidence}, r.decisions(t)[1].Escalation)
		require.Equal(t, []ClaimNote{{Ref: "ALA.C1", Statement: r.del.Summary.Risks[0].Statement}}, r.del.Summary.Risks)
		require.True(t, outputOf(t, r, "debate_round1_ala.json").Claims[0].Risk)
	})
}

// payloads are the payloads of a debate's events of type typ, in order.
func (r *result) payloads(typ string) []json.RawMessage {
	var out []json.RawMessage
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e.Payload)
		}
	}
	return out
}

// TestRulesAreDeterministic: the same case gives the same artifacts,
// decisions and synthesis.
func TestRulesAreDeterministic(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	opts := fixture(t, "minangkabau_pusaka", 3)
	one, two := b.debate(t, opts), b.debate(t, opts)
	a1, a2 := one.artifacts(), two.artifacts()
	require.Equal(t, len(a1), len(a2))
	for n, c := range a1 {
		if n == SummaryArtifact {
			continue // carries the case id only
		}
		require.JSONEq(t, string(c), string(a2[n]), n)
	}
	require.True(t, slices.Equal(one.del.Artifacts, two.del.Artifacts))
	for _, typ := range []string{EventDecision, EventSynthesis} {
		p1, p2 := one.payloads(typ), two.payloads(typ)
		require.NotEmpty(t, p1, typ)
		require.Len(t, p2, len(p1), typ)
		for i := range p1 {
			require.JSONEq(t, string(p1[i]), string(p2[i]), "%s %d", typ, i)
		}
	}
}

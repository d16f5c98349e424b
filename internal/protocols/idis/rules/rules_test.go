package rules_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/dectest"
	"github.com/debated/debated/internal/testutil/gdbs"
)

// authored are the table tests' deals with what the grader must find in
// them (checked first, so a grader change shows here, not as a role bug).
func authored(t *testing.T) []struct {
	name string
	deal *debate.DealBundle
} {
	t.Helper()
	return []struct {
		name string
		deal *debate.DealBundle
	}{
		{"clean", cleanDeal()},
		{"inconsistency", inconsistentDeal()},
		{"missing_link", missingLinkDeal()},
		{"short_runway", shortRunwayDeal()},
		{"unknown_source", unknownSourceDeal()},
		{"sample", storetest.SampleBundle("8d2f6b1e-0c4a-4f5e-9b7d-3a1c2e4f6a80")},
	}
}

func claimID(b *debate.DealBundle, key string) string {
	for _, c := range b.Claims {
		if c.Key == key {
			return c.ID
		}
	}
	panic("no claim " + key)
}

func gradeOf(g *debate.DealGrading, key string) debate.ClaimGrade {
	c, ok := g.Claim(key)
	if !ok {
		panic("no grade for " + key)
	}
	return c
}

// challengeKeys lists the challenges as "KEY/TYPE".
func challengeKeys(b *debate.DealBundle, chs []debate.Challenge) []string {
	keys := map[string]string{}
	for _, c := range b.Claims {
		keys[c.ID] = c.Key
	}
	var out []string
	for _, ch := range chs {
		for _, id := range ch.ClaimRefs {
			out = append(out, keys[id]+"/"+ch.DefectType)
		}
	}
	return out
}

func TestAuthoredDealsHaveTheirDefects(t *testing.T) {
	t.Parallel()
	require.Equal(t, debate.VerdictVerified, gradeOf(sanad.Grade(cleanDeal()), "C1").Verdict)
	for _, c := range sanad.Grade(cleanDeal()).Claims {
		require.Empty(t, c.Defects, c.ClaimKey)
		require.LessOrEqual(t, debate.GradeRank(c.Grade), 1, c.ClaimKey)
	}
	c1 := gradeOf(sanad.Grade(inconsistentDeal()), "C1")
	require.Equal(t, debate.VerdictContradicted, c1.Verdict)
	require.Equal(t, debate.DefectInconsistency, c1.Defects[0].Type)
	require.True(t, gradeOf(sanad.Grade(missingLinkDeal()), "C6").Blocked)
	require.Equal(t, debate.GradeD, gradeOf(sanad.Grade(unknownSourceDeal()), "C1").Grade)
	require.Empty(t, gradeOf(sanad.Grade(unknownSourceDeal()), "C1").Defects)
}

func TestNewReturnsTheFiveRoles(t *testing.T) {
	t.Parallel()
	rs := rules.New()
	require.Len(t, rs, 5)
	for _, name := range debate.IDISRoles {
		require.Contains(t, rs, name)
		require.Equal(t, name, rs[name].Name())
	}
}

func TestTurnErrors(t *testing.T) {
	t.Parallel()
	r := rules.New()[debate.RoleAdvocate]
	_, err := r.Turn(context.Background(), nil)
	require.ErrorIs(t, err, rules.ErrNoDeal)
	_, err = r.Turn(context.Background(), input(nil, nil, 1, nil, nil))
	require.ErrorIs(t, err, rules.ErrNoDeal)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := cleanDeal()
	_, err = r.Turn(ctx, input(b, sanad.Grade(b), 1, nil, nil))
	require.ErrorIs(t, err, context.Canceled)
}

func TestAdvocateOpening(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"clean":          debate.RecommendInvest,
		"inconsistency":  debate.RecommendPass,
		"missing_link":   debate.RecommendConditional,
		"short_runway":   debate.RecommendConditional,
		"unknown_source": debate.RecommendConditional,
		"sample":         debate.RecommendConditional,
	}
	conf := map[string]float64{}
	for _, tc := range authored(t) {
		g := sanad.Grade(tc.deal)
		l := newToolLog(tc.deal)
		out := turn(t, debate.RoleAdvocate, tc.deal, g, 1, nil, l)
		requireValid(t, tc.deal, g, out)
		require.Equal(t, debate.RoleAdvocate, out.AgentID)
		require.Equal(t, 1, out.RoundNumber)
		require.NotNil(t, out.Position, tc.name)
		require.Equal(t, want[tc.name], out.Position.Recommendation, tc.name)
		require.Contains(t, out.Content, "(claim C2, grade ", tc.name)
		require.Contains(t, string(out.StructuredContent), `"turn":"opening"`)
		conf[tc.name] = out.Muhasabah.Confidence
		// It looks up what it cites, and only that.
		require.Len(t, out.ToolCalls, len(out.ClaimRefs)+len(out.CalcRefs), tc.name)
		require.Empty(t, l.byStatus("DENIED"))
		require.Empty(t, l.byStatus("INVALID"))
	}
	for name, c := range conf {
		if name != "clean" {
			require.Greater(t, conf["clean"], c, "a clean deal must give more confidence than %s", name)
		}
	}
	require.Greater(t, conf["sample"], conf["inconsistency"])
}

func TestAdvocateFactsNameKeyValueGradeVerdict(t *testing.T) {
	t.Parallel()
	b := inconsistentDeal()
	out := turn(t, debate.RoleAdvocate, b, sanad.Grade(b), 1, nil, nil)
	require.Contains(t, out.Content, "gross margin of 68% for FY2025 (claim C2, grade B, VERIFIED)")
	require.Contains(t, out.Content, "ARR (claim C1, grade D, CONTRADICTED, MAJOR INCONSISTENCY)")
	require.Contains(t, out.ClaimRefs, claimID(b, "C1"))
}

func TestSanadBreaker(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		challenges []string
		requests   []string // claim keys with evidence requests
		flags      []string // claim keys flagged
	}{
		"clean":          {},
		"inconsistency":  {challenges: []string{"C4/UNKNOWN_SOURCE", "C3/UNKNOWN_SOURCE", "C6/UNKNOWN_SOURCE"}},
		"missing_link":   {challenges: []string{"C6/MISSING_LINK", "C1/UNKNOWN_SOURCE", "C4/UNKNOWN_SOURCE", "C2/UNKNOWN_SOURCE", "C3/UNKNOWN_SOURCE"}, requests: []string{"C6"}},
		"unknown_source": {challenges: []string{"C1/UNKNOWN_SOURCE", "C4/UNKNOWN_SOURCE", "C2/UNKNOWN_SOURCE", "C3/UNKNOWN_SOURCE", "C6/UNKNOWN_SOURCE"}, flags: []string{"C1"}},
	}
	for _, tc := range authored(t) {
		want, ok := cases[tc.name]
		if !ok {
			continue
		}
		g := sanad.Grade(tc.deal)
		l := newToolLog(tc.deal)
		out := turn(t, debate.RoleSanadBreaker, tc.deal, g, 1, nil, l)
		requireValid(t, tc.deal, g, out)
		require.Equal(t, want.challenges, challengeKeys(tc.deal, out.Challenges), tc.name)
		var reqs []string
		for _, r := range out.EvidenceRequests {
			reqs = append(reqs, challengeKeys(tc.deal, []debate.Challenge{{ClaimRefs: r.ClaimRefs}})[0][:2])
		}
		require.Equal(t, want.requests, reqs, tc.name)
		var flags []string
		for _, c := range l.byStatus("SUCCESS") {
			if c.Tool == "flag_defect" {
				var a struct {
					ClaimID     string `json:"claim_id"`
					Description string `json:"description"`
				}
				require.NoError(t, json.Unmarshal(c.Args, &a))
				require.GreaterOrEqual(t, len(a.Description), 50)
				flags = append(flags, challengeKeys(tc.deal, []debate.Challenge{{ClaimRefs: []string{a.ClaimID}}})[0][:2])
			}
		}
		require.Equal(t, want.flags, flags, tc.name)
		require.Empty(t, l.byStatus("DENIED"))
		require.Empty(t, l.byStatus("INVALID"))
	}
}

func TestSanadBreakerMissingLinkCitesTheDocuments(t *testing.T) {
	t.Parallel()
	b := missingLinkDeal()
	out := turn(t, debate.RoleSanadBreaker, b, sanad.Grade(b), 1, nil, nil)
	ch := out.Challenges[0]
	require.Equal(t, "MISSING_LINK", ch.DefectType)
	// No evidence exists: the challenge cites the deal's documents, none
	// of which holds a span for the claim, never the claim itself.
	require.Equal(t, []string{b.Documents[0].ID, b.Documents[1].ID}, ch.EvidenceRefs)
	require.Equal(t, "REQUEST_SOURCE", ch.CureProtocol)
	require.Equal(t, "MAJOR", ch.Severity)
	require.Contains(t, ch.Description, "no resolvable evidence span")
	require.NotContains(t, out.Content, "122%", "a blocked claim's value is never stated")
}

func TestSanadBreakerBrokenChainCitesExistingIDs(t *testing.T) {
	t.Parallel()
	b := cleanDeal()
	// A corroboration that does not exist: BROKEN_CHAIN, FATAL.
	b.Sanads[0].CorroboratingEvidenceIDs = append(b.Sanads[0].CorroboratingEvidenceIDs, "ffffffff-0000-4000-8000-000000000000")
	b.Sanads[0].Chain = append(b.Sanads[0].Chain, debate.ChainNode{ID: "ffffffff-0000-4000-8000-000000000001", Type: debate.ChainNodeCorroboration,
		InputRefs: []string{"ffffffff-0000-4000-8000-000000000000"}, OutputRef: claimID(b, "C1")})
	g := sanad.Grade(b)
	require.True(t, slices.ContainsFunc(gradeOf(g, "C1").Defects, func(d debate.Defect) bool { return d.Type == debate.DefectBrokenChain }))
	l := newToolLog(b)
	out := turn(t, debate.RoleSanadBreaker, b, g, 1, nil, l)
	requireValid(t, b, g, out)
	require.Equal(t, []string{"C1/BROKEN_CHAIN"}, challengeKeys(b, out.Challenges))
	require.Equal(t, "FATAL", out.Challenges[0].Severity)
	require.Equal(t, "RECONSTRUCT_CHAIN", out.Challenges[0].CureProtocol)
	require.NotContains(t, out.Challenges[0].EvidenceRefs, "ffffffff-0000-4000-8000-000000000000", "a dangling id is never cited as evidence")
	// The grader already holds the defect: flagging it again would count
	// it twice against the grade.
	require.Zero(t, l.count(debate.RoleSanadBreaker, "flag_defect"))
	require.Equal(t, 1, l.count(debate.RoleSanadBreaker, "search_evidence"))
}

func TestContradictionFinder(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		challenges []string
		position   string
	}{
		// Finding no mismatch is no reason to invest: the contradiction
		// finder abstains (no position) on the deals without one.
		"clean":         {},
		"inconsistency": {challenges: []string{"C1/INCONSISTENCY"}, position: debate.RecommendPass},
		"missing_link":  {},
		"short_runway":  {},
	}
	for _, tc := range authored(t) {
		want, ok := cases[tc.name]
		if !ok {
			continue
		}
		g := sanad.Grade(tc.deal)
		l := newToolLog(tc.deal)
		out := turn(t, debate.RoleContradictionFinder, tc.deal, g, 1, nil, l)
		requireValid(t, tc.deal, g, out)
		require.Equal(t, want.challenges, challengeKeys(tc.deal, out.Challenges), tc.name)
		if want.position == "" {
			require.Nil(t, out.Position, tc.name)
			require.Contains(t, out.Content, "the contradiction finder abstains", tc.name)
		} else {
			require.Equal(t, want.position, out.Position.Recommendation, tc.name)
		}
		require.Equal(t, 1, l.count(debate.RoleContradictionFinder, "query_enrichment"), tc.name)
	}
	// The INCONSISTENCY cites the model cell that disagrees.
	b := inconsistentDeal()
	g := sanad.Grade(b)
	out := turn(t, debate.RoleContradictionFinder, b, g, 1, nil, nil)
	require.Equal(t, gradeOf(g, "C1").Defects[0].EvidenceRefs, out.Challenges[0].EvidenceRefs)
	require.Contains(t, out.Challenges[0].Description, "FIN_MODEL v1")
}

func TestContradictionFinderCalcDisagreement(t *testing.T) {
	t.Parallel()
	b := cleanDeal()
	// Revenue and COGS cells recompute a 68.5% margin; the claim says 72.5%.
	rev, cogs := "calc-rev-span", "calc-cogs-span"
	b.Spans = append(b.Spans,
		debate.Span{ID: rev, DocumentID: b.Documents[1].ID, Type: debate.SpanTypeCell, Locator: debate.Locator{Sheet: "P&L", Cell: "B2"}, TextExcerpt: "Revenue: 4,500,000"},
		debate.Span{ID: cogs, DocumentID: b.Documents[1].ID, Type: debate.SpanTypeCell, Locator: debate.Locator{Sheet: "P&L", Cell: "B3"}, TextExcerpt: "COGS: 1,417,500"})
	b.Calcs = append(b.Calcs, debate.Calc{ID: "calc-gm-1", Type: debate.CalcGrossMargin, Inputs: dectest.Map(map[string]float64{"revenue": 4_500_000, "cogs": 1_417_500}),
		InputSpanIDs: map[string]string{"revenue": rev, "cogs": cogs}})
	g := sanad.Grade(b)
	out := turn(t, debate.RoleContradictionFinder, b, g, 1, nil, nil)
	requireValid(t, b, g, out)
	require.Equal(t, []string{"C2/INCONSISTENCY"}, challengeKeys(b, out.Challenges))
	require.Contains(t, out.Challenges[0].EvidenceRefs, "calc-gm-1")
	require.Contains(t, out.CalcRefs, "calc-gm-1")
	require.Contains(t, out.Content, "Recomputation disagrees: gross margin recomputed at 68.5% (calc GROSS_MARGIN calc-gm-1")
}

func TestRiskOfficer(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		position string
		flagged  []string
	}{
		"clean":        {position: debate.RecommendInvest},
		"short_runway": {position: debate.RecommendPass, flagged: []string{"runway", "burn_multiple", "gross_margin", "nrr"}},
		"missing_link": {position: debate.RecommendConditional, flagged: []string{"burn_multiple"}},
		"sample":       {position: debate.RecommendConditional},
	}
	for _, tc := range authored(t) {
		want, ok := cases[tc.name]
		if !ok {
			continue
		}
		g := sanad.Grade(tc.deal)
		out := turn(t, debate.RoleRiskOfficer, tc.deal, g, 1, nil, newToolLog(tc.deal))
		requireValid(t, tc.deal, g, out)
		require.Equal(t, want.position, out.Position.Recommendation, tc.name)
		var st struct {
			Figures []struct {
				Name    string
				Value   float64
				Flagged bool
			}
		}
		require.NoError(t, json.Unmarshal(out.StructuredContent, &st))
		var flagged []string
		for _, f := range st.Figures {
			if f.Flagged {
				flagged = append(flagged, f.Name)
			}
		}
		require.Equal(t, want.flagged, flagged, tc.name)
	}
	b := shortRunwayDeal()
	g := sanad.Grade(b)
	out := turn(t, debate.RoleRiskOfficer, b, g, 1, nil, nil)
	require.Contains(t, out.Content, "Severe risk: runway of 9 months (claim C4, grade C, VERIFIED) is below the 18-month threshold")
	require.Contains(t, out.Content, "is 3× ARR from ARR of $2,000,000 for FY2025 (claim C1")
	require.True(t, slices.ContainsFunc(out.OpenQuestions, func(q string) bool { return strings.Contains(q, "9 months of runway in claim C4") }))
	require.Less(t, out.Muhasabah.Confidence, 0.7, "figures from grade-C claims cannot be held with high confidence")
}

func TestRiskOfficerChallengesUnchallengedGradeD(t *testing.T) {
	t.Parallel()
	b := unknownSourceDeal()
	g := sanad.Grade(b)
	// Alone, the risk officer raises the grade-D CRITICAL claim.
	out := turn(t, debate.RoleRiskOfficer, b, g, 1, nil, nil)
	require.Equal(t, []string{"C1/UNKNOWN_SOURCE"}, challengeKeys(b, out.Challenges))
	require.Equal(t, debate.RecommendPass, out.Position.Recommendation)
	// After the sanad breaker raised it, it does not raise it again.
	sb := turn(t, debate.RoleSanadBreaker, b, g, 1, nil, nil)
	out = turn(t, debate.RoleRiskOfficer, b, g, 1, []debate.AgentOutput{sb}, nil)
	require.Empty(t, out.Challenges)
	requireValid(t, b, g, out)
}

func TestArbiterRulings(t *testing.T) {
	t.Parallel()
	b := missingLinkDeal()
	g := sanad.Grade(b)
	c1, c5, c6 := claimID(b, "C1"), claimID(b, "C5"), claimID(b, "C6")
	ev1 := b.Sanads[0].PrimaryEvidenceID
	challenges := []debate.Challenge{
		{ChallengeID: "x-valid-defect", ClaimRefs: []string{c6}, DefectType: "MISSING_LINK", EvidenceRefs: []string{b.Documents[0].ID}, Description: "no span"},
		{ChallengeID: "x-self-cite", ClaimRefs: []string{c6}, DefectType: "MISSING_LINK", EvidenceRefs: []string{c6}, Description: "cites itself"},
		{ChallengeID: "x-bad-severity", ClaimRefs: []string{c1}, DefectType: "UNKNOWN_SOURCE", Severity: "HUGE", EvidenceRefs: []string{ev1}, Description: "bad severity"},
		{ChallengeID: "x-valid-grade", ClaimRefs: []string{c1}, DefectType: "UNKNOWN_SOURCE", EvidenceRefs: []string{ev1}, Description: "grade C, critical"},
		{ChallengeID: "x-dismissed", ClaimRefs: []string{c5}, DefectType: "INCONSISTENCY", EvidenceRefs: []string{ev1}, Description: "C5 is MEDIUM, not IC-bound, no defect"},
		{ChallengeID: "x-no-claims", DefectType: "INCONSISTENCY", EvidenceRefs: []string{ev1}, Description: "names nothing"},
		{ChallengeID: "x-no-type", ClaimRefs: []string{c1}, EvidenceRefs: []string{ev1}, Description: "no type"},
		{ChallengeID: "x-bad-type", ClaimRefs: []string{c1}, DefectType: "VIBES", EvidenceRefs: []string{ev1}, Description: "not in the taxonomy"},
		{ChallengeID: "x-no-evidence", ClaimRefs: []string{c1}, DefectType: "UNKNOWN_SOURCE", Description: "no evidence"},
		{ChallengeID: "x-ghost-evidence", ClaimRefs: []string{c1}, DefectType: "UNKNOWN_SOURCE", EvidenceRefs: []string{"00000000-dead-beef-0000-000000000000"}, Description: "cites nothing real"},
		{ChallengeID: "x-ghost-claim", ClaimRefs: []string{"00000000-dead-beef-0000-000000000001"}, DefectType: "UNKNOWN_SOURCE", EvidenceRefs: []string{ev1}, Description: "claim elsewhere"},
	}
	tr := []debate.AgentOutput{
		{AgentID: "observer", Role: debate.RoleContradictionFinder, RoundNumber: 1, Challenges: challenges},
		// An earlier round's challenge, already ruled: not ruled again.
		{AgentID: "old", Role: debate.RoleSanadBreaker, RoundNumber: 0, Challenges: []debate.Challenge{{ChallengeID: "x-old", ClaimRefs: []string{c1}, DefectType: "UNKNOWN_SOURCE", EvidenceRefs: []string{ev1}}}},
		{AgentID: debate.RoleArbiter, Role: debate.RoleArbiter, RoundNumber: 0, Rulings: []debate.Ruling{{ChallengeID: "x-old", Upheld: true, Reason: "earlier"}}},
	}
	l := newToolLog(b)
	out := turn(t, debate.RoleArbiter, b, g, 1, tr, l)
	requireValid(t, b, g, out)
	got := map[string]debate.Ruling{}
	for _, r := range out.Rulings {
		got[r.ChallengeID] = r
		require.NotEmpty(t, r.Reason)
	}
	require.Len(t, got, len(challenges), "each challenge of the round is ruled once; earlier rulings stand")
	for id, want := range map[string]string{
		"x-valid-defect": "upheld", "x-valid-grade": "upheld", "x-dismissed": "dismissed",
		"x-no-claims": "frivolous", "x-no-type": "frivolous", "x-bad-type": "frivolous", "x-no-evidence": "frivolous",
		"x-ghost-evidence": "frivolous", "x-ghost-claim": "frivolous", "x-self-cite": "frivolous", "x-bad-severity": "frivolous",
	} {
		r := got[id]
		switch want {
		case "upheld":
			require.True(t, r.Upheld && !r.Frivolous, id)
		case "dismissed":
			require.False(t, r.Upheld || r.Frivolous, id)
		case "frivolous":
			require.True(t, r.Frivolous && !r.Upheld, id)
			require.Contains(t, r.Reason, "§6.3", id)
		}
	}
	require.Contains(t, got["x-valid-defect"].Reason, "open MISSING_LINK defect")
	require.Contains(t, got["x-valid-grade"].Reason, "material position")
	require.NotContains(t, out.Content, "dead-beef", "ids outside the deal stay out of the content")
	// The blocked, material, grade-D NRR claim goes to human review.
	reviews := l.byStatus("SUCCESS")
	require.Len(t, reviews, 1)
	require.Equal(t, "request_human_review", reviews[0].Tool)
	require.Contains(t, string(reviews[0].Args), c6)
	require.Equal(t, debate.RecommendConditional, out.Position.Recommendation)
}

func TestArbiterRequestsHumanReviewOncePerClaim(t *testing.T) {
	t.Parallel()
	b := inconsistentDeal()
	run := simulate(t, b, 4)
	var reviews []call
	for _, c := range run.log.byStatus("SUCCESS") {
		if c.Tool == "request_human_review" {
			reviews = append(reviews, c)
		}
	}
	require.Len(t, reviews, 1)
	require.Equal(t, 1, reviews[0].Round)
	require.Contains(t, string(reviews[0].Args), claimID(b, "C1"))
}

func TestAdvocateRebuttalConcedesAndLowersConfidence(t *testing.T) {
	t.Parallel()
	for _, b := range []*debate.DealBundle{inconsistentDeal(), missingLinkDeal(), storetest.SampleBundle("5e0c1d7a-6b2f-4e3a-8c9d-0f1e2d3c4b5a")} {
		run := simulate(t, b, 2)
		var adv []debate.AgentOutput
		for _, o := range run.outputs {
			if o.Role == debate.RoleAdvocate {
				adv = append(adv, o)
			}
		}
		require.Len(t, adv, 4)
		turns := []string{"opening", "rebuttal", "opening", "rebuttal"}
		for i, o := range adv {
			require.Contains(t, string(o.StructuredContent), `"turn":"`+turns[i]+`"`)
		}
		// The round-1 rebuttal answers the round's challenges.
		var st struct {
			Ack []string `json:"acknowledged_challenge_ids"`
		}
		require.NoError(t, json.Unmarshal(adv[1].StructuredContent, &st))
		require.NotEmpty(t, st.Ack)
		require.Contains(t, adv[1].Content, "On sanad_breaker-r1-01 by sanad_breaker")
		// Round 2 concedes what the arbiter upheld and its confidence drops.
		require.Contains(t, adv[2].Content, "Conceded after the arbiter upheld them in earlier rounds")
		require.Less(t, adv[2].Muhasabah.Confidence, adv[0].Muhasabah.Confidence)
		require.Equal(t, adv[2].Muhasabah.Confidence, adv[3].Muhasabah.Confidence)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	for _, tc := range authored(t) {
		a, err := json.Marshal(simulate(t, tc.deal, 3).outputs)
		require.NoError(t, err)
		b, err := json.Marshal(simulate(t, tc.deal, 3).outputs)
		require.NoError(t, err)
		require.JSONEq(t, string(a), string(b), tc.name)
		require.Equal(t, string(a), string(b), tc.name)
	}
	// Without tools, too.
	b := inconsistentDeal()
	g := sanad.Grade(b)
	for _, role := range debate.IDISRoles {
		x, _ := json.Marshal(turn(t, role, b, g, 1, nil, nil))
		y, _ := json.Marshal(turn(t, role, b, g, 1, nil, nil))
		require.Equal(t, string(x), string(y), role)
	}
}

func TestPositionsStableWhenNothingChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range authored(t) {
		run := simulate(t, tc.deal, 5)
		byRound := map[int]map[string]debate.AgentOutput{}
		for _, o := range run.outputs {
			if byRound[o.RoundNumber] == nil {
				byRound[o.RoundNumber] = map[string]debate.AgentOutput{}
			}
			byRound[o.RoundNumber][o.Role] = o // the advocate's rebuttal wins
		}
		for r := 3; r <= 5; r++ {
			for _, role := range debate.IDISRoles {
				prev, cur := byRound[r-1][role], byRound[r][role]
				require.Equal(t, prev.Position, cur.Position, "%s %s round %d", tc.name, role, r)
				require.Equal(t, prev.Muhasabah.Confidence, cur.Muhasabah.Confidence, "%s %s round %d", tc.name, role, r)
				require.Empty(t, cur.Challenges, "%s %s raises nothing new in round %d", tc.name, role, r)
			}
		}
	}
}

func TestMissingGradingCountsClaimsUngraded(t *testing.T) {
	t.Parallel()
	b := cleanDeal()
	empty := &debate.DealGrading{DealID: b.Deal.ID}
	for _, role := range debate.IDISRoles {
		out, err := rules.New()[role].Turn(context.Background(), input(b, nil, 1, nil, nil))
		require.NoError(t, err)
		// The checker reads grades from the grading: an empty one counts
		// every claim as weak, as the role did.
		requireValid(t, b, empty, *out)
	}
	out := turn(t, debate.RoleAdvocate, b, nil, 1, nil, nil)
	require.Less(t, out.Muhasabah.Confidence, 0.3)
	require.Contains(t, out.Content, "grade D, UNVERIFIED")
}

func TestEmptyDeal(t *testing.T) {
	t.Parallel()
	b := &debate.DealBundle{Deal: debate.Deal{ID: "empty-deal", CompanyName: "Nothing Yet"}}
	g := sanad.Grade(b)
	for _, role := range debate.IDISRoles {
		out := turn(t, role, b, g, 1, nil, nil)
		requireValid(t, b, g, out)
		require.NotRegexp(t, `\d`, out.Content, "%s states no figure without a claim", role)
	}
}

func TestLargeDealStaysBounded(t *testing.T) {
	t.Parallel()
	b := storetest.LargeBundle("2b7e5a90-3c1d-4f6e-8a9b-0c1d2e3f4a5b", 400)
	run := simulate(t, b, 2)
	for i, o := range run.outputs {
		requireValid(t, b, run.gradings[i], o)
		require.LessOrEqual(t, len(o.Content), debate.MaxTextLen, o.Role)
		require.LessOrEqual(t, len(o.Challenges), 10, o.Role)
		require.LessOrEqual(t, len(o.ClaimRefs), debate.MaxRefs, o.Role)
	}
	require.Empty(t, run.log.byStatus("DENIED"))
	require.Empty(t, run.log.byStatus("INVALID"))
}

// TestGDBS runs the roles over every GDBS deal for five rounds: every
// output passes the checker, every tool call is permitted, within quota
// and well-formed.
func TestGDBS(t *testing.T) {
	t.Parallel()
	root := gdbs.Dir(t)
	dirs, _ := filepath.Glob(filepath.Join(root, "deals", "*"))
	if len(dirs) == 0 {
		t.Skipf("GDBS data not found at %s; skipping", root)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			b, err := dealfile.Load(dir)
			require.NoError(t, err)
			run := simulate(t, b, 5)
			require.Len(t, run.outputs, 5*6)
			for i, o := range run.outputs {
				requireValid(t, b, run.gradings[i], o)
			}
			require.Empty(t, run.log.byStatus("DENIED"))
			require.Empty(t, run.log.byStatus("INVALID"))
			// Every challenge is ruled on, and none is frivolous.
			ruled := map[string]debate.Ruling{}
			for _, o := range run.outputs {
				for _, r := range o.Rulings {
					ruled[r.ChallengeID] = r
				}
			}
			for _, o := range run.outputs {
				for _, ch := range o.Challenges {
					r, ok := ruled[ch.ChallengeID]
					require.True(t, ok, ch.ChallengeID)
					require.False(t, r.Frivolous, ch.ChallengeID)
					require.True(t, r.Upheld, "%s: %s", ch.ChallengeID, r.Reason)
				}
			}
		})
	}
}

func TestTextsCiteOnlyTheDealsIDs(t *testing.T) {
	t.Parallel()
	specs := standardSpecs("Quartz Ops", figures{3_000_000, 65, 200_000, 20, 2000, 105, 5e9}, debate.GradeC)
	specs[6].text = "TAM per the C99 report 123e4567-e89b-12d3-a456-426614174000, see claim C2"
	b := buildDeal("ids", "Quartz Ops", specs)
	b.Claims[6].Value = nil // the claim is stated only in words
	g := sanad.Grade(b)
	foreign := "9b2e4c1d-0000-4000-8000-00000000abcd"
	tr := []debate.AgentOutput{{AgentID: "llm", Role: debate.RoleSanadBreaker, RoundNumber: 1, Challenges: []debate.Challenge{
		{ChallengeID: foreign, ClaimRefs: []string{claimID(b, "C1")}, DefectType: "UNKNOWN_SOURCE", EvidenceRefs: []string{b.Sanads[0].PrimaryEvidenceID}, Description: "C42 looks odd"},
	}}}
	for _, role := range debate.IDISRoles {
		out := turn(t, role, b, g, 1, tr, nil)
		requireValid(t, b, g, out)
		for _, bad := range []string{"123e4567-e89b-12d3-a456-426614174000", "C99", foreign, "C42"} {
			require.NotContains(t, out.Content, bad, role)
		}
	}
	adv := turn(t, debate.RoleAdvocate, b, g, 1, nil, nil)
	require.Contains(t, adv.Content, "an unresolved id report an unresolved id, see claim C2")
	require.Contains(t, adv.ClaimRefs, claimID(b, "C2"), "a claim a quoted text names is referenced")
}

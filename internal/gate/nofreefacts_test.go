package gate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNoFreeFactsDetector(t *testing.T) {
	t.Parallel()
	fx := setup(t)
	c1, c3, k1 := claimID(1), claimID(3), calcID(1)

	// Factual sentences: rejected without a ref, accepted with a valid one.
	factual := []struct{ text, kind string }{
		{"ARR reached $4.5M.", "money"},
		{"Contracts worth USD 12,000 were signed.", "money"},
		{"The market is worth €3bn.", "money"},
		{"Sales were 4.5M last year.", "amount"},
		{"Gross margin is 72.5%.", "percentage"},
		{"Churn fell to 3 percent.", "percentage"},
		{"Net retention is one hundred and ten per cent.", "number word"},
		{"They serve 120 customers.", "count"},
		{"The company has 45 employees.", "count"},
		{"Revenue grew 3x.", "growth"},
		{"Bookings doubled.", "growth"},
		{"The figures are for 2025.", "date or period"},
		{"Results for Q4 2025 are in.", "date or period"},
		{"The model covers FY2025.", "date or period"},
		{"The deck is dated Dec 2025.", "date or period"},
		{"It closed in December.", "date or period"},
		{"The TAM is large.", "market size"},
		{"The serviceable market is narrow.", "market size"},
		{"The company raised a Series A.", "funding"},
		{"The valuation looks rich.", "funding"},
		{"The round was led by Sequoia.", "funding"},
		{"The anchor account is Acme.", "named entity"},
		{"Reviewed. Acme Holdings is the anchor account.", "named entity"},
		{"Introduction: Globex is the anchor account.", "named entity"},
		{"Their biggest customers are banks.", "named entity relation"},
		{"The team partnered with a bank.", "named entity relation"},
		{"Northwind signed with Globex.", "named entity"},
		{"Burn is under control.", "metric"},
		{"The company is profitable.", "metric"},
		{"SOC2 is in place.", "figure"},
		{"AWS hosts the platform.", "acronym"},
		{"It is a twofold improvement.", "number word"},
		{"Costs rose sharply.", "growth"},
		{"• 3 new logos this quarter", "count"},
		{"The deal (Globex) is in play.", "named entity"},
		{"It costs $ 5 a seat.", "money"},
		{"Margin: 72.5 %.", "percentage"},
		{"The revenue_growth field is set.", "metric"},
		{"The field churn_v2 is set.", "metric"},
		{"The field build_7 is set.", "figure"},
		{"FY25 looks better.", "date or period"},
		{"H2 is seasonal.", "date or period"},
		{"A Series B is planned.", "funding"},
	}
	for _, tc := range factual {
		t.Run("factual/"+tc.text, func(t *testing.T) {
			t.Parallel()
			sc := scanText(tc.text, fx.facts)
			require.True(t, sc.factual(), "no fact found")
			kinds := []string{}
			for _, f := range sc.findings {
				kinds = append(kinds, f.kind)
			}
			require.Contains(t, kinds, tc.kind)

			vs := NoFreeFacts(tc.text, nil, fx.facts)
			require.True(t, hasViolation(vs, RuleNoFreeFacts, "text"), "no refs: %v", vs)
			require.Empty(t, NoFreeFacts(tc.text, []string{c1}, fx.facts), "a claim ref supports it")
			require.Empty(t, NoFreeFacts(tc.text, []string{k1}, fx.facts), "a calc ref supports it")
			// An unknown ref is never enough.
			vs = NoFreeFacts(tc.text, []string{otherDealClaim}, fx.facts)
			require.True(t, hasViolation(vs, RuleNoFreeFacts, "text"), "%v", vs)
			require.True(t, hasViolation(vs, RuleNoFreeFactsUnknownRef, "refs[0]"), "%v", vs)
		})
	}

	// Non-factual sentences pass without refs.
	nonFactual := []string{
		"",
		"I reserve judgement until the evidence chains are repaired.",
		"The arbiter should weigh the open challenges before any recommendation is made.",
		"However, the burden of proof stays with the advocate.",
		"This turn raises no new challenge.",
		"My position is unchanged: INVEST_WITH_CONDITIONS, pending the cure.",
		"The Sanad Breaker found a BROKEN_CHAIN; the defect is FATAL and its cure is RECONSTRUCT_CHAIN.",
		"Corroboration is AHAD_1, short of MUTAWATIR, so grade B stands.",
		"I defer to the Investment Committee on this.",
		"We should not decide on the present record.",
		"Nothing here changes the verdict.",
		"I defer to the arbiter (The ruling is theirs); However, the record stays open.",
		"The advocate says: \"This is settled.\" It is not.",
		"The SANAD review and the IC memo wait on the cure.",
		"The field next_step is set.",
		// A sentence's first word is capitalised for the sentence, whatever
		// the word.
		"Introduction to the company.",
		"Summary of the open challenges. Overview of the record follows.",
		"Conclusion: the record is incomplete.\nRecap of the turn.",
	}
	for _, text := range nonFactual {
		t.Run("non-factual/"+text, func(t *testing.T) {
			t.Parallel()
			sc := scanText(text, fx.facts)
			require.False(t, sc.factual(), "found %v", sc.findings)
			require.Empty(t, NoFreeFacts(text, nil, fx.facts))
		})
	}

	t.Run("ids in the text are references, not facts", func(t *testing.T) {
		t.Parallel()
		for _, text := range []string{
			"I challenge C3.",
			"See claim " + c3 + " on this.",
			"Compare (C3) and [" + c3 + "].",
			"The C3's chain is the issue.",
		} {
			sc := scanText(text, fx.facts)
			require.False(t, sc.factual(), "%q: %v", text, sc.findings)
			require.Equal(t, []string{c3}, sc.cited, text)
			// Citing a claim requires it among the refs.
			vs := NoFreeFacts(text, nil, fx.facts)
			require.True(t, hasViolation(vs, RuleNoFreeFacts, "text"), "%q: %v", text, vs)
			require.Empty(t, NoFreeFacts(text, []string{c3}, fx.facts), text)
		}
		// Evidence, span and document ids are neither facts nor refs.
		sc := scanText("Evidence "+evID(2)+" quotes span "+spanID(2)+" of document "+docID(1)+".", fx.facts)
		require.False(t, sc.factual(), "%v", sc.findings)
		require.Empty(t, sc.cited)
	})

	t.Run("the text cites a claim its refs omit", func(t *testing.T) {
		t.Parallel()
		vs := NoFreeFacts("ARR is $4.5M (C1) and runway is 18 months (C5).", []string{c1}, fx.facts)
		require.Len(t, vs, 1)
		require.Equal(t, RuleNoFreeFacts, vs[0].Rule)
		require.Contains(t, vs[0].Detail, "C5")
	})

	t.Run("unknown ids cited in the text", func(t *testing.T) {
		t.Parallel()
		for _, text := range []string{
			"Per claim 00000000-0000-4000-8000-000000000999 the case holds.",
			"This follows from C42.",
		} {
			vs := NoFreeFacts(text, []string{c1}, fx.facts)
			require.True(t, hasViolation(vs, RuleNoFreeFactsUnknownRef, "text"), "%q: %v", text, vs)
		}
	})

	t.Run("unknown refs", func(t *testing.T) {
		t.Parallel()
		// Each unknown ref is reported, even next to a known one and even
		// when the text asserts nothing.
		vs := NoFreeFacts("Revenue grew.", []string{c1, "C1", otherDealClaim}, fx.facts)
		require.Equal(t, []string{RuleNoFreeFactsUnknownRef}, rules(vs))
		require.True(t, hasViolation(vs, RuleNoFreeFactsUnknownRef, "refs[1]"))
		require.True(t, hasViolation(vs, RuleNoFreeFactsUnknownRef, "refs[2]"))
		vs = NoFreeFacts("Nothing to add.", []string{"made-up"}, fx.facts)
		require.True(t, hasViolation(vs, RuleNoFreeFactsUnknownRef, "refs[0]"))
		// Without Facts, nothing is known.
		vs = NoFreeFacts("Revenue grew.", []string{c1}, nil)
		require.True(t, hasViolation(vs, RuleNoFreeFacts, "text"))
		require.True(t, hasViolation(vs, RuleNoFreeFactsUnknownRef, "refs[0]"))
	})

	t.Run("deterministic and sorted", func(t *testing.T) {
		t.Parallel()
		text := "Revenue of $4.5M (C5) per C42 and 00000000-0000-4000-8000-000000000999."
		a := NoFreeFacts(text, []string{"x", "y"}, fx.facts)
		b := NoFreeFacts(text, []string{"x", "y"}, fx.facts)
		require.Equal(t, a, b)
		require.IsNonDecreasing(t, func() []string {
			var keys []string
			for _, v := range a {
				keys = append(keys, v.Rule+"\x00"+v.Field+"\x00"+v.Detail)
			}
			return keys
		}())
	})
}

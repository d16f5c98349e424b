package rules

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// matnFindings are the contradiction finder's: every open INCONSISTENCY,
// UNIT_MISMATCH, TIME_WINDOW_MISMATCH and STALENESS defect, cross-document
// or against a recomputed calc.
func (v *view) matnFindings() []finding {
	var out []finding
	for _, c := range v.claims {
		for _, d := range c.openDefects() {
			if !isMatn(d.Type) {
				continue
			}
			out = append(out, v.defectFinding(c, d))
		}
	}
	sortFindings(out)
	return out
}

// contradictionTurn challenges cross-document inconsistencies, unit and
// period mismatches and stale versions, checks every calc against the
// claim it recomputes, and takes a position: PASS when a material claim is
// contradicted or inflated, INVEST_WITH_CONDITIONS when any mismatch
// stands, INVEST when the sources agree. Its confidence is the mean
// strength of the evidence showing its findings; with none, how much of
// the material weight was cross-checked by two or more independent
// sources (0.40 + 0.50 × that share).
func contradictionTurn(ctx context.Context, v *view) (*debate.AgentOutput, error) {
	d := newDraft(v)
	fs := v.matnFindings()
	fresh := d.raiseNew(v, fs)
	company := cmp.Or(v.deal.Deal.CompanyName, "the company")

	if len(fs) == 0 {
		d.say("Round %d: the contradiction finder finds no inconsistency, unit, period or version mismatch across the documents of %s", v.round, company)
	} else {
		d.say("Round %d: the contradiction finder finds %s across the documents of %s, %d new this round", v.round, pluralES(len(fs), "mismatch"), company, len(fresh))
		for i, f := range fs {
			if i == maxChallenges {
				break
			}
			id := ""
			if i := slices.IndexFunc(fresh, f.same); i >= 0 {
				id = "challenge " + d.challenges[i].ChallengeID + ": "
			}
			d.say("%s%s is %s by a %s %s", id, d.fact(f.claim), mismatchVerb(f.typ), f.severity, f.typ)
		}
	}
	calcQuestions := 0
	for _, k := range v.calcs {
		if _, ok := calcOutput(k); !ok {
			continue
		}
		c := v.calcClaim(k)
		if c == nil {
			continue
		}
		if calcAgrees(k, c) {
			d.say("Recomputation agrees: %s matches %s", d.calcFact(k), d.fact(c))
			continue
		}
		d.say("Recomputation disagrees: %s against %s", d.calcFact(k), d.fact(c))
		if !c.hasDefect(debate.DefectInconsistency) && calcQuestions < 3 {
			calcQuestions++
			d.question("Which figure is right for %s: the stated %s or the recomputed one (%s)", d.ref(c), formatValue(c.claim.Value), d.refCalc(k))
		}
	}

	d.followUps(v)
	mat := v.material()
	var redFlags, other []*claimView
	for _, f := range fs {
		if f.claim.material() && f.claim.redFlag() && !slices.Contains(redFlags, f.claim) {
			redFlags = append(redFlags, f.claim)
		} else if !slices.Contains(other, f.claim) {
			other = append(other, f.claim)
		}
	}
	switch {
	case len(redFlags) > 0:
		d.position = debate.RecommendPass
		d.say("Position PASS: %s contradicted or inflated in a material position", someKeys(d, redFlags))
	case len(fs) > 0:
		d.position = debate.RecommendConditional
		d.say("Position INVEST_WITH_CONDITIONS: the mismatches on %s must be reconciled first", someKeys(d, other))
	default:
		// Finding nothing is not a reason to invest: the contradiction
		// finder abstains.
		d.say("No position: finding no contradiction says nothing for or against the investment, so the contradiction finder abstains")
	}

	if len(fs) > 0 {
		d.confidence = mean(fs, func(f finding) float64 { return f.strength })
		d.justification = fmt.Sprintf("Confidence %s is the mean strength of the evidence showing %s (the best grade among the sources or calcs that disagree)",
			f2(round2(d.confidence)), pluralES(len(fs), "mismatch"))
	} else {
		crossChecked := func(c *claimView) bool { return c.grade.IndependentCount >= 2 }
		share := weightedShare(mat, crossChecked)
		d.confidence = 0.4 + 0.5*share
		if crossed := filter(mat, crossChecked); len(crossed) > 0 {
			d.say("Cross-checked by two or more independent sources: %s", listSome(crossed, d.fact))
		}
		if single := filter(mat, func(c *claimView) bool { return !crossChecked(c) }); len(single) > 0 {
			d.say("Single-source, so not cross-checked: %s", someKeys(d, single))
		}
		d.justification = fmt.Sprintf("No mismatch found: confidence %s = 0.40 + 0.50 × %s of the material weight cross-checked by two or more independent sources", f2(round2(d.confidence)), f2(share))
	}

	tc := newCaller(ctx, v, 1)
	for _, f := range fresh {
		if tc.left[tools.SearchEvidence] <= 2 {
			break
		}
		if err := tc.searchFor(v, f.claim); err != nil {
			return nil, err
		}
	}
	if company != "the company" && len(v.calls(v.role, tools.QueryEnrichment, 1, v.round)) == 0 && len(mat) > 0 {
		var points []string
		for _, c := range byMateriality(mat) {
			if m := c.grade.Metric; m != "" && !slices.Contains(points, m) && len(points) < 5 {
				points = append(points, m)
			}
		}
		if len(points) > 0 {
			ok, err := tc.call(tools.QueryEnrichment, enrichmentArgs{EntityType: "COMPANY", EntityName: company, DataPoints: points})
			if err != nil {
				return nil, err
			}
			if ok {
				d.say("External enrichment was queried for the company; its results are grade C or D and corroborate no registry claim on their own")
			}
		}
	}

	for _, f := range first(fs, maxTests) {
		d.test(fmt.Sprintf("Obtain one authoritative source for %s of claim %s covering the claim's period and latest version", metricName(f.claim), f.claim.key()),
			requiredEvidence(f.claim),
			fmt.Sprintf("The %s finding on claim %s fails if that source agrees with the stated figure within its rounding", f.typ, f.claim.key()))
	}
	if len(fs) == 0 {
		for _, c := range byMateriality(mat) {
			if len(d.tests) == 2 {
				break
			}
			d.ref(c)
			d.test(fmt.Sprintf("Compare %s of claim %s with a second independent document", metricName(c), c.key()),
				requiredEvidence(c),
				fmt.Sprintf("The no-contradiction reading fails if the second document %s", tolerance(c)))
		}
	}
	d.counter = "The documents may agree only because they share an origin: a figure copied from the deck into the model would look consistent while both are wrong."
	if len(fs) > 0 {
		f := fs[0]
		d.counter = fmt.Sprintf("The mismatch on claim %s may be a difference of definition (period, unit or version) rather than of fact; once both sources state the same basis they could agree", f.claim.key())
	}
	d.failureModes = []string{"Two sources that agree share an undisclosed origin.", "A mismatch comes from a parsing or extraction error, not the documents."}
	var arg argument
	if len(fs) > 0 {
		f := fs[0]
		arg = d.argue(fmt.Sprintf("%s is %s by a %s %s: %s", d.fact(f.claim), mismatchVerb(f.typ), f.severity, f.typ, clip(f.detail, 300)), []*claimView{f.claim})
	} else if len(mat) > 0 {
		arg = d.argue(fmt.Sprintf("No source contradicts another on the %s, so there is nothing to argue either way", plural(len(mat), "material claim")), mat[:min(3, len(mat))])
	}
	d.structured = struct {
		Findings int      `json:"findings"`
		New      int      `json:"new_challenges"`
		Argument argument `json:"argument"`
	}{len(fs), len(fresh), arg}
	return d.output(v.role, v.round, tc.made), nil
}

// pluralES writes "1 mismatch" / "2 mismatches".
func pluralES(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ses", n, word)
}

// mismatchVerbs say what each matn defect does to a claim.
var mismatchVerbs = map[debate.DefectType]string{
	debate.DefectInconsistency: "contradicted",
	debate.DefectUnitMismatch:  "inflated or relabelled",
	debate.DefectTimeWindow:    "left unverified for its own period",
	debate.DefectStaleness:     "superseded",
}

func mismatchVerb(t debate.DefectType) string { return cmp.Or(mismatchVerbs[t], "put in doubt") }

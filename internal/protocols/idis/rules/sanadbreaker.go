package rules

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// finding is a challenge a role would raise, before it is numbered.
type finding struct {
	claim    *claimView
	typ      debate.DefectType
	severity debate.Severity
	cure     debate.CureProtocol
	refs     []string
	detail   string
	strength float64 // how strongly the registry shows it
	// flaggable: the registry does not hold this defect yet, so flagging it
	// records something new (a detected defect flagged again would count
	// against the grade twice).
	flaggable bool
}

// same reports whether g challenges f's claim with f's defect type.
func (f finding) same(g finding) bool { return g.claim == f.claim && g.typ == f.typ }

// defectFinding challenges an open defect the registry holds, citing its
// evidence.
func (v *view) defectFinding(c *claimView, d debate.Defect) finding {
	return finding{claim: c, typ: d.Type, severity: d.Severity, cure: d.CureProtocol,
		refs: v.defectRefs(c, d), detail: d.Description, strength: v.defectStrength(d)}
}

// weakSourceFinding challenges a weakly graded claim with no defect to
// explain its grade as UNKNOWN_SOURCE, MINOR: nothing vouches for its
// source. It is as strong as the claim's grade is weak.
func (v *view) weakSourceFinding(c *claimView, detail string) finding {
	return finding{claim: c, typ: debate.DefectUnknownSource, severity: debate.SeverityMinor,
		cure: debate.CureRequestSource, refs: v.claimRefs(c), detail: detail, strength: 1 - gradeScore(c.grade.Grade)}
}

// sortFindings orders findings worst first: severity, materiality weight,
// then claim key and type.
func sortFindings(fs []finding) {
	slices.SortStableFunc(fs, func(a, b finding) int {
		return cmp.Or(cmp.Compare(severityRank(a.severity), severityRank(b.severity)),
			cmp.Compare(b.claim.weight, a.claim.weight),
			cmp.Compare(a.claim.claim.Key, b.claim.claim.Key),
			cmp.Compare(a.claim.id(), b.claim.id()),
			cmp.Compare(a.typ, b.typ))
	})
}

// chainFindings are the sanad breaker's: every open defect of the chain or
// the source (not the matn defects, which are the contradiction
// finder's), unknown sources the grader does not record as defects
// (a material claim whose primary evidence is grade D or whose span names
// no document of the deal), and material claims graded C or D with no
// defect to explain it: their single weak source is challenged as
// UNKNOWN_SOURCE, MINOR, since nothing independent vouches for it.
func (v *view) chainFindings() []finding {
	var out []finding
	for _, c := range v.claims {
		n := len(out)
		for _, d := range c.openDefects() {
			if isMatn(d.Type) {
				continue
			}
			out = append(out, v.defectFinding(c, d))
		}
		if !c.material() || c.blocked() || c.hasDefect(debate.DefectUnknownSource) {
			continue
		}
		if why, refs := v.unknownSource(c); why != "" {
			out = append(out, finding{claim: c, typ: debate.DefectUnknownSource, severity: debate.SeverityMajor,
				cure: debate.CureRequestSource, refs: refs, detail: why, strength: scoreA, flaggable: true})
			continue
		}
		if len(out) == n && c.rank() >= 2 && !c.onlyMatn() {
			e := v.primaryEvidence(c)
			src := "no resolvable primary evidence"
			if e != nil {
				src = fmt.Sprintf("a grade %s %s source", e.SourceGrade, cmp.Or(e.SourceSystem, "unnamed"))
			}
			out = append(out, v.weakSourceFinding(c, fmt.Sprintf("the claim rests on %s with %s corroboration (%s): nothing independent of the company vouches for it",
				src, c.grade.Corroboration, plural(c.grade.IndependentCount, "independent source group"))))
		}
	}
	sortFindings(out)
	return out
}

// unknownSource finds a source the registry cannot vouch for: a primary
// evidence item graded D, or a primary span whose document is not in the
// deal. It returns why and the ids that show it.
func (v *view) unknownSource(c *claimView) (string, []string) {
	e := v.primaryEvidence(c)
	if e != nil && e.SourceGrade == debate.GradeD {
		return fmt.Sprintf("primary evidence %s comes from a grade D source (%s): an unreliable or unidentified origin",
			e.ID, cmp.Or(e.SourceSystem, "no source system")), []string{e.ID}
	}
	spans := []string{c.claim.PrimarySpanID}
	if e != nil {
		spans = append(spans, e.SourceSpanID)
	}
	for _, id := range spans {
		if s := v.spans[id]; s != nil && s.DocumentID != "" && v.docs[s.DocumentID] == nil {
			return fmt.Sprintf("primary span %s cites document %s, which the deal does not hold: the source cannot be identified",
				s.ID, clip(s.DocumentID, 80)), []string{s.ID}
		}
	}
	return "", nil
}

// raiseNew turns the findings not yet raised in the transcript (a role
// never raises a claim and defect type pair again) into challenges on one
// claim each, numbered by role, round and their number in the turn
// ("sanad_breaker-r1-01"), at most maxChallenges, and returns them with
// their findings.
func (d *draft) raiseNew(v *view, fs []finding) []finding {
	done := pairsOf(v.challenges())
	var raisedNow []finding
	for _, f := range fs {
		p := pair{f.claim.id(), f.typ}
		if done[p] || len(raisedNow) == maxChallenges || len(f.refs) == 0 {
			continue
		}
		done[p] = true
		raisedNow = append(raisedNow, f)
		desc := fmt.Sprintf("%s: %s %s, %s. Evidence: %s", d.fact(f.claim), f.severity, f.typ, clip(f.detail, 600), joinList(mapStrings(f.refs, v.describeEvidence)))
		d.challenges = append(d.challenges, debate.Challenge{
			ChallengeID:  fmt.Sprintf("%s-r%d-%02d", v.role, v.round, len(raisedNow)),
			ClaimRefs:    []string{f.claim.id()},
			DefectType:   string(f.typ),
			Severity:     string(f.severity),
			CureProtocol: string(f.cure),
			EvidenceRefs: f.refs,
			Description:  sentence(clip(desc, 1500)),
		})
	}
	return raisedNow
}

// ownEarlier returns the role's challenges of earlier rounds that still
// stand: upheld, or not yet ruled on.
func (v *view) ownEarlier() []raised {
	rs := v.rulings()
	return filter(v.challenges(), func(r raised) bool {
		ru, ruled := rs[r.ch.ChallengeID]
		return r.role == v.role && r.round < v.round && (!ruled || ru.Upheld)
	})
}

// sanadBreakerTurn challenges weak chains: chain defects, unknown sources
// and material claims graded C or D. It flags (flag_defect) the most severe
// new findings the registry does not hold yet, searches evidence for the
// new structural findings and asks for evidence on MISSING_LINK claims.
// Its confidence is the mean strength of the challenges it stands by.
func sanadBreakerTurn(ctx context.Context, v *view) (*debate.AgentOutput, error) {
	d := newDraft(v)
	fs := v.chainFindings()
	fresh := d.raiseNew(v, fs)
	earlier := v.ownEarlier()

	if len(fresh) == 0 {
		d.say("Round %d: the sanad breaker finds no new weak chain", v.round)
	} else {
		d.say("Round %d: the sanad breaker raises %s", v.round, plural(len(fresh), "new challenge"))
		for i, f := range fresh {
			d.say("Challenge %s: %s has a %s %s (cure %s)", d.challenges[i].ChallengeID, d.fact(f.claim), f.severity, f.typ, f.cure)
		}
	}
	d.followUps(v)
	mat := v.material()
	if len(mat) > 0 {
		weak := len(filter(mat, func(c *claimView) bool { return c.rank() >= 2 }))
		d.say("%d of %d material claims (%s) rest on grade C or D evidence", weak, len(mat), someKeys(d, mat))
	}

	// Confidence: mean strength of the findings it stands by (new and
	// earlier ones still standing); with none, the chains look sound and
	// the confidence is the material claims' weighted grade score.
	standing := pairsOf(earlier)
	stood := filter(fs, func(f finding) bool { return standing[pair{f.claim.id(), f.typ}] || slices.ContainsFunc(fresh, f.same) })
	if n := len(stood); n > 0 {
		d.confidence = mean(stood, func(f finding) float64 { return f.strength })
		d.justification = fmt.Sprintf("Confidence %s is the mean strength of %s: structural defects 0.90, others the best grade of the evidence showing them, weak-source challenges 1 minus the claim's grade score",
			f2(round2(d.confidence)), plural(n, "standing challenge"))
	} else {
		d.confidence = weightedScore(mat)
		d.justification = fmt.Sprintf("No chain stands challenged: confidence %s is the weighted grade score of the %s", f2(round2(d.confidence)), plural(len(mat), "material claim"))
	}

	tc := newCaller(ctx, v, 1)
	// Flag the most severe new findings the registry does not hold yet.
	flagged := v.flaggedPairs()
	var flagNotes []string
	for _, f := range fresh {
		if !f.flaggable || flagged[pair{f.claim.id(), f.typ}] || !tc.can(tools.FlagDefect) {
			continue
		}
		desc := clip(fmt.Sprintf("Claim %s (%s): %s", f.claim.key(), metricName(f.claim), f.detail), 1000)
		ok, err := tc.call(tools.FlagDefect, flagDefectArgs{ClaimID: f.claim.id(), DefectType: string(f.typ), Severity: string(f.severity),
			Description: desc, EvidenceRefs: f.refs, CureProtocol: string(f.cure)})
		if err != nil {
			return nil, err
		}
		if ok {
			flagNotes = append(flagNotes, fmt.Sprintf("%s on %s", f.typ, d.ref(f.claim)))
		}
	}
	if len(flagNotes) > 0 {
		d.say("Flagged in the registry: %s", joinList(flagNotes))
	}
	for _, f := range fresh {
		if f.severity == debate.SeverityMinor || !tc.can(tools.SearchEvidence) || tc.left[tools.SearchEvidence] <= 2 {
			continue
		}
		if err := tc.searchFor(v, f.claim); err != nil {
			return nil, err
		}
	}
	// Ask for evidence on the MISSING_LINK claims nobody asked for yet.
	asked := v.requested()
	for _, c := range v.claims {
		if !c.hasDefect(debate.DefectMissingLink) || asked[c.id()] {
			continue
		}
		d.requests = append(d.requests, debate.EvidenceRequest{
			Query:     clip(fmt.Sprintf("source document for %s (claim %s): %s", metricName(c), c.key(), c.claim.Text), 300),
			ClaimRefs: []string{c.id()},
		})
		d.say("Evidence requested for %s: no span supports it", d.brief(c))
	}

	for i, f := range first(fresh, maxTests) {
		d.test(fmt.Sprintf("Produce the evidence that cures the %s of claim %s", f.typ, f.claim.key()),
			requiredEvidence(f.claim),
			fmt.Sprintf("Challenge %s fails if claim %s gets a resolvable span and chain with evidence graded B or better", d.challenges[i].ChallengeID, f.claim.key()))
	}
	if len(fresh) == 0 {
		for _, r := range earlier {
			for _, id := range r.ch.ClaimRefs {
				if c := v.byID[id]; c != nil && len(d.tests) < maxTests {
					d.test(fmt.Sprintf("Re-grade claim %s once its chain is repaired", c.key()), requiredEvidence(c),
						fmt.Sprintf("Challenge %s fails if claim %s is graded B or better with no open %s defect", clip(r.ch.ChallengeID, 80), c.key(), clip(r.ch.DefectType, 40)))
				}
			}
		}
	}
	d.counter = "The weak grades may reflect how the data room was indexed rather than the facts: company documents not yet registered (audited accounts, bank statements) could corroborate the challenged claims and cure the chains."
	if len(fresh) > 0 {
		f := fresh[0]
		d.counter = fmt.Sprintf("The %s on claim %s may be an indexing gap rather than a weak source: a registered primary document could cure it without changing the figure", f.typ, f.claim.key())
	}
	d.failureModes = []string{"A challenged claim is cured by evidence already held outside the registry.", "A chain defect is an ingestion artefact, not a defect of the source."}
	var arg argument
	if len(fs) > 0 {
		best := fs[0]
		for _, f := range fs[1:] {
			if severityRank(f.severity) == severityRank(best.severity) && f.strength > best.strength {
				best = f
			}
		}
		arg = d.argue(fmt.Sprintf("%s has a %s %s: %s", d.fact(best.claim), best.severity, best.typ, clip(best.detail, 300)), []*claimView{best.claim})
	} else if len(mat) > 0 {
		arg = d.argue(fmt.Sprintf("No chain of the %s is weak enough to challenge", plural(len(mat), "material claim")), mat[:min(3, len(mat))])
	}
	d.structured = struct {
		New      int      `json:"new_challenges"`
		Earlier  int      `json:"standing_challenges"`
		Argument argument `json:"argument"`
	}{len(fresh), len(earlier), arg}
	return d.output(v.role, v.round, tc.made), nil
}

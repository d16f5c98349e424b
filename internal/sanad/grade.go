// Package sanad grades a deal's claims from their evidence chains (SANAD.md,
// seed 001 §6): it reads the values, metrics and periods in the evidence
// texts, checks agreement and independence, recomputes calcs, checks chain
// integrity and document versions, and turns what it finds into defects,
// grades, verdicts and actions, each with the ordered steps that produced
// it.
//
// The package is pure: no I/O, no clock, no state between calls. The same
// bundle always gives the same grading, whatever the order of its arrays,
// the spelling of its ids or of its numbers. Nothing is keyed on ids,
// names or positions: a claim's metric is read from its predicate or text,
// an evidence item's from its span's text.
//
// Work is linear in the size of the deal: everything is indexed by id and by
// metric; no step compares all pairs of claims or of evidence items. The one
// multiplicative term is inherent to rule 5: every evidence item that no
// sanad cites and that names a metric is evidence for every claim of that
// metric.
package sanad

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/debated/debated/internal/debate"
)

// Actor is the actor recorded on the defects the grader finds.
const Actor = "sanad"

// Options tune a grading. The zero value is ready to use.
type Options struct {
	// Now stamps the CreatedAt and UpdatedAt of the defects found. The
	// grader reads no clock: zero leaves them zero.
	Now time.Time
	// Records are the deal's stored defect records (debate.GradingStore):
	// a detected defect whose record is CURED or WAIVED no longer counts,
	// and every OPEN flagged record counts against its claim with its own
	// severity. Records of other deals or unknown claims are ignored.
	Records []debate.Defect
}

// Grade grades every claim and calc of b. It never fails: what is wrong in
// the bundle (dangling references, missing evidence, unreadable texts) is a
// defect or an explanation step, not an error. b should have passed
// (*debate.DealBundle).Validate; with duplicate ids the first occurrence in
// id order wins. b is not modified.
func Grade(b *debate.DealBundle) *debate.DealGrading {
	return GradeWithOptions(b, Options{})
}

// GradeWithOptions is Grade with options.
func GradeWithOptions(b *debate.DealBundle, opts Options) *debate.DealGrading {
	g := newGrader(b, opts)
	return g.run()
}

// grader holds the indexes of one grading.
type grader struct {
	b    *debate.DealBundle
	opts Options

	claims   map[string]*debate.Claim
	ev       map[string]*debate.EvidenceItem
	spans    map[string]*debate.Span
	docs     map[string]*debate.Document
	sanads   map[string][]*debate.Sanad // by claim id
	cited    map[string]bool            // evidence ids any sanad cites
	bySpan   map[string][]*debate.EvidenceItem
	newer    docVersions
	readings map[string][]Reading     // by evidence id, filled lazily
	records  map[string]debate.Defect // stored defect records by id
	// uncited lists, per metric family, the evidence items no sanad cites
	// whose text names that metric (rule 5).
	uncited map[Family][]*debate.EvidenceItem
	// byEnd and byValue index the claims by metric and period end, and by
	// metric and rounded value, to find the claim an uncited item is about.
	byEnd   map[endKey][]*claimState
	byValue map[valueKey][]*claimState
}

type endKey struct {
	family Family
	end    Month
}

type valueKey struct {
	family Family
	units  int64
}

// sortedPtrs returns pointers to xs ordered by id, so that iteration never
// depends on the input order.
func sortedPtrs[T any](xs []T, id func(*T) string) []*T {
	out := make([]*T, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	slices.SortStableFunc(out, func(a, b *T) int { return cmp.Compare(id(a), id(b)) })
	return out
}

func index[T any](xs []*T, id func(*T) string) map[string]*T {
	m := make(map[string]*T, len(xs))
	for _, x := range xs {
		if _, dup := m[id(x)]; !dup {
			m[id(x)] = x
		}
	}
	return m
}

func newGrader(b *debate.DealBundle, opts Options) *grader {
	g := &grader{b: b, opts: opts, readings: map[string][]Reading{}, uncited: map[Family][]*debate.EvidenceItem{}}
	g.records = make(map[string]debate.Defect, len(opts.Records))
	for _, r := range opts.Records {
		g.records[r.ID] = r
	}
	claims := sortedPtrs(b.Claims, func(c *debate.Claim) string { return c.ID })
	evidence := sortedPtrs(b.Evidence, func(e *debate.EvidenceItem) string { return e.ID })
	spans := sortedPtrs(b.Spans, func(s *debate.Span) string { return s.ID })
	docs := sortedPtrs(b.Documents, func(d *debate.Document) string { return d.ID })
	sanads := sortedPtrs(b.Sanads, func(s *debate.Sanad) string { return s.ID })
	g.claims = index(claims, func(c *debate.Claim) string { return c.ID })
	g.ev = index(evidence, func(e *debate.EvidenceItem) string { return e.ID })
	g.spans = index(spans, func(s *debate.Span) string { return s.ID })
	g.docs = index(docs, func(d *debate.Document) string { return d.ID })
	g.newer = newDocVersions(docs)

	g.sanads = map[string][]*debate.Sanad{}
	g.cited = map[string]bool{}
	for _, s := range sanads {
		g.sanads[s.ClaimID] = append(g.sanads[s.ClaimID], s)
		g.cited[s.PrimaryEvidenceID] = true
		for _, id := range s.CorroboratingEvidenceIDs {
			g.cited[id] = true
		}
		for _, n := range s.Chain {
			for _, r := range n.InputRefs {
				g.cited[r] = true
			}
			g.cited[n.OutputRef] = true
		}
	}
	g.bySpan = map[string][]*debate.EvidenceItem{}
	for _, e := range evidence {
		if g.ev[e.ID] != e {
			continue
		}
		g.bySpan[e.SourceSpanID] = append(g.bySpan[e.SourceSpanID], e)
		if g.cited[e.ID] {
			continue
		}
		seen := map[Family]bool{}
		for _, r := range g.read(e) {
			if r.Metric != nil && !seen[r.Metric.Family] {
				seen[r.Metric.Family] = true
				g.uncited[r.Metric.Family] = append(g.uncited[r.Metric.Family], e)
			}
		}
	}
	return g
}

// read returns the readings of an evidence item's span text (none when its
// span does not resolve).
func (g *grader) read(e *debate.EvidenceItem) []Reading {
	if r, ok := g.readings[e.ID]; ok {
		return r
	}
	var r []Reading
	if s, ok := g.spans[e.SourceSpanID]; ok {
		r = ReadText(s.TextExcerpt)
	}
	g.readings[e.ID] = r
	return r
}

// docOf returns the document an evidence item's span is in, or nil.
func (g *grader) docOf(e *debate.EvidenceItem) *debate.Document {
	if s, ok := g.spans[e.SourceSpanID]; ok {
		return g.docs[s.DocumentID]
	}
	return nil
}

// claimState is the grading of one claim in progress.
type claimState struct {
	c      *debate.Claim
	info   claimInfo
	sanads []*debate.Sanad
	chain  *chain

	primary     *debate.EvidenceItem
	primarySpan *debate.Span
	primaryDoc  *debate.Document
	listed      []*debate.EvidenceItem // corroborations the sanad claims
	otherCited  []*debate.EvidenceItem // other items the chain names

	chainProblems []string
	chainRefs     []string
	calcFindings  []calcFinding

	defects map[debate.DefectType]*pendingDefect
	steps   []debate.Step

	result debate.ClaimGrade
}

type pendingDefect struct {
	notes []string
	refs  map[string]bool
}

func (cs *claimState) step(rule, format string, args ...any) {
	cs.steps = append(cs.steps, debate.Step{Rule: rule, Text: fmt.Sprintf(format, args...)})
}

func (cs *claimState) defect(t debate.DefectType, note string, refs ...string) {
	d := cs.defects[t]
	if d == nil {
		d = &pendingDefect{refs: map[string]bool{}}
		cs.defects[t] = d
	}
	d.notes = append(d.notes, note)
	for _, r := range refs {
		if r != "" {
			d.refs[r] = true
		}
	}
	cs.step("defect", "%s (%s): %s", t, t.DefaultSeverity(), note)
}

func (g *grader) run() *debate.DealGrading {
	out := &debate.DealGrading{DealID: g.b.Deal.ID}

	// Claims in key order, so that explanations and outputs are stable.
	claims := sortedPtrs(g.b.Claims, func(c *debate.Claim) string { return c.Key + "\x00" + c.ID })
	states := make([]*claimState, 0, len(claims))
	byID := map[string]*claimState{}
	byFamily := map[Family][]*claimState{}
	for _, c := range claims {
		if _, dup := byID[c.ID]; dup || g.claims[c.ID] != c {
			continue
		}
		cs := g.prepare(c)
		states = append(states, cs)
		byID[c.ID] = cs
		if cs.info.hasMetric {
			byFamily[cs.info.metric.Family] = append(byFamily[cs.info.metric.Family], cs)
		}
	}
	g.indexOwners(states)

	// Calcs are recomputed before claims are judged: a claim that disagrees
	// with a recomputation has an INCONSISTENCY.
	calcs := sortedPtrs(g.b.Calcs, func(c *debate.Calc) string { return c.ID })
	calcStates := make([]*calcState, 0, len(calcs))
	for _, c := range calcs {
		calcStates = append(calcStates, g.recompute(c, byID, byFamily))
	}

	covered := 0
	for _, cs := range states {
		g.judge(cs)
		if _, ok := g.spans[cs.c.PrimarySpanID]; ok {
			covered++
		}
		out.Claims = append(out.Claims, cs.result)
		out.Defects = append(out.Defects, cs.result.Defects...)
		if cs.result.Grade == debate.GradeD {
			out.GradeDCount++
		}
		if cs.result.Blocked {
			out.BlockedClaimKeys = append(out.BlockedClaimKeys, cs.c.Key)
		}
	}
	if len(states) > 0 {
		out.SanadCoverage = roundHalfUp(float64(covered)/float64(len(states)), 0.001)
	}
	slices.Sort(out.BlockedClaimKeys)
	slices.SortStableFunc(out.Defects, func(a, b debate.Defect) int {
		return cmp.Or(cmp.Compare(a.ClaimKey, b.ClaimKey), cmp.Compare(a.ClaimID, b.ClaimID), cmp.Compare(a.Type, b.Type))
	})
	for _, c := range calcStates {
		out.Calcs = append(out.Calcs, g.gradeCalc(c, byID))
	}
	return out
}

// prepare reads the claim, resolves its primary evidence and checks its
// chain. Evidence agreement is judged later (judge), after calcs.
func (g *grader) prepare(c *debate.Claim) *claimState {
	cs := &claimState{c: c, defects: map[debate.DefectType]*pendingDefect{}}
	cs.info = readClaim(c)
	ci := &cs.info
	if ci.hasMetric {
		cs.step("metric", "%s (read from the %s: %q)", ci.metric.Family, ci.metricSource, ci.metric.Phrase)
	} else {
		cs.step("metric", "no known metric in the predicate or the text; only cited evidence is compared")
	}
	if ci.hasValue {
		cs.step("value", "%s %s, period %s, compared at %s", fmtNum(ci.value), ci.kind, ci.window, fmtNum(ci.precision))
	}

	cs.sanads = g.sanads[c.ID]
	cs.chain = newChain(cs.sanads)

	// Primary evidence: the sanad's, else an item quoting the claim's
	// primary span (the worst graded, so that a choice never flatters).
	for _, s := range cs.sanads {
		if e, ok := g.ev[s.PrimaryEvidenceID]; ok && cs.primary == nil {
			cs.primary = e
		}
	}
	if cs.primary == nil && c.PrimarySpanID != "" {
		for _, e := range g.bySpan[c.PrimarySpanID] {
			if cs.primary == nil || debate.GradeRank(e.SourceGrade) > debate.GradeRank(cs.primary.SourceGrade) {
				cs.primary = e
			}
		}
	}
	if s, ok := g.spans[c.PrimarySpanID]; ok {
		cs.primarySpan = s
	} else if cs.primary != nil {
		if s, ok := g.spans[cs.primary.SourceSpanID]; ok {
			cs.primarySpan = s
		}
	}
	if cs.primary != nil {
		cs.primaryDoc = g.docOf(cs.primary)
	} else if cs.primarySpan != nil {
		cs.primaryDoc = g.docs[cs.primarySpan.DocumentID]
	}

	// Items the sanad names: its corroborations, then anything else its
	// chain consumes or outputs.
	seen := map[string]bool{}
	if cs.primary != nil {
		seen[cs.primary.ID] = true
	}
	addTo := func(list *[]*debate.EvidenceItem, id string) {
		if e, ok := g.ev[id]; ok && !seen[id] {
			seen[id] = true
			*list = append(*list, e)
		}
	}
	var listedIDs, otherIDs []string
	for _, s := range cs.sanads {
		listedIDs = append(listedIDs, s.CorroboratingEvidenceIDs...)
		for _, n := range s.Chain {
			if n.Type == debate.ChainNodeCorroboration {
				listedIDs = append(listedIDs, n.InputRefs...)
			} else {
				otherIDs = append(otherIDs, n.InputRefs...)
			}
			otherIDs = append(otherIDs, n.OutputRef)
		}
	}
	slices.Sort(listedIDs)
	slices.Sort(otherIDs)
	for _, id := range listedIDs {
		addTo(&cs.listed, id)
	}
	for _, id := range otherIDs {
		addTo(&cs.otherCited, id)
	}
	cs.chainProblems, cs.chainRefs = g.brokenChain(c, cs.sanads, cs.chain)
	return cs
}

// judge checks the claim's evidence, then grades it.
func (g *grader) judge(cs *claimState) {
	c, ci := cs.c, &cs.info

	// Rule 1: base grade.
	base := debate.GradeD
	switch {
	case cs.primary != nil && validGrade(cs.primary.SourceGrade):
		base = cs.primary.SourceGrade
		cs.step("base_grade", "%s: primary evidence %s has source grade %s", base, cs.primary.ID, base)
	case cs.primary != nil:
		cs.step("base_grade", "D: primary evidence %s has no valid source grade (%q)", cs.primary.ID, cs.primary.SourceGrade)
	default:
		cs.step("base_grade", "D: no resolvable primary evidence")
	}

	// No evidence span at all: MISSING_LINK, blocked by No-Free-Facts.
	hasSpan := cs.primarySpan != nil
	if cs.primary != nil {
		if _, ok := g.spans[cs.primary.SourceSpanID]; ok {
			hasSpan = true
		}
	}
	if !hasSpan {
		cs.defect(debate.DefectMissingLink, "the claim has no resolvable evidence span: no primary span and no primary evidence", c.ID)
	}
	if len(cs.chainProblems) > 0 {
		cs.defect(debate.DefectBrokenChain, strings.Join(cs.chainProblems, "; "), cs.chainRefs...)
	}

	// Evidence checks: primary, the sanad's corroborations, other items it
	// cites, then the uncited items that name the claim's metric.
	type checked struct {
		e       *debate.EvidenceItem
		role    string
		outcome outcome
		ok      bool // the item speaks of the claim's metric
	}
	var results []checked
	x12 := []*debate.EvidenceItem{}
	directAgree := false
	check := func(e *debate.EvidenceItem, role string, cited bool) {
		r, ok, why := g.readingFor(e, ci, cited)
		if !ok {
			if role != "uncited" {
				cs.step("evidence", "%s %s: %s", role, e.ID, why)
			}
			results = append(results, checked{e, role, oIncomparable, false})
			return
		}
		doc := g.docOf(e)
		newer := doc != nil && cs.primaryDoc != nil && g.newer.isNewer(doc, cs.primaryDoc)
		if role != "primary" && doc != nil && !newer && g.newer.superseded(doc) {
			cs.step("evidence", "%s %s: its document %s (%s) has a newer version; ignored", role, e.ID, doc.ID, doc.VersionLabel)
			results = append(results, checked{e, role, oIncomparable, false})
			return
		}
		o, detail := compare(ci, r)
		if role == "uncited" && o != oAgree {
			// An uncited item is about the claim's metric, but maybe about
			// another claim of that metric (another period, another value
			// that claim states): then it is that claim's evidence.
			if other := g.ownerOf(cs, r, o); other != nil {
				cs.step("evidence", "uncited %s %s: it is evidence for claim %s (%s)", e.ID, o, other.c.Key, other.info.window)
				results = append(results, checked{e, role, oIncomparable, false})
				return
			}
		}
		where := ""
		if newer {
			where = fmt.Sprintf(" (in %s, a newer version of the primary's %s)", doc.VersionLabel, cs.primaryDoc.VersionLabel)
		}
		cs.step("evidence", "%s %s (grade %s)%s %s: %s", role, e.ID, e.SourceGrade, where, o, detail)
		switch o {
		case oWindow:
			cs.defect(debate.DefectTimeWindow, fmt.Sprintf("%s %s speaks of another period: %s", role, e.ID, detail), e.ID)
		case oDisagree:
			if newer {
				cs.defect(debate.DefectStaleness, fmt.Sprintf("document %s %s states a different value: %s", doc.ArtifactType, doc.VersionLabel, detail), e.ID)
			} else {
				cs.defect(debate.DefectInconsistency, fmt.Sprintf("%s %s states another value: %s", role, e.ID, detail), e.ID)
			}
		case oUnitRelabel:
			cs.defect(debate.DefectUnitMismatch, fmt.Sprintf("%s %s: %s", role, e.ID, detail), e.ID)
		case oUnitX12:
			x12 = append(x12, e)
		case oAgree:
			if role != "primary" && r.Form() != FormMonthly {
				directAgree = true
			}
		}
		results = append(results, checked{e, role, o, true})
	}
	if cs.primary != nil {
		check(cs.primary, "primary", true)
	}
	for _, e := range cs.listed {
		check(e, "corroborator", true)
	}
	for _, e := range cs.otherCited {
		check(e, "cited", true)
	}
	if ci.hasMetric {
		for _, e := range g.uncited[ci.metric.Family] {
			if e != cs.primary { // a primary found through the claim's span
				check(e, "uncited", false)
			}
		}
	}
	// A claim equal to 12 × a monthly figure is an annualised figure
	// presented as the annual metric, unless another source states the
	// annual figure itself.
	if len(x12) > 0 {
		ids := make([]string, len(x12))
		for i, e := range x12 {
			ids[i] = e.ID
		}
		if directAgree {
			cs.step("evidence", "the claim is 12 × the monthly figure of %v, but another source states the annual figure: no unit mismatch", ids)
		} else {
			cs.defect(debate.DefectUnitMismatch, fmt.Sprintf("the claim is 12 × the monthly figure of %v, presented as the annual metric", ids), ids...)
		}
	}
	for _, f := range cs.calcFindings {
		if f.agree {
			cs.step("calc", "calc %s recomputes %s: %s", f.calcID, fmtNum(f.output), f.detail)
		} else {
			cs.defect(debate.DefectInconsistency, fmt.Sprintf("calc %s recomputes %s: %s", f.calcID, fmtNum(f.output), f.detail), append([]string{f.calcID}, f.refs...)...)
		}
	}

	// Corroboration: the primary (unless its own text contradicts the claim)
	// and the agreeing corroborations, grouped by independence.
	var supporters []*debate.EvidenceItem
	var agreeing []*debate.EvidenceItem
	for _, r := range results {
		switch {
		case r.role == "primary" && (r.outcome == oAgree || r.outcome == oNoValue || r.outcome == oIncomparable):
			supporters = append(supporters, r.e)
		case r.role == "corroborator" && r.outcome == oAgree:
			supporters = append(supporters, r.e)
			agreeing = append(agreeing, r.e)
		}
	}

	// Defect lifecycle: closed detections stop counting; open flags count.
	flagged := g.applyRecords(cs)

	// Rule 2: upgrade one step on an independent, agreeing, better-graded
	// corroboration, or on MUTAWATIR; never with a MAJOR or FATAL defect.
	grade := base
	severe := false
	for _, f := range flagged {
		if f.Severity == debate.SeverityMajor || f.Severity == debate.SeverityFatal {
			severe = true
		}
	}
	for t := range cs.defects {
		if s := t.DefaultSeverity(); s == debate.SeverityMajor || s == debate.SeverityFatal {
			severe = true
		}
	}
	var upgradeBy *debate.EvidenceItem
	if cs.primary != nil {
		for _, e := range agreeing {
			ok, why := cs.chain.independent(cs.primary, e)
			switch {
			case !ok:
				cs.step("independence", "corroborator %s is not independent of the primary: %s", e.ID, why)
			case debate.GradeRank(e.SourceGrade) >= debate.GradeRank(base) || !validGrade(e.SourceGrade):
				cs.step("independence", "corroborator %s is independent but its grade %s is not better than %s", e.ID, e.SourceGrade, base)
			case upgradeBy == nil:
				upgradeBy = e
				cs.step("independence", "corroborator %s is independent of the primary and better graded (%s)", e.ID, e.SourceGrade)
			}
		}
	}
	independentCount := cs.chain.groups(supporters)
	status := debate.CorroborationOf(independentCount)
	cs.step("corroboration", "%s: %d independent source group(s) among %d supporting item(s)", status, independentCount, len(supporters))
	switch {
	case upgradeBy == nil && status != debate.CorroborationMutawatir:
		cs.step("upgrade", "none: no independent, agreeing, better-graded corroboration and not MUTAWATIR")
	case severe:
		cs.step("upgrade", "none: the claim has a MAJOR or FATAL defect")
	case grade == debate.GradeA:
		cs.step("upgrade", "none: already A")
	default:
		up := debate.GradeOfRank(debate.GradeRank(grade) - 1)
		if upgradeBy != nil {
			cs.step("upgrade", "%s → %s: corroborated by %s", grade, up, upgradeBy.ID)
		} else {
			cs.step("upgrade", "%s → %s: MUTAWATIR", grade, up)
		}
		grade = up
	}

	// Rule 3: FATAL gives D; each MAJOR lowers one step.
	defects := append(g.finishDefects(cs), flagged...)
	fatal, major := false, 0
	for _, d := range defects {
		switch d.Severity {
		case debate.SeverityFatal:
			fatal = true
		case debate.SeverityMajor:
			major++
		}
	}
	switch {
	case fatal:
		cs.step("downgrade", "%s → D: FATAL defect", grade)
		grade = debate.GradeD
	case major > 0:
		down := debate.GradeOfRank(debate.GradeRank(grade) + major)
		cs.step("downgrade", "%s → %s: %d MAJOR defect(s)", grade, down, major)
		grade = down
	}

	verdict, action, why := verdictFor(grade, defects)
	cs.step("verdict", "%s, action %s: %s", verdict, action, why)
	cs.result = debate.ClaimGrade{
		ClaimID:          c.ID,
		ClaimKey:         c.Key,
		Metric:           string(ci.metric.Family),
		BaseGrade:        base,
		Grade:            grade,
		Verdict:          verdict,
		Action:           action,
		Defects:          defects,
		Corroboration:    status,
		IndependentCount: independentCount,
		Blocked:          cs.defects[debate.DefectMissingLink] != nil,
		Steps:            cs.steps,
	}
}

// fixedPrecision lists the metrics whose comparison precision does not
// depend on the claim's value; only their claims are indexed by value.
var fixedPrecision = map[Family]bool{FamilyARR: true, FamilyGrossMargin: true, FamilyBurn: true, FamilyRunway: true,
	FamilyCAC: true, FamilyNRR: true, FamilyTAM: true}

// precisionsOf lists the precisions claims of f can be compared at.
func precisionsOf(f Family) []float64 {
	a, m := precisionFor(f, FormAnnual, 0), precisionFor(f, FormMonthly, 0)
	if a == m {
		return []float64{a}
	}
	return []float64{a, m}
}

func (g *grader) indexOwners(states []*claimState) {
	g.byEnd = map[endKey][]*claimState{}
	g.byValue = map[valueKey][]*claimState{}
	for _, cs := range states {
		ci := &cs.info
		if !ci.hasMetric {
			continue
		}
		if ci.window.Known() {
			k := endKey{ci.metric.Family, ci.window.End}
			g.byEnd[k] = append(g.byEnd[k], cs)
		}
		if ci.hasValue && fixedPrecision[ci.metric.Family] {
			k := valueKey{ci.metric.Family, int64(math.Round(roundHalfUp(math.Abs(ci.value), ci.precision) / ci.precision))}
			g.byValue[k] = append(g.byValue[k], cs)
		}
	}
}

// ownerOf returns another claim of the same metric that the reading is
// about: one whose period it speaks of (when it speaks of another period
// than cs), or one whose value it states (when it states another value than
// cs). Nil when there is none.
func (g *grader) ownerOf(cs *claimState, r Reading, o outcome) *claimState {
	f := cs.info.metric.Family
	if o == oWindow {
		stock := cs.info.metric.Stock
		if r.Metric != nil {
			stock = r.Metric.Stock
		}
		for _, other := range g.byEnd[endKey{f, r.Window.End}] {
			if other != cs && windowsAgree(other.info.window, r.Window, stock) {
				return other
			}
		}
		return nil
	}
	if r.Value == nil || !fixedPrecision[f] {
		return nil
	}
	n := math.Abs(r.Value.Num)
	for _, p := range precisionsOf(f) {
		for _, x := range []float64{n, n * 100} {
			for _, other := range g.byValue[valueKey{f, int64(math.Round(roundHalfUp(x, p) / p))}] {
				if other == cs {
					continue
				}
				if oo, _ := compare(&other.info, r); oo == oAgree {
					return other
				}
			}
		}
	}
	return nil
}

// readingFor picks what an evidence item says about the claim's metric. An
// item the claim's sanad cites may be an unlabelled cell ("4500000"): it is
// read as the claim's metric. An item no sanad cites counts only when its
// text names the metric (rule 5).
func (g *grader) readingFor(e *debate.EvidenceItem, ci *claimInfo, cited bool) (Reading, bool, string) {
	rs := g.read(e)
	if len(rs) == 0 {
		return Reading{}, false, fmt.Sprintf("its span %s does not resolve", e.SourceSpanID)
	}
	if ci.hasMetric {
		for _, r := range rs {
			if r.Metric != nil && r.Metric.Family == ci.metric.Family {
				return r, true, ""
			}
		}
	}
	if !cited {
		return Reading{}, false, "does not name the metric"
	}
	if rs[0].Metric == nil || !ci.hasMetric {
		return rs[0], true, ""
	}
	names := make([]string, 0, len(rs))
	for _, r := range rs {
		names = append(names, string(r.Metric.Family))
	}
	return Reading{}, false, fmt.Sprintf("speaks of %s, not %s: no agreement either way", strings.Join(slices.Compact(names), ", "), ci.metric.Family)
}

// applyRecords applies the stored defect records to a claim: a detected
// defect whose record is closed is dropped, with a step saying who closed it
// and why; the claim's OPEN flagged records are returned, sorted by id.
func (g *grader) applyRecords(cs *claimState) []debate.Defect {
	if len(g.opts.Records) == 0 {
		return nil
	}
	types := make([]debate.DefectType, 0, len(cs.defects))
	for t := range cs.defects {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		rec, ok := g.records[defectID(g.b.Deal.ID, cs.c.ID, t)]
		if ok && !rec.Open() {
			delete(cs.defects, t)
			cs.step("lifecycle", "%s was %s by %s (%s): it no longer counts", t, rec.Status, rec.Actor, rec.Reason)
		}
	}
	var flagged []debate.Defect
	for _, rec := range g.opts.Records {
		if rec.Origin != debate.OriginFlagged || rec.ClaimID != cs.c.ID || !rec.Open() {
			continue
		}
		rec.ClaimKey = cs.c.Key
		flagged = append(flagged, rec)
	}
	slices.SortFunc(flagged, func(a, b debate.Defect) int { return cmp.Compare(a.ID, b.ID) })
	for _, f := range flagged {
		cs.step("defect", "%s (%s) flagged by %s: %s", f.Type, f.Severity, f.Actor, f.Description)
	}
	return flagged
}

// finishDefects turns the pending defects into sorted domain defects.
func (g *grader) finishDefects(cs *claimState) []debate.Defect {
	types := make([]debate.DefectType, 0, len(cs.defects))
	for t := range cs.defects {
		types = append(types, t)
	}
	slices.Sort(types)
	out := make([]debate.Defect, 0, len(types))
	for _, t := range types {
		p := cs.defects[t]
		out = append(out, debate.Defect{
			ID:           defectID(g.b.Deal.ID, cs.c.ID, t),
			DealID:       g.b.Deal.ID,
			Origin:       debate.OriginDetected,
			ClaimID:      cs.c.ID,
			ClaimKey:     cs.c.Key,
			Type:         t,
			Severity:     t.DefaultSeverity(),
			CureProtocol: t.DefaultCure(),
			Status:       debate.DefectOpen,
			Description:  strings.Join(p.notes, "; "),
			EvidenceRefs: sortedKeys(p.refs),
			Actor:        Actor,
			CreatedAt:    g.opts.Now,
			UpdatedAt:    g.opts.Now,
		})
	}
	return out
}

// defectID derives a stable id: the same deal, claim and type always give
// the same id, so re-grading never duplicates a defect.
func defectID(dealID, claimID string, t debate.DefectType) string {
	sum := sha256.Sum256([]byte(dealID + "\x00" + claimID + "\x00" + string(t)))
	return "dfx_" + hex.EncodeToString(sum[:12])
}

// verdictFor applies SANAD.md's table. When a claim has several defects the
// most severe decides: MISSING_LINK (blocked), then a FATAL defect, then
// INCONSISTENCY, UNIT_MISMATCH, then the period and version defects. A grade
// D claim without defects is UNVERIFIED and needs data: no grade D claim has
// action NONE.
func verdictFor(grade debate.Grade, defects []debate.Defect) (debate.Verdict, debate.Action, string) {
	has := map[debate.DefectType]bool{}
	fatal, major := "", ""
	for _, d := range defects {
		has[d.Type] = true
		if d.Severity == debate.SeverityFatal && fatal == "" {
			fatal = string(d.Type)
		}
		if d.Severity == debate.SeverityMajor && major == "" {
			major = string(d.Type)
		}
	}
	switch {
	case has[debate.DefectMissingLink]:
		return debate.VerdictBlocked, debate.ActionRejectNoFreeFacts, "MISSING_LINK: No-Free-Facts keeps the claim out of IC-bound output"
	case fatal != "":
		return debate.VerdictUnverified, debate.ActionPartnerOverrideRequired, fatal + " is FATAL"
	case has[debate.DefectInconsistency]:
		return debate.VerdictContradicted, debate.ActionRedFlag, "INCONSISTENCY"
	case has[debate.DefectUnitMismatch]:
		return debate.VerdictInflated, debate.ActionRedFlag, "UNIT_MISMATCH"
	case has[debate.DefectTimeWindow]:
		return debate.VerdictUnverified, debate.ActionRequestData, "TIME_WINDOW_MISMATCH"
	case has[debate.DefectStaleness]:
		return debate.VerdictUnverified, debate.ActionRequestData, "STALENESS"
	case major != "":
		return debate.VerdictUnverified, debate.ActionRequestData, major
	case grade == debate.GradeD:
		return debate.VerdictUnverified, debate.ActionRequestData, "grade D without a defect: the evidence is too weak"
	}
	return debate.VerdictVerified, debate.ActionNone, "no open MAJOR or FATAL defect"
}

func validGrade(g debate.SourceGrade) bool { return slices.Contains(debate.SourceGrades, g) }

// docVersions answers "is document a a newer version of b": same artifact
// type, higher version label, later ingestion.
type docVersions struct {
	// supersededBy is true for a document some newer version supersedes.
	supersededBy map[string]bool
}

func newDocVersions(docs []*debate.Document) docVersions {
	dv := docVersions{supersededBy: map[string]bool{}}
	byType := map[debate.ArtifactType][]*debate.Document{}
	for _, d := range docs {
		byType[d.ArtifactType] = append(byType[d.ArtifactType], d)
	}
	for _, group := range byType {
		// Highest version first; a document is superseded when a strictly
		// higher version was ingested later. Track the latest ingestion
		// among strictly higher versions while walking down.
		ds := slices.Clone(group)
		slices.SortStableFunc(ds, func(a, b *debate.Document) int { return -cmpVersion(a.VersionLabel, b.VersionLabel) })
		var latest time.Time
		for i := 0; i < len(ds); {
			j := i
			for j < len(ds) && cmpVersion(ds[j].VersionLabel, ds[i].VersionLabel) == 0 {
				j++
			}
			for _, d := range ds[i:j] {
				if versionNumbers(d.VersionLabel) != nil && !latest.IsZero() && latest.After(d.IngestedAt) {
					dv.supersededBy[d.ID] = true
				}
			}
			for _, d := range ds[i:j] {
				if versionNumbers(d.VersionLabel) != nil && d.IngestedAt.After(latest) {
					latest = d.IngestedAt
				}
			}
			i = j
		}
	}
	return dv
}

func (dv docVersions) superseded(d *debate.Document) bool { return dv.supersededBy[d.ID] }

func (dv docVersions) isNewer(a, b *debate.Document) bool {
	return a.ID != b.ID && a.ArtifactType == b.ArtifactType &&
		versionNumbers(a.VersionLabel) != nil && versionNumbers(b.VersionLabel) != nil &&
		cmpVersion(a.VersionLabel, b.VersionLabel) > 0 && a.IngestedAt.After(b.IngestedAt)
}

// versionNumbers reads the numbers of a version label: "v2" is [2],
// "v1.10" is [1 10]. Nil when the label has no number.
func versionNumbers(label string) []int {
	var out []int
	n, in := 0, false
	for _, r := range label {
		if r >= '0' && r <= '9' {
			n = n*10 + int(r-'0')
			in = true
			if n > 1e9 {
				n = 1e9
			}
			continue
		}
		if in {
			out = append(out, n)
		}
		n, in = 0, false
	}
	if in {
		out = append(out, n)
	}
	return out
}

// cmpVersion compares version labels by their numbers; labels without
// numbers compare equal to each other and below any numbered label.
func cmpVersion(a, b string) int {
	return slices.Compare(versionNumbers(a), versionNumbers(b))
}

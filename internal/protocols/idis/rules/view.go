package rules

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/tools"
)

// Grade scores: how far a claim of each grade can carry a conclusion.
const (
	scoreA = 0.90
	scoreB = 0.75
	scoreC = 0.55
	scoreD = 0.20
)

// gradeScores are the scores of the grades above D.
var gradeScores = map[debate.Grade]float64{debate.GradeA: scoreA, debate.GradeB: scoreB, debate.GradeC: scoreC}

// gradeScore maps a grade to its score; an unknown grade scores as D.
func gradeScore(g debate.Grade) float64 { return cmp.Or(gradeScores[g], scoreD) }

// materialityWeights are the claims' weights in averages: the more the
// decision depends on a claim, the more its grade counts (1 for MEDIUM or
// unknown).
var materialityWeights = map[debate.Materiality]float64{
	debate.MaterialityCritical: 3, debate.MaterialityHigh: 2, debate.MaterialityLow: 0.5,
}

// matnTypes are the defects of a claim's text against other sources (its
// matn): the contradiction finder's remit. Every other type concerns the
// chain or the source and is the sanad breaker's.
var matnTypes = []debate.DefectType{debate.DefectInconsistency, debate.DefectUnitMismatch, debate.DefectTimeWindow, debate.DefectStaleness}

func isMatn(t debate.DefectType) bool { return slices.Contains(matnTypes, t) }

// claimView is a claim with its grade.
type claimView struct {
	claim  *debate.Claim
	grade  debate.ClaimGrade
	weight float64
}

func (c *claimView) id() string  { return c.claim.ID }
func (c *claimView) key() string { return cmp.Or(c.claim.Key, c.claim.ID) }

// material reports a material position (SANAD.md): HIGH or CRITICAL, or
// IC-bound.
func (c *claimView) material() bool { return c.claim.Material() }

func (c *claimView) rank() int { return debate.GradeRank(c.grade.Grade) }

// critical reports a material claim of CRITICAL materiality.
func (c *claimView) critical() bool {
	return c.material() && c.claim.Materiality == debate.MaterialityCritical
}

// sound reports a claim a thesis can rest on: graded above D, with no red
// flag and no FATAL defect.
func (c *claimView) sound() bool { return c.rank() < 3 && !c.redFlag() && !c.fatal() }

func (c *claimView) verified() bool { return c.grade.Verdict == debate.VerdictVerified }

func (c *claimView) blocked() bool {
	return c.grade.Blocked || c.hasDefect(debate.DefectMissingLink)
}

// weak reports what seed 000 §7 rule 3 asks uncertainties for: a grade
// below A or corroboration short of MUTAWATIR.
func (c *claimView) weak() bool {
	return c.grade.Grade != debate.GradeA || c.grade.Corroboration != debate.CorroborationMutawatir
}

func (c *claimView) hasDefect(t debate.DefectType) bool {
	_, ok := c.defect(t)
	return ok
}

func (c *claimView) defect(t debate.DefectType) (debate.Defect, bool) {
	for _, d := range c.grade.Defects {
		if d.Type == t && d.Open() {
			return d, true
		}
	}
	return debate.Defect{}, false
}

// fatal reports an OPEN FATAL defect.
func (c *claimView) fatal() bool {
	return slices.ContainsFunc(c.grade.Defects, func(d debate.Defect) bool { return d.Open() && d.Severity == debate.SeverityFatal })
}

// redFlag reports a claim the grading marks RED_FLAG (contradicted or
// inflated).
func (c *claimView) redFlag() bool { return c.grade.Action == debate.ActionRedFlag }

// onlyMatn reports whether every open defect of the claim is a matn
// defect (and it has at least one): its weakness is the contradiction
// finder's to argue.
func (c *claimView) onlyMatn() bool {
	n := 0
	for _, d := range c.grade.Defects {
		if !d.Open() {
			continue
		}
		if !isMatn(d.Type) {
			return false
		}
		n++
	}
	return n > 0
}

// openDefects returns the claim's open defects, worst severity first, then
// by type.
func (c *claimView) openDefects() []debate.Defect {
	var out []debate.Defect
	for _, d := range c.grade.Defects {
		if d.Open() {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b debate.Defect) int {
		return cmp.Or(cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)), cmp.Compare(a.Type, b.Type))
	})
	return out
}

// severityRank orders severities worst first; an unknown one ranks as
// MAJOR.
func severityRank(s debate.Severity) int {
	if i := slices.Index(debate.Severities, s); i >= 0 {
		return i
	}
	return 1
}

// calcView is a deal calc with its recomputed result.
type calcView struct {
	calc   *debate.Calc
	result debate.CalcResult
}

func (c *calcView) id() string { return c.calc.ID }

// raised is a challenge found in the transcript, with who raised it when.
type raised struct {
	ch    debate.Challenge
	role  string
	round int
}

// pair identifies a challenge's substance: a claim and a defect type.
type pair struct {
	claimID string
	typ     debate.DefectType
}

// view is one turn's input with its deal's index.
type view struct {
	in    *roles.Input
	role  string
	round int
	*index
}

// index is a deal and its grading indexed for the roles. It is built once
// per (bundle, grading) pair (indexCache) and then only read, by any
// number of turns at once.
type index struct {
	deal   *debate.DealBundle
	claims []*claimView // by key, then id
	byID   map[string]*claimView
	byKey  map[string]*claimView
	calcs  []*calcView // by id
	calcBy map[string]*calcView

	evidence map[string]*debate.EvidenceItem
	bySpan   map[string]*debate.EvidenceItem // the first evidence item (by id) quoting each span
	spans    map[string]*debate.Span
	docs     map[string]*debate.Document
	sanadOf  map[string]*debate.Sanad // by claim id, the first by sanad id
	// refs holds every id a challenge may cite as evidence: evidence items,
	// spans, calcs, claims and documents of the deal (what sanad.Flag
	// accepts).
	refs map[string]bool
	// ids is every id or key a text may name: refs, the claim keys and the
	// ids it mentions without citing them (the deal's and its defects').
	// One lookup settles most tokens of a text, which are words.
	ids map[string]struct{}
}

// indexCacheLimit bounds the indexes a role set keeps; past it the cache
// is emptied.
const indexCacheLimit = 64

// indexCache memoises the index of each (bundle, grading) pair a turn
// receives: a protocol hands every step on a deal the same graded registry,
// which must not change once given.
type indexCache struct {
	mu sync.Mutex
	m  map[[2]any]*index
}

func (c *indexCache) get(b *debate.DealBundle, g *debate.DealGrading) *index {
	k := [2]any{b, g}
	c.mu.Lock()
	x := c.m[k]
	c.mu.Unlock()
	if x != nil {
		return x
	}
	x = newIndex(b, g)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= indexCacheLimit {
		c.m = map[[2]any]*index{}
	}
	c.m[k] = x
	return x
}

func newIndex(b *debate.DealBundle, g *debate.DealGrading) *index {
	v := &index{
		deal: b,
		byID: map[string]*claimView{}, byKey: map[string]*claimView{}, calcBy: map[string]*calcView{},
		evidence: map[string]*debate.EvidenceItem{}, bySpan: map[string]*debate.EvidenceItem{}, spans: map[string]*debate.Span{},
		docs: map[string]*debate.Document{}, sanadOf: map[string]*debate.Sanad{}, refs: map[string]bool{},
		ids: map[string]struct{}{b.Deal.ID: {}},
	}
	grades := map[string]debate.ClaimGrade{}
	results := map[string]debate.CalcResult{}
	if g != nil {
		for _, c := range g.Claims {
			if _, dup := grades[c.ClaimID]; !dup {
				grades[c.ClaimID] = c
			}
			for _, d := range c.Defects {
				v.ids[d.ID] = struct{}{}
			}
		}
		for _, d := range g.Defects {
			v.ids[d.ID] = struct{}{}
		}
		for _, c := range g.Calcs {
			if _, dup := results[c.CalcID]; !dup {
				results[c.CalcID] = c
			}
		}
	}
	for i := range b.Claims {
		c := &b.Claims[i]
		if c.ID == "" || v.byID[c.ID] != nil || (c.DealID != "" && c.DealID != b.Deal.ID) {
			continue
		}
		cg, ok := grades[c.ID]
		if !ok { // no grading entry: treated as D / UNVERIFIED
			cg = debate.ClaimGrade{ClaimID: c.ID, ClaimKey: c.Key, BaseGrade: debate.GradeD, Grade: debate.GradeD,
				Verdict: debate.VerdictUnverified, Action: debate.ActionRequestData, Corroboration: debate.CorroborationNone}
		}
		cv := &claimView{claim: c, grade: cg, weight: cmp.Or(materialityWeights[c.Materiality], 1)}
		v.claims = append(v.claims, cv)
		v.byID[c.ID] = cv
		if _, dup := v.byKey[c.Key]; !dup && c.Key != "" {
			v.byKey[c.Key] = cv
		}
		v.refs[c.ID] = true
	}
	slices.SortFunc(v.claims, func(a, b *claimView) int {
		return cmp.Or(cmp.Compare(a.claim.Key, b.claim.Key), cmp.Compare(a.id(), b.id()))
	})
	for i := range b.Calcs {
		c := &b.Calcs[i]
		if c.ID == "" || v.calcBy[c.ID] != nil {
			continue
		}
		r, ok := results[c.ID]
		if !ok {
			r = debate.CalcResult{CalcID: c.ID, Type: c.Type, Grade: debate.GradeD}
		}
		cv := &calcView{calc: c, result: r}
		v.calcs = append(v.calcs, cv)
		v.calcBy[c.ID] = cv
		v.refs[c.ID] = true
	}
	slices.SortFunc(v.calcs, func(a, b *calcView) int { return cmp.Compare(a.id(), b.id()) })
	indexFirst(v.evidence, v.refs, b.Evidence, func(e *debate.EvidenceItem) string { return e.ID })
	indexFirst(v.spans, v.refs, b.Spans, func(s *debate.Span) string { return s.ID })
	indexFirst(v.docs, v.refs, b.Documents, func(d *debate.Document) string { return d.ID })
	for _, e := range v.evidence {
		if old := v.bySpan[e.SourceSpanID]; old == nil || e.ID < old.ID {
			v.bySpan[e.SourceSpanID] = e
		}
	}
	for i := range b.Sanads {
		s := &b.Sanads[i]
		if old, ok := v.sanadOf[s.ClaimID]; !ok || s.ID < old.ID {
			v.sanadOf[s.ClaimID] = s
		}
	}
	for id := range v.refs {
		v.ids[id] = struct{}{}
	}
	for k := range v.byKey {
		v.ids[k] = struct{}{}
	}
	return v
}

// indexFirst puts each of xs with an id into m, the first of an id
// winning, and records the id as citable in refs.
func indexFirst[T any](m map[string]*T, refs map[string]bool, xs []T, id func(*T) string) {
	for i := range xs {
		x := &xs[i]
		if k := id(x); k != "" && m[k] == nil {
			m[k], refs[k] = x, true
		}
	}
}

// material returns the material claims, in key order.
func (v *view) material() []*claimView { return filter(v.claims, (*claimView).material) }

// byMateriality returns cs ordered by weight (heaviest first), then key.
func byMateriality(cs []*claimView) []*claimView {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b *claimView) int {
		ma, mb := a.material(), b.material()
		if ma != mb {
			if ma {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.weight, a.weight)
	})
	return out
}

// primaryEvidence returns the claim's primary evidence item: its sanad's
// primary, else an item quoting its primary span.
func (v *view) primaryEvidence(c *claimView) *debate.EvidenceItem {
	if s := v.sanadOf[c.id()]; s != nil {
		if e := v.evidence[s.PrimaryEvidenceID]; e != nil {
			return e
		}
	}
	if c.claim.PrimarySpanID == "" {
		return nil
	}
	return v.bySpan[c.claim.PrimarySpanID]
}

// maxDocRefs caps the documents a challenge cites for missing evidence.
const maxDocRefs = 5

// claimRefs returns the ids that show a claim's own evidence: its primary
// evidence, its primary span and its existing corroborations, in that
// order. When none exists (the defect is that the evidence is missing), it
// cites the deal's documents, none of which holds a span for the claim:
// the claim itself is never its own evidence (the gate calls that
// frivolous). Nil when the deal has no document either.
func (v *view) claimRefs(c *claimView) []string {
	var out []string
	add := func(id string) {
		if id != "" && id != c.id() && v.refs[id] && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if e := v.primaryEvidence(c); e != nil {
		add(e.ID)
	}
	add(c.claim.PrimarySpanID)
	if s := v.sanadOf[c.id()]; s != nil {
		for _, id := range slices.Sorted(slices.Values(s.CorroboratingEvidenceIDs)) {
			add(id)
		}
	}
	if len(out) == 0 {
		for _, id := range slices.Sorted(maps.Keys(v.docs)) {
			if len(out) == maxDocRefs {
				break
			}
			add(id)
		}
	}
	return out
}

// defectRefs returns the defect's evidence references that name something
// of the deal other than the claim itself; when none does (a dangling
// reference or a missing span is the defect), the claim's own evidence.
func (v *view) defectRefs(c *claimView, d debate.Defect) []string {
	var out []string
	for _, r := range d.EvidenceRefs {
		if v.refs[r] && r != c.id() && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return v.claimRefs(c)
	}
	return out
}

// evidenceStrength is how strongly the cited ids show something: the best
// score among the evidence items (their source grade) and calcs (their
// grade) cited; fallback when none is graded.
func (v *view) evidenceStrength(ids []string, fallback float64) float64 {
	best, found := 0.0, false
	for _, id := range ids {
		var s float64
		switch {
		case v.evidence[id] != nil:
			s = gradeScore(v.evidence[id].SourceGrade)
		case v.calcBy[id] != nil:
			s = gradeScore(v.calcBy[id].result.Grade)
		default:
			continue
		}
		if !found || s > best {
			best, found = s, true
		}
	}
	if !found {
		return fallback
	}
	return best
}

// defectStrength is how strongly the registry shows a defect: structural
// defects (a missing link, a FATAL chain defect) are shown by the registry
// itself; the others are as strong as the best evidence that shows them.
func (v *view) defectStrength(d debate.Defect) float64 {
	if d.Type == debate.DefectMissingLink || d.Severity == debate.SeverityFatal {
		return scoreA
	}
	return v.evidenceStrength(d.EvidenceRefs, scoreC)
}

// supports reports whether the registry supports a challenge of type t on
// the claim: the claim has an open defect of that type, or it is graded C
// or D in a material position. The reason names what decided.
func (v *view) supports(c *claimView, t debate.DefectType) (bool, string) {
	if c.hasDefect(t) {
		return true, "claim " + c.key() + " has an open " + string(t) + " defect in the registry"
	}
	if c.material() && c.rank() >= 2 {
		return true, "claim " + c.key() + " is graded " + string(c.grade.Grade) + " in a material position (" + materialityText(c) + ")"
	}
	why := "claim " + c.key() + " is graded " + string(c.grade.Grade)
	if !c.material() {
		why += ", is not in a material position"
	}
	return false, why + " and has no open " + string(t) + " defect"
}

// transcript helpers

// challenges returns every challenge of the transcript in order, with its
// role and round.
func (v *view) challenges() []raised {
	var out []raised
	for _, o := range v.in.Transcript {
		for _, ch := range o.Challenges {
			out = append(out, raised{ch: ch, role: o.Role, round: o.RoundNumber})
		}
	}
	return out
}

// pairsOf returns the (claim, defect type) pairs rs challenge.
func pairsOf(rs []raised) map[pair]bool {
	out := map[pair]bool{}
	for _, r := range rs {
		for _, id := range r.ch.ClaimRefs {
			out[pair{id, debate.DefectType(r.ch.DefectType)}] = true
		}
	}
	return out
}

// rulings returns the arbiter's rulings of the transcript by challenge id
// (the first ruling on an id wins).
func (v *view) rulings() map[string]debate.Ruling {
	out := map[string]debate.Ruling{}
	for _, o := range v.in.Transcript {
		if o.Role != debate.RoleArbiter {
			continue
		}
		for _, r := range o.Rulings {
			if _, ok := out[r.ChallengeID]; !ok {
				out[r.ChallengeID] = r
			}
		}
	}
	return out
}

// upheldBefore returns the transcript's upheld challenges raised before
// round (exclusive), in transcript order.
func (v *view) upheldBefore(round int) []raised {
	rs := v.rulings()
	return filter(v.distinctChallenges(func(r raised) bool { return r.round < round }), func(r raised) bool {
		ru, ok := rs[r.ch.ChallengeID]
		return ok && ru.Upheld && !ru.Frivolous
	})
}

// distinctChallenges returns the transcript's challenges keep accepts, in
// order, each id once (its first accepted occurrence).
func (v *view) distinctChallenges(keep func(raised) bool) []raised {
	var out []raised
	seen := map[string]bool{}
	for _, r := range v.challenges() {
		if keep(r) && !seen[r.ch.ChallengeID] {
			seen[r.ch.ChallengeID] = true
			out = append(out, r)
		}
	}
	return out
}

// spoke reports whether role has an output for round in the transcript.
func (v *view) spoke(role string, round int) bool {
	return slices.ContainsFunc(v.in.Transcript, func(o debate.AgentOutput) bool { return o.Role == role && o.RoundNumber == round })
}

// calls returns the tool calls role made (recorded in its outputs) to
// tool, in rounds [from, to].
func (v *view) calls(role, tool string, from, to int) []debate.ToolCall {
	var out []debate.ToolCall
	for _, o := range v.in.Transcript {
		if o.Role != role || o.RoundNumber < from || o.RoundNumber > to {
			continue
		}
		for _, c := range o.ToolCalls {
			if c.Tool == tool {
				out = append(out, c)
			}
		}
	}
	return out
}

// flaggedPairs returns the (claim, type) pairs any flag_defect call of the
// transcript flagged.
func (v *view) flaggedPairs() map[pair]bool {
	out := map[pair]bool{}
	eachCall(v, tools.FlagDefect, func(a flagDefectArgs) {
		out[pair{a.ClaimID, debate.DefectType(a.DefectType)}] = true
	})
	return out
}

// reviewed returns the claim ids any request_human_review call of the
// transcript named.
func (v *view) reviewed() map[string]bool {
	out := map[string]bool{}
	eachCall(v, tools.RequestHumanReview, func(a humanReviewArgs) {
		for _, id := range a.ClaimIDs {
			out[id] = true
		}
	})
	return out
}

// eachCall calls f with the arguments of every call to tool in the
// transcript, in order; arguments that do not decode as A are skipped.
func eachCall[A any](v *view, tool string, f func(A)) {
	for _, o := range v.in.Transcript {
		for _, c := range o.ToolCalls {
			var a A
			if c.Tool == tool && json.Unmarshal(c.Args, &a) == nil {
				f(a)
			}
		}
	}
}

// requested returns the claim ids the transcript's evidence requests name.
func (v *view) requested() map[string]bool {
	out := map[string]bool{}
	for _, o := range v.in.Transcript {
		for _, r := range o.EvidenceRequests {
			for _, id := range r.ClaimRefs {
				out[id] = true
			}
		}
	}
	return out
}

// latestPositions returns each role's latest position in the transcript
// up to round, by role.
func (v *view) latestPositions(round int) map[string]debate.Position {
	out := map[string]debate.Position{}
	for _, o := range v.in.Transcript {
		if o.Position != nil && o.RoundNumber <= round {
			out[o.Role] = *o.Position
		}
	}
	return out
}

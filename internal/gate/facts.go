package gate

import (
	"cmp"
	"maps"
	"slices"

	"github.com/debated/debated/internal/debate"
)

// ClaimFact is what the gates know of one claim of the deal.
type ClaimFact struct {
	ID  string
	Key string
	// Grade is the claim's current grade: the grading's, lowered by the
	// defects added with AddDefect. D when the grading does not know the
	// claim.
	Grade debate.Grade
	// BaseGrade is the primary source's grade (D when unknown); AddDefect
	// uses it to undo an upgrade the way a regrade would.
	BaseGrade debate.Grade
	// Material is debate.Claim.Material: HIGH or CRITICAL, or IC-bound.
	Material bool
	// Corroboration is NONE when the grading does not know the claim.
	Corroboration debate.CorroborationStatus
	// FatalOpen is true when the claim has an OPEN FATAL defect.
	FatalOpen bool
	// Blocked is true when No-Free-Facts keeps the claim out of IC-bound
	// output (a MISSING_LINK). A blocked claim is still a valid reference:
	// it is grade D, so resting on it requires uncertainties and, when it
	// is material, stops the debate (CRITICAL_DEFECT).
	Blocked bool
}

// Weak reports whether the claim is a weak source for the Muḥāsabah
// uncertainty rule: grade below A, corroboration short of MUTAWATIR, or an
// OPEN FATAL defect.
func (c ClaimFact) Weak() bool {
	return debate.GradeRank(c.Grade) > 0 || c.Corroboration != debate.CorroborationMutawatir || c.FatalOpen
}

// Critical reports whether the claim is "grade D in a material position"
// once an output relies on it (SANAD.md): material, and grade D or an OPEN
// FATAL defect.
func (c ClaimFact) Critical() bool {
	return c.Material && (debate.GradeRank(c.Grade) >= 3 || c.FatalOpen)
}

// CalcFact is what the gates know of one calc of the deal.
type CalcFact struct {
	ID string
	// Grade is the grading's grade of the calc, D when unknown. The grade
	// that counts (Facts.CalcGrade) is the worse of it and the current
	// grades of the input claims.
	Grade         debate.Grade
	InputClaimIDs []string
}

// Facts is what the gates know of the tenant's deal: its claims with grade,
// materiality, corroboration and open FATAL defects; its calcs; and the ids
// of its evidence items, spans, documents and defects (which challenges may
// cite as evidence and which texts may mention without asserting a fact).
//
// Build it once per deal with NewFacts and derive a debate's with
// WithDefects. Its methods are safe for concurrent readers; AddDefect must
// not run concurrently with any other method.
type Facts struct {
	dealID    string
	claims    map[string]*ClaimFact
	keys      map[string]string // claim key → claim id
	calcs     map[string]*CalcFact
	evidence  map[string]bool
	spans     map[string]bool
	documents map[string]bool
	defects   map[string]bool // ids of the defects already counted
	// ids holds every id mention knows, the defects' as NewFacts counted
	// them (idsDefects of them): one lookup settles most tokens of a text,
	// which are words. AddDefect adds defects after, which mention looks
	// up in defects.
	ids        map[string]struct{}
	idsDefects int
}

// NewFacts builds the gates' view of a deal from its registry and grading.
// Claims and calcs are the bundle's; the grading gives their grades,
// corroboration and open defects. Fail-closed defaults: a nil bundle gives
// empty Facts (every reference is unknown); a claim or calc the grading does
// not know (or a nil grading) is grade D and uncorroborated. Defects that
// are not OPEN are ignored. NewFacts never fails and keeps no reference to
// b or g.
func NewFacts(b *debate.DealBundle, g *debate.DealGrading) *Facts {
	f := &Facts{
		claims:    map[string]*ClaimFact{},
		keys:      map[string]string{},
		calcs:     map[string]*CalcFact{},
		evidence:  map[string]bool{},
		spans:     map[string]bool{},
		documents: map[string]bool{},
		defects:   map[string]bool{},
	}
	if b == nil {
		return f
	}
	defer f.indexIDs()
	f.dealID = b.Deal.ID
	for _, c := range b.Claims {
		if c.ID == "" {
			continue
		}
		f.claims[c.ID] = &ClaimFact{
			ID: c.ID, Key: c.Key, Grade: debate.GradeD, BaseGrade: debate.GradeD,
			Material: c.Material(), Corroboration: debate.CorroborationNone,
		}
		if _, dup := f.keys[c.Key]; c.Key != "" && !dup {
			f.keys[c.Key] = c.ID
		}
	}
	for _, c := range b.Calcs {
		if c.ID == "" {
			continue
		}
		f.calcs[c.ID] = &CalcFact{ID: c.ID, Grade: debate.GradeD, InputClaimIDs: append([]string(nil), c.InputClaimIDs...)}
	}
	addIDs(f.evidence, b.Evidence, func(e debate.EvidenceItem) string { return e.ID })
	addIDs(f.spans, b.Spans, func(s debate.Span) string { return s.ID })
	addIDs(f.documents, b.Documents, func(d debate.Document) string { return d.ID })
	if g == nil {
		return f
	}
	for _, cg := range g.Claims {
		c := f.claims[cg.ClaimID]
		if c == nil {
			continue
		}
		c.Grade = normGrade(cg.Grade)
		c.BaseGrade = normGrade(cg.BaseGrade)
		c.Corroboration = cmp.Or(cg.Corroboration, debate.CorroborationNone)
		c.Blocked = cg.Blocked
		for _, d := range cg.Defects {
			f.countDefect(d)
		}
	}
	for _, d := range g.Defects {
		f.countDefect(d)
	}
	for _, cr := range g.Calcs {
		if c := f.calcs[cr.CalcID]; c != nil {
			c.Grade = normGrade(cr.Grade)
		}
	}
	return f
}

// indexIDs fills f.ids. The sets it reads do not change after NewFacts
// but the defects, which only grow: AddDefect replaces claims, never adds
// one.
func (f *Facts) indexIDs() {
	f.ids = make(map[string]struct{}, len(f.claims)+len(f.keys)+len(f.calcs)+len(f.evidence)+len(f.spans)+len(f.documents)+len(f.defects)+1)
	for _, set := range []map[string]bool{f.evidence, f.spans, f.documents, f.defects} {
		addKeys(f.ids, set)
	}
	addKeys(f.ids, f.claims)
	addKeys(f.ids, f.keys)
	addKeys(f.ids, f.calcs)
	if f.dealID != "" {
		f.ids[f.dealID] = struct{}{}
	}
	f.idsDefects = len(f.defects)
}

// addKeys adds the keys of src to set.
func addKeys[V any](set map[string]struct{}, src map[string]V) {
	for k := range src {
		set[k] = struct{}{}
	}
}

// addIDs adds the non-empty ids of xs to set.
func addIDs[T any](set map[string]bool, xs []T, id func(T) string) {
	for _, x := range xs {
		if s := id(x); s != "" {
			set[s] = true
		}
	}
}

// normGrade maps an unknown grade to D, so it is never trusted.
func normGrade(g debate.Grade) debate.Grade { return debate.GradeOfRank(debate.GradeRank(g)) }

// countDefect records a defect of the grading: its id is known, and an
// OPEN FATAL one marks its claim. The grade already reflects it.
func (f *Facts) countDefect(d debate.Defect) {
	if d.ID != "" {
		f.defects[d.ID] = true
	}
	if !d.Open() {
		return
	}
	if c := f.claims[d.ClaimID]; c != nil && severity(d) == debate.SeverityFatal {
		c.FatalOpen = true
	}
}

// severity is the defect's severity, or its type's default when empty.
func severity(d debate.Defect) debate.Severity { return cmp.Or(d.Severity, d.Type.DefaultSeverity()) }

// AddDefect takes into account a defect flagged during the debate, as a
// regrade would (SANAD.md): an OPEN FATAL defect makes its claim grade D and
// marks it FatalOpen; an OPEN MAJOR defect cancels an upgrade and lowers
// the grade one step (floor D); MINOR changes nothing. A severity left
// empty is the type's default. A defect whose id the Facts already count
// (from the grading or an earlier AddDefect) is ignored, so adding the same
// record twice, or a record the grading already holds, changes nothing; a
// defect without id is always applied (stricter, never looser). Defects
// that are not OPEN or name no claim of the deal are ignored.
func (f *Facts) AddDefect(d debate.Defect) {
	if d.ID != "" {
		if f.defects[d.ID] {
			return
		}
		f.defects[d.ID] = true
	}
	old := f.claims[d.ClaimID]
	if old == nil || !d.Open() {
		return
	}
	// A changed claim is a new value: Facts derived with WithDefects share
	// the others with the Facts they came from.
	c := *old
	switch severity(d) {
	case debate.SeverityFatal:
		c.FatalOpen = true
		c.Grade = debate.GradeD
	case debate.SeverityMajor:
		c.Grade = debate.GradeOfRank(max(debate.GradeRank(c.Grade), debate.GradeRank(c.BaseGrade)) + 1)
	default:
		return
	}
	f.claims[d.ClaimID] = &c
}

// WithDefects returns Facts that also take into account the defects
// flagged during a debate (AddDefect on each, in order), and leaves f
// unchanged: the deal's indexes are shared, only the claims table and the
// defect ids are copied. With no defects it returns f itself. It is safe
// for concurrent use with f's readers, so one Facts built per deal serves
// every step of every debate on it.
func (f *Facts) WithDefects(ds []debate.Defect) *Facts {
	if len(ds) == 0 || f == nil {
		return f
	}
	c := *f
	c.claims = maps.Clone(f.claims)
	c.defects = maps.Clone(f.defects)
	for _, d := range ds {
		c.AddDefect(d)
	}
	return &c
}

// DealID is the id of the deal the Facts describe ("" for empty Facts).
func (f *Facts) DealID() string {
	if f == nil {
		return ""
	}
	return f.dealID
}

// Claim returns what the gates know of the claim with the given id, or
// false when it is not a claim of the deal.
func (f *Facts) Claim(id string) (ClaimFact, bool) {
	c := f.claim(id)
	if c == nil {
		return ClaimFact{}, false
	}
	return *c, true
}

// Calc returns what the gates know of the calc with the given id, or false
// when it is not a calc of the deal.
func (f *Facts) Calc(id string) (CalcFact, bool) {
	c := f.calc(id)
	if c == nil {
		return CalcFact{}, false
	}
	out := *c
	out.InputClaimIDs = slices.Clone(c.InputClaimIDs)
	return out, true
}

// CalcGrade is the grade that counts for a calc: the worse of its graded
// grade and the current grades of its input claims (so a defect added
// during the debate weakens the calcs that read the claim). D for an
// unknown calc.
func (f *Facts) CalcGrade(id string) debate.Grade {
	c := f.calc(id)
	if c == nil {
		return debate.GradeD
	}
	r := debate.GradeRank(c.Grade)
	for _, in := range c.InputClaimIDs {
		if cl := f.claim(in); cl != nil {
			r = max(r, debate.GradeRank(cl.Grade))
		}
	}
	return debate.GradeOfRank(r)
}

func (f *Facts) claim(id string) *ClaimFact {
	if f == nil {
		return nil
	}
	return f.claims[id]
}

func (f *Facts) calc(id string) *CalcFact {
	if f == nil {
		return nil
	}
	return f.calcs[id]
}

// isClaim and isCalc report whether id names a claim or a calc of the deal.
func (f *Facts) isClaim(id string) bool { return f.claim(id) != nil }
func (f *Facts) isCalc(id string) bool  { return f.calc(id) != nil }

// isEvidence reports whether a challenge may cite id as evidence: an
// evidence item, span, document or calc of the deal. Claims are handled by
// the caller (a challenge may cite another claim, never the one it attacks).
func (f *Facts) isEvidence(id string) bool {
	if f == nil {
		return false
	}
	return f.evidence[id] || f.spans[id] || f.documents[id] || f.calcs[id] != nil
}

// mention classifies an id-like token found in a text: a claim (by id or
// key) or calc, which the text must have in its refs; another id of the
// deal (evidence, span, document, defect, the deal itself), which is
// neither a fact nor a reference; or nothing.
func (f *Facts) mention(tok string) (ref string, known bool) {
	if f == nil {
		return "", false
	}
	if _, ok := f.ids[tok]; !ok {
		// Defects are only ever added: with as many as ids holds, they
		// are the same.
		return "", len(f.defects) > f.idsDefects && f.defects[tok]
	}
	if f.claims[tok] != nil || f.calcs[tok] != nil {
		return tok, true
	}
	if id, ok := f.keys[tok]; ok {
		return id, true
	}
	if tok == f.dealID || f.evidence[tok] || f.spans[tok] || f.documents[tok] || f.defects[tok] {
		return "", true
	}
	return "", false
}

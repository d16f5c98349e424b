package idis

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
)

// registryIndex names the deal's ids for people: a claim by its key, an
// evidence item by its document, locator and grade, a document by its type
// and version. The brief never shows a raw evidence or document id.
type registryIndex struct {
	claims map[string]*debate.Claim
	grades map[string]debate.ClaimGrade
	names  map[string]string // id → readable name, every id of the deal
	nodes  map[string]bool   // chain node ids
}

func newRegistryIndex(v *dealView) *registryIndex {
	g := &registryIndex{claims: map[string]*debate.Claim{}, grades: map[string]debate.ClaimGrade{}, names: map[string]string{}, nodes: map[string]bool{}}
	b := v.Bundle
	docs := map[string]*debate.Document{}
	for i := range b.Documents {
		d := &b.Documents[i]
		docs[d.ID] = d
		g.names[d.ID] = docName(d)
	}
	spans := map[string]*debate.Span{}
	for i := range b.Spans {
		s := &b.Spans[i]
		spans[s.ID] = s
		g.names[s.ID] = spanName(s, docs)
	}
	for i := range b.Evidence {
		e := &b.Evidence[i]
		where := "an unlocated source"
		if s := spans[e.SourceSpanID]; s != nil {
			where = spanName(s, docs)
		}
		g.names[e.ID] = fmt.Sprintf("%s (grade %s)", where, cmp.Or(string(e.SourceGrade), "D"))
	}
	for i := range b.Claims {
		c := &b.Claims[i]
		if _, dup := g.claims[c.ID]; !dup {
			g.claims[c.ID] = c
			g.names[c.ID] = "claim " + cmp.Or(c.Key, "without key")
		}
	}
	for i := range b.Sanads {
		sn := &b.Sanads[i]
		g.names[sn.ID] = "the chain of " + g.names[sn.ClaimID]
		for j, n := range sn.Chain {
			if _, dup := g.names[n.ID]; !dup && n.ID != "" {
				g.names[n.ID] = fmt.Sprintf("%s node %d of the chain", strings.ToLower(cmp.Or(string(n.Type), "a")), j+1)
				g.nodes[n.ID] = true
			}
		}
	}
	for i := range b.Calcs {
		c := &b.Calcs[i]
		g.names[c.ID] = "the " + strings.ToLower(strings.ReplaceAll(string(c.Type), "_", " ")) + " calc"
	}
	if v.Grading != nil {
		for _, cg := range v.Grading.Claims {
			if _, dup := g.grades[cg.ClaimID]; !dup {
				g.grades[cg.ClaimID] = cg
			}
		}
	}
	return g
}

// calcPrefix is how a text introduces a calc id: "calc " or "calc RUNWAY ".
var calcPrefix = regexp.MustCompile(`calc (?:[A-Z_]+ )?$`)

func docName(d *debate.Document) string {
	return strings.TrimSpace(strings.ReplaceAll(string(d.ArtifactType), "_", " ") + " " + d.VersionLabel)
}

func spanName(s *debate.Span, docs map[string]*debate.Document) string {
	name := "an unregistered document"
	if d := docs[s.DocumentID]; d != nil {
		name = docName(d)
	}
	switch {
	case s.Locator.Cell != "":
		return fmt.Sprintf("%s, %s!%s", name, s.Locator.Sheet, s.Locator.Cell)
	case s.Locator.Page > 0:
		return fmt.Sprintf("%s, page %d", name, s.Locator.Page)
	}
	return name
}

// key returns a claim's key (its id when it has none).
func (g *registryIndex) key(id string) string {
	if c := g.claims[id]; c != nil && c.Key != "" {
		return c.Key
	}
	return id
}

// evidenceName names an evidence item by document, locator and grade.
func (g *registryIndex) evidenceName(id string) string {
	return cmp.Or(g.names[id], "an item outside the deal")
}

// claimFact states a claim with its key, text, grade and verdict.
func (g *registryIndex) claimFact(id string) string {
	c, cg := g.claims[id], g.grades[id]
	if c == nil {
		return id
	}
	return fmt.Sprintf("%s: %s (grade %s, %s)", g.key(id), strings.TrimSpace(c.Text), cmp.Or(string(cg.Grade), "D"), cmp.Or(string(cg.Verdict), "UNVERIFIED"))
}

// human rewrites a text of the ledger for people: every id of the deal
// becomes its name ("claim F3", "FIN MODEL v1, Summary!C46 (grade B)"),
// and a phrase that already named an item by id ("evidence <id> (…)") keeps
// only the name.
func (g *registryIndex) human(text string) string {
	if text == "" {
		return ""
	}
	var b strings.Builder
	last := 0
	for i, j := range gate.IDTokens(text) {
		if i < last {
			continue // inside a locator already skipped
		}
		tok := text[i:j]
		name, ok := g.names[tok]
		if !ok {
			if !debate.IsUUIDText(tok) {
				continue
			}
			// An id that names nothing in the deal (the defect may be
			// that it does not exist): its tail tells two apart.
			b.WriteString(text[last:i])
			b.WriteString("#" + tok[len(tok)-4:] + " (unregistered)")
			last = j
			continue
		}
		prefix := text[last:i]
		_, isClaim := g.claims[tok]
		switch {
		case g.nodes[tok]:
			prefix = strings.TrimSuffix(prefix, "node ")
		case isClaim:
			prefix = strings.TrimSuffix(prefix, "claim ")
		case strings.HasPrefix(name, "the ") && strings.HasSuffix(name, " calc"):
			prefix = calcPrefix.ReplaceAllString(prefix, "")
		default:
			for _, w := range []string{"primary evidence ", "primary span ", "evidence ", "span ", "document ", "corroborator ", "uncited "} {
				if strings.HasSuffix(prefix, w) {
					prefix = strings.TrimSuffix(prefix, w) + map[string]string{"uncited ": "uncited evidence"}[w]
					if !strings.HasSuffix(prefix, "uncited evidence") {
						prefix += strings.TrimSpace(w)
					}
					prefix += " from "
					break
				}
			}
		}
		b.WriteString(prefix)
		b.WriteString(name)
		last = j
		// A locator the text already gave after the id ("(PITCH_DECK v1,
		// page 3, grade C)") repeats the name: drop it.
		if rest := text[j:]; !isClaim && strings.HasPrefix(rest, " (") {
			if k := strings.IndexByte(rest, ')'); k > 0 && strings.ContainsAny(rest[:k], "!") || k > 0 && (strings.Contains(rest[:k], "page ") || strings.Contains(rest[:k], "grade ")) {
				last = j + k + 1
			}
		}
	}
	b.WriteString(text[last:])
	return b.String()
}

// stopContinue says what would have let the debate go on past its stop
// rule. The rules are checked in seed 001 §3's order: CRITICAL_DEFECT,
// MAX_ROUNDS, CONSENSUS, STABLE_DISSENT, EVIDENCE_EXHAUSTED.
func stopContinue(reason string, s *state, g *registryIndex) string {
	switch reason {
	case gate.StopCriticalDefect:
		var keys []string
		for _, id := range s.ReliedCritical {
			keys = append(keys, g.key(id))
		}
		return fmt.Sprintf("It is checked first. The debate would have gone on had no turn relied on %s: a source that lifts each above grade D (or cures its FATAL defect), or a thesis argued without it.",
			cmp.Or(strings.Join(keys, ", "), "the critical claims"))
	case gate.StopMaxRounds:
		return fmt.Sprintf("The debate used its limit of %d rounds; a higher limit (at most 5, seed 001 §3) would have let it go on, as no earlier stop rule held.", cmp.Or(s.MaxRounds, 5))
	case gate.StopConsensus:
		return "The roles' confidences were within 0.10 of each other; a role more than 0.10 apart would have kept the debate going."
	case gate.StopStableDissent:
		return "No role changed its position or confidence band for two rounds; a new ruling, concession or piece of evidence that moved one would have kept the debate going."
	case gate.StopEvidenceExhausted:
		return "Evidence was requested and retrieval found nothing new while questions stayed open; new evidence, or the questions answered, would have kept the debate going."
	case ReasonTokenBudget:
		return "The model-backed roles reached the debate's token budget; a larger budget would have let the debate go on."
	}
	return ""
}

// terms are the grader and debate terms a brief may use, each with a
// one-line gloss; the brief lists those it uses.
var terms = []Term{
	{"grade", "How far a claim's evidence chain can be trusted: A (independent, primary) to D (unusable for a decision)."},
	{"VERIFIED", "The claim's sources agree with its value."},
	{"CONTRADICTED", "A source states another value for the same metric and period."},
	{"INFLATED", "The value is a relabelled or rescaled figure (e.g. a monthly figure ×12 shown as annual)."},
	{"UNVERIFIED", "Nothing independent confirms the claim."},
	{"BLOCKED", "No evidence span supports the claim: No-Free-Facts keeps it out of any conclusion."},
	{"AHAD_1", "Corroboration: one independent source group."},
	{"AHAD_2", "Corroboration: two independent source groups."},
	{"MUTAWATIR", "Corroboration: three or more independent source groups."},
	{"compared at", "Values are rounded to the claim's own precision (e.g. to the nearest 100) before they are compared."},
	{"material", "A claim of HIGH or CRITICAL materiality, or one bound for the investment committee (IC-bound)."},
	{"RED_FLAG", "Grader action: reconcile the conflicting sources before relying on the claim."},
	{"REQUEST_SOURCE", "Cure: obtain the primary source that settles the claim."},
	{"RECONSTRUCT_CHAIN", "Cure: rebuild the claim's transmission chain from its sources."},
	{"UNKNOWN_SOURCE", "Defect: the claim's source cannot be identified or vouched for independently of the company."},
	{"INCONSISTENCY", "Defect: two sources, or a stated figure and its recomputation, disagree beyond rounding."},
	{"STALENESS", "Defect: a newer version of the document states a different value."},
	{"TIME_WINDOW_MISMATCH", "Defect: the corroboration speaks of another period."},
	{"UNIT_MISMATCH", "Defect: the value is another unit or metric relabelled."},
	{"MISSING_LINK", "Defect: the claim has no evidence span."},
	{"BROKEN_CHAIN", "Defect: the claim's transmission chain references something that does not exist."},
	{"NO_POSITION", "The role took no investment position: a challenger, or an observer whose analysis found nothing to argue either way."},
	{"CRITICAL_DEFECT", "Stop rule (checked first): a turn relies on a material claim graded D or with an open FATAL defect."},
	{"MAX_ROUNDS", "Stop rule: the round limit was reached."},
	{"CONSENSUS", "Stop rule: all confidences within 0.10."},
	{"STABLE_DISSENT", "Stop rule: no position changed for two rounds."},
	{"EVIDENCE_EXHAUSTED", "Stop rule: evidence was requested and nothing new was found."},
	{"utility", "1 minus the Brier score of a role's confidences against the rulings, less penalties for frivolous challenges and rejected outputs."},
}

// glossary returns the terms md uses.
func glossary(md string) []Term {
	out := []Term{}
	for _, t := range terms {
		if strings.Contains(md, t.Term) {
			out = append(out, t)
		}
	}
	return out
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "/"), "\n", " ")
}

// Markdown renders the deliverables for people.
func (d *Deliverables) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Investment committee brief: %s\n\n", cmp.Or(d.Company, d.DealID))
	fmt.Fprintf(&b, "Debate `%s` on deal `%s`, %d round(s).\n\n", d.DebateID, d.DealID, d.Rounds)

	b.WriteString("## Recommendation\n\n")
	fmt.Fprintf(&b, "**%s** at confidence %.2f.\n\n", cmp.Or(d.Recommendation, "none"), d.Confidence)
	if d.Why != "" {
		fmt.Fprintf(&b, "Why: %s\n\n", d.Why)
	}
	fmt.Fprintf(&b, "%s\n\n", d.Summary)

	b.WriteString("## What each role argued\n\n| role | final position | confidence | strongest argument | claims |\n|---|---|---|---|---|\n")
	for _, r := range d.Roles {
		fmt.Fprintf(&b, "| %s | %s | %.2f | %s | %s |\n", r.Role, r.Position, r.Confidence, cell(r.Argument), strings.Join(r.ClaimKeys, ", "))
	}

	b.WriteString("\n## Dissent\n\n")
	if len(d.Dissent) == 0 {
		b.WriteString("No evidence-backed dissent: " + cmp.Or(d.DissentNote, "no role's final position differs from the recommendation") + ".\n")
	}
	for _, x := range d.Dissent {
		fmt.Fprintf(&b, "- **%s**: %s at %.2f — %s\n", x.Agent, x.Recommendation, x.Confidence, x.Reason)
		for _, e := range x.Evidence {
			fmt.Fprintf(&b, "  - evidence: %s\n", e)
		}
	}
	if len(d.CriticalClaims) > 0 {
		b.WriteString("\n## Critical claims\n\n")
		for _, c := range d.CriticalClaims {
			fmt.Fprintf(&b, "- **%s**: grade %s, %s — %s\n", c.Key, c.Grade, c.Verdict, c.Text)
		}
	}
	b.WriteString("\n## Material claims\n\n| key | claim | grade | verdict | action | evidence | registry defects | established in the debate |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range d.ClaimTable {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Key, cell(c.Text), c.Grade, c.Verdict, c.Action,
			cell(strings.Join(c.Evidence, "; ")), strings.Join(c.Defects, ", "), strings.Join(c.Debated, ", "))
	}
	b.WriteString("\n## Actions\n\n")
	if len(d.Actions) == 0 {
		b.WriteString("None.\n")
	}
	for _, a := range d.Actions {
		fmt.Fprintf(&b, "- [%s] %s (%s)\n", a.Type, a.Detail, a.Source)
	}
	b.WriteString("\n## What would change the recommendation\n\n")
	if len(d.WouldChange) == 0 {
		b.WriteString("The arbiter named no test.\n")
	}
	for _, w := range d.WouldChange {
		fmt.Fprintf(&b, "- %s\n", w)
	}
	b.WriteString("\n## How the debate stopped\n\n")
	fmt.Fprintf(&b, "Stop rule **%s**", d.StopReason)
	if d.StopWhy != "" {
		fmt.Fprintf(&b, ": %s", d.StopWhy)
	}
	b.WriteString(".")
	if d.StopContinue != "" {
		fmt.Fprintf(&b, " %s", d.StopContinue)
	}
	fmt.Fprintf(&b, "\n\nGate: %d outputs accepted, %d rejected (pass rate %.1f%%).\n", d.Gate.Accepted, d.Gate.Rejected, 100*d.Gate.PassRate)
	b.WriteString("\n## Utility\n\n")
	for _, role := range debate.IDISRoles {
		fmt.Fprintf(&b, "- %s: %.3f\n", role, d.Utility[role])
	}
	if len(d.Glossary) > 0 {
		b.WriteString("\n## Glossary\n\n")
		for _, t := range d.Glossary {
			fmt.Fprintf(&b, "- **%s**: %s\n", t.Term, t.Gloss)
		}
	}
	return b.String()
}

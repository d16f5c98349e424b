package stratmaster

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/debated/debated/internal/debate"
)

// Rules is the deterministic backend: it answers a structured call of the
// named schema (SchemaResearchPlan, ...) from its DATA document alone, as a
// model would, and derives every statement from the DATA (the deal's
// evidence, grades and the critic's directives). The protocol uses it when
// no model is configured; tests serve it behind an OpenAI-compatible
// server. Returns an error for an unknown schema or DATA that does not
// decode.
func Rules(schema string, data json.RawMessage) (json.RawMessage, error) {
	return prompts.Answer(schema, data)
}

// Bounds of a research plan.
const (
	maxSearches = 10
	maxLookups  = 20
	searchLimit = 20
	maxQueryLen = 500
)

// queryStopWords are dropped from the any-term query.
var queryStopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true, "can": true,
	"do": true, "does": true, "for": true, "from": true, "has": true, "have": true, "how": true, "in": true, "is": true,
	"it": true, "its": true, "of": true, "on": true, "or": true, "should": true, "that": true, "the": true, "this": true,
	"to": true, "was": true, "we": true, "were": true, "what": true, "which": true, "why": true, "will": true, "with": true,
}

// anyTermQuery turns a question into a query for any of its words ("arr or
// burn or runway"): full-text search engines match every word of a plain
// query, and a question's words rarely occur in one excerpt together.
func anyTermQuery(q string) string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var kept []string
	n := 0
	for _, w := range words {
		if len(w) < 2 || queryStopWords[w] || slices.Contains(kept, w) {
			continue
		}
		if n+len(w)+4 > maxQueryLen {
			break
		}
		kept = append(kept, w)
		n += len(w) + 4
	}
	return strings.Join(kept, " or ")
}

// ruleResearch searches the question as asked and for any of its words,
// and looks up the claims the directives name (every claim when they ask
// to broaden).
func ruleResearch(d researchData) researchPlan {
	p := researchPlan{Searches: []searchSpec{}, Lookups: []string{}}
	q := strings.TrimSpace(d.Question)
	if len(q) > maxQueryLen {
		q = q[:maxQueryLen]
	}
	if q != "" {
		p.Searches = append(p.Searches, searchSpec{Query: q, MinGrade: d.Directives.MinGrade, Limit: searchLimit})
	}
	if a := anyTermQuery(q); a != "" && a != strings.ToLower(q) {
		p.Searches = append(p.Searches, searchSpec{Query: a, MinGrade: d.Directives.MinGrade, Limit: searchLimit})
	}
	lookups := slices.Clone(d.Directives.LookupClaims)
	if d.Directives.Broaden {
		for _, c := range d.Claims {
			lookups = append(lookups, c.ClaimID)
		}
	}
	slices.Sort(lookups)
	lookups = slices.Compact(lookups)
	p.Lookups = lookups[:min(len(lookups), maxLookups)]
	p.Rationale = fmt.Sprintf("pass %d: search the question as asked and for any of its terms", d.Pass)
	if len(p.Lookups) > 0 {
		p.Rationale += fmt.Sprintf("; look up the evidence of %d claim(s) the critic named", len(p.Lookups))
	}
	if d.Directives.MinGrade != "" {
		p.Rationale += "; only evidence graded " + string(d.Directives.MinGrade) + " or better"
	}
	return p
}

// gradeConfidence is a claim's confidence from its sanad grade (0.25 for
// D or none).
var gradeConfidence = map[debate.Grade]float64{debate.GradeA: 0.85, debate.GradeB: 0.7, debate.GradeC: 0.5}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// ruleSynthesise states one supporting hypothesis per claim the collected
// evidence supports, and a counter-hypothesis for a claim graded D,
// CONTRADICTED or INFLATED (or, when the directives require one, for the
// weakest presented hypothesis). Confidence starts from the claim's grade (A 0.85, B 0.7,
// C 0.5, D 0.25), gains 0.05 per further evidence item (at most 0.1), loses
// 0.2 for a CONTRADICTED or INFLATED verdict, and is capped by the
// directives. Hypotheses the directives rule out are set aside.
func ruleSynthesise(d synthData) synthAnswer {
	out := synthAnswer{Hypotheses: []draft{}, SetAside: []SetAside{}}
	dir := d.Directives
	byClaim := map[string][]Evidence{}
	for _, e := range d.Evidence {
		if dir.MinGrade != "" && debate.GradeRank(e.SourceGrade) > debate.GradeRank(dir.MinGrade) {
			continue
		}
		for _, c := range e.ClaimIDs {
			byClaim[c] = append(byClaim[c], e)
		}
	}
	claims := slices.Clone(d.Claims)
	slices.SortFunc(claims, func(a, b gradedClaim) int {
		return strings.Compare(a.Key+"\x00"+a.ClaimID, b.Key+"\x00"+b.ClaimID)
	})
	var weakest *draft
	var weakestClaim gradedClaim
	present := func(h draft, hasA bool) bool {
		if dir.ConfidenceCap > 0 && !hasA && h.Confidence > dir.ConfidenceCap {
			h.Confidence = dir.ConfidenceCap
			h.Rationale += fmt.Sprintf("; capped at %.2f without grade A evidence", dir.ConfidenceCap)
		}
		switch {
		case dir.MinEvidence > 0 && len(h.EvidenceIDs) < dir.MinEvidence:
			out.SetAside = append(out.SetAside, SetAside{Statement: h.Statement, ClaimIDs: h.ClaimIDs,
				Reason: fmt.Sprintf("cites %d evidence item(s); at least %d are required", len(h.EvidenceIDs), dir.MinEvidence)})
			return false
		case hasTerm(h.Statement, dir.AvoidTerms) != "":
			out.SetAside = append(out.SetAside, SetAside{Statement: h.Statement, ClaimIDs: h.ClaimIDs,
				Reason: fmt.Sprintf("uses the term %q the constitution forbids", hasTerm(h.Statement, dir.AvoidTerms))})
			return false
		}
		out.Hypotheses = append(out.Hypotheses, h)
		return true
	}
	countered := false
	for _, c := range claims {
		evs := byClaim[c.ClaimID]
		if len(evs) == 0 {
			continue
		}
		ids := make([]string, 0, len(evs))
		hasA := false
		for _, e := range evs {
			ids = append(ids, e.EvidenceID)
			hasA = hasA || e.SourceGrade == debate.GradeA
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		conf := cmp.Or(gradeConfidence[c.Grade], 0.25) + 0.05*float64(min(len(ids)-1, 2))
		conflicting := c.Verdict == debate.VerdictContradicted || c.Verdict == debate.VerdictInflated
		if conflicting {
			conf -= 0.2
		}
		conf = round2(min(max(conf, 0.05), 0.95))
		h := draft{Statement: c.Text, Stance: StanceSupports, ClaimIDs: []string{c.ClaimID}, EvidenceIDs: ids, Confidence: conf,
			Rationale: fmt.Sprintf("claim %s is graded %s (%s) on %d evidence item(s)", c.Key, c.Grade, c.Verdict, len(ids))}
		if present(h, hasA) && (weakest == nil || h.Confidence < weakest.Confidence) {
			w := out.Hypotheses[len(out.Hypotheses)-1]
			weakest, weakestClaim = &w, c
		}
		if (conflicting || c.Grade == debate.GradeD) && present(counter(h, c), false) {
			countered = true
		}
	}
	if dir.RequireCounter && !countered && weakest != nil {
		present(counter(*weakest, weakestClaim), false)
	}
	return out
}

// counter is the counter-hypothesis of a supporting one.
func counter(h draft, c gradedClaim) draft {
	return draft{
		Statement: fmt.Sprintf("The evidence may not bear out that %s", lowerFirst(c.Text)),
		Stance:    StanceCounter, ClaimIDs: h.ClaimIDs, EvidenceIDs: h.EvidenceIDs,
		Confidence: round2(1 - h.Confidence),
		Rationale:  fmt.Sprintf("claim %s is graded %s (%s)", c.Key, c.Grade, c.Verdict),
	}
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	if len(r) > 1 && unicode.IsUpper(r[1]) { // an acronym: keep it
		return s
	}
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// ruleChallenge challenges every hypothesis below the debate threshold, on
// graded-apart evidence or on a conflicting claim.
func ruleChallenge(d challengeData) challengeAnswer {
	out := challengeAnswer{Challenges: []Challenge{}}
	ev := evidenceByID(d.Evidence)
	verdicts := map[string]debate.Verdict{}
	for _, c := range d.Claims {
		verdicts[c.ClaimID] = c.Verdict
	}
	for _, h := range d.Hypotheses {
		reasons := debateReasons([]Hypothesis{h}, ev, verdicts)
		if len(reasons) == 0 {
			continue
		}
		for i, r := range reasons { // all about h: "<id>: why"
			reasons[i] = strings.TrimPrefix(r, h.ID+": ")
		}
		grades := make([]string, 0, len(h.EvidenceIDs))
		for _, id := range h.EvidenceIDs {
			grades = append(grades, string(ev[id].SourceGrade))
		}
		out.Challenges = append(out.Challenges, Challenge{
			HypothesisID: h.ID, EvidenceIDs: h.EvidenceIDs,
			Argument: fmt.Sprintf("%s rests on %d evidence item(s) graded %s: %s", h.ID, len(h.EvidenceIDs),
				strings.Join(grades, ", "), strings.Join(reasons, "; ")),
		})
	}
	return out
}

// ruleRebut defends a challenged hypothesis that rests on at least two
// evidence items with one graded A or B, and concedes the others.
func ruleRebut(d rebuttalData) rebuttalAnswer {
	out := rebuttalAnswer{Responses: []Response{}}
	ev := evidenceByID(d.Evidence)
	hs := map[string]Hypothesis{}
	for _, h := range d.Hypotheses {
		hs[h.ID] = h
	}
	for _, c := range d.Challenges {
		h := hs[c.HypothesisID]
		strong := 0
		for _, id := range h.EvidenceIDs {
			if debate.GradeRank(ev[id].SourceGrade) <= debate.GradeRank(debate.GradeB) {
				strong++
			}
		}
		r := Response{HypothesisID: c.HypothesisID, Decision: DecisionConcede,
			Argument: fmt.Sprintf("conceded: %d evidence item(s), %d graded A or B; its confidence drops by %.2f", len(h.EvidenceIDs), strong, ConcedePenalty)}
		if len(h.EvidenceIDs) >= 2 && strong > 0 {
			r.Decision = DecisionDefend
			r.Argument = fmt.Sprintf("defended: %d independent evidence item(s), %d graded A or B, carry it", len(h.EvidenceIDs), strong)
		}
		out.Responses = append(out.Responses, r)
	}
	return out
}

// Priorities of plan items.
const (
	priorityHigh   = "high"
	priorityMedium = "medium"
	priorityLow    = "low"
)

// rulePlan recommends acting on supporting hypotheses at or above the
// debate threshold and verifying the others, and lists the
// counter-hypotheses as risks. A statement with a term to avoid is
// referred to by its id.
func rulePlan(d planData) Plan {
	p := Plan{Recommendations: []PlanItem{}, Risks: []PlanItem{}}
	contested := 0
	for _, h := range d.Hypotheses {
		if h.Contested {
			contested++
		}
		about := h.Statement
		if hasTerm(about, d.Directives.AvoidTerms) != "" {
			about = "hypothesis " + h.ID
		}
		prio := priorityLow
		switch {
		case h.Confidence >= 0.75:
			prio = priorityHigh
		case h.Confidence >= DebateConfidenceThreshold:
			prio = priorityMedium
		}
		item := PlanItem{HypothesisIDs: []string{h.ID}, Priority: prio}
		switch {
		case h.Stance == StanceCounter:
			item.Text = fmt.Sprintf("Risk: %s (confidence %.2f).", strings.TrimSuffix(about, "."), h.Confidence)
			p.Risks = append(p.Risks, item)
			continue
		case h.Confidence >= DebateConfidenceThreshold && !h.Contested:
			item.Text = fmt.Sprintf("Act on: %s (confidence %.2f).", strings.TrimSuffix(about, "."), h.Confidence)
		default:
			item.Text = fmt.Sprintf("Verify before acting: %s (confidence %.2f).", strings.TrimSuffix(about, "."), h.Confidence)
		}
		p.Recommendations = append(p.Recommendations, item)
	}
	p.Summary = fmt.Sprintf("Pass %d: %d hypothesis(es) answer the question, %d contested in debate; %d recommendation(s), %d risk(s).",
		d.Pass, len(d.Hypotheses), contested, len(p.Recommendations), len(p.Risks))
	return p
}

// hasTerm returns the first of terms that text contains as a whole word
// (case-insensitive), or "".
func hasTerm(text string, terms []string) string {
	low := strings.ToLower(text)
	for _, t := range terms {
		lt := strings.ToLower(strings.TrimSpace(t))
		if lt == "" {
			continue
		}
		for i := 0; ; {
			j := strings.Index(low[i:], lt)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(lt)
			if !wordAt(low, start-1) && !wordAt(low, end) {
				return t
			}
			i = start + 1
		}
	}
	return ""
}

// wordAt reports whether the byte at i of s belongs to a word.
func wordAt(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	r := rune(s[i])
	return r >= 0x80 || unicode.IsLetter(r) || unicode.IsDigit(r)
}

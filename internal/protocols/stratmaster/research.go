package stratmaster

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/tools"
)

// dealView is the graded deal a node works on.
type dealView struct {
	bundle  *debate.DealBundle
	grading *debate.DealGrading
	// supports maps an evidence id to the claims whose sanads cite it.
	supports map[string][]string
	graded   map[string]gradedClaim
}

// view loads the deal and grades it with its stored defect records.
func (p *proto) view(ctx context.Context, dealID string) (*dealView, error) {
	b, err := p.cfg.Registry.DealBundleGet(ctx, dealID)
	if err != nil {
		return nil, fmt.Errorf("stratmaster: load deal: %w", err)
	}
	records, err := p.cfg.Registry.DefectList(ctx, dealID)
	if err != nil {
		return nil, fmt.Errorf("stratmaster: load defects: %w", err)
	}
	v := &dealView{bundle: b, grading: sanad.GradeWithOptions(b, sanad.Options{Records: records}),
		supports: map[string][]string{}, graded: map[string]gradedClaim{}}
	for _, sn := range b.Sanads {
		for _, id := range append([]string{sn.PrimaryEvidenceID}, sn.CorroboratingEvidenceIDs...) {
			if id != "" && !slices.Contains(v.supports[id], sn.ClaimID) {
				v.supports[id] = append(v.supports[id], sn.ClaimID)
			}
		}
	}
	for id := range v.supports {
		slices.Sort(v.supports[id])
	}
	texts := map[string]debate.Claim{}
	for _, c := range b.Claims {
		texts[c.ID] = c
	}
	for _, g := range v.grading.Claims {
		c := texts[g.ClaimID]
		v.graded[g.ClaimID] = gradedClaim{ClaimID: g.ClaimID, Key: g.ClaimKey, Text: c.Text, Grade: g.Grade,
			Verdict: g.Verdict, Corroboration: g.Corroboration, Material: c.Material()}
	}
	return v, nil
}

// claimsFor returns the graded claims the evidence supports, by key.
func (v *dealView) claimsFor(ev []Evidence) []gradedClaim {
	seen := map[string]bool{}
	var out []gradedClaim
	for _, e := range ev {
		for _, id := range e.ClaimIDs {
			if g, ok := v.graded[id]; ok && !seen[id] {
				seen[id] = true
				out = append(out, g)
			}
		}
	}
	slices.SortFunc(out, func(a, b gradedClaim) int { return cmp.Compare(a.Key+"\x00"+a.ClaimID, b.Key+"\x00"+b.ClaimID) })
	return out
}

// research is the researcher's node: it plans the pass's searches and
// lookups, the server runs them as the researcher's tool calls (each
// audited as agent.tool_call, allowed or refused), and what they found
// joins the collected evidence with its provenance.
func (p *proto) research(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	v, err := p.view(ctx, in.DealID)
	if err != nil {
		return nil, err
	}
	var events []orchestrator.Emit
	if s.Status == StatusPending {
		s.Status = StatusInProgress
		events = append(events, statusEvent(s, in, "research starts"))
	}
	// A new pass starts its synthesis, debate and plan afresh.
	s.Pass = in.Round
	s.Hypotheses, s.SetAside, s.DebateReasons, s.Challenges, s.Plan = nil, nil, nil, nil, nil

	catalog := make([]catalogClaim, 0, len(v.bundle.Claims))
	ids := map[string]bool{}
	for _, c := range v.bundle.Claims {
		catalog = append(catalog, catalogClaim{ClaimID: c.ID, Key: c.Key, Class: c.Class, Text: c.Text})
		ids[c.ID] = true
	}
	slices.SortFunc(catalog, func(a, b catalogClaim) int { return cmp.Compare(a.Key+"\x00"+a.ClaimID, b.Key+"\x00"+b.ClaimID) })
	known := make([]string, 0, len(s.Evidence))
	for _, e := range s.Evidence {
		known = append(known, e.EvidenceID)
	}
	plan, model, err := ask(ctx, p, in, SchemaResearchPlan, fmt.Sprintf("plan the evidence research of pass %d", s.Pass),
		researchData{Question: t.Opts.Question, Pass: s.Pass, DealID: in.DealID, Claims: catalog, Known: known, Directives: s.Directives},
		func(pl researchPlan) []debate.Violation { return checkPlan(pl, ids) })
	if err != nil {
		return nil, err
	}

	limits := tools.DefaultLimits() // the researcher's quotas per pass (a pass is a round)
	limits.MaxCallsPerRound = map[string]int{tools.SearchEvidence: maxSearches, tools.LookupClaim: maxLookups}
	inv := tools.NewInvoker(tools.Config{
		Matrix: Matrix, Limits: limits, Deal: &tools.Deal{Bundle: v.bundle, Grading: v.grading},
		Searcher: p.cfg.Searcher, DealID: in.DealID, DebateID: in.DebateID, Round: in.Round, Now: p.cfg.Now,
	})
	var found []Evidence
	for _, sp := range plan.Searches {
		args := map[string]any{"query": sp.Query, "deal_id": in.DealID, "limit": cmp.Or(sp.Limit, searchLimit)}
		if sp.MinGrade != "" {
			args["min_grade"] = sp.MinGrade
		}
		out, hash, err := call[tools.SearchOutput](ctx, inv, tools.SearchEvidence, args)
		if err != nil {
			return nil, err
		}
		for _, r := range out.Results {
			found = append(found, Evidence{EvidenceID: r.EvidenceID, SourceGrade: debate.SourceGrade(r.SourceGrade),
				Excerpt: r.TextExcerpt, ClaimIDs: protocol.NonNil(v.supports[r.EvidenceID]),
				Provenance: Provenance{Tool: tools.SearchEvidence, Query: sp.Query, Pass: s.Pass, ResultHash: hash}})
		}
	}
	for _, id := range plan.Lookups {
		out, hash, err := call[struct {
			Evidence []tools.EvidenceOut `json:"evidence"`
		}](ctx, inv, tools.LookupClaim, map[string]any{"claim_id": id, "include_evidence": true})
		if err != nil {
			return nil, err
		}
		for _, e := range out.Evidence {
			if !e.Resolved {
				continue
			}
			ev := Evidence{EvidenceID: e.EvidenceID, SourceGrade: debate.SourceGrade(e.SourceGrade),
				ClaimIDs: protocol.NonNil(v.supports[e.EvidenceID]), Provenance: Provenance{Tool: tools.LookupClaim, ClaimID: id, Pass: s.Pass, ResultHash: hash}}
			if e.SourceSpan != nil {
				ev.Excerpt = e.SourceSpan.TextExcerpt
			}
			found = append(found, ev)
		}
	}
	added := s.addEvidence(found)
	events = append(events, protocol.AuditEvents(inv)...)
	events = append(events,
		orchestrator.Emit{Type: EventResearchPlan, Payload: map[string]any{"pass": s.Pass, "plan": plan, "directives": s.Directives, "model": model}},
		orchestrator.Emit{Type: EventEvidenceCollected, Payload: map[string]any{"pass": s.Pass, "new_evidence_ids": protocol.NonNil(added), "total": len(s.Evidence)}},
	)
	if len(s.Evidence) == 0 {
		s.Status, s.StopReason = StatusFailed, ReasonNoEvidence
		s.StopWhy = "the research found no evidence in the deal for the question"
	}
	return t.Save(events, nil)
}

// call runs one researcher tool call and decodes a SUCCESS output into T.
// A refusal (DENIED, INVALID) is audited and yields nothing; an ERROR (the
// store's search failed) fails the attempt.
func call[T any](ctx context.Context, inv *tools.Invoker, tool string, args map[string]any) (T, string, error) {
	var out T
	raw, err := json.Marshal(args)
	if err != nil {
		return out, "", fmt.Errorf("stratmaster: %s arguments: %w", tool, err)
	}
	res, audit := inv.Call(ctx, RoleResearcher, debate.ToolCall{Tool: tool, Args: raw})
	switch res.Status {
	case tools.StatusSuccess:
		if err := json.Unmarshal(res.Output, &out); err != nil {
			return out, "", fmt.Errorf("stratmaster: %s output: %w", tool, err)
		}
	case tools.StatusError:
		return out, "", fmt.Errorf("stratmaster: %s failed: %w", tool, tools.ErrToolFailed)
	}
	return out, audit.ResultHash, nil
}

// checkPlan is the gate of a research plan: bounded, well-formed queries,
// and lookups of the deal's own claims.
func checkPlan(pl researchPlan, claims map[string]bool) []debate.Violation {
	v := violations{rule: "RESEARCH_PLAN"}
	if len(pl.Searches) > maxSearches {
		v.add("searches", "at most %d searches, got %d", maxSearches, len(pl.Searches))
	}
	for i, sp := range pl.Searches {
		f := fmt.Sprintf("searches[%d]", i)
		if q := strings.TrimSpace(sp.Query); q == "" || len(q) > maxQueryLen {
			v.add(f+".query", "must be 1 to %d bytes", maxQueryLen)
		}
		if sp.MinGrade != "" && !slices.Contains(debate.SourceGrades, sp.MinGrade) {
			v.add(f+".min_grade", "must be A, B, C or D")
		}
		if sp.Limit < 0 || sp.Limit > 50 {
			v.add(f+".limit", "must be between 1 and 50")
		}
	}
	if len(pl.Lookups) > maxLookups {
		v.add("lookups", "at most %d lookups, got %d", maxLookups, len(pl.Lookups))
	}
	for i, id := range pl.Lookups {
		if !claims[id] {
			v.add(fmt.Sprintf("lookups[%d]", i), "%q is not a claim of the deal", id)
		}
	}
	return v.list
}

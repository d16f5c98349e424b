package rules

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/tools"
)

// quota is the server's per-round limit of each tool per role (seed 000
// §6.2); a role plans within it.
var quota = tools.DefaultLimits().MaxCallsPerRound

// The argument structs spell seed 000 §4's parameter names; optional ones
// are left out when unset.
type lookupClaimArgs struct {
	ClaimID         string `json:"claim_id"`
	IncludeSanad    bool   `json:"include_sanad,omitempty"`
	IncludeEvidence bool   `json:"include_evidence,omitempty"`
}

type lookupCalcArgs struct {
	CalcID        string `json:"calc_id"`
	IncludeInputs bool   `json:"include_inputs"`
}

type searchEvidenceArgs struct {
	Query      string `json:"query"`
	DealID     string `json:"deal_id"`
	ClaimClass string `json:"claim_class,omitempty"`
	MinGrade   string `json:"min_grade,omitempty"`
	Limit      int    `json:"limit,omitempty"`
}

type flagDefectArgs struct {
	ClaimID      string   `json:"claim_id"`
	DefectType   string   `json:"defect_type"`
	Severity     string   `json:"severity"`
	Description  string   `json:"description"`
	EvidenceRefs []string `json:"evidence_refs"`
	CureProtocol string   `json:"cure_protocol"`
}

type humanReviewArgs struct {
	ClaimIDs     []string `json:"claim_ids"`
	Reason       string   `json:"reason"`
	Priority     string   `json:"priority,omitempty"`
	RequiredRole string   `json:"required_role,omitempty"`
}

type enrichmentArgs struct {
	EntityType string   `json:"entity_type"`
	EntityName string   `json:"entity_name"`
	DataPoints []string `json:"data_points"`
}

// caller makes one turn's tool calls within the role's remaining quota
// for the round. Calls that return SUCCESS are kept for the output's
// tool_calls; a refused or failed call is the server's to record and
// changes nothing else in the turn.
type caller struct {
	ctx   context.Context
	tools roles.Tools
	left  map[string]int
	made  []debate.ToolCall
}

// newCaller budgets the turn: the quota minus what the role's earlier
// outputs of the round already used; share (0 < share ≤ 1) keeps part of
// it for a later turn of the same round (the advocate speaks twice).
func newCaller(ctx context.Context, v *view, share float64) *caller {
	c := &caller{ctx: ctx, tools: v.in.Tools, left: map[string]int{}}
	for _, tool := range slices.Sorted(maps.Keys(quota)) {
		n := quota[tool] - len(v.calls(v.role, tool, v.round, v.round))
		if share < 1 {
			n = min(n, int(float64(quota[tool])*share))
		}
		c.left[tool] = max(n, 0)
	}
	return c
}

// can reports whether a call to tool fits the budget.
func (c *caller) can(tool string) bool { return c.tools != nil && c.left[tool] > 0 }

// call runs one call. It reports whether the tool returned SUCCESS; an
// error is an infrastructure failure the engine retries.
func (c *caller) call(tool string, args any) (bool, error) {
	if !c.can(tool) {
		return false, nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return false, fmt.Errorf("rules: encode %s arguments: %w", tool, err)
	}
	c.left[tool]--
	call := debate.ToolCall{Tool: tool, Args: raw}
	res, err := c.tools.Call(c.ctx, call)
	if err != nil {
		return false, fmt.Errorf("rules: %s: %w", tool, err)
	}
	if res.Status != tools.StatusSuccess {
		return false, nil
	}
	c.made = append(c.made, call)
	return true, nil
}

// lookUp looks up each of ids the role has not looked up this round, in
// order, within the budget: claims with tools.LookupClaim, calcs with
// tools.LookupCalc.
func (c *caller) lookUp(v *view, tool string, ids []string) error {
	field := map[string]string{tools.LookupClaim: "claim_id", tools.LookupCalc: "calc_id"}[tool]
	done := map[string]bool{}
	for _, call := range v.calls(v.role, tool, v.round, v.round) {
		var m map[string]any
		if json.Unmarshal(call.Args, &m) == nil {
			if s, ok := m[field].(string); ok {
				done[s] = true
			}
		}
	}
	for _, id := range ids {
		if done[id] {
			continue
		}
		var args any = lookupClaimArgs{ClaimID: id, IncludeSanad: true}
		if tool == tools.LookupCalc {
			args = lookupCalcArgs{CalcID: id, IncludeInputs: true}
		}
		if _, err := c.call(tool, args); err != nil {
			return err
		}
	}
	return nil
}

// searchFor searches the deal's evidence for a claim's metric.
func (c *caller) searchFor(v *view, cv *claimView) error {
	q := metricName(cv) + " " + clip(cv.claim.Text, 120)
	_, err := c.call(tools.SearchEvidence, searchEvidenceArgs{Query: q, DealID: v.deal.Deal.ID, ClaimClass: string(cv.claim.Class), MinGrade: "D", Limit: 10})
	return err
}

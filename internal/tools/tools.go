package tools

import (
	"cmp"
	"maps"
	"slices"
)

// Tool names (seed 000 §4).
const (
	LookupClaim        = "lookup_claim"
	LookupCalc         = "lookup_calc"
	SearchEvidence     = "search_evidence"
	FlagDefect         = "flag_defect"
	RequestHumanReview = "request_human_review"
	QueryEnrichment    = "query_enrichment"
)

// Names lists every tool the package runs, in seed 000's order.
var Names = []string{LookupClaim, LookupCalc, SearchEvidence, FlagDefect, RequestHumanReview, QueryEnrichment}

// Result statuses, as the agent.tool_call event and debate.ToolResult spell
// them.
const (
	// StatusSuccess: the tool ran; Result.Output holds its output.
	StatusSuccess = "SUCCESS"
	// StatusDenied: the role may not call the tool (RulePermission) or has
	// spent its quota for the round (RuleQuota).
	StatusDenied = "DENIED"
	// StatusInvalid: the tool is unknown or the arguments are malformed,
	// name ids outside the deal or miss a requirement.
	StatusInvalid = "INVALID"
	// StatusError: the tool could not run (the Searcher failed, the context
	// ended). It is the server's failure, not the agent's.
	StatusError = "ERROR"
)

// Rules say why a call was refused; Audit.Rule and Result.Rule carry them.
const (
	// RulePermission: the Matrix does not give the tool to the role.
	RulePermission = "permission"
	// RuleQuota: the role has made Limits' maximum of calls to the tool
	// this round.
	RuleQuota = "quota"
	// RuleUnknownTool: no tool has that name.
	RuleUnknownTool = "unknown_tool"
	// RuleArguments: the arguments are not a JSON object of the tool's
	// signature (unknown field, wrong type, missing or out-of-range value).
	RuleArguments = "arguments"
	// RuleNotFound: an id in the arguments names nothing of this deal. The
	// message is the same whether the id exists elsewhere or not.
	RuleNotFound = "not_found"
	// RuleRequirement: flag_defect's requirements (seed 000 §6.2: evidence
	// references, description length) are not met.
	RuleRequirement = "requirement"
)

// Matrix gives each role (debate.RoleAdvocate, ...) the tools it may call.
// A role or tool that is not listed is refused. Each protocol declares its
// own.
type Matrix map[string][]string

// Allows reports whether the matrix lets role call tool.
func (m Matrix) Allows(role, tool string) bool { return slices.Contains(m[role], tool) }

// Tools returns the tools role may call, sorted (nil for an unknown role):
// what a model-backed agent is offered.
func (m Matrix) Tools(role string) []string {
	ts := slices.Clone(m[role])
	slices.Sort(ts)
	return slices.Compact(ts)
}

// Clone returns a deep copy, which the caller may change.
func (m Matrix) Clone() Matrix {
	c := make(Matrix, len(m))
	for r, ts := range m {
		c[r] = slices.Clone(ts)
	}
	return c
}

// Limits are the tool abuse rules (seed 000 §6.2). Quotas are per role, per
// tool and per round.
type Limits struct {
	// MaxCallsPerRound is the most calls one role may make to a tool in one
	// round. A tool that is not listed gets DefaultMaxCalls; a listed 0
	// refuses every call.
	MaxCallsPerRound map[string]int
	// DefaultMaxCalls applies to tools MaxCallsPerRound does not list; 0
	// means DefaultMaxCallsPerRound.
	DefaultMaxCalls int
	// FlagDefectMinEvidenceRefs is the fewest evidence references a
	// flag_defect call must cite; 0 means 1 (seed 000 §4.4 requires them).
	FlagDefectMinEvidenceRefs int
	// FlagDefectMinDescription is the shortest description, in characters
	// (runes, surrounding space trimmed), a flag_defect call must give; 0
	// means 50.
	FlagDefectMinDescription int
}

// Defaults of Limits.
const (
	// DefaultMaxCallsPerRound is the quota of a tool Limits does not list.
	DefaultMaxCallsPerRound = 5
	// DefaultFlagDefectMinEvidenceRefs and DefaultFlagDefectMinDescription
	// are seed 000 §6.2's flag_defect_requires.
	DefaultFlagDefectMinEvidenceRefs = 1
	DefaultFlagDefectMinDescription  = 50
)

// DefaultLimits returns seed 000 §6.2's rules: per round and role, 20
// lookup_claim, 10 lookup_calc, 5 search_evidence and 3 flag_defect calls.
// The seed sets no quota for the other two tools; ours are 5
// query_enrichment calls (like search_evidence, a search) and 2
// request_human_review calls (an escalation is rare; a flood of them is
// abuse). flag_defect needs at least 1 evidence reference and a
// description of at least 50 characters.
func DefaultLimits() Limits {
	return Limits{
		MaxCallsPerRound: map[string]int{
			LookupClaim:        20,
			LookupCalc:         10,
			SearchEvidence:     5,
			FlagDefect:         3,
			QueryEnrichment:    5,
			RequestHumanReview: 2,
		},
		DefaultMaxCalls:           DefaultMaxCallsPerRound,
		FlagDefectMinEvidenceRefs: DefaultFlagDefectMinEvidenceRefs,
		FlagDefectMinDescription:  DefaultFlagDefectMinDescription,
	}
}

// MaxCalls returns the quota of tool for one role and round.
func (l Limits) MaxCalls(tool string) int {
	if n, ok := l.MaxCallsPerRound[tool]; ok {
		return max(n, 0)
	}
	return orDefault(l.DefaultMaxCalls, DefaultMaxCallsPerRound)
}

// orDefault is n when it is positive, else def.
func orDefault(n, def int) int { return cmp.Or(max(n, 0), def) }

func (l Limits) clone() Limits {
	c := l
	c.MaxCallsPerRound = maps.Clone(l.MaxCallsPerRound)
	return c
}

// Usage counts the calls each role has made to each tool this round: role →
// tool → calls. The protocol keeps it in its state between the nodes of a
// round and starts each round with an empty one. It is plain JSON.
type Usage map[string]map[string]int

// Count returns the calls role made to tool.
func (u Usage) Count(role, tool string) int { return u[role][tool] }

// Clone returns a deep copy.
func (u Usage) Clone() Usage {
	c := make(Usage, len(u))
	for r, ts := range u {
		c[r] = maps.Clone(ts)
	}
	return c
}

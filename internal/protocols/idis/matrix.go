package idis

import (
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/tools"
)

// Matrix is seed 000 §5's permission matrix. It follows the matrix where
// §4.3 differs: the arbiter may search evidence (to rule on a challenge),
// as §5 says. Treat it as read-only; Clone it to derive another.
var Matrix = tools.Matrix{
	debate.RoleAdvocate:            {tools.LookupClaim, tools.LookupCalc},
	debate.RoleSanadBreaker:        {tools.LookupClaim, tools.LookupCalc, tools.SearchEvidence, tools.FlagDefect},
	debate.RoleContradictionFinder: {tools.LookupClaim, tools.LookupCalc, tools.SearchEvidence, tools.QueryEnrichment},
	debate.RoleRiskOfficer:         {tools.LookupClaim, tools.LookupCalc, tools.SearchEvidence, tools.QueryEnrichment},
	debate.RoleArbiter:             {tools.LookupClaim, tools.LookupCalc, tools.SearchEvidence, tools.RequestHumanReview},
}

// The tools runtime and the roles runtime do not know each other: the
// protocol composes them, and a role's turn calls its tools through the
// invoker bound to it.
var _ roles.Tools = (*tools.Bound)(nil)

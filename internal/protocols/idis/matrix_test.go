package idis_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/tools"
)

// TestMatrixIsSeed000: the IDIS matrix is seed 000 §5's table as printed:
// tool → allowed for advocate, sanad breaker, contradiction finder, risk
// officer, arbiter.
func TestMatrixIsSeed000(t *testing.T) {
	t.Parallel()
	seed := map[string][5]bool{
		tools.LookupClaim:        {true, true, true, true, true},
		tools.LookupCalc:         {true, true, true, true, true},
		tools.SearchEvidence:     {false, true, true, true, true},
		tools.FlagDefect:         {false, true, false, false, false},
		tools.RequestHumanReview: {false, false, false, false, true},
		tools.QueryEnrichment:    {false, false, true, true, false},
	}
	require.Len(t, debate.IDISRoles, 5)
	require.Len(t, idis.Matrix, len(debate.IDISRoles))
	for _, tool := range tools.Names {
		for i, role := range debate.IDISRoles {
			require.Equal(t, seed[tool][i], idis.Matrix.Allows(role, tool), "idis.Matrix differs from seed 000 §5: %s/%s", role, tool)
		}
	}
	require.Equal(t, []string{tools.LookupCalc, tools.LookupClaim}, idis.Matrix.Tools(debate.RoleAdvocate))
}

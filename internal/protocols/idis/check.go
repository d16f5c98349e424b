package idis

import (
	"errors"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/sanad"
)

// checkOutput is the protocol's CheckOutput (ValidateOutput): an
// AgentOutput of seed 000 §3.2 through the gates of a debate's turn, over
// the deal graded with its defect records.
func checkOutput(b *debate.DealBundle, defects []debate.Defect, output []byte) ([]debate.Violation, error) {
	o, err := gate.ParseOutput(output, debate.IDISRoles)
	if err != nil {
		var ve *debate.ValidationError
		if !errors.As(err, &ve) {
			return nil, err
		}
		vs := make([]debate.Violation, 0, len(ve.Violations))
		for _, v := range ve.Violations {
			vs = append(vs, debate.Violation{Rule: "SCHEMA", Field: v.Field, Detail: v.Description})
		}
		return vs, nil
	}
	facts := gate.NewFacts(b, sanad.GradeWithOptions(b, sanad.Options{Records: defects}))
	return gate.Validate(o, facts, debate.IDISRoles).Violations, nil
}

package rules

import (
	"context"
	"errors"
	"fmt"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/roles"
)

// ErrNoDeal is returned by Turn when the input carries no deal registry:
// a wiring fault, not a bad output.
var ErrNoDeal = errors.New("rules: input has no deal")

// New returns the five IDIS roles by name (debate.RoleAdvocate, ...). The
// roles hold no debate state: one value serves any number of debates
// concurrently. They share an index of each deal registry and grading they
// are given (by pointer), so a caller must not change a bundle or grading
// once it has given it to a turn.
func New() map[string]roles.Role {
	c := &indexCache{}
	return map[string]roles.Role{
		debate.RoleAdvocate:            role{debate.RoleAdvocate, advocateTurn, c},
		debate.RoleSanadBreaker:        role{debate.RoleSanadBreaker, sanadBreakerTurn, c},
		debate.RoleContradictionFinder: role{debate.RoleContradictionFinder, contradictionTurn, c},
		debate.RoleRiskOfficer:         role{debate.RoleRiskOfficer, riskTurn, c},
		debate.RoleArbiter:             role{debate.RoleArbiter, arbiterTurn, c},
	}
}

// role is one rules-backed agent.
type role struct {
	name  string
	turn  func(ctx context.Context, v *view) (*debate.AgentOutput, error)
	cache *indexCache // shared by the set's roles
}

// Name returns the role id.
func (r role) Name() string { return r.name }

// Turn computes the role's output for in.Round from the registry, the
// grading and the transcript. It returns ErrNoDeal without a deal, the
// context's error once it is done, and a tool's infrastructure error
// (roles.Tools.Call's error) unchanged in a wrap; a refused tool call is
// not an error. A missing grading counts every claim as ungraded (grade D,
// UNVERIFIED).
func (r role) Turn(ctx context.Context, in *roles.Input) (*debate.AgentOutput, error) {
	if in == nil || in.Deal == nil {
		return nil, ErrNoDeal
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v := &view{in: in, role: r.name, round: in.Round, index: r.cache.get(in.Deal, in.Grading)}
	out, err := r.turn(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("rules: %s round %d: %w", r.name, in.Round, err)
	}
	return out, nil
}

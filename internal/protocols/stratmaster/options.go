package stratmaster

import (
	"cmp"
	"errors"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// Bounds and defaults of the options.
const (
	// DefaultMaxAttempts is how many attempts a node's work gets before the
	// task goes to needs_review (seed 004: 3).
	DefaultMaxAttempts = 3
	// DefaultMaxRevisions is how many times the critic may send the work
	// back to research.
	DefaultMaxRevisions = 2
	maxRevisionsLimit   = 5
	maxQuestionBytes    = maxQueryLen
)

// Options of a StratMaster task.
type Options struct {
	// Question is what the task answers from the deal's evidence. Required.
	Question string `json:"question"`
	// Constitution is the tenant's constitution as YAML text (see
	// ParseConstitution). Required.
	Constitution string `json:"constitution"`
	// MaxAttempts is 1–3 (default 3): after that many failed attempts of a
	// node's work the task ends in needs_review. The engine's own limit
	// (3 attempts) still bounds panics and timeouts.
	MaxAttempts int `json:"max_attempts"`
	// MaxRevisions is 0–5 (default 2): how many times the critic may send
	// the work back to research before the task ends in needs_review.
	MaxRevisions *int `json:"max_revisions"`

	cons *Constitution // parsed from Constitution
}

// check validates and defaults decoded options and parses the
// constitution, once per options: the kit keeps the parsed options.
func check(o *Options, v *debate.Violations) {
	o.Question = strings.TrimSpace(o.Question)
	switch {
	case o.Question == "":
		v.Add("options.question", "required")
	case len(o.Question) > maxQuestionBytes:
		v.Add("options.question", "at most %d bytes", maxQuestionBytes)
	}
	o.MaxAttempts = cmp.Or(o.MaxAttempts, DefaultMaxAttempts)
	if o.MaxAttempts < 1 || o.MaxAttempts > DefaultMaxAttempts {
		v.Add("options.max_attempts", "must be between 1 and %d", DefaultMaxAttempts)
	}
	if o.MaxRevisions == nil {
		o.MaxRevisions = new(DefaultMaxRevisions)
	}
	if *o.MaxRevisions < 0 || *o.MaxRevisions > maxRevisionsLimit {
		v.Add("options.max_revisions", "must be between 0 and %d", maxRevisionsLimit)
	}
	c, err := ParseConstitution(o.Constitution, "options.constitution")
	if ve, ok := errors.AsType[*debate.ValidationError](err); ok {
		for _, fv := range ve.Violations {
			v.Add(fv.Field, "%s", fv.Description)
		}
	} else if err != nil {
		v.Add("options.constitution", "%v", err)
	}
	o.cons = c
}

package debate

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Callers branch on them with errors.Is; adapters (stores,
// the gRPC layer) translate foreign errors into these at their boundary.
var (
	// ErrNotFound: the resource does not exist for the caller's tenant. A
	// resource of another tenant is reported as not found too, so that its
	// existence does not leak.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: a create collided with an existing resource that
	// differs from the request.
	ErrAlreadyExists = errors.New("already exists")
	// ErrUnauthenticated: no or an unknown credential.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrPermissionDenied: the credential is valid but lacks the scope.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrInvalid: the input is malformed; see ValidationError for details.
	ErrInvalid = errors.New("invalid argument")
	// ErrFailedPrecondition: the request is well formed but the state of the
	// resource does not allow it.
	ErrFailedPrecondition = errors.New("failed precondition")
	// ErrNoTenant: a tenant-scoped operation ran without a tenant in its
	// context. It is a programming error, never a client's.
	ErrNoTenant = errors.New("no tenant in context")
	// ErrConflict: a fenced write lost a race (another worker committed
	// first); nothing was written. The loser reloads and carries on from
	// the new head, or stops.
	ErrConflict = errors.New("conflict")
	// ErrDataLoss: stored data contradicts itself or the transparency log
	// (events missing below a recorded head, a log node missing): it was
	// lost or changed outside the service.
	ErrDataLoss = errors.New("data loss")
)

// FieldViolation names one bad field by its path in the request
// ("claims[3].claim_id") and says what is wrong with it.
type FieldViolation struct {
	Field       string
	Description string
}

// ValidationError carries every field violation found in one input.
// errors.Is(err, ErrInvalid) holds for it.
type ValidationError struct {
	Violations []FieldViolation
}

// Error implements error.
func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		parts = append(parts, v.Field+": "+v.Description)
	}
	return "invalid argument: " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// Violations accumulates field violations; its zero value is ready to use.
type Violations struct {
	list []FieldViolation
}

// Add records a violation of field.
func (v *Violations) Add(field, format string, args ...any) {
	v.list = append(v.list, FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// Len reports how many violations were recorded.
func (v *Violations) Len() int { return len(v.list) }

// Prefix puts prefix before the field of every violation recorded since
// Len was from: checks can name fields relative to an element and pay for
// the element's path only when it has a violation.
func (v *Violations) Prefix(from int, prefix string) {
	for i := max(from, 0); i < len(v.list); i++ {
		v.list[i].Field = prefix + v.list[i].Field
	}
}

// Err returns a *ValidationError with the recorded violations, or nil when
// there are none.
func (v *Violations) Err() error {
	if len(v.list) == 0 {
		return nil
	}
	return &ValidationError{Violations: append([]FieldViolation(nil), v.list...)}
}

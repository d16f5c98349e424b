package server

import (
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// uuidFields are the request fields that hold ids the server itself made
// as UUIDs: tenants, API keys and debates. Deal, claim, evidence and defect
// ids come from deal files (or carry a prefix) and are free-form, so they
// are not checked here.
var uuidFields = map[protoreflect.Name]bool{"tenant_id": true, "key_id": true, "debate_id": true}

// idViolations names each top-level UUID field of a request (a message
// whose name ends in "Request") that is set but is not a UUID. Such an id
// can never name anything, so the caller hears that the id is malformed
// (INVALID_ARGUMENT) rather than that nothing has it (NOT_FOUND), which
// would send them looking for a missing object instead of a typo.
func idViolations(msg proto.Message) []debate.FieldViolation {
	m := msg.ProtoReflect()
	if !strings.HasSuffix(string(m.Descriptor().Name()), "Request") {
		return nil
	}
	var out []debate.FieldViolation
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !uuidFields[fd.Name()] || fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
			continue
		}
		s := m.Get(fd).String()
		if s == "" || isUUID(s) {
			continue
		}
		out = append(out, debate.FieldViolation{
			Field:       string(fd.Name()),
			Description: "must be a UUID such as 6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30 (the id the server answered when it was created)",
		})
	}
	return out
}

// isUUID reports whether s is a UUID in its canonical 8-4-4-4-12 form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/debated/debated/internal/debate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errUnreachable is what a call answers when debated is not there.
var errUnreachable = errors.New("is it running? (make run)")

// explain turns the errors a person cannot act on into ones they can: a
// server that does not answer is named by its address.
func (c *cli) explain(err error) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable && isConnectionFailure(st.Message()) {
		return fmt.Errorf("cannot reach debated at %s — %w", c.addr, errUnreachable)
	}
	return err
}

// isConnectionFailure tells a transport failure (nothing listening, name
// not resolved) from an Unavailable the server itself answered.
func isConnectionFailure(msg string) bool {
	for _, m := range []string{"connection refused", "connection error", "no such host", "dial tcp", "name resolver", "produced zero addresses"} {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// describe renders an error for a person: the server's message without
// gRPC's "rpc error: code = … desc = …" wrapping, and each field violation
// once on its own line.
func describe(err error) string {
	var ve *debate.ValidationError
	if errors.As(err, &ve) {
		var b strings.Builder
		b.WriteString("the deal files are invalid:")
		for _, v := range ve.Violations {
			fmt.Fprintf(&b, "\n  %s: %s", v.Field, v.Description)
		}
		return b.String()
	}
	if st, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return statusText(st.GRPCStatus())
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && !errors.As(err, new(interface{ GRPCStatus() *status.Status })) {
		// "open x.json: no such file or directory" names a system call.
		return strings.Replace(err.Error(), pe.Error(), pe.Path+": "+pathProblem(pe.Err), 1)
	}
	// A status wrapped by our own words ("… (resume with --after 3)"):
	// status.FromError would keep the wrapping's whole text, gRPC's
	// "rpc error: code = …" included, as the message.
	var gs interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &gs) {
		return err.Error()
	}
	inner := gs.GRPCStatus()
	return strings.Replace(err.Error(), inner.Err().Error(), statusText(inner), 1)
}

func statusText(st *status.Status) string {
	var violations []*errdetails.BadRequest_FieldViolation
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			violations = append(violations, br.GetFieldViolations()...)
		}
	}
	if len(violations) == 0 {
		msg := st.Message()
		if msg == "" {
			msg = st.Code().String()
		}
		return msg
	}
	// The message repeats the violations; print each once, from the details.
	var b strings.Builder
	b.WriteString("invalid request:")
	for _, v := range violations {
		fmt.Fprintf(&b, "\n  %s: %s", v.GetField(), v.GetDescription())
	}
	return b.String()
}

// pathProblem says what is wrong with a file in a user's words.
func pathProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

// jsonProblem says where and how a file's JSON is wrong, without the
// decoder's Go types ("cannot unmarshal array into Go value of type
// map[string]interface {}") or its package prefix ("json: ", "proto: ").
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("%s is a JSON %s, which it cannot be", typ.Field, typ.Value)
		}
		return fmt.Sprintf("it is a JSON %s", typ.Value)
	}
	// protojson puts a space or, at random, a no-break space after "proto:".
	msg := strings.ReplaceAll(err.Error(), "\u00a0", " ")
	for _, p := range []string{"proto: ", "json: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

package server

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"

	"buf.build/go/protovalidate"
	"github.com/debated/debated/internal/debate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// codeTable maps domain sentinels to gRPC codes. It is the one place where
// that mapping lives.
var codeTable = []struct {
	err  error
	code codes.Code
}{
	{debate.ErrNotFound, codes.NotFound},
	{debate.ErrAlreadyExists, codes.AlreadyExists},
	{debate.ErrUnauthenticated, codes.Unauthenticated},
	{debate.ErrPermissionDenied, codes.PermissionDenied},
	{debate.ErrFailedPrecondition, codes.FailedPrecondition},
	{debate.ErrInvalid, codes.InvalidArgument},
	{debate.ErrConflict, codes.Aborted},
	{debate.ErrDataLoss, codes.DataLoss},
	{context.Canceled, codes.Canceled},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
}

// toStatus translates an error of ours into a gRPC status error. Validation
// errors carry google.rpc.BadRequest field violations; errors of the table
// keep the words of our own making up to their sentinel and lose the
// storage layer's (publicMessage); unexpected errors are logged and
// answered as Internal without their text, so clients never see internals.
// A gRPC status somewhere in the chain is answered as it is, with its own
// message, never with the "rpc error: code = … desc = …" text of the chain.
func toStatus(ctx context.Context, log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		if st := gs.GRPCStatus(); st != nil {
			if st.Code() == codes.Internal || st.Code() == codes.Unknown {
				log.ErrorContext(ctx, "internal error", slog.String("error", err.Error()))
				return status.Error(codes.Internal, "internal error")
			}
			return st.Err()
		}
	}
	var ve *debate.ValidationError
	if errors.As(err, &ve) {
		return badRequest(ve.Violations)
	}
	for _, row := range codeTable {
		if errors.Is(err, row.err) {
			msg := publicMessage(err, row.err)
			if msg != err.Error() {
				log.DebugContext(ctx, "request failed", slog.String("error", err.Error()), slog.String("code", row.code.String()))
			}
			return status.Error(row.code, msg)
		}
	}
	log.ErrorContext(ctx, "internal error", slog.String("error", err.Error()))
	return status.Error(codes.Internal, "internal error")
}

// storePrefix matches the "postgres: deal get: " or "sqlite: " the stores
// put before what went wrong (the driver, then the operation).
var storePrefix = regexp.MustCompile(`\b(?:postgres|sqlite|pgx|pgconn|river|goose): (?:[a-z][a-z0-9 _]*: )?`)

// packagePrefix matches the name of one of our packages that an error put
// before its words ("orchestrator: "): a user does not know our packages.
var packagePrefix = regexp.MustCompile(`(?:^|: )(?:orchestrator|runner|server|store|protocol|ledger|tlog|dealfile|apiconv|sanad|stream|canon|redact|secretbox|netguard): `)

// internalMarkers are texts that never reach a client: whatever carries one
// is answered with the sentinel's own words.
var internalMarkers = []string{
	"sqlite", "postgres", "pgx", "pgconn", "sqlstate", "constraint", "rpc error:",
	"duplicate key", "violates", "syntax error", "relation ", "column ", "river_", "pq:",
}

// publicMessage is what a client reads of err, whose sentinel is sentinel:
// the text before the sentinel (ours: which deal, which gate) without the
// store's prefixes, and the sentinel's words; what a store appended after
// the sentinel (a constraint name, the driver's text) is dropped. If the
// rest still names an internal, the sentinel's words alone are answered.
func publicMessage(err, sentinel error) string {
	msg := err.Error()
	word := sentinel.Error()
	if i := strings.Index(msg, word); i >= 0 {
		msg = msg[:i+len(word)]
	}
	msg = storePrefix.ReplaceAllString(msg, "")
	msg = packagePrefix.ReplaceAllStringFunc(msg, func(m string) string {
		if strings.HasPrefix(m, ": ") {
			return ": "
		}
		return ""
	})
	lower := strings.ToLower(msg)
	for _, m := range internalMarkers {
		if strings.Contains(lower, m) {
			return word
		}
	}
	return msg
}

// badRequest builds an InvalidArgument status with one field violation per
// entry; a violation given twice (the same field, the same words) is sent
// once. The message names the first five for clients that show only it
// ("invalid argument: deal_id: must not be empty; page_size: …").
func badRequest(vs []debate.FieldViolation) error {
	br := &errdetails.BadRequest{}
	seen := make(map[debate.FieldViolation]bool, len(vs))
	parts := make([]string, 0, min(len(vs), 5))
	for _, v := range vs {
		if seen[v] {
			continue
		}
		seen[v] = true
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
			Field:       v.Field,
			Description: v.Description,
		})
		if len(parts) < 5 {
			parts = append(parts, v.Field+": "+v.Description)
		}
	}
	msg := "invalid argument: " + strings.Join(parts, "; ")
	if len(br.FieldViolations) > len(parts) {
		msg += "; …"
	}
	st, err := status.New(codes.InvalidArgument, msg).WithDetails(br)
	if err != nil {
		return status.Error(codes.InvalidArgument, msg)
	}
	return st.Err()
}

// protovalidateViolations converts protovalidate's error into our field
// violations, naming each field by its path in the request.
func protovalidateViolations(err *protovalidate.ValidationError) []debate.FieldViolation {
	out := make([]debate.FieldViolation, 0, len(err.Violations))
	for _, v := range err.Violations {
		field := protovalidate.FieldPathString(v.Proto.GetField())
		if field == "" {
			field = "request"
		}
		out = append(out, debate.FieldViolation{Field: field, Description: violationText(v)})
	}
	return out
}

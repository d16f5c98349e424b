package server

import (
	"context"
	"errors"
	"log/slog"

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
	{debate.ErrDataLoss, codes.DataLoss},
	{context.Canceled, codes.Canceled},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
}

// toStatus translates an error of ours into a gRPC status error. Validation
// errors carry google.rpc.BadRequest field violations; unexpected errors are
// logged and answered as Internal without their text, so clients never see
// internals.
func toStatus(ctx context.Context, log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var ve *debate.ValidationError
	if errors.As(err, &ve) {
		return badRequest(ve.Violations)
	}
	for _, row := range codeTable {
		if errors.Is(err, row.err) {
			return status.Error(row.code, err.Error())
		}
	}
	log.ErrorContext(ctx, "internal error", slog.String("error", err.Error()))
	return status.Error(codes.Internal, "internal error")
}

// badRequest builds an InvalidArgument status with one field violation per
// entry.
func badRequest(vs []debate.FieldViolation) error {
	br := &errdetails.BadRequest{}
	msg := "invalid argument:"
	for i, v := range vs {
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
			Field:       v.Field,
			Description: v.Description,
		})
		if i < 5 {
			msg += " " + v.Field + ": " + v.Description + ";"
		}
	}
	if len(vs) > 5 {
		msg += " …"
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
		out = append(out, debate.FieldViolation{Field: field, Description: v.Proto.GetMessage()})
	}
	return out
}

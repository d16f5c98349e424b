package server

import (
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestWithSubject: a bare sentinel answer names the request's ids,
// innermost first; an answer that already says what is wrong, or one of
// another code, is left as it is.
func TestWithSubject(t *testing.T) {
	t.Parallel()
	resolve := &debatedv1.ResolveHumanGateRequest{DebateId: "d1", GateId: "g1"}
	cases := []struct {
		name string
		err  error
		req  any
		want string
	}{
		{"not found", status.Error(codes.NotFound, "not found"), &debatedv1.GetDebateRequest{DebateId: "d1"}, `debate "d1": not found`},
		{"innermost first", status.Error(codes.NotFound, "not found"), resolve, `gate "g1" of debate "d1": not found`},
		{"conflict", status.Error(codes.Aborted, "conflict"), &debatedv1.CancelDebateRequest{DebateId: "d1"},
			`debate "d1" was changed by another request at the same time; try again: conflict`},
		{"precondition", status.Error(codes.FailedPrecondition, "failed precondition"), &debatedv1.GradeDealRequest{DealId: "x"},
			`deal "x" is not in a state that allows this request: failed precondition`},
		{"already exists", status.Error(codes.AlreadyExists, "already exists"), &debatedv1.CreateDebateRequest{DealId: "x"}, `deal "x": already exists`},
		{"key", status.Error(codes.NotFound, "not found"), &debatedv1.RevokeAPIKeyRequest{KeyId: "k1"}, `API key "k1": not found`},
		{"says already", status.Error(codes.NotFound, `deal "x": not found`), &debatedv1.GetDealRequest{DealId: "y"}, `deal "x": not found`},
		{"other code", status.Error(codes.InvalidArgument, "not found"), &debatedv1.GetDealRequest{DealId: "y"}, "not found"},
		{"no ids", status.Error(codes.NotFound, "not found"), &debatedv1.ListDealsRequest{}, "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := withSubject(c.err, c.req)
			require.Equal(t, status.Code(c.err), status.Code(got))
			require.Equal(t, c.want, status.Convert(got).Message())
		})
	}
}

package main

import (
	"fmt"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// requireSays asserts err's code and that its message is exactly want.
func requireSays(t *testing.T, err error, code codes.Code, want string) {
	t.Helper()
	require.Equal(t, code, status.Code(err), "%v", err)
	require.Equal(t, want, status.Convert(err).Message())
}

// TestErrorsSayWhatIsWrong: a NotFound or FailedPrecondition answer names
// its subject by id and says what is wrong in the operator's terms, with no
// package name in front and no bare "failed precondition".
func TestErrorsSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := startStack(t, kind, nil)
			reg := debatedv1.NewRegistryServiceClient(s.conn)
			gateOf := func(id string) string {
				got, err := s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: id})
				require.NoError(t, err)
				require.Len(t, got.GetGates(), 1)
				return got.GetGates()[0].GetGateId()
			}

			// A gate resolved twice: which gate, of which debate, resolved how and by whom.
			d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 3, "gate_round": 1})
			s.watch(t, s.a, d.GetDebateId(), 0, isGate)
			gate := gateOf(d.GetDebateId())
			resolve := &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(), GateId: gate, Approve: true, Reason: "numbers checked", Actor: "alice"}
			_, err := s.debate.ResolveHumanGate(s.a, resolve)
			require.NoError(t, err)
			resolve.Actor = "bob"
			_, err = s.debate.ResolveHumanGate(s.a, resolve)
			requireSays(t, err, codes.FailedPrecondition,
				fmt.Sprintf("gate %q of debate %q is already resolved (approved by alice): failed precondition", gate, d.GetDebateId()))

			// A gate that does not exist, of a debate that does.
			_, err = s.debate.ResolveHumanGate(s.a, &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(), GateId: "zz-gate", Approve: true, Reason: "r"})
			requireSays(t, err, codes.NotFound, fmt.Sprintf("gate \"zz-gate\" of debate %q: not found", d.GetDebateId()))

			// A cancelled debate's gate, and the cancelled debate.
			d = s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 3, "gate_round": 1})
			s.watch(t, s.a, d.GetDebateId(), 0, isGate)
			gate = gateOf(d.GetDebateId())
			_, err = s.debate.CancelDebate(s.a, &debatedv1.CancelDebateRequest{DebateId: d.GetDebateId(), Reason: "deal withdrawn"})
			require.NoError(t, err)
			_, err = s.debate.ResolveHumanGate(s.a, &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(), GateId: gate, Approve: true, Reason: "r"})
			requireSays(t, err, codes.FailedPrecondition,
				fmt.Sprintf("gate %q of debate %q was cancelled when the debate stopped: failed precondition", gate, d.GetDebateId()))
			_, err = s.debate.CancelDebate(s.a, &debatedv1.CancelDebateRequest{DebateId: d.GetDebateId(), Reason: "again"})
			requireSays(t, err, codes.FailedPrecondition, fmt.Sprintf("debate %q is already aborted: failed precondition", d.GetDebateId()))

			// Unknown ids are named, whatever store answered.
			_, err = s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{DebateId: "6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30"})
			requireSays(t, err, codes.NotFound, `debate "6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30": not found`)
			_, err = s.debate.CancelDebate(s.a, &debatedv1.CancelDebateRequest{DebateId: "6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30", Reason: "r"})
			requireSays(t, err, codes.NotFound, `debate "6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30": not found`)
			_, err = s.debate.GetDebate(s.b, &debatedv1.GetDebateRequest{DebateId: d.GetDebateId()})
			requireSays(t, err, codes.NotFound, fmt.Sprintf("debate %q: not found", d.GetDebateId()))
			_, err = reg.GetDeal(s.a, &debatedv1.GetDealRequest{DealId: "zz-deal"})
			requireSays(t, err, codes.NotFound, `deal "zz-deal": not found`)
			_, err = reg.GetClaim(s.a, &debatedv1.GetClaimRequest{ClaimId: "zz-claim"})
			requireSays(t, err, codes.NotFound, `claim "zz-claim": not found`)
			_, err = reg.CureDefect(s.a, &debatedv1.CureDefectRequest{DealId: "deal-a", DefectId: "zz-defect", Actor: "me", Reason: "r"})
			requireSays(t, err, codes.NotFound, "defect zz-defect: not found")

			// Validation reads as English, one line per violation.
			_, err = s.debate.ListDebates(s.a, &debatedv1.ListDebatesRequest{PageSize: 5000, DealId: strings.Repeat("d", 200)})
			requireSays(t, err, codes.InvalidArgument,
				"invalid argument: deal_id: must be at most 128 characters; page_size: must be at least 0 and at most 1000")
			_, err = s.debate.GetDebate(s.a, &debatedv1.GetDebateRequest{})
			requireSays(t, err, codes.InvalidArgument, "invalid argument: debate_id: must not be empty")
			var br *errdetails.BadRequest
			for _, d := range status.Convert(err).Details() {
				if b, ok := d.(*errdetails.BadRequest); ok {
					br = b
				}
			}
			require.NotNil(t, br)
			require.Len(t, br.GetFieldViolations(), 1)
			require.Equal(t, "must not be empty", br.GetFieldViolations()[0].GetDescription())

			// A stream names its subject too.
			w, err := s.debate.WatchDebate(s.a, &debatedv1.WatchDebateRequest{DebateId: "6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30"})
			require.NoError(t, err)
			_, err = w.Recv()
			requireSays(t, err, codes.NotFound, `debate "6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30": not found`)
		})
	}
}

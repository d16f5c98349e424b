package server

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// TestViolationText: every rule kind the protos use reads as plain English,
// singular and plural right, with the field's path.
func TestViolationText(t *testing.T) {
	t.Parallel()
	v, err := protovalidate.New()
	require.NoError(t, err)
	long := strings.Repeat("x", 129)
	cases := []struct {
		name string
		msg  proto.Message
		want debate.FieldViolation
	}{
		{"min_len 1", &debatedv1.GetDebateRequest{}, debate.FieldViolation{Field: "debate_id", Description: "must not be empty"}},
		{"min_len 2", &debatedv1.ValidateOutputRequest{DealId: "d", OutputJson: "{"}, debate.FieldViolation{Field: "output_json", Description: "must be at least 2 characters"}},
		{"max_len", &debatedv1.ListDebatesRequest{DealId: long}, debate.FieldViolation{Field: "deal_id", Description: "must be at most 128 characters"}},
		{"pattern", &debatedv1.ImportDealRequest{Deal: &debatedv1.Deal{DealId: "d", MaterialityThreshold: "1e6"}},
			debate.FieldViolation{Field: "deal.materiality_threshold", Description: `must match the pattern ^(|0|-?[1-9][0-9]*(\.[0-9]*[1-9])?|-?0\.[0-9]*[1-9])$`}},
		{"min_items", &debatedv1.FlagDefectRequest{DealId: "d", ClaimId: "c", DefectType: debatedv1.DefectType_DEFECT_TYPE_INCONSISTENCY,
			Severity: debatedv1.DefectSeverity_DEFECT_SEVERITY_MAJOR, Description: strings.Repeat("d", 60)},
			debate.FieldViolation{Field: "evidence_refs", Description: "must not be empty"}},
		{"max_items", &debatedv1.CreateAPIKeyRequest{TenantId: "t", Scopes: make([]debatedv1.Scope, 9)},
			debate.FieldViolation{Field: "scopes", Description: "must have at most 8 items"}},
		{"int range", &debatedv1.ListDebatesRequest{PageSize: 1001}, debate.FieldViolation{Field: "page_size", Description: "must be at least 0 and at most 1000"}},
		{"int gte", &debatedv1.WatchDebateRequest{DebateId: "d", AfterSeq: -1}, debate.FieldViolation{Field: "after_seq", Description: "must be at least 0"}},
		{"enum defined", &debatedv1.ListDebatesRequest{Status: 99},
			debate.FieldViolation{Field: "status", Description: "must be one of DEBATE_STATUS_QUEUED, DEBATE_STATUS_RUNNING, DEBATE_STATUS_AWAITING_REVIEW, DEBATE_STATUS_NEEDS_REVIEW, DEBATE_STATUS_COMPLETED, DEBATE_STATUS_FAILED, DEBATE_STATUS_ABORTED"}},
		{"enum not_in", &debatedv1.ImportDealRequest{Deal: &debatedv1.Deal{DealId: "d"}, Claims: []*debatedv1.Claim{{ClaimId: "c"}}},
			debate.FieldViolation{Field: "claims[0].claim_class", Description: "must not be one of CLAIM_CLASS_UNSPECIFIED"}},
		{"required", &debatedv1.ImportDealRequest{}, debate.FieldViolation{Field: "deal", Description: "is required"}},
		{"map key", &debatedv1.ImportDealRequest{Deal: &debatedv1.Deal{DealId: "d"}, Calcs: []*debatedv1.Calc{{Inputs: map[string]string{"": "1"}}}},
			debate.FieldViolation{Field: `calcs[0].inputs[""]`, Description: "key must not be empty"}},
		{"map value pattern", &debatedv1.ImportDealRequest{Deal: &debatedv1.Deal{DealId: "d"}, Calcs: []*debatedv1.Calc{{Inputs: map[string]string{"revenue": "x"}}}},
			debate.FieldViolation{Field: `calcs[0].inputs["revenue"]`, Description: `must match the pattern ^(0|-?[1-9][0-9]*(\.[0-9]*[1-9])?|-?0\.[0-9]*[1-9])$`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var ve *protovalidate.ValidationError
			require.True(t, errors.As(v.Validate(c.msg), &ve), "%s is invalid", c.name)
			got := protovalidateViolations(ve)
			require.Contains(t, got, c.want, "%+v", got)
		})
	}
}

func TestPlural(t *testing.T) {
	t.Parallel()
	for n, want := range map[uint64]string{0: "0 entries", 1: "1 entry", 2: "2 entries"} {
		require.Equal(t, want, plural(n, "entry"))
	}
	require.Equal(t, "1 character", plural(1, "character"))
	require.Equal(t, "3 characters", plural(3, "character"))
}

// TestBadRequestOnce: each violation is sent once, in the details and in
// the message, and the message names at most five.
func TestBadRequestOnce(t *testing.T) {
	t.Parallel()
	v := debate.FieldViolation{Field: "deal_id", Description: "must not be empty"}
	err := badRequest([]debate.FieldViolation{v, v, {Field: "page_size", Description: "must be at most 1000"}})
	st := status.Convert(err)
	require.Equal(t, "invalid argument: deal_id: must not be empty; page_size: must be at most 1000", st.Message())
	require.Len(t, st.Details(), 1)
	require.Len(t, st.Details()[0].(*errdetails.BadRequest).GetFieldViolations(), 2)

	many := make([]debate.FieldViolation, 7)
	for i := range many {
		many[i] = debate.FieldViolation{Field: fmt.Sprintf("f%d", i), Description: "is required"}
	}
	msg := status.Convert(badRequest(many)).Message()
	require.True(t, strings.HasSuffix(msg, "f4: is required; …"), msg)
	require.Equal(t, 5, strings.Count(msg, "is required"))
}

package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestTextViolations(t *testing.T) {
	t.Parallel()
	opts := &structpb.Struct{Fields: map[string]*structpb.Value{
		"query": structpb.NewStringValue("bad\x00"),
		"fine":  structpb.NewStringValue("ok"),
	}}
	cases := []struct {
		name string
		msg  proto.Message
		want []debate.FieldViolation
	}{
		{"clean", &debatedv1.GetDealRequest{DealId: "deal-1"}, nil},
		{"nul", &debatedv1.GetDealRequest{DealId: "deal\x001"}, []debate.FieldViolation{{Field: "deal_id", Description: "must not contain a NUL byte"}}},
		{"invalid utf-8", &debatedv1.GetDealRequest{DealId: "deal\xff"}, []debate.FieldViolation{{Field: "deal_id", Description: "must be valid UTF-8"}}},
		{"repeated", &debatedv1.FlagDefectRequest{EvidenceRefs: []string{"a", "b\x00"}}, []debate.FieldViolation{{Field: "evidence_refs[1]", Description: "must not contain a NUL byte"}}},
		{"nested", &debatedv1.ImportDealRequest{Claims: []*debatedv1.Claim{{ClaimId: "c1"}, {ClaimId: "c\x002"}}},
			[]debate.FieldViolation{{Field: "claims[1].claim_id", Description: "must not contain a NUL byte"}}},
		{"struct value", &debatedv1.CreateDebateRequest{Options: opts},
			[]debate.FieldViolation{{Field: `options.fields["query"].string_value`, Description: "must not contain a NUL byte"}}},
		{"map key", &debatedv1.CreateDebateRequest{Options: &structpb.Struct{Fields: map[string]*structpb.Value{"a\x00": structpb.NewBoolValue(true)}}},
			[]debate.FieldViolation{{Field: "options.fields", Description: "keys must not contain a NUL byte"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, textViolations(c.msg))
		})
	}
	many := &debatedv1.FlagDefectRequest{}
	for range 1000 {
		many.EvidenceRefs = append(many.EvidenceRefs, "\x00")
	}
	require.Len(t, textViolations(many), maxTextViolations)
}

func TestPublicMessage(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"postgres: api key create: not found (constraint api_keys_tenant_id_fkey)", "not found"},
		{"sqlite: api key create: not found (foreign key)", "not found"},
		{`postgres: defect list: deal "d1": not found`, `deal "d1": not found`},
		{`gate "g1" is resolved, not open: failed precondition`, `gate "g1" is resolved, not open: failed precondition`},
		{`postgres: deal import: duplicate key value violates unique constraint "claims_pkey": already exists`, "already exists"},
	}
	for _, c := range cases {
		sentinel := debate.ErrNotFound
		switch {
		case strings.Contains(c.in, "already exists"):
			sentinel = debate.ErrAlreadyExists
		case strings.Contains(c.in, "failed precondition"):
			sentinel = debate.ErrFailedPrecondition
		}
		require.Equal(t, c.want, publicMessage(errorString(c.in), sentinel), c.in)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestToStatusNeverDoubleWraps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	err := toStatus(ctx, log, fmt.Errorf("runner: step: %w", status.Error(codes.NotFound, "gate g1: not found")))
	require.Equal(t, codes.NotFound, status.Code(err))
	require.Equal(t, "gate g1: not found", status.Convert(err).Message())
	err = toStatus(ctx, log, fmt.Errorf("model: %w", status.Error(codes.Internal, "pgx: conn closed")))
	require.Equal(t, codes.Internal, status.Code(err))
	require.Equal(t, "internal error", status.Convert(err).Message())
	err = toStatus(ctx, log, fmt.Errorf("postgres: step commit: %w", debate.ErrConflict))
	require.Equal(t, codes.Aborted, status.Code(err))
	require.Equal(t, "conflict", status.Convert(err).Message())
}

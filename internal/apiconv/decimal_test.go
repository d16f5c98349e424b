package apiconv_test

import (
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
)

// TestDecimalPatternsMatchTheDomain: the protovalidate patterns of the
// decimal fields are debate.DecimalPattern (the threshold's also allows
// empty), so the API and the domain agree on what a decimal string is.
func TestDecimalPatternsMatchTheDomain(t *testing.T) {
	t.Parallel()
	rules := func(m proto.Message, field protoreflect.Name) *validate.FieldRules {
		fd := m.ProtoReflect().Descriptor().Fields().ByName(field)
		require.NotNil(t, fd, field)
		r, ok := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
		require.True(t, ok, field)
		return r
	}
	require.Equal(t, debate.DecimalPattern, rules(&debatedv1.ClaimValue{}, "value").GetString().GetPattern())
	require.EqualValues(t, debate.MaxDecimalLen, rules(&debatedv1.ClaimValue{}, "value").GetString().GetMaxLen())
	inputs := rules(&debatedv1.Calc{}, "inputs").GetMap().GetValues().GetString()
	require.Equal(t, debate.DecimalPattern, inputs.GetPattern())
	require.EqualValues(t, debate.MaxDecimalLen, inputs.GetMaxLen())
	threshold := rules(&debatedv1.Deal{}, "materiality_threshold").GetString()
	require.Equal(t, "^(|"+debate.DecimalPattern[2:], threshold.GetPattern())
	require.EqualValues(t, debate.MaxDecimalLen, threshold.GetMaxLen())
}

package apiconv_test

import (
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

// TestAwkwardBundleRoundTrip: figures no double holds cross the wire
// format unchanged, as canonical strings.
func TestAwkwardBundleRoundTrip(t *testing.T) {
	t.Parallel()
	b := storetest.AwkwardBundle("deal-1")
	req, err := apiconv.BundleToProto(b)
	require.NoError(t, err)
	for i, v := range storetest.AwkwardValues {
		require.Equal(t, v, req.GetClaims()[i].GetValue().GetValue())
	}
	require.Equal(t, "0.10000000000000000001", req.GetDeal().GetMaterialityThreshold())
	require.Equal(t, map[string]string{"revenue": "12345678901234567.89", "cogs": "1000000000000000000000"}, req.GetCalcs()[0].GetInputs())
	back, err := apiconv.BundleFromProto(req)
	require.NoError(t, err)
	require.Equal(t, b.Deal.MaterialityThreshold, back.Deal.MaterialityThreshold)
	require.Equal(t, b.Calcs[0].Inputs, back.Calcs[0].Inputs)
	h1, err := b.ContentHash()
	require.NoError(t, err)
	h2, err := back.ContentHash()
	require.NoError(t, err)
	require.Equal(t, h1, h2)

	// Calc outputs: the rounded decimal, never an exponent.
	g := apiconv.CalcResultToProto(debate.CalcResult{CalcID: "k", Type: debate.CalcRunway, Output: map[string]float64{"runway_months": 24.7, "big": 1e21, "gm": 68.5}})
	require.Equal(t, map[string]string{"runway_months": "24.7", "big": "1000000000000000000000", "gm": "68.5"}, g.GetOutput())
}

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

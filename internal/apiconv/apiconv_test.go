package apiconv_test

import (
	"errors"
	"math"
	"testing"

	"buf.build/go/protovalidate"
	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func TestBundleRoundTrip(t *testing.T) {
	t.Parallel()
	b := storetest.SampleBundle("deal-1")
	req, err := apiconv.BundleToProto(b)
	require.NoError(t, err)
	back, err := apiconv.BundleFromProto(req)
	require.NoError(t, err)
	require.NoError(t, back.Validate())
	h1, err := b.ContentHash()
	require.NoError(t, err)
	h2, err := back.ContentHash()
	require.NoError(t, err)
	require.Equal(t, h1, h2, "a bundle changes on its way through the wire format")
}

func TestBundleToProtoNamesUnknownEnums(t *testing.T) {
	t.Parallel()
	b := storetest.SampleBundle("deal-1")
	b.Claims[2].Class = "FINANCIALS"
	b.Evidence[1].SourceGrade = "E"
	_, err := apiconv.BundleToProto(b)
	var ve *debate.ValidationError
	require.True(t, errors.As(err, &ve))
	var fields []string
	for _, v := range ve.Violations {
		fields = append(fields, v.Field)
	}
	require.ElementsMatch(t, []string{"claims[2].claim_class", "evidence_items[1].source_grade"}, fields)
}

// FuzzImportDecode feeds arbitrary bytes to the path an ImportDeal request
// takes: decoding, protovalidate, mapping and bundle validation. Nothing may
// panic, and a request that passes both validations must hash.
func FuzzImportDecode(f *testing.F) {
	req, err := apiconv.BundleToProto(storetest.SampleBundle("deal-1"))
	require.NoError(f, err)
	seed, err := proto.Marshal(req)
	require.NoError(f, err)
	f.Add(seed)
	f.Add([]byte{})
	f.Add(seed[:len(seed)/2])
	v, err := protovalidate.New()
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte) {
		var r debatedv1.ImportDealRequest
		if proto.Unmarshal(data, &r) != nil {
			return
		}
		pvErr := v.Validate(&r)
		b, err := apiconv.BundleFromProto(&r)
		if err != nil {
			// Only a bad decimal string fails the conversion, and
			// protovalidate's pattern rejects it first.
			require.Error(t, pvErr, "conversion refused what protovalidate accepts: %v", err)
			return
		}
		vErr := b.Validate()
		if pvErr == nil && vErr == nil {
			if _, err := b.ContentHash(); err != nil {
				t.Fatalf("valid bundle does not hash: %v", err)
			}
		}
	})
}

// FuzzBundleValidate builds valid-shaped bundles from fuzzed fields and checks
// that validation never panics, that non-finite numbers and bad ids are
// always caught, and that what validates survives the wire format.
func FuzzBundleValidate(f *testing.F) {
	f.Add("deal-1", "claim-1", "C1", "FINANCIAL", "HIGH", "ev-1", "B", 4500000.0, "span-1")
	f.Add("", "", "", "", "", "", "", math.NaN(), "")
	f.Add("d d", "c\x00", "C1", "NOPE", "LOW", "e", "Z", math.Inf(1), "s")
	f.Fuzz(func(t *testing.T, dealID, claimID, key, class, mat, evID, grade string, value float64, spanID string) {
		b := storetest.SampleBundle("seed")
		b.Deal.ID = dealID
		for i := range b.Claims {
			b.Claims[i].DealID = ""
		}
		b.Claims[0].ID = claimID
		b.Claims[0].Key = key
		b.Claims[0].Class = debate.ClaimClass(class)
		b.Claims[0].Materiality = debate.Materiality(mat)
		dv, derr := debate.DecimalFromFloat(value)
		if math.IsNaN(value) || math.IsInf(value, 0) {
			require.Error(t, derr) // a non-finite number is no decimal
			return
		}
		require.NoError(t, derr)
		b.Claims[0].Value = &debate.ClaimValue{Value: dv}
		b.Claims[0].PrimarySpanID = spanID
		b.Evidence[0].ID = evID
		b.Evidence[0].SourceGrade = debate.SourceGrade(grade)
		err := b.Validate()
		if math.IsNaN(value) || math.IsInf(value, 0) {
			require.Error(t, err)
		}
		if !debate.ValidID(dealID) || !debate.ValidID(claimID) || !debate.ValidID(evID) {
			require.Error(t, err)
		}
		if err != nil {
			return
		}
		req, err := apiconv.BundleToProto(b)
		require.NoError(t, err, "a valid bundle must map to the wire format")
		back, err := apiconv.BundleFromProto(req)
		require.NoError(t, err)
		require.NoError(t, back.Validate())
		h1, _ := b.ContentHash()
		h2, _ := back.ContentHash()
		require.Equal(t, h1, h2)
	})
}

package dealfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
)

// TestParseKeepsFiguresExact reads figures a float64 would round or write
// with an exponent: each is kept as written (as its canonical decimal), and
// Encode writes them back digit for digit.
func TestParseKeepsFiguresExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ written, want string }{
		{"0.1", "0.1"},
		{"12345678901234567.89", "12345678901234567.89"},
		{"1e21", "1000000000000000000000"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"-0.5", "-0.5"},
		{"3.15e6", "3150000"},
		{"1.50", "1.5"},
		{`"9007199254740993"`, "9007199254740993"},
		{"-0", "0"},
		{"null", "0"},
	} {
		files := validFiles()
		files["claims.json"] = []byte(strings.Replace(string(files["claims.json"]), `"value":1000000`, `"value":`+tc.written, 1))
		files["calcs.json"] = []byte(strings.Replace(string(files["calcs.json"]), `"cash_balance":100`, `"cash_balance":`+tc.written, 1))
		files["deal.json"] = []byte(strings.Replace(string(files["deal.json"]), `"materiality_threshold":0.5`, `"materiality_threshold":`+tc.written, 1))
		b, err := dealfile.Parse(files)
		require.NoError(t, err, tc.written)
		require.Equal(t, tc.want, b.Claims[0].Value.Value.String(), tc.written)
		require.Equal(t, tc.want, b.Calcs[0].Inputs["cash_balance"].String(), tc.written)
		require.Equal(t, tc.want, b.Deal.MaterialityThreshold.String(), tc.written)

		out, err := dealfile.Encode(b)
		require.NoError(t, err)
		require.Contains(t, string(out[dealfile.ClaimsFile]), `"value": `+tc.want+",")
		again, err := dealfile.Parse(out)
		require.NoError(t, err)
		require.Equal(t, b.Claims[0].Value.Value, again.Claims[0].Value.Value, tc.written)
		require.Equal(t, b.Calcs[0].Inputs, again.Calcs[0].Inputs, tc.written)
		require.Equal(t, b.Deal.MaterialityThreshold, again.Deal.MaterialityThreshold, tc.written)
	}
}

// TestParseBadFigures names the field of a figure that is no number.
func TestParseBadFigures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ written, field string }{
		{`"lots"`, "claims[0].value.value"},
		{`true`, "claims[0].value.value"},
		{`[1]`, "claims[0].value.value"},
		{`{"amount":1}`, "claims[0].value.value"},
		{`"1e99999"`, "claims[0].value.value"},
		{`1e600`, "claims[0].value.value"},
	} {
		files := validFiles()
		files["claims.json"] = []byte(strings.Replace(string(files["claims.json"]), `"value":1000000`, `"value":`+tc.written, 1))
		_, err := dealfile.Parse(files)
		require.Error(t, err, tc.written)
		require.True(t, errors.Is(err, debate.ErrInvalid), tc.written)
		var ve *debate.ValidationError
		require.ErrorAs(t, err, &ve)
		fields := make([]string, 0, len(ve.Violations))
		for _, v := range ve.Violations {
			fields = append(fields, v.Field)
		}
		require.Contains(t, fields, tc.field, "%s: %v", tc.written, ve.Violations)
	}
}

package main

import (
	"encoding/json"
	"testing"

	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
)

// TestRESTDecimals imports figures no double holds as written through
// REST (POST /v1/deals, the JSON a curl user sends) and reads them back as
// JSON strings, byte for byte, on both stores; a figure that is not a
// canonical decimal string is a 400 that names its field.
func TestRESTDecimals(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := startStack(t, kind, nil)
			a := s.http(t, s.a)
			req, err := apiconv.BundleToProto(storetest.AwkwardBundle("deal-awkward"))
			require.NoError(t, err)
			raw, err := protojson.Marshal(req)
			require.NoError(t, err)
			var body map[string]any
			require.NoError(t, json.Unmarshal(raw, &body))
			claims := body["claims"].([]any)
			require.Equal(t, "12345678901234567.89", claims[2].(map[string]any)["value"].(map[string]any)["value"], "the request carries strings")

			code, resp := a.do("POST", "/v1/deals", body)
			require.Equal(t, 200, code, "%v", resp)
			require.Equal(t, "0.10000000000000000001", resp["deal"].(map[string]any)["deal"].(map[string]any)["materialityThreshold"])

			_, listed := a.do("GET", "/v1/deals/deal-awkward/claims?page_size=1000", nil)
			byID := map[string]any{}
			for _, c := range listed["claims"].([]any) {
				c := c.(map[string]any)
				if v, ok := c["value"].(map[string]any); ok {
					byID[c["claimId"].(string)] = v["value"]
				}
			}
			for i, v := range storetest.AwkwardValues {
				id := req.GetClaims()[i].GetClaimId()
				code, got := a.do("GET", "/v1/claims/"+id, nil)
				require.Equal(t, 200, code)
				require.Equal(t, v, got["claim"].(map[string]any)["value"].(map[string]any)["value"], "GET /v1/claims/%s", id)
				require.Equal(t, v, byID[id], "GET /v1/deals/deal-awkward/claims: %s", id)
			}

			// Recomputed calc outputs are strings too.
			code, graded := a.do("POST", "/v1/deals/deal-awkward/grading", map[string]any{})
			require.Equal(t, 200, code, "%v", graded)
			require.NotEmpty(t, graded["calcs"])
			for _, c := range graded["calcs"].([]any) {
				for k, v := range c.(map[string]any)["output"].(map[string]any) {
					require.IsType(t, "", v, "output %s", k)
				}
			}

			// A float where a decimal string belongs, or a string that is
			// not canonical, is refused with the field's name.
			for _, bad := range []any{3150000, "3.15e+06", "1.50"} {
				claims[0].(map[string]any)["value"].(map[string]any)["value"] = bad
				body["deal"].(map[string]any)["dealId"] = "deal-bad"
				code, resp = a.do("POST", "/v1/deals", body)
				require.Equal(t, 400, code, "%v: %v", bad, resp)
				require.Contains(t, resp["message"], "value", "%v", bad)
			}
			code, _ = a.do("GET", "/v1/deals/deal-bad", nil)
			require.Equal(t, 404, code, "nothing was stored")
		})
	}
}

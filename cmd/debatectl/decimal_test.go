package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestDecimalsFromFileToScreen imports a deal file whose figures no double
// holds as written, some written with exponents, and reads them back with
// debatectl on both stores: --json shows the canonical decimal strings,
// the table shows every digit grouped by thousands.
func TestDecimalsFromFileToScreen(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			addr := serve(t, kind)
			env := login(t, addr)
			dir := t.TempDir()
			b := storetest.AwkwardBundle("awkward-deal")
			require.NoError(t, dealfile.Write(dir, b))
			// As a person might write them: an exponent, a plus sign,
			// trailing zeros.
			path := filepath.Join(dir, dealfile.ClaimsFile)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			text := string(data)
			for from, to := range map[string]string{
				`"value": 1000000000000000000000,`: `"value": 1e21,`,
				`"value": 0.035,`:                  `"value": 3.50e-2,`,
				`"value": 9007199254740993,`:       `"value": "9007199254740993",`,
			} {
				require.Contains(t, text, from)
				text = strings.Replace(text, from, to, 1)
			}
			require.NoError(t, os.WriteFile(path, []byte(text), 0o600))

			out, err := ctl(t, addr, env, "import-deal", dir)
			require.NoError(t, err, out)
			// The file's spellings are the same content as the canonical ones.
			canonical := t.TempDir()
			require.NoError(t, dealfile.Write(canonical, b))
			out, err = ctl(t, addr, env, "import-deal", canonical)
			require.NoError(t, err, out)
			require.Contains(t, out, "already imported, unchanged")

			out, err = ctl(t, addr, env, "--json", "claims", "list", "awkward-deal")
			require.NoError(t, err, out)
			var cl struct {
				Claims []struct {
					ClaimID string `json:"claim_id"`
					Value   *struct {
						Value any `json:"value"`
					} `json:"value"`
				} `json:"claims"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &cl))
			values := map[string]any{}
			for _, c := range cl.Claims {
				if c.Value != nil {
					values[c.ClaimID] = c.Value.Value
				}
			}
			for i, v := range storetest.AwkwardValues {
				require.Equal(t, v, values[b.Claims[i].ID], "--json shows the decimal string of %s", b.Claims[i].Key)
			}
			out, err = ctl(t, addr, env, "--json", "claim", "get", b.Claims[2].ID)
			require.NoError(t, err, out)
			require.Contains(t, out, `"12345678901234567.89"`)

			out, err = ctl(t, addr, env, "claims", "list", "awkward-deal")
			require.NoError(t, err, out)
			for _, want := range []string{"$0.1 ", "1,000,000,000,000,000,000,000% ", "$12,345,678,901,234,567.89/month ", "-0.5 months ", "$9,007,199,254,740,993 ", "0.035% "} {
				require.Contains(t, out, want)
			}
			require.NotContains(t, out, "e+")
			require.NotContains(t, out, "e-")
			out, err = ctl(t, addr, env, "--json", "deal", "get", "awkward-deal")
			require.NoError(t, err, out)
			require.Contains(t, out, `"0.10000000000000000001"`)
		})
	}
}

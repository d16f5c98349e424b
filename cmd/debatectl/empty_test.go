package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestEmptyLists: a list command with nothing to list says so in one line
// and how to get something, on stdout with success; with --json it prints
// the list as [].
func TestEmptyLists(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)

	for args, want := range map[string]string{
		"deal list":                      "no deals yet (import one with: debatectl import-deal DIR)\n",
		"debate list":                    "no debates yet (start one with: debatectl debate create --deal DEAL_ID --protocol NAME)\n",
		"debate list --status completed": "no debates match --status completed\n",
	} {
		out, err := ctl(t, addr, env, strings.Fields(args)...)
		require.NoError(t, err, out)
		require.Equal(t, want, out, args)
	}
	out, err := ctl(t, addr, env, "--json", "debate", "list")
	require.NoError(t, err, out)
	require.Equal(t, "{\n  \"debates\": []\n}\n", out)
	out, err = ctl(t, addr, env, "--json", "deal", "list")
	require.NoError(t, err, out)
	require.Equal(t, "{\n  \"deals\": []\n}\n", out)

	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("sample-deal")))
	out, err = ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err, out)
	out, err = ctl(t, addr, env, "defects", "list", "sample-deal")
	require.NoError(t, err, out)
	require.Equal(t, "deal sample-deal has no open defects (--all shows cured and waived ones too)\n", out)
	out, err = ctl(t, addr, env, "--json", "defects", "list", "sample-deal")
	require.NoError(t, err, out)
	require.Equal(t, "{\n  \"defects\": []\n}\n", out)
	out, err = ctl(t, addr, env, "deal", "events", "sample-deal")
	require.NoError(t, err, out)
	require.Equal(t, "deal sample-deal has no events yet (debatectl grade sample-deal records the first)\n", out)
	out, err = ctl(t, addr, env, "claims", "list", "sample-deal", "--class", "team")
	require.NoError(t, err, out)
	require.Equal(t, "no claims of deal sample-deal match --class team\n", out)

	out, err = ctl(t, addr, env, "debate", "list", "--deal", "sample-deal")
	require.NoError(t, err, out)
	require.Equal(t, "no debates match --deal sample-deal\n", out)
}

// TestStableJSON: --json output is indented by encoding/json, two spaces,
// one space after a colon, whatever spacing protojson chose.
func TestStableJSON(t *testing.T) {
	t.Parallel()
	m := &debatedv1.GetClaimResponse{Claim: &debatedv1.Claim{ClaimId: "c1", ClaimText: "ARR is $4.5M", Value: &debatedv1.ClaimValue{Value: "4500000"}}}
	b, err := stableJSON(m)
	require.NoError(t, err)
	require.Equal(t, `{
  "claim": {
    "claim_id": "c1",
    "claim_text": "ARR is $4.5M",
    "value": {
      "value": "4500000"
    }
  }
}
`, string(b))
	for range 5 {
		again, err := stableJSON(m)
		require.NoError(t, err)
		require.Equal(t, b, again)
	}
}

// TestFileErrorsNameNoLibrary: a missing file or a file of the wrong JSON
// reads in a user's words: no system call, no Go type, no package prefix.
func TestFileErrorsNameNoLibrary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	_, err := ctl(t, "unused:1", map[string]string{"DEBATECTL_API_KEY": "k"}, "protocol", "register", missing)
	require.Error(t, err)
	require.Equal(t, missing+": no such file", describe(err))

	opts := filepath.Join(dir, "opts.json")
	for content, want := range map[string]string{
		`[1, 2]`: "not a JSON object: it is a JSON array",
		`{"a":`:  "not a JSON object: ",
	} {
		require.NoError(t, os.WriteFile(opts, []byte(content), 0o600))
		_, err = ctl(t, "unused:1", map[string]string{"DEBATECTL_API_KEY": "k"},
			"debate", "create", "--deal", "d", "--protocol", "synthetic.v1", "--options-file", opts)
		require.ErrorContains(t, err, want)
		require.NotContains(t, describe(err), "json: cannot")
		require.NotContains(t, describe(err), "Go value")
		require.NotContains(t, describe(err), "interface {}")
	}

	require.NoError(t, os.WriteFile(opts, []byte(`{"tenant_id": 5}`), 0o600))
	_, _, err = readTrust(opts)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "proto:")
}

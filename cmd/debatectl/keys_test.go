package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// writeFile writes data into a new file of the test and returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	return path
}

// forge re-signs a debate bundle's events with a keyring of the forger's
// own, recomputing key ids and public keys: consistent in itself.
func forge(t *testing.T, b *ledger.Bundle) *ledger.Bundle {
	t.Helper()
	kr, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("a-forger-secret-of-thirty-two-bytes")}, "v1")
	require.NoError(t, err)
	out := *b
	out.Events = make([]ledger.Event, len(b.Events))
	var prev *ledger.Event
	for i, e := range b.Events {
		out.Events[i], err = ledger.Seal(prev, e, kr.Signer(e.TenantID, e.Actor))
		require.NoError(t, err)
		prev = &out.Events[i]
	}
	out.PublicKeys = kr.PublicKeys(b.TenantID, ledger.Actors(out.Events))
	return &out
}

func TestVerifyTrustedKeys(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("deal-keys")))
	out, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err, out)
	out, err = ctl(t, addr, env, "--json", "debate", "create", "--deal", "deal-keys", "--protocol", "synthetic.v1", "--option", "max_rounds=1")
	require.NoError(t, err, out)
	var created struct {
		Debate struct {
			DebateID string `json:"debate_id"`
		} `json:"debate"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	out, err = ctl(t, addr, env, "debate", "watch", created.Debate.DebateID)
	require.NoError(t, err, out)

	// What the operator publishes.
	out, err = ctl(t, addr, env, "keys")
	require.NoError(t, err, out)
	require.Contains(t, out, "LEDGER")
	require.Contains(t, out, "engine")
	require.Contains(t, out, "synthetic.v1")
	published, err := ctl(t, addr, env, "--json", "keys")
	require.NoError(t, err, published)
	trusted := writeFile(t, "keys.json", published)

	bundle, err := ctl(t, addr, env, "debate", "export", created.Debate.DebateID)
	require.NoError(t, err)
	genuine := writeFile(t, "ledger.json", bundle)
	out, err = ctl(t, "unused:1", nil, "verify", genuine)
	require.NoError(t, err, out)
	require.Contains(t, out, "checked integrity only, not origin")
	out, err = ctl(t, "unused:1", nil, "verify", genuine, "--trusted-keys", trusted)
	require.NoError(t, err, out)
	require.Contains(t, out, "signed by the trusted keys")
	require.Contains(t, out, "synthetic.v1")
	out, err = ctl(t, "unused:1", nil, "--json", "verify", "--trusted-keys", trusted, genuine)
	require.NoError(t, err, out)
	require.Contains(t, out, `"checked": "origin"`)

	b, err := ledger.ParseBundle([]byte(bundle))
	require.NoError(t, err)
	require.Equal(t, "synthetic.v1", b.Protocol)

	// Re-signed with the forger's own keys: passes on integrity alone,
	// fails against the published keys, naming the key.
	data, err := ledger.MarshalBundle(forge(t, b))
	require.NoError(t, err)
	forged := writeFile(t, "forged.json", string(data))
	out, err = ctl(t, "unused:1", nil, "verify", forged)
	require.NoError(t, err, out)
	out, err = ctl(t, "unused:1", nil, "verify", forged, "--trusted-keys", trusted)
	require.Error(t, err)
	fb, err := ledger.ParseBundle(data)
	require.NoError(t, err)
	require.Contains(t, out, fb.Events[0].KeyID)
	require.Contains(t, out, "not among the trusted keys")

	// The policy edited so that any actor may emit anything.
	edited := *b
	edited.Policy.RoleGuard, edited.Policy.StrictRoles = nil, false
	data, err = ledger.MarshalBundle(&edited)
	require.NoError(t, err)
	loose := writeFile(t, "loose.json", string(data))
	out, err = ctl(t, "unused:1", nil, "verify", loose)
	require.NoError(t, err, out)
	out, err = ctl(t, "unused:1", nil, "verify", loose, "--trusted-keys", trusted)
	require.Error(t, err)
	require.Contains(t, out, "policy")
	require.Contains(t, out, "synthetic.v1")

	// The independent verifier of docs/ledger-verifier agrees on a real
	// export, the forgery and the loosened policy.
	python, err := exec.LookPath("python3")
	if err == nil && exec.Command(python, "-c", "import cryptography").Run() == nil {
		script := filepath.Join("..", "..", "docs", "ledger-verifier", "verify.py")
		for path, ok := range map[string]bool{genuine: true, forged: false, loose: false} {
			out, err := exec.Command(python, script, "--trusted-keys", trusted, path).CombinedOutput()
			require.Equal(t, ok, err == nil, "%s: %s", path, out)
		}
		out, err := exec.Command(python, script, genuine).CombinedOutput()
		require.NoError(t, err, "%s", out)
	} else {
		t.Log("python3 with cryptography is not installed: the independent verifier was not run")
	}

	// A damaged trusted file is refused, not trusted.
	_, err = ctl(t, "unused:1", nil, "verify", genuine, "--trusted-keys", genuine)
	require.Error(t, err)
}

func TestDealAudit(t *testing.T) {
	t.Parallel()
	addr, path := serveAt(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	sample := storetest.SampleBundle("deal-audit")
	require.NoError(t, dealfile.Write(dir, sample))
	out, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err, out)
	out, err = ctl(t, addr, env, "grade", "deal-audit")
	require.NoError(t, err, out)

	out, err = ctl(t, addr, env, "deal", "verify", "deal-audit")
	require.NoError(t, err, out)
	require.Contains(t, out, "deal deal-audit verifies")
	published, err := ctl(t, addr, env, "--json", "keys")
	require.NoError(t, err, published)
	require.Contains(t, published, ledger.DealProtocol)
	trusted := writeFile(t, "keys.json", published)

	bundle, err := ctl(t, addr, env, "deal", "export", "deal-audit")
	require.NoError(t, err, bundle)
	genuine := writeFile(t, "deal.json", bundle)
	out, err = ctl(t, "unused:1", nil, "verify", genuine, "--trusted-keys", trusted)
	require.NoError(t, err, out)
	require.Contains(t, out, "deal deal-audit")
	if python, err := exec.LookPath("python3"); err == nil && exec.Command(python, "-c", "import cryptography").Run() == nil {
		out, err := exec.Command(python, filepath.Join("..", "..", "docs", "ledger-verifier", "verify.py"),
			"--trusted-keys", trusted, genuine).CombinedOutput()
		require.NoError(t, err, "the independent verifier: %s", out)
	}
	b, err := ledger.ParseDealBundle([]byte(bundle))
	require.NoError(t, err)
	require.NotEmpty(t, b.Events)
	require.Empty(t, b.LegacyEvents)

	// Another tenant does not see the deal.
	other := login(t, addr)
	out, err = ctl(t, addr, other, "deal", "verify", "deal-audit")
	require.Error(t, err)
	require.Equal(t, codes.NotFound, status.Code(err), out)
	_, err = ctl(t, addr, other, "deal", "export", "deal-audit")
	require.Error(t, err)

	// A row rewritten below the API, by whoever holds the database file,
	// is caught online, and offline in an export made after it; the
	// export made before it still verifies.
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	_, err = db.ExecContext(ctx, `DROP TRIGGER deal_events_no_update`)
	require.NoError(t, err)
	res, err := db.ExecContext(ctx, `UPDATE deal_events SET payload = '{"forged":true}' WHERE deal_id = 'deal-audit' AND seq = 1`)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)

	out, err = ctl(t, addr, env, "deal", "verify", "deal-audit")
	require.Error(t, err)
	require.Contains(t, out, "seq 1: hash")
	after, err := ctl(t, addr, env, "deal", "export", "deal-audit")
	require.NoError(t, err)
	out, err = ctl(t, "unused:1", nil, "verify", writeFile(t, "after.json", after))
	require.Error(t, err)
	require.Contains(t, out, "first bad event is seq 1")
	out, err = ctl(t, "unused:1", nil, "verify", genuine)
	require.NoError(t, err, out)
}

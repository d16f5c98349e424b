package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestEveryCommandHasHelp runs --help on every command and group: each
// exits 0 and prints its flags and an example.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	paths := [][]string{{}}
	seen := map[string]bool{}
	for _, c := range commands() {
		words := strings.Fields(c.path)
		paths = append(paths, words)
		if len(words) == 2 && !seen[words[0]] {
			seen[words[0]] = true
			paths = append(paths, words[:1])
		}
	}
	for _, p := range paths {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append(p, "--help"), func(string) string { return "" }, &out, &errOut)
		require.NoError(t, err, "%v --help", p)
		require.Contains(t, out.String(), "Examples:", "%v --help", p)
		require.Contains(t, out.String(), "--json", "%v --help lists the global flags", p)
	}
	// Every command's flags reach cobra: its function stops at -h.
	for _, c := range commands() {
		probe := &cli{probing: true}
		require.ErrorIs(t, c.run(probe, context.Background(), []string{"-h"}), flag.ErrHelp, c.path)
		require.NotNil(t, probe.probed, c.path)
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"debate", "create", "--help"}, func(string) string { return "" }, &out, &out))
	for _, f := range []string{"--deal", "--protocol", "--option", "--option-text", "--options-file", "--idempotency-key"} {
		require.Contains(t, out.String(), f)
	}
}

// TestGlobalFlagsAnywhere puts the global flags after the command and its
// arguments, where the README's examples put --json.
func TestGlobalFlagsAnywhere(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("sample-deal")))
	_, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err)

	var out, errOut bytes.Buffer
	err = run(context.Background(), []string{"deal", "get", "sample-deal", "--json", "--addr", addr, "--api-key", env["DEBATECTL_API_KEY"]},
		func(string) string { return "" }, &out, &errOut)
	require.NoError(t, err, errOut.String())
	var got struct {
		Deal struct {
			Deal struct {
				DealID string `json:"deal_id"`
			} `json:"deal"`
		} `json:"deal"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), "--json after the arguments prints JSON: %s", out.String())
	require.Equal(t, "sample-deal", got.Deal.Deal.DealID)
}

// TestCompletion prints the completion scripts and completes deal ids and
// protocol names from the server.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, sh := range []string{"bash", "zsh", "fish"} {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), []string{"completion", sh}, func(string) string { return "" }, &out, &out))
		require.Contains(t, out.String(), "debatectl")
	}
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("sample-deal")))
	_, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err)

	out, err := ctl(t, addr, env, "__complete", "deal", "get", "")
	require.NoError(t, err, out)
	require.Contains(t, out, "sample-deal")
	out, err = ctl(t, addr, env, "__complete", "debate", "create", "--protocol", "")
	require.NoError(t, err, out)
	require.Contains(t, out, "idis")
}

// TestServerDown names the address and how to start the server.
func TestServerDown(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())
	_, err = ctl(t, addr, map[string]string{"DEBATECTL_API_KEY": "k"}, "deal", "list")
	require.Error(t, err)
	require.Equal(t, "cannot reach debated at "+addr+" — is it running? (make run)", describe(err))
}

// TestImportManyDeals imports several directories in one call: the summary
// counts what was imported, unchanged and failed, and without
// --continue-on-error the first failure stops the rest.
func TestImportManyDeals(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	a, bad, c := t.TempDir(), t.TempDir(), t.TempDir()
	require.NoError(t, dealfile.Write(a, storetest.SampleBundle("deal-a")))
	broken := storetest.SampleBundle("deal-bad")
	broken.Claims[0].Class = "FINANCE"
	require.NoError(t, dealfile.Write(bad, broken))
	require.NoError(t, dealfile.Write(c, storetest.SampleBundle("deal-c")))

	out, err := ctl(t, addr, env, "import-deal", a)
	require.NoError(t, err, out)

	out, err = ctl(t, addr, env, "import-deal", a, bad, c)
	require.Error(t, err)
	require.Contains(t, out, "0 imported, 1 unchanged, 1 failed")
	require.Contains(t, out, "failed "+bad+": the deal files are invalid")
	require.Contains(t, out, "claims[0].claim_class")
	list, err := ctl(t, addr, env, "deal", "list")
	require.NoError(t, err)
	require.NotContains(t, list, "deal-c", "the import stopped at the failure")

	out, err = ctl(t, addr, env, "import-deal", "--continue-on-error", a, bad, c)
	require.Error(t, err)
	require.Contains(t, out, "1 imported, 1 unchanged, 1 failed")
	require.Contains(t, describe(err), "1 of 3 directories failed")
	list, err = ctl(t, addr, env, "deal", "list")
	require.NoError(t, err)
	require.Contains(t, list, "deal-c")
}

// TestWatchHumanGate follows a debate that stops at a human gate: watch
// says the gate is open and prints the exact resolve command, which works;
// a second debate cancelled at its gate shows the gate as cancelled.
func TestWatchHumanGate(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("deal-gate")))
	_, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err)

	create := func() string {
		out, err := ctl(t, addr, env, "debate", "create", "--deal", "deal-gate", "--protocol", "synthetic.v1",
			"--option", "max_rounds=2", "--option", "gate_round=1", "--json")
		require.NoError(t, err, out)
		var created struct {
			Debate struct {
				DebateID string `json:"debate_id"`
			} `json:"debate"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &created))
		return created.Debate.DebateID
	}
	waitGate := func(id string) string {
		var gate string
		require.Eventually(t, func() bool {
			out, err := ctl(t, addr, env, "--json", "debate", "get", id)
			require.NoError(t, err)
			var got struct {
				Gates []struct {
					GateID string `json:"gate_id"`
					Status string `json:"status"`
				} `json:"gates"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			for _, g := range got.Gates {
				if g.Status == "open" {
					gate = g.GateID
				}
			}
			return gate != ""
		}, 20*time.Second, 20*time.Millisecond)
		return gate
	}

	id := create()
	gate := waitGate(id)
	// watch follows until the end: run it while the gate is open, and
	// resolve the gate with the line it printed.
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := ctl(t, addr, env, "debate", "watch", id)
		done <- result{out, err}
	}()
	resolveLine := "debatectl debate resolve " + id + " " + gate + " --approve --reason '…'"
	time.Sleep(200 * time.Millisecond) // the watch has read the open gate by now; resolving earlier only changes what it saw live
	args := strings.Fields(strings.ReplaceAll(resolveLine, "'…'", "checked"))[1:]
	out, err := ctl(t, addr, env, args...)
	require.NoError(t, err, out)
	require.Contains(t, out, "gate "+gate+" resolved")
	r := <-done
	require.NoError(t, r.err, r.out)
	require.Contains(t, r.out, "HUMAN GATE OPEN "+gate)
	require.Contains(t, r.out, resolveLine)
	require.Contains(t, r.out, "human gate "+gate+" approved")
	require.Contains(t, r.out, "outcome: completed")

	id = create()
	gate = waitGate(id)
	out, err = ctl(t, addr, env, "debate", "cancel", id, "--reason", "wrong deal")
	require.NoError(t, err, out)
	out, err = ctl(t, addr, env, "debate", "get", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "gate "+gate)
	require.Contains(t, out, "(cancelled)", "the open gate of a cancelled debate is shown as cancelled")
	out, err = ctl(t, addr, env, "debate", "watch", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "debate cancelled by")
	require.Contains(t, out, "human gate "+gate+" cancelled")
	require.Contains(t, out, "outcome: aborted (wrong deal)")
	require.NotContains(t, out, "is open: debatectl debate resolve", "no resolve line for a closed gate")

	// Watching a debate that does not exist names it; there is nothing to
	// resume.
	_, err = ctl(t, addr, env, "debate", "watch", "00000000-0000-4000-8000-000000000000")
	require.Error(t, err)
	require.NotContains(t, describe(err), "--after")
}

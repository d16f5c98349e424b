package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

func TestDebateCommands(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("deal-ctl")))
	out, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err, out)

	out, err = ctl(t, addr, env, "protocols")
	require.NoError(t, err, out)
	require.Contains(t, out, "synthetic.v1")
	require.Contains(t, out, "critique_left ‖ critique_right")
	js, err := ctl(t, addr, env, "--json", "protocols")
	require.NoError(t, err, js)
	var protos debatedv1.ListProtocolsResponse
	require.NoError(t, protojson.Unmarshal([]byte(js), &protos))
	tools := 0
	for _, p := range protos.GetProtocols() {
		for role, ts := range p.GetTools() {
			require.Contains(t, out, "    "+role+": "+strings.Join(ts.GetTools(), ", "), "the text output lists %s's tools", p.GetName())
			tools++
		}
	}
	require.Positive(t, tools, "some protocol declares tools")

	out, err = ctl(t, addr, env, "--json", "debate", "create", "--deal", "deal-ctl", "--protocol", "synthetic.v1", "--option", "max_rounds=2", "--idempotency-key", "k")
	require.NoError(t, err, out)
	var created struct {
		Debate struct {
			DebateID string `json:"debate_id"`
		} `json:"debate"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	id := created.Debate.DebateID
	require.NotEmpty(t, id)

	out, err = ctl(t, addr, env, "debate", "watch", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "debate started: synthetic.v1 on deal deal-ctl")
	require.Regexp(t, `r1\s+advocate opening: opening of round 1`, out, "who spoke, in which round, and an excerpt")
	require.Contains(t, out, "── round 2 completed")
	require.Contains(t, out, "debate stopped: completed, reason MAX_ROUNDS")
	require.Contains(t, out, "outcome: completed (MAX_ROUNDS) after 2 round(s)", "the rounds it completed, not the round its finaliser ran in")
	// Watching the finished debate replays it in batches: still one JSON
	// object per event, every seq once and in order, the status on the
	// last.
	out, err = ctl(t, addr, env, "--json", "debate", "watch", id)
	require.NoError(t, err, out)
	dec := json.NewDecoder(strings.NewReader(out))
	n := 0
	lastStatus := ""
	for dec.More() {
		var m struct {
			Event struct {
				Seq string `json:"seq"`
			} `json:"event"`
			Status string `json:"status"`
		}
		require.NoError(t, dec.Decode(&m))
		n++
		require.Equal(t, strconv.Itoa(n), m.Event.Seq)
		lastStatus = m.Status
	}
	require.Greater(t, n, 2)
	require.Equal(t, "DEBATE_STATUS_COMPLETED", lastStatus)

	out, err = ctl(t, addr, env, "debate", "get", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "MAX_ROUNDS")
	out, err = ctl(t, addr, env, "debate", "list", "--status", "completed")
	require.NoError(t, err, out)
	require.Contains(t, out, id)
	require.Regexp(t, `STOP_REASON\s+ROUNDS\s+EVENTS`, out)
	require.Regexp(t, id+`\s+synthetic\.v1\s+deal-ctl\s+COMPLETED\s+MAX_ROUNDS\s+2\s`, out, "the rounds it completed, not the round its finaliser ran in")
	// A watch from the middle says the rounds too: the server counts them.
	out, err = ctl(t, addr, env, "debate", "watch", id, "--after", "5")
	require.NoError(t, err, out)
	require.Contains(t, out, "outcome: completed (MAX_ROUNDS) after 2 round(s)")
	// Watched from past its end, it says so rather than nothing.
	out, err = ctl(t, addr, env, "debate", "watch", id, "--after", "9999")
	require.NoError(t, err, out)
	require.Regexp(t, `^no events after seq 9999\noutcome: completed \(MAX_ROUNDS\) after 2 round\(s\), \d+ events\n$`, out)
	out, err = ctl(t, addr, env, "debate", "verify", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "verifies")

	// Export, then verify offline; every kind of tampering is caught and
	// named by the first bad seq.
	bundle, err := ctl(t, addr, env, "debate", "export", id)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "ledger.json")
	require.NoError(t, os.WriteFile(path, []byte(bundle), 0o600))
	out, err = ctl(t, "unused:1", nil, "verify", path)
	require.NoError(t, err, out)
	require.Contains(t, out, "bundle verifies")

	b, err := ledger.ParseBundle([]byte(bundle))
	require.NoError(t, err)
	tamper := map[string]struct {
		edit func(b *ledger.Bundle)
		seq  string
	}{
		"payload": {func(b *ledger.Bundle) {
			b.Events[3].Payload = []byte(strings.Replace(string(b.Events[3].Payload), `"`, `"X`, 1))
		}, "seq 4"},
		"hash":      {func(b *ledger.Bundle) { b.Events[5].Hash = strings.Repeat("0", 64) }, "seq 6"},
		"signature": {func(b *ledger.Bundle) { b.Events[6].Signature = b.Events[1].Signature }, "seq 7"},
		"deleted":   {func(b *ledger.Bundle) { b.Events = append(b.Events[:2:2], b.Events[3:]...) }, "seq 3"},
		"reordered": {func(b *ledger.Bundle) { b.Events[4], b.Events[5] = b.Events[5], b.Events[4] }, "seq 5"},
	}
	for name, tc := range tamper {
		c := *b
		c.Events = append([]ledger.Event(nil), b.Events...)
		tc.edit(&c)
		data, err := ledger.MarshalBundle(&c)
		require.NoError(t, err)
		bad := filepath.Join(t.TempDir(), name+".json")
		require.NoError(t, os.WriteFile(bad, data, 0o600))
		out, err := ctl(t, "unused:1", nil, "verify", bad)
		require.Error(t, err, name)
		require.Contains(t, out, "first bad event is "+tc.seq, name)
	}

	// A gate, resolved from the command line; then a cancel.
	out, err = ctl(t, addr, env, "--json", "debate", "create", "--deal", "deal-ctl", "--protocol", "synthetic.v1", "--option", "gate_round=1", "--option", "max_rounds=3")
	require.NoError(t, err, out)
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	id = created.Debate.DebateID
	var gate string
	for gate == "" {
		out, err = ctl(t, addr, env, "--json", "debate", "get", id)
		require.NoError(t, err, out)
		var got struct {
			Gates []struct {
				GateID string `json:"gate_id"`
			} `json:"gates"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		if len(got.Gates) > 0 {
			gate = got.Gates[0].GateID
		}
	}
	out, err = ctl(t, addr, env, "debate", "resolve", id, gate, "--reject", "--reason", "unsupported figures")
	require.NoError(t, err, out)
	require.Contains(t, out, "resolved")
	out, err = ctl(t, addr, env, "debate", "cancel", id, "--reason", "too late")
	if err == nil {
		require.Contains(t, out, "ABORTED")
	} else {
		require.Equal(t, codes.FailedPrecondition, status.Code(err), "a debate that already ended cannot be cancelled: %s", out)
	}
}

// TestIDISFromTheCommandLine: an IDIS debate, its deliverables and
// artifacts, and validate-output on one of its outputs and a broken one.
func TestIDISFromTheCommandLine(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("deal-idis")))
	out, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err, out)
	out, err = ctl(t, addr, env, "--json", "debate", "create", "--deal", "deal-idis", "--protocol", "idis.vc.v1", "--option", "max_rounds=2")
	require.NoError(t, err, out)
	var created struct {
		Debate struct {
			DebateID string `json:"debate_id"`
		} `json:"debate"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	id := created.Debate.DebateID
	out, err = ctl(t, addr, env, "debate", "watch", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "deliverables ready")
	require.Regexp(t, `advocate \[[A-Z_]+, confidence 0\.\d+\]: Round 1 opening`, out, "position and confidence of each turn")
	require.Regexp(t, `advocate called lookup_claim → SUCCESS`, out, "tool calls")
	require.Contains(t, out, "stop decision: stop (MAX_ROUNDS)")

	artifacts := t.TempDir()
	out, err = ctl(t, addr, env, "debate", "deliverables", id, "--markdown", "--artifacts", artifacts)
	require.NoError(t, err, out)
	require.Contains(t, out, "# Investment committee brief")
	require.Contains(t, out, "## Actions")
	files, err := filepath.Glob(filepath.Join(artifacts, "debate_*.json"))
	require.NoError(t, err)
	require.Contains(t, files, filepath.Join(artifacts, "debate_summary.json"))
	require.Contains(t, files, filepath.Join(artifacts, "debate_round1_arbiter.json"))

	// Without flags: the brief rendered for a terminal, not Markdown.
	out, err = ctl(t, addr, env, "debate", "deliverables", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "Investment committee brief")
	require.Contains(t, out, "═══")
	require.NotContains(t, out, "# Investment")
	require.NotContains(t, out, "**")
	require.NotContains(t, out, "|---")
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "role  ") {
			// Aligned: every cell of the column below starts where its
			// header does.
			col := strings.Index(l, "final position")
			require.Positive(t, col)
			require.True(t, strings.HasPrefix(lines[i+1], "────"), lines[i+1])
			require.Equal(t, " ", lines[i+2][col-1:col], "row %q", lines[i+2])
			require.NotEqual(t, " ", lines[i+2][col:col+1], "row %q", lines[i+2])
		}
	}
	require.Contains(t, out, "role  ", "the roles' table is there")
	// --artifacts alone says what it wrote, and nothing else.
	again := t.TempDir()
	out, err = ctl(t, addr, env, "debate", "deliverables", id, "--artifacts", again)
	require.NoError(t, err, out)
	written, err := os.ReadDir(again)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("wrote %d files to %s\n", len(written), again), out)

	good := filepath.Join(artifacts, "debate_round1_arbiter.json")
	out, err = ctl(t, addr, env, "validate-output", "--deal", "deal-idis", good)
	require.NoError(t, err, out)
	require.Contains(t, out, "passes every gate")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"agent_id":"advocate","role":"advocate","content":"ARR is $50M.","claim_refs":[],"muhasabah_record":{"supported_claim_ids":[],"confidence":0.9}}`), 0o600))
	out, err = ctl(t, addr, env, "validate-output", "--deal", "deal-idis", bad)
	require.Error(t, err)
	require.Contains(t, out, "NO_FREE_FACTS")
}

// TestDebateCreateOptionsFromFiles: protocol options come from a JSON file,
// a file's text, and --option, in that order of precedence; bad files are
// reported before anything is sent.
func TestDebateCreateOptionsFromFiles(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("deal-opt")))
	out, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err, out)

	opts := filepath.Join(dir, "options.json")
	require.NoError(t, os.WriteFile(opts, []byte(`{"max_rounds": 4, "message_bytes": 20}`), 0o600))
	out, err = ctl(t, addr, env, "--json", "debate", "create", "--deal", "deal-opt", "--protocol", "synthetic.v1",
		"--options-file", opts, "--option", "max_rounds=1")
	require.NoError(t, err, out)
	var created struct {
		Debate struct {
			Options map[string]any `json:"options"`
		} `json:"debate"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created), out)
	require.EqualValues(t, 1, created.Debate.Options["max_rounds"], "--option overrides the file")
	require.EqualValues(t, 20, created.Debate.Options["message_bytes"], "the file's member is sent")

	text := filepath.Join(dir, "gate.txt")
	require.NoError(t, os.WriteFile(text, []byte("not a number"), 0o600))
	out, err = ctl(t, addr, env, "debate", "create", "--deal", "deal-opt", "--protocol", "synthetic.v1", "--option-text", "gate_round="+text)
	require.Error(t, err, "the text reaches the protocol, which refuses it")
	require.Contains(t, out+err.Error(), "gate_round")

	require.NoError(t, os.WriteFile(opts, []byte(`[1, 2]`), 0o600))
	_, err = ctl(t, addr, env, "debate", "create", "--deal", "deal-opt", "--protocol", "synthetic.v1", "--options-file", opts)
	require.ErrorContains(t, err, "not a JSON object")
	_, err = ctl(t, addr, env, "debate", "create", "--deal", "deal-opt", "--protocol", "synthetic.v1", "--option-text", "x="+filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "--option-text x")

	// A YAML file given with --option would send its name: refused, with
	// the flag that sends its text.
	policy := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte("principles: []\n"), 0o600))
	_, err = ctl(t, addr, env, "debate", "create", "--deal", "deal-opt", "--protocol", "synthetic.v1", "--option", "constitution="+policy)
	require.ErrorContains(t, err, "use --option-text constitution="+policy)
}

// TestDebateExportLarge: a synthetic debate at its largest options makes a
// ledger of several megabytes, more than gRPC's default 4 MiB receive
// limit; `debate export` streams it in pieces, and it verifies offline.
func TestDebateExportLarge(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("deal-big")))
	out, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err, out)
	out, err = ctl(t, addr, env, "--json", "debate", "create", "--deal", "deal-big", "--protocol", "synthetic.v1",
		"--option", "max_rounds=50", "--option", "message_bytes=16384")
	require.NoError(t, err, out)
	var created struct {
		Debate struct {
			DebateID string `json:"debate_id"`
		} `json:"debate"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	id := created.Debate.DebateID
	out, err = ctl(t, addr, env, "debate", "watch", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "outcome: completed")

	bundle, err := ctl(t, addr, env, "debate", "export", id)
	require.NoError(t, err)
	require.Greater(t, len(bundle), 4<<20, "the ledger should be larger than gRPC's default receive limit")
	path := filepath.Join(t.TempDir(), "ledger.json")
	require.NoError(t, os.WriteFile(path, []byte(bundle), 0o600))
	out, err = ctl(t, "unused:1", nil, "verify", path)
	require.NoError(t, err, out)
	require.Contains(t, out, "bundle verifies")
}

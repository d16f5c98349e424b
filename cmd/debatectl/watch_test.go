package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/agentproto"
	"github.com/debated/debated/internal/protocols/custom"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/protocols/legal"
	"github.com/debated/debated/internal/protocols/stratmaster"
	"github.com/debated/debated/internal/protocols/synthetic"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/stream"
	"github.com/debated/debated/internal/testutil/openaitest"
	"github.com/stretchr/testify/require"
)

// serveEvery starts a server over a fresh embedded store that runs every
// built-in protocol (with their rules backends) and the protocols tenants
// register, whose roles call model; it returns its address.
func serveEvery(t *testing.T, model *openaitest.Server) string {
	t.Helper()
	ctx := context.Background()
	keys := testKeys(t)
	st, err := sqlite.OpenConfig(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "d.db"), DealSealer: ledger.NewDealSealer(keys)})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	log := slog.New(slog.DiscardHandler)
	modelFor := func(context.Context) (llm.Caller, error) { return nil, nil }
	if model != nil {
		b, err := llm.NewBackend(llm.Config{BaseURL: model.URL, Model: "test-model", Logger: log})
		require.NoError(t, err)
		modelFor = func(context.Context) (llm.Caller, error) { return b, nil }
	}
	builtin := []*orchestrator.Protocol{synthetic.Protocol(),
		idis.Protocol(idis.Config{Registry: st, Ledger: st, Roles: rules.New()}),
		agentproto.Protocol(agentproto.Config{Registry: st, Ledger: st, Keys: keys}),
		stratmaster.Protocol(stratmaster.Config{Registry: st}),
		legal.Protocol(legal.Config{})}
	cat, err := custom.NewCatalog(st, orchestrator.Named(builtin), custom.Config{Registry: st, ModelFor: modelFor})
	require.NoError(t, err)
	reg, err := orchestrator.NewResolvingRegistry(cat.Resolver(), builtin...)
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)
	hub := stream.New(st, stream.Config{Logger: log})
	run, err := runner.New(runner.Config{Store: st, Engine: eng, Publisher: hub, Logger: log})
	require.NoError(t, err)
	local := runner.NewLocal(st, run, runner.LocalConfig{MaxWorkers: 4, Logger: log})
	lctx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- local.Run(lctx) }()
	t.Cleanup(func() { stop(); require.NoError(t, <-stopped) })
	return startServer(t, server.Stores{Tenants: st, Registry: st, Grading: st,
		Debates: &server.Debates{Store: runner.Scheduled(st, local), Engine: eng, Protocols: reg, Custom: cat, Keys: keys, Hub: hub, Outputs: idis.Name}})
}

// createDebate creates a debate of protocol on deal with the options in
// opts (a JSON object) and returns its id.
func createDebate(t *testing.T, addr string, env map[string]string, deal, protocol string, opts map[string]any) string {
	t.Helper()
	args := []string{"--json", "debate", "create", "--deal", deal, "--protocol", protocol}
	if opts != nil {
		path := filepath.Join(t.TempDir(), "options.json")
		data, err := json.Marshal(opts)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o600))
		args = append(args, "--options-file", path)
	}
	out, err := ctl(t, addr, env, args...)
	require.NoError(t, err, out)
	var created struct {
		Debate struct {
			DebateID string `json:"debate_id"`
		} `json:"debate"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	return created.Debate.DebateID
}

// watchSetup is a server running every protocol, a tenant's environment
// and deal-a imported.
func watchSetup(t *testing.T, model *openaitest.Server) (addr string, env map[string]string) {
	t.Helper()
	addr = serveEvery(t, model)
	env = login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("deal-a")))
	out, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err, out)
	return addr, env
}

// watch runs `debate watch` to the debate's end and checks what every
// view must be: one line per event shown, each a seq and round or the
// continuation of the line above, never a payload as JSON, ending with the
// outcome; and with --json, every event as one JSON object.
func watch(t *testing.T, addr string, env map[string]string, id string) string {
	t.Helper()
	out, err := ctl(t, addr, env, "debate", "watch", id)
	require.NoError(t, err, out)
	require.NotContains(t, out, `{"`, "no payload is printed as JSON")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.True(t, strings.HasPrefix(lines[len(lines)-1], "outcome: "), "the last line is the outcome: %s", out)
	line := regexp.MustCompile(`^(\s*\d+ r\d+\s+\S|` + watchIndent + `\s+\S|outcome: )`)
	for _, l := range lines {
		require.Regexp(t, line, l, "every line is an event's, its continuation or the outcome")
	}
	js, err := ctl(t, addr, env, "--json", "debate", "watch", id)
	require.NoError(t, err, js)
	dec := json.NewDecoder(strings.NewReader(js))
	n := 0
	for dec.More() {
		var m struct {
			Event struct {
				Seq       string `json:"seq"`
				EventType string `json:"event_type"`
			} `json:"event"`
		}
		require.NoError(t, dec.Decode(&m))
		n++
		require.Equal(t, strconv.Itoa(n), m.Event.Seq, "--json prints every event once, in order")
		require.NotEmpty(t, m.Event.EventType)
	}
	require.Positive(t, n)
	return out
}

// requireLines asserts that out has a line matching each pattern (in
// multi-line mode: ^ and $ are a line's ends).
func requireLines(t *testing.T, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		require.Regexp(t, "(?m)"+p, out)
	}
}

// legalOptions reads a case of the legal protocol's fixtures as options.
func legalOptions(t *testing.T, name string, maxRounds int) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "protocols", "legal", "testdata", name+".json"))
	require.NoError(t, err)
	var o map[string]any
	require.NoError(t, json.Unmarshal(data, &o))
	o["max_rounds"] = maxRounds
	return o
}

// TestWatchLegal follows the legal protocol's two fixture cases: each
// agent's answers and revisions with their claims and confidence, the
// critiques by severity, the convergence checks, the summary, the
// supervisor's synthesis and the stop, converged or escalated for review.
func TestWatchLegal(t *testing.T) {
	t.Parallel()
	addr, env := watchSetup(t, nil)

	id := createDebate(t, addr, env, "deal-a", legal.Name, legalOptions(t, "minangkabau_pusaka", 2))
	out := watch(t, addr, env, id)
	requireLines(t, out,
		`^\s+\d+ r1\s+NLA answer \[\d+ claims?, confidence 0\.\d+(–0\.\d+)?\]: NLA \(national law\): Under Article 852`,
		`^\s+\d+ r1\s+ALA answer \[\d+ claims?, confidence [0-9.–]+\]: ALA \(adat law`,
		`^\s+\d+ r1\s+NLA critiques ALA: \d+ critiques? \(\d+ CRITICAL.*\); conflict: C1 holds`,
		`^\s+\d+ r1\s+convergence check: continue: [1-9]\d* critical, \d+ major, 1 unresolved conflict$`,
		`^\s+\d+ r2\s+ALA revision \[`,
		`^\s+\d+ r2\s+ALA critiques NLA: no critique$`,
		`^\s+\d+ r2\s+convergence check: converged: 0 critical, 0 major, 0 unresolved conflicts; criteria held: NO_CRITICAL_AT_MOST_ONE_MAJOR`,
		`^\s+\d+ r2\s+debate summary: 1 claim agreed, 0 disputed; 1 conflict, 0 unresolved$`,
		`^\s+\d+ r3\s+supervisor synthesis \[2 claims agreed, 0 disputed\]: Both agents agree`,
		`debate stopped: completed, reason CONVERGED$`,
		`^outcome: completed \(CONVERGED\) after 2 round\(s\)`)
	require.NotContains(t, out, "artifact debate_round", "an answer or critique is shown, not its file name")

	id = createDebate(t, addr, env, "deal-a", legal.Name, legalOptions(t, "bali_purusa", 2))
	out = watch(t, addr, env, id)
	requireLines(t, out,
		`convergence check: escalated: .*; escalation: NOT_CONVERGED; NEEDS HUMAN REVIEW$`,
		`supervisor synthesis \[0 claims agreed, 2 disputed, NEEDS HUMAN REVIEW\]: The agents agree on no claim`,
		`debate stopped: needs_review, reason ESCALATED$`,
		`^outcome: needs_review \(ESCALATED\)`)
}

// TestWatchStratmaster follows a StratMaster task whose first pass breaks
// its constitution: the research, the hypotheses, each turn of the debate
// on its own line, the plan, the constitution's verdicts, the revision
// and the task's end.
func TestWatchStratmaster(t *testing.T) {
	t.Parallel()
	addr, env := watchSetup(t, nil)
	id := createDebate(t, addr, env, "deal-a", stratmaster.Name, map[string]any{
		"question":     "Do the ARR, gross margin, burn and runway support the Series B?",
		"constitution": "id: two-sources\nversion: \"1.0\"\nprinciples:\n  - id: P1\n    description: Every hypothesis rests on at least two evidence items.\n    rule:\n      min_evidence_per_hypothesis: 2\nreview_metrics:\n  - name: hypothesis_count\n    threshold: 1\n",
	})
	out := watch(t, addr, env, id)
	requireLines(t, out,
		`^\s+\d+ r1\s+task in progress \(pass 0\): research starts$`,
		`^\s+\d+ r1\s+researcher called search_evidence → SUCCESS  .*query="Do the ARR`,
		`^\s+\d+ r1\s+researcher plans pass 1: 2 searches, 0 lookups: `,
		`^\s+\d+ r1\s+researcher collected \d+ new evidence items? \(\d+ in all\)$`,
		`^\s+\d+ r1\s+synthesiser proposes \d+ hypothes[ie]s, confidence 0\.\d+(–0\.\d+)?; to debate: h-[0-9a-f]+: confidence`,
		`^\s+\d+ r1\s+adversary \(\d+ turns?\):\n {12}challenge h-[0-9a-f]+: h-[0-9a-f]+ rests on \d evidence item`,
		`^\s+\d+ r1\s+strategist \(\d+ turns?\):\n {12}(defend|concede) h-[0-9a-f]+: (defended|conceded): `,
		`^\s+\d+ r1\s+strategist drafts the plan \[\d+ recommendations?, 0 risks\]: Pass 1: `,
		`^\s+\d+ r1\s+gate constitution two-sources v1\.0, pass 1: FAILED P1: h-[0-9a-f]+ cites 1 evidence item`,
		`^\s+\d+ r1\s+critic sends the task back for revision 1 of 2; failed P1: look up more evidence`,
		`^\s+\d+ r2\s+researcher called lookup_claim → SUCCESS  claim_id=`,
		`^\s+\d+ r2\s+gate constitution two-sources v1\.0, pass 2: PASSED$`,
		`^\s+\d+ r3\s+task complete \(pass 2\): CONSTITUTION_SATISFIED`,
		`debate stopped: completed, reason CONSTITUTION_SATISFIED$`,
		`^outcome: completed \(CONSTITUTION_SATISFIED\)`)
}

// agentTask is an agent protocol task over the sample deal's registry,
// one step of each safe tool; block lists the risk classes the session
// blocks.
func agentTask(block ...string) map[string]any {
	step := func(id, tool string, input map[string]any, risk string) map[string]any {
		return map[string]any{"id": id, "tool": tool, "input": input, "risk_class": risk, "expected_evidence": "the " + id}
	}
	opts := map[string]any{"task": map[string]any{
		"objective": "Check the months of runway the company's figures imply",
		"steps": []any{
			step("arr", "claim_lookup", map[string]any{"claim_key": "C1"}, "low"),
			step("ratio", "arithmetic", map[string]any{"op": "div", "operands": []any{12500000, 650000}}, "medium"),
			step("years", "unit_convert", map[string]any{"value": 18, "from": "month", "to": "year"}, "low"),
		},
	}}
	if len(block) > 0 {
		opts["block_risk_classes"] = block
	}
	return opts
}

// TestWatchAgentProtocol follows agent.protocol.v1 sessions: the
// lifecycle, each proposal and its review, the intents signed and vetted
// (one blocked by policy), the executions with their results, the claims,
// the audit and the stop.
func TestWatchAgentProtocol(t *testing.T) {
	t.Parallel()
	addr, env := watchSetup(t, nil)
	id := createDebate(t, addr, env, "deal-a", agentproto.Name, agentTask())
	out := watch(t, addr, env, id)
	requireLines(t, out,
		`^\s+\d+ r1\s+session opened: Check the months of runway the company's figures imply, 3 steps with claim_lookup, arithmetic, unit_convert$`,
		`^\s+\d+ r1\s+session initialized → planning \(planner\)$`,
		`^\s+\d+ r1\s+planner proposes p-ratio \[risk medium\]: Step ratio: run arithmetic`,
		`^\s+\d+ r1\s+critic reviews p-ratio: conditionally approved: risk class medium`,
		`^\s+\d+ r1\s+executor signs intent p-arr-i1: claim_lookup \[risk low, attempt 1\]$`,
		`^\s+\d+ r1\s+critic approves intent p-ratio-i1: risk class medium is within the session's policy$`,
		`^\s+\d+ r1\s+executor runs arithmetic \(execution p-ratio-i1-x\)$`,
		`^\s+\d+ r1\s+executor called arithmetic → SUCCESS  op=div operands=\[2\]$`,
		`^\s+\d+ r1\s+executor: arithmetic returned 19\.23`,
		`^\s+\d+ r1\s+executor claims c-years \[confidence 0\.9\]: the years: unit_convert returned 1\.5 year\.$`,
		`^\s+\d+ r1\s+auditor starts the verification run: the trace so far checks pass$`,
		`^\s+\d+ r1\s+executor signs the final statement: 3 claims for Check the months`,
		`^\s+\d+ r1\s+auditor verification: PASS through seq \d+$`,
		`debate stopped: completed, reason VERIFIED$`,
		`^outcome: completed \(VERIFIED\)`)

	id = createDebate(t, addr, env, "deal-a", agentproto.Name, agentTask("medium", "high"))
	out = watch(t, addr, env, id)
	requireLines(t, out,
		`^\s+\d+ r1\s+critic BLOCKS intent p-ratio-i1: risk class medium is blocked by the session's policy$`,
		`^outcome: `)
	require.NotContains(t, out, "executor runs arithmetic", "a blocked intent does not run")
}

// TestWatchRegisteredProtocol follows a protocol a tenant registered (the
// red-team example) with model-backed roles: the tool calls with their
// arguments, the refused one with its rule, each answer's verdict or
// severity, confidence and an excerpt, and the stop rules; then the same
// protocol with a tight token budget stops on it.
func TestWatchRegisteredProtocol(t *testing.T) {
	t.Parallel()
	addr, env := watchSetup(t, openaitest.New(t, reviewAnswer))
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocols", "redteam-review.yaml"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "redteam.yaml")
	require.NoError(t, os.WriteFile(path, doc, 0o600))
	out, err := ctl(t, addr, env, "protocol", "register", path)
	require.NoError(t, err, out)

	id := createDebate(t, addr, env, "deal-a", "redteam.review", nil)
	out = watch(t, addr, env, id)
	requireLines(t, out,
		`^\s+\d+ r1\s+attacker called lookup_claim → SUCCESS  claim_id=[0-9a-f-]+…?$`,
		`^\s+\d+ r1\s+attacker called request_human_review → DENIED \(permission\)  claim_ids=\[[0-9a-f-]+…?\] reason=escalate$`,
		`^\s+\d+ r1\s+attacker \[severity HIGH, confidence 0\.5\]: the evidence for C1 is thin$`,
		`^\s+\d+ r1\s+defender: the registry holds C1$`,
		`^\s+\d+ r1\s+judge \[verdict CONTINUE\]: the position on C1 rests on the registry$`,
		`^\s+\d+ r1\s+stop decision: go on$`,
		`^\s+\d+ r2\s+judge \[verdict PASS\]: the position on C2 rests on the registry$`,
		`^\s+\d+ r2\s+stop decision: stop \(JUDGE_VERDICT\): verdict "PASS"$`,
		`debate stopped: completed, reason JUDGE_VERDICT$`,
		`^outcome: completed \(JUDGE_VERDICT\)`)

	tight := strings.Replace(strings.Replace(string(doc), "name: redteam.review", "name: redteam.tight", 1), "tokens: 200000", "tokens: 100", 1)
	require.NoError(t, os.WriteFile(path, []byte(tight), 0o600))
	out, err = ctl(t, addr, env, "protocol", "register", path)
	require.NoError(t, err, out)
	id = createDebate(t, addr, env, "deal-a", "redteam.tight", nil)
	out = watch(t, addr, env, id)
	requireLines(t, out,
		`^\s+\d+ r1\s+BUDGET EXCEEDED at defender's turn: the model token budget is spent \(\d+ of 100 tokens\)$`,
		`reason BUDGET_EXCEEDED$`,
		`^outcome: \w+ \(BUDGET_EXCEEDED\)`)
}

// reviewAnswer answers the red-team review's roles the way a model would,
// from the request alone: the schema it is given and its DATA block (the
// deal's claims, the round, the other roles' answers, tool results).
//   - Every text names the claim it is about and lists it in refs, so
//     No-Free-Facts holds; the Muḥāsabah record accounts for the same claim.
//   - A role offered tools asks, before any tool result is in its DATA, for
//     its first tool and for request_human_review, which the document gives
//     no role: the server refuses that one and audits it.
//   - The judge continues in round 1 and passes in round 2.
func reviewAnswer(r openaitest.Request) openaitest.Answer {
	var data struct {
		Round int `json:"round"`
		Deal  struct {
			Claims []struct {
				ID  string `json:"claim_id"`
				Key string `json:"key"`
			} `json:"claims"`
		} `json:"deal"`
		Tools       []string `json:"tools"`
		ToolResults []any    `json:"tool_results"`
	}
	if err := json.Unmarshal(r.Data, &data); err != nil || len(data.Deal.Claims) == 0 {
		return openaitest.Answer{Status: http.StatusBadRequest, Content: "no deal in the DATA block"}
	}
	claims := data.Deal.Claims
	sort.Slice(claims, func(i, j int) bool { return claims[i].Key < claims[j].Key })
	claim := claims[(data.Round-1)%len(claims)]
	if len(data.Tools) > 0 && len(data.ToolResults) == 0 {
		b, _ := json.Marshal(map[string]any{"tool_calls": []map[string]any{
			{"tool": data.Tools[0], "args": map[string]any{"claim_id": claim.ID}},
			{"tool": "request_human_review", "args": map[string]any{"reason": "escalate", "claim_ids": []string{claim.ID}}},
		}})
		return openaitest.Answer{Content: string(b)}
	}
	var schema struct {
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(r.Schema, &schema); err != nil {
		return openaitest.Answer{Status: http.StatusBadRequest, Content: "no schema"}
	}
	text := "the position on " + claim.Key + " rests on the registry"
	answer := map[string]any{}
	for name, p := range schema.Properties {
		switch {
		case name == "refs":
			answer[name] = []string{claim.ID}
		case name == "muhasabah_record":
			answer[name] = map[string]any{
				"supported_claim_ids": []string{claim.ID}, "confidence": 0.5,
				"confidence_justification": "one claim of the registry supports it",
				"falsifiability_tests": []map[string]any{{"test_description": "check " + claim.Key + " against its source",
					"required_evidence": "the source document of " + claim.Key, "pass_fail_rule": "fails if the source disagrees"}},
				"uncertainties": []map[string]any{{"uncertainty": "the source of " + claim.Key + " may be stale",
					"impact": "medium", "mitigation": "ask for the latest document"}},
			}
		case name == "tool_calls":
		case name == "verdict":
			answer[name] = map[bool]string{true: "CONTINUE", false: "PASS"}[data.Round == 1]
		case name == "attacks":
			answer[name] = []map[string]any{{"claim_id": claim.ID, "attack": "the evidence for " + claim.Key + " is thin"}}
		case name == "responses":
			answer[name] = []map[string]any{{"claim_id": claim.ID, "response": "the registry holds " + claim.Key, "concede": false}}
		case p.Type == "string" && len(p.Enum) > 0:
			answer[name] = p.Enum[len(p.Enum)-1]
		case p.Type == "string":
			answer[name] = text
		case p.Type == "array":
			answer[name] = []string{text}
		}
	}
	b, err := json.Marshal(answer)
	if err != nil {
		return openaitest.Answer{Status: http.StatusInternalServerError, Content: err.Error()}
	}
	return openaitest.Answer{Content: string(b), PromptTokens: 400, CompletionTokens: 100}
}

package main

import (
	"strings"
	"testing"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/agentproto"
	"github.com/debated/debated/internal/protocols/custom"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/legal"
	"github.com/debated/debated/internal/protocols/stratmaster"
	"github.com/stretchr/testify/require"
)

// TestWatchKnowsEveryEvent: every event type the engine and the protocols
// declare has a renderer of its own, so a new type fails here rather than
// reaching people as a bare fallback line.
func TestWatchKnowsEveryEvent(t *testing.T) {
	t.Parallel()
	types := []string{
		orchestrator.EventDebateStarted, orchestrator.EventNodeStarted, orchestrator.EventNodeCompleted,
		orchestrator.EventNodeRetry, orchestrator.EventNodeFailed, orchestrator.EventRoundCompleted,
		orchestrator.EventGateCreated, orchestrator.EventGateResolved, orchestrator.EventDebateStopped,
		orchestrator.EventDebateAborted,
		"agent.message", // synthetic.v1
		idis.EventAgentOutput, idis.EventToolCall, idis.EventMuhasabahRejected, idis.EventDefectFlagged,
		idis.EventReviewRequested, idis.EventEvidenceRetrieved, idis.EventStopDecision, idis.EventValidation,
		idis.EventDeliverables, idis.EventBudgetExceeded,
		legal.EventArtifact, legal.EventRejected, legal.EventDecision, legal.EventSynthesis,
		legal.EventDeliverables, legal.EventBudgetExceeded,
		stratmaster.EventTaskStatus, stratmaster.EventResearchPlan, stratmaster.EventEvidenceCollected,
		stratmaster.EventHypotheses, stratmaster.EventDebateTurn, stratmaster.EventPlan, stratmaster.EventReview,
		stratmaster.EventRevision, stratmaster.EventOutputRejected, stratmaster.EventArtifact,
		stratmaster.EventDeliverables, stratmaster.EventBudgetExceeded,
		agentproto.EventSessionInitialized, agentproto.EventTransition, agentproto.EventTransitionRefused,
		agentproto.EventProposalCreated, agentproto.EventProposalReviewed, agentproto.EventIntentSigned,
		agentproto.EventIntentApproved, agentproto.EventIntentBlocked, agentproto.EventExecutionStarted,
		agentproto.EventExecutionCompleted, agentproto.EventExecutionFailed, agentproto.EventArtifact,
		agentproto.EventClaimIssued, agentproto.EventClaimChallenged, agentproto.EventFinalStatement,
		agentproto.EventVerificationStarted, agentproto.EventVerificationComplete, agentproto.EventDeliverables,
		agentproto.EventOutputRejected, agentproto.EventBudgetExceeded, agentproto.EventToolCall,
		custom.EventAnswer, custom.EventRejected, custom.EventJoin, custom.EventStopCheck,
		custom.EventBudgetExceeded, custom.EventDeliverables, custom.EventToolCall,
	}
	for _, typ := range types {
		require.True(t, knownEvent(typ), "debate watch has no renderer for %q", typ)
	}
}

// TestWatchLine renders the events a debate seldom shows (rejections of
// each protocol's shape, refusals, failures, problems) and the fallbacks:
// one clean line each, never JSON.
func TestWatchLine(t *testing.T) {
	t.Parallel()
	const id = "d1"
	for name, tc := range map[string]struct {
		typ, actor, node, payload string
		want                      string
	}{
		"legal rejection": {"output.rejected", "nla", "nla_answer",
			`{"agent":"NLA","round":1,"kind":"answer","violations":[{"rule":"EVIDENCE","field":"claims[0].evidence","detail":"cites an unknown source"},{"rule":"RISK","detail":"x"}]}`,
			"gate REJECTED NLA's answer output: 2 violations, first EVIDENCE claims[0].evidence: cites an unknown source"},
		"stratmaster rejection": {"output.rejected", "", "synthesise",
			`{"agent_id":"synthesiser","schema":"hypotheses","round_number":1,"violations":[{"rule":"schema","detail":"not JSON"}]}`,
			"gate REJECTED synthesiser's hypotheses output: schema : not JSON"},
		"agent protocol rejection": {"output.rejected", "planner", "plan",
			`{"role":"planner","schema":"plan","violations":[{"rule":"schema","field":"steps","detail":"missing"}]}`,
			"gate REJECTED planner's plan output: schema steps: missing"},
		"registered protocol rejection": {"output.rejected", "defender", "defend",
			`{"node":"defend","role":"defender","round":2,"violations":[{"rule":"no_free_facts","field":"responses[0].response","detail":"ARR is $50M cites no claim"}]}`,
			"gate REJECTED defender's output: no_free_facts responses[0].response: ARR is $50M cites no claim"},
		"IDIS rejection": {"muhasabah.rejected", "advocate", "advocate_opening",
			`{"agent_id":"advocate","round_number":1,"violations":[{"rule":"NO_FREE_FACTS","detail":"unsupported figure"}]}`,
			"gate REJECTED advocate's output: NO_FREE_FACTS : unsupported figure"},
		"budget with detail": {"budget.exceeded", "advocate", "advocate_opening",
			`{"agent_id":"advocate","detail":"llm: token budget of 1000 spent"}`,
			"BUDGET EXCEEDED at advocate's turn: the model token budget is spent: llm: token budget of 1000 spent"},
		"refused transition": {"transition.refused", "executor", "execute",
			`{"from":"reviewing","to":"completed","requested_by":"executor","reason":"only the auditor completes a session"}`,
			"transition REFUSED: reviewing → completed requested by executor: only the auditor completes a session"},
		"failed execution": {"tool_execution_failed", "executor", "execute",
			`{"tool":"arithmetic","execution_id":"p-x","error":"division by zero"}`,
			"executor: arithmetic FAILED: division by zero"},
		"challenged claim": {"claim_challenged", "critic", "challenge",
			`{"claim_id":"c-ratio","reason":"the step expects 19, the execution returned 20"}`,
			"claim c-ratio CHALLENGED by critic: the step expects 19, the execution returned 20"},
		"failed verification": {"verification_run_completed", "auditor", "verify",
			`{"status":"fail","checked_through_seq":12,"report":{"problems":[{"seq":7,"rule":"chain","detail":"prev_hash does not match"}]}}`,
			"auditor verification: FAIL through seq 12; 1 problem, first seq 7 chain: prev_hash does not match"},
		"defect": {"defect.flagged", "sanad_breaker", "sanad_breaker_challenge",
			`{"Type":"UNKNOWN_SOURCE","Severity":"MINOR","ClaimKey":"C2","Description":"rests on a grade C deck"}`,
			"sanad_breaker flags defect UNKNOWN_SOURCE (minor) on C2: rests on a grade C deck"},
		"review request": {"human_review.requested", "arbiter", "arbiter_rule",
			`{"claim_ids":["a","b"],"reason":"material and contested","priority":"HIGH","round":2}`,
			"arbiter asks for a human review of 2 claims (priority HIGH): material and contested"},
		"custom stop": {"stop.decision", "engine", "round",
			`{"node":"round","stop":true,"reason":"STABLE_DISSENT","why":"the same dissent for 2 rounds"}`,
			"stop decision: stop (STABLE_DISSENT): the same dissent for 2 rounds"},
		"stop without why": {"stop.decision", "engine", "stop_condition_check",
			`{"stop_reason":"CONSENSUS","why":""}`,
			"stop decision: stop (CONSENSUS)"},
		"custom join": {"join.completed", "engine", "collect",
			`{"node":"collect","round":1,"inputs":{"argue":{"con":{},"pro":{}}}}`,
			"collect joins argue"},
		"position answer": {"role.answer", "pro", "argue",
			`{"role":"pro","answer":{"arguments":["ARR grew to $12.5M (C1)","margin holds"],"position":"INVEST","refs":["c1"]}}`,
			"pro [position INVEST]: ARR grew to $12.5M (C1) / margin holds"},
		"unknown type": {"something.new", "analyst", "n",
			`{"nested":{"a":1},"list":[1,2]}`,
			"analyst something.new"},
		"unknown type with text": {"something.new", "", "n",
			`{"text":"a line\nand\tanother"}`,
			"- something.new: a line and another"},
		"payload not an object": {"something.new", "analyst", "n", `[1,2]`, "analyst something.new"},
		"control characters": {"agent.message", "advocate", "n",
			"{\"kind\":\"opening\",\"text\":\"red \\u001b[31mtext\\u0007\"}",
			"advocate opening: red [31mtext"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := watchLine(id, debate.Event{Seq: 4, Round: 1, Type: tc.typ, Actor: tc.actor, Node: tc.node, Payload: []byte(tc.payload)})
			require.Equal(t, "    4 r1  "+tc.want, got)
		})
	}
	require.Empty(t, watchLine(id, debate.Event{Seq: 2, Type: "node.started", Payload: []byte(`{}`)}), "bookkeeping is left out")
}

// FuzzWatchLine: any payload renders without panicking, as lines that are
// never a JSON dump.
func FuzzWatchLine(f *testing.F) {
	for _, seed := range []string{`{}`, `[]`, `null`, `{"content":{"answer":"a","claims":[{"confidence":"x"}]}}`,
		`{"turns":[1,{"text":{}}]}`, `{"violations":["x",{"rule":1}]}`, `{"tool_args":{"a":[{"b":1}]}}`} {
		for _, typ := range []string{"artifact.created", "debate.turn", "output.rejected", "agent.tool_call", "role.answer", "x"} {
			f.Add(typ, seed)
		}
	}
	f.Fuzz(func(t *testing.T, typ, payload string) {
		line := watchLine("d", debate.Event{Seq: 1, Round: 1, Type: typ, Actor: "a", Payload: []byte(payload)})
		if strings.Contains(line, `{"`) && !strings.Contains(typ, `{"`) && !strings.Contains(payload, `{"`) {
			t.Fatalf("a JSON object in %q", line)
		}
	})
}

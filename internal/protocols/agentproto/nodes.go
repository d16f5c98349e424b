package agentproto

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
	"github.com/debated/debated/internal/tools"
)

// withModel adds the model calls of an answer to a payload.
func withModel(m map[string]any, mc *debate.ModelCall) map[string]any {
	if mc != nil {
		m["model"] = mc
	}
	return m
}

// initialize records the session and moves it to planning.
func (p *proto) initialize(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, o, s := t.NodeInput, t.Opts, t.State
	events := []orchestrator.Emit{{Type: EventSessionInitialized, Payload: map[string]any{
		"session_id": in.DebateID, "deal_id": in.DealID, "objective": o.Task.Objective, "steps": len(o.Task.Steps),
		"tools": o.Tools, "block_risk_classes": o.BlockRiskClasses, "max_retries": o.MaxRetries,
	}}}
	s.Init = true
	e, _ := s.transit(StatePlanning, RolePlanner, s.facts())
	return t.Save(append(events, e), nil)
}

// plan turns each step into a proposal unit.
func (p *proto) plan(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, o, s := t.NodeInput, t.Opts, t.State
	data := planData{Objective: o.Task.Objective}
	for _, st := range o.Task.Steps {
		st.Expect = nil // the critic's to check, not the planner's to know
		data.Steps = append(data.Steps, st)
	}
	a, mc, err := ask(ctx, p, in, NodePlan, SchemaPlan, data, checkPlan)
	if err != nil {
		return stopOnAnswer(SchemaPlan, mc, err)
	}
	var events []orchestrator.Emit
	s.Proposals = nil
	for _, st := range o.Task.Steps {
		k := slices.IndexFunc(a.Proposals, func(x planProposal) bool { return x.StepID == st.ID })
		if k < 0 {
			return nil, orchestrator.Permanent(fmt.Errorf("agentproto: the plan has no proposal for step %s", st.ID))
		}
		ans := a.Proposals[k]
		pr := &proposal{ID: "p-" + st.ID, StepID: st.ID, Tool: st.Tool, Risk: st.RiskClass,
			Objective: ans.Objective, Assumptions: protocol.NonNil(ans.Assumptions), Justification: ans.Justification}
		s.Proposals = append(s.Proposals, pr)
		events = append(events, orchestrator.Emit{Type: EventProposalCreated, Payload: withModel(map[string]any{
			"proposal_id": pr.ID, "step_id": st.ID, "objective": pr.Objective, "assumptions": pr.Assumptions,
			"required_tools": []string{st.Tool}, "input": st.Input, "risk_class": st.RiskClass,
			"expected_evidence": st.ExpectedEvidence, "justification": pr.Justification,
		}, mc)})
	}
	e, _ := s.transit(StateReviewing, RoleCritic, s.facts())
	return t.Save(append(events, e), nil)
}

// review is the critic's review of every proposal: the policy in code,
// made stricter (never looser) by the model's review when there is one.
// Without an approved proposal the session cannot execute: the refused
// transition is recorded and the session stops for review.
func (p *proto) review(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, o, s := t.NodeInput, t.Opts, t.State
	data := reviewData{Objective: o.Task.Objective, RegisteredTools: o.Tools}
	for _, pr := range s.Proposals {
		st := o.step(pr.StepID)
		data.Proposals = append(data.Proposals, reviewItem{ProposalID: pr.ID, StepID: pr.StepID, Tool: pr.Tool, RiskClass: pr.Risk,
			Objective: pr.Objective, Assumptions: pr.Assumptions, ExpectedEvidence: st.ExpectedEvidence})
	}
	a, mc, err := ask(ctx, p, in, NodeReview, SchemaReview, data, checkReview)
	if err != nil {
		return stopOnAnswer(SchemaReview, mc, err)
	}
	var events []orchestrator.Emit
	for i, pr := range s.Proposals {
		policy, reason := policyReview(o.Tools, data.Proposals[i])
		status := policy
		for _, r := range a.Reviews {
			if r.ProposalID == pr.ID && strictness[r.Status] >= strictness[policy] {
				status, reason = r.Status, r.Reason
			}
		}
		pr.Review = status
		events = append(events, orchestrator.Emit{Type: EventProposalReviewed, Payload: withModel(map[string]any{
			"proposal_id": pr.ID, "status": status, "reason": reason, "policy_status": policy,
		}, mc)})
	}
	e, ok := s.transit(StateExecuting, RoleExecutor, s.facts())
	events = append(events, e)
	if !ok {
		return t.Save(events, &orchestrator.Stop{Status: debate.DebateNeedsReview, Reason: ReasonNoApprovedProposal})
	}
	return t.Save(events, nil)
}

// intend signs one tool intent per approved proposal that may still run:
// its first attempt, or a retry after a failed execution (a new intent; the
// failed one stays in the trace).
func (p *proto) intend(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	o, s := t.Opts, t.State
	var events []orchestrator.Emit
	for _, pr := range s.Proposals {
		if !s.open(pr, o.MaxRetries) {
			continue
		}
		st := o.step(pr.StepID)
		hash, err := contentHash(st.Input)
		if err != nil {
			return nil, orchestrator.Permanent(fmt.Errorf("agentproto: step %s input: %w", st.ID, err))
		}
		pr.Attempts++
		it := &intent{ID: fmt.Sprintf("%s-i%d", pr.ID, pr.Attempts), ProposalID: pr.ID, Attempt: pr.Attempts,
			InputHash: hash, Risk: pr.Risk, Status: intentSigned}
		s.Intents = append(s.Intents, it)
		payload := map[string]any{"intent_id": it.ID, "proposal_id": pr.ID, "step_id": pr.StepID, "tool": pr.Tool,
			"input_hash": hash, "risk_class": pr.Risk, "attempt": it.Attempt, "justification": pr.Justification}
		if pr.Attempts > 1 {
			payload["retry_of"] = fmt.Sprintf("%s-i%d", pr.ID, pr.Attempts-1)
		}
		events = append(events, orchestrator.Emit{Type: EventIntentSigned, Payload: payload})
	}
	return t.Save(events, nil)
}

// vet is the critic's action guard: an intent of a blocked risk class is
// blocked (its proposal can no longer execute), any other is approved.
func (p *proto) vet(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	o, s := t.Opts, t.State
	var events []orchestrator.Emit
	for _, it := range s.Intents {
		if it.Status != intentSigned {
			continue
		}
		if slices.Contains(o.BlockRiskClasses, it.Risk) {
			it.Status = intentBlocked
			s.proposal(it.ProposalID).Outcome = outcomeBlocked
			events = append(events, orchestrator.Emit{Type: EventIntentBlocked, Payload: map[string]any{
				"intent_id": it.ID, "risk_class": it.Risk, "reason": fmt.Sprintf("risk class %s is blocked by the session's policy", it.Risk)}})
			continue
		}
		it.Status = intentApproved
		events = append(events, orchestrator.Emit{Type: EventIntentApproved, Payload: map[string]any{
			"intent_id": it.ID, "risk_class": it.Risk, "reason": fmt.Sprintf("risk class %s is within the session's policy", it.Risk)}})
	}
	return t.Save(events, nil)
}

// execute runs every approved intent once. It reloads the trace head first
// and executes an intent only if the ledger holds it signed with the same
// input hash, approved by the critic, not blocked and not yet executed: a
// node re-run after a crash finds what was committed, never what was not.
func (p *proto) execute(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, o, s := t.NodeInput, t.Opts, t.State
	trace, err := p.trace(ctx, in.DebateID)
	if err != nil {
		return nil, err
	}
	events, err := p.executeIntents(ctx, in, o, s, trace)
	if err != nil {
		return nil, err
	}
	return t.Save(events, nil)
}

// executeIntents runs the approved intents of s that trace authorizes,
// each through the tool invoker (the server's permission matrix and quotas,
// an agent.tool_call audit per call), and moves the session to claiming
// when no proposal may run again.
func (p *proto) executeIntents(ctx context.Context, in *orchestrator.NodeInput, o *Options, s *state, trace []debate.Event) ([]orchestrator.Emit, error) {
	head := indexIntents(trace)
	inv := newInvoker(in, o, s.ToolUsage, toolEnv{registry: p.cfg.Registry, dealID: in.DealID}, p.cfg.Now)
	var events []orchestrator.Emit
	for _, it := range s.Intents {
		if it.Status != intentApproved {
			continue
		}
		if why := head.authorizes(it); why != "" {
			return nil, orchestrator.Permanent(fmt.Errorf("agentproto: integrity: intent %s: %s", it.ID, why))
		}
		pr := s.proposal(it.ProposalID)
		if pr == nil {
			return nil, orchestrator.Permanent(fmt.Errorf("agentproto: integrity: intent %s has no proposal", it.ID))
		}
		st := o.step(pr.StepID)
		if st == nil {
			return nil, orchestrator.Permanent(fmt.Errorf("agentproto: integrity: proposal %s has no step", pr.ID))
		}
		evs, err := run(ctx, inv, it, st)
		if err != nil {
			return nil, err
		}
		events = append(events, evs...)
		switch {
		case it.Status == intentCompleted:
			pr.Outcome, pr.Execution = outcomeCompleted, it.ExecutionID
		case it.Refused || pr.Attempts > o.MaxRetries:
			pr.Outcome = outcomeFailed
		}
	}
	s.ToolUsage = inv.Usage()
	if !slices.ContainsFunc(s.Proposals, func(pr *proposal) bool { return s.open(pr, o.MaxRetries) }) {
		e, _ := s.transit(StateClaiming, RoleExecutor, s.facts())
		events = append(events, e)
	}
	return events, nil
}

// run executes one intent: tool_execution_started, the input artifact, the
// tool call through the invoker and its agent.tool_call audit, the output
// artifact, then tool_execution_completed or _failed referencing both
// artifacts by content hash. A call the invoker refused or the tool failed
// is recorded as failed; an error (the tool could not run) fails the node,
// and nothing of it is kept.
func run(ctx context.Context, inv *tools.Invoker, it *intent, st *Step) ([]orchestrator.Emit, error) {
	exec := it.ID + "-x"
	it.ExecutionID = exec
	ids := map[string]any{"intent_id": it.ID, "execution_id": exec, "proposal_id": it.ProposalID, "tool": st.Tool}
	events := []orchestrator.Emit{{Type: EventExecutionStarted, Payload: ids}}
	var input map[string]any
	if err := json.Unmarshal(st.Input, &input); err != nil {
		return nil, orchestrator.Permanent(fmt.Errorf("agentproto: step %s input: %w", st.ID, err))
	}
	inArt, inHash, err := artifact("tool_input_"+exec+".json", "input", ids, input)
	if err != nil {
		return nil, err
	}
	c, err := call(ctx, inv, RoleExecutor, st.Tool, st.Input)
	if err != nil {
		return nil, err
	}
	outArt, outHash, err := artifact("tool_output_"+exec+".json", "output", ids, c.out)
	if err != nil {
		return nil, err
	}
	it.Artifacts = []string{inHash, outHash}
	done := maps.Clone(ids)
	done["artifact_hashes"] = it.Artifacts
	events = append(events, inArt, toolCallEvent(c.audit, ids), outArt)
	if failure := c.failure(); failure != "" {
		it.Status, it.Error, it.Refused = intentFailed, failure, c.refused
		done["error"] = failure
		return append(events, orchestrator.Emit{Type: EventExecutionFailed, Payload: done}), nil
	}
	it.Status, it.Output = intentCompleted, c.out
	done["result_text"] = resultText(c.out)
	return append(events, orchestrator.Emit{Type: EventExecutionCompleted, Payload: done}), nil
}

// artifact is an artifact.created event holding content, and its hash.
func artifact(name, kind string, ids map[string]any, content map[string]any) (orchestrator.Emit, string, error) {
	raw, err := json.Marshal(content)
	if err != nil {
		return orchestrator.Emit{}, "", fmt.Errorf("agentproto: artifact %s: %w", name, err)
	}
	hash, err := contentHash(raw)
	if err != nil {
		return orchestrator.Emit{}, "", fmt.Errorf("agentproto: artifact %s: %w", name, err)
	}
	return orchestrator.Emit{Type: EventArtifact, Payload: map[string]any{
		"name": name, "kind": kind, "content": json.RawMessage(raw), "artifact_hash": hash,
		"intent_id": ids["intent_id"], "execution_id": ids["execution_id"],
	}}, hash, nil
}

// traceHead is what the committed trace says of each intent: the executor
// trusts it, not its own state, before it runs a tool.
type traceHead struct {
	signed   map[string]string // intent id → input hash
	approved map[string]bool
	blocked  map[string]bool
	executed map[string]int64 // intent id → seq of its tool_execution_started
}

// intentEvents are the event types that name an intent.
var intentEvents = []string{EventIntentSigned, EventIntentApproved, EventIntentBlocked, EventExecutionStarted}

func indexIntents(trace []debate.Event) *traceHead {
	h := &traceHead{signed: map[string]string{}, approved: map[string]bool{}, blocked: map[string]bool{}, executed: map[string]int64{}}
	for _, e := range trace {
		var m struct {
			IntentID  string `json:"intent_id"`
			InputHash string `json:"input_hash"`
		}
		if !slices.Contains(intentEvents, e.Type) || json.Unmarshal(e.Payload, &m) != nil {
			continue
		}
		switch e.Type {
		case EventIntentSigned:
			h.signed[m.IntentID] = m.InputHash
		case EventIntentApproved:
			h.approved[m.IntentID] = true
		case EventIntentBlocked:
			h.blocked[m.IntentID] = true
		case EventExecutionStarted:
			h.executed[m.IntentID] = e.Seq
		}
	}
	return h
}

// authorizes says why the trace does not allow executing it ("" when it
// does): the intent must be signed with the same input hash, approved, not
// blocked and not executed yet (exactly once per intent id).
func (h *traceHead) authorizes(it *intent) string {
	hash, ok := h.signed[it.ID]
	switch {
	case !ok:
		return "not signed in the trace"
	case hash != it.InputHash:
		return fmt.Sprintf("signed with input hash %s, the checkpoint has %s", hash, it.InputHash)
	case h.blocked[it.ID]:
		return "blocked by the critic"
	case !h.approved[it.ID]:
		return "not approved by the critic"
	case h.executed[it.ID] > 0:
		return fmt.Sprintf("already executed at seq %d", h.executed[it.ID])
	}
	return ""
}

func afterExecute(s *state) string {
	if s.Lifecycle == StateClaiming {
		return NodeClaim
	}
	return NodeIntend
}

// claim issues one evidence-backed claim per completed execution: the
// claim names its execution and the hashes of its artifacts.
func (p *proto) claim(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, o, s := t.NodeInput, t.Opts, t.State
	data := claimData{Objective: o.Task.Objective}
	byExec := map[string]*intent{}
	for _, it := range s.Intents {
		if it.Status != intentCompleted {
			continue
		}
		pr := s.proposal(it.ProposalID)
		byExec[it.ExecutionID] = it
		data.Executions = append(data.Executions, claimItem{ExecutionID: it.ExecutionID, ProposalID: pr.ID, StepID: pr.StepID,
			Tool: pr.Tool, ExpectedEvidence: o.step(pr.StepID).ExpectedEvidence, Output: it.Output, ResultText: resultText(it.Output)})
	}
	if len(data.Executions) == 0 {
		return t.Save(nil, nil)
	}
	a, mc, err := ask(ctx, p, in, NodeClaim, SchemaClaims, data, checkClaims)
	if err != nil {
		return stopOnAnswer(SchemaClaims, mc, err)
	}
	var events []orchestrator.Emit
	for _, item := range data.Executions {
		for _, c := range a.Claims {
			if c.ExecutionID != item.ExecutionID {
				continue
			}
			it := byExec[item.ExecutionID]
			cl := &claim{ID: "c-" + item.StepID, ProposalID: item.ProposalID, ExecutionID: item.ExecutionID,
				Text: c.Text, Confidence: c.Confidence, Evidence: slices.Clone(it.Artifacts)}
			s.Claims = append(s.Claims, cl)
			events = append(events, orchestrator.Emit{Type: EventClaimIssued, Payload: withModel(map[string]any{
				"claim_id": cl.ID, "proposal_id": cl.ProposalID, "step_id": item.StepID, "text": cl.Text,
				"confidence": cl.Confidence, "execution_ids": []string{cl.ExecutionID}, "evidence_refs": cl.Evidence,
			}, mc)})
		}
	}
	return t.Save(events, nil)
}

// challenge is the critic's review of the claims: a claim whose execution
// returned another result than the step expects is challenged as
// contradicted by its evidence.
func (p *proto) challenge(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	o, s := t.Opts, t.State
	var events []orchestrator.Emit
	for _, cl := range s.Claims {
		pr := s.proposal(cl.ProposalID)
		st := o.step(pr.StepID)
		if len(st.Expect) == 0 {
			continue
		}
		var want any
		_ = json.Unmarshal(st.Expect, &want) // validated with the options
		var got any
		for _, it := range s.Intents {
			if it.ExecutionID == cl.ExecutionID {
				got = it.Output["result"]
			}
		}
		if reflect.DeepEqual(want, got) {
			continue
		}
		cl.Challenged = fmt.Sprintf("the step expects %s, the execution returned %v", st.Expect, got)
		events = append(events, orchestrator.Emit{Type: EventClaimChallenged, Payload: map[string]any{
			"claim_id": cl.ID, "reason": cl.Challenged, "execution_ids": []string{cl.ExecutionID}}})
	}
	return t.Save(events, nil)
}

// audit moves the session to auditing, starts the verification run and
// checks the trace so far (the finalization guard): a trace that fails
// moves the session to failed and no final statement is signed.
func (p *proto) audit(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	e, ok := s.transit(StateAuditing, RoleAuditor, s.facts())
	if !ok {
		return t.Save([]orchestrator.Emit{e}, &orchestrator.Stop{Status: debate.DebateNeedsReview, Reason: ReasonNoClaims})
	}
	trace, err := p.trace(ctx, in.DebateID)
	if err != nil {
		return nil, err
	}
	rep := p.report(in.TenantID, trace)
	s.PreCheck = rep.Status
	events := []orchestrator.Emit{e, {Type: EventVerificationStarted, Payload: map[string]any{
		"debate_id": in.DebateID, "trace_head_seq": rep.CheckedThroughSeq, "trace_head_hash": rep.HeadHash,
		"checks": rep.Checks, "pre_final_status": rep.Status, "problems": rep.Problems, "warnings": rep.Warnings,
	}}}
	if rep.Status == VerificationFail {
		f, _ := s.transit(StateFailed, RoleAuditor, s.facts())
		return t.Save(append(events, f), &orchestrator.Stop{Status: debate.DebateFailed, Reason: ReasonIntegrity})
	}
	return t.Save(events, nil)
}

// finalize records the deliverables and the executor's final statement
// with the final claim bundle: the last role event of the session.
func (p *proto) finalize(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, o, s := t.NodeInput, t.Opts, t.State
	if s.Lifecycle != StateAuditing || s.PreCheck == VerificationFail || s.PreCheck == "" {
		return nil, orchestrator.Permanent(fmt.Errorf("agentproto: finalization guard: session is %s, pre-check %q", s.Lifecycle, s.PreCheck))
	}
	d := buildDeliverables(in, o, s)
	bundle := make([]map[string]any, 0, len(s.Claims))
	for _, c := range s.Claims {
		bundle = append(bundle, map[string]any{"claim_id": c.ID, "text": c.Text, "confidence": c.Confidence,
			"execution_ids": []string{c.ExecutionID}, "evidence_refs": c.Evidence, "challenged": c.Challenged != ""})
	}
	return t.Save([]orchestrator.Emit{
		{Type: EventDeliverables, Payload: d},
		{Type: EventFinalStatement, Actor: RoleExecutor, Payload: map[string]any{
			"session_id": in.DebateID, "objective": o.Task.Objective, "claims": bundle,
		}},
	}, nil)
}

// verify is the auditor's verification run over the whole trace, final
// statement included: the ledger's verifier and the protocol's invariants.
// Its completion records the session's last transition (auditing →
// completed, or failed): the ledger admits no role event after it.
func (p *proto) verify(ctx context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	trace, err := p.trace(ctx, in.DebateID)
	if err != nil {
		return nil, err
	}
	rep := p.report(in.TenantID, trace)
	f := s.facts()
	f.Verification, f.Integrity = rep.Status, rep.Status == VerificationFail
	to, stop := StateCompleted, &orchestrator.Stop{Reason: ReasonVerified}
	if rep.Status == VerificationFail {
		to, stop = StateFailed, &orchestrator.Stop{Status: debate.DebateFailed, Reason: ReasonIntegrity}
	}
	if err := Request(s.Lifecycle, to, RoleAuditor, f); err != nil {
		return nil, orchestrator.Permanent(err)
	}
	from := s.Lifecycle
	s.Lifecycle = to
	return t.Save([]orchestrator.Emit{{Type: EventVerificationComplete, Payload: map[string]any{
		"debate_id": in.DebateID, "tenant_id": in.TenantID, "status": rep.Status, "report": rep,
		"checked_through_seq": rep.CheckedThroughSeq, "head_hash": rep.HeadHash,
		"transition": map[string]any{"from": from, "to": to},
	}}}, stop)
}

package agentproto

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
)

// Schema names of the three structured calls. A model answers them when
// the tenant has one; otherwise the rules backend (Answer) does.
const (
	SchemaPlan   = "agentproto_plan"
	SchemaReview = "agentproto_review"
	SchemaClaims = "agentproto_claims"
)

// planData is what the planner receives: the task spec, its steps without
// what they expect.
type planData struct {
	Objective string `json:"objective"`
	Steps     []Step `json:"steps"`
}

type planAnswer struct {
	Proposals []planProposal `json:"proposals"`
}

type planProposal struct {
	StepID        string   `json:"step_id"`
	Objective     string   `json:"objective"`
	Assumptions   []string `json:"assumptions"`
	Justification string   `json:"justification"`
}

// reviewData is what the critic reviews: the proposals and the tools the
// tenant registered for the session.
type reviewData struct {
	Objective       string       `json:"objective"`
	RegisteredTools []string     `json:"registered_tools"`
	Proposals       []reviewItem `json:"proposals"`
}

type reviewItem struct {
	ProposalID       string   `json:"proposal_id"`
	StepID           string   `json:"step_id"`
	Tool             string   `json:"tool"`
	RiskClass        string   `json:"risk_class"`
	Objective        string   `json:"objective"`
	Assumptions      []string `json:"assumptions"`
	ExpectedEvidence string   `json:"expected_evidence,omitempty"`
}

type reviewAnswer struct {
	Reviews []review `json:"reviews"`
}

type review struct {
	ProposalID string `json:"proposal_id"`
	Status     string `json:"status"`
	Reason     string `json:"reason"`
}

// claimData is what the executor states claims from: its completed
// executions.
type claimData struct {
	Objective  string      `json:"objective"`
	Executions []claimItem `json:"executions"`
}

type claimItem struct {
	ExecutionID      string         `json:"execution_id"`
	ProposalID       string         `json:"proposal_id"`
	StepID           string         `json:"step_id"`
	Tool             string         `json:"tool"`
	ExpectedEvidence string         `json:"expected_evidence,omitempty"`
	Output           map[string]any `json:"output"`
	ResultText       string         `json:"result_text"`
}

type claimAnswer struct {
	Claims []claimText `json:"claims"`
}

type claimText struct {
	ExecutionID string  `json:"execution_id"`
	Text        string  `json:"text"`
	Confidence  float64 `json:"confidence"`
}

// prompts are the three structured calls; the gate alone judges a model's
// answer.
var prompts = protocol.Prompts{
	SchemaPlan: {Role: RolePlanner, PromptID: SchemaPlan + ".v1", SchemaName: SchemaPlan, GateOnly: true, Rules: protocol.Rules(rulesPlan),
		System: "You are the Planner of an auditable agent protocol. You turn a task into proposal units, one per step, " +
			"each with an objective, the assumptions it rests on and a justification. You never change a step's tool or input.",
		Schema: json.RawMessage(`{"type":"object","required":["proposals"],"properties":{"proposals":{"type":"array","items":{"type":"object",` +
			`"required":["step_id","objective","assumptions","justification"],"properties":{"step_id":{"type":"string"},"objective":{"type":"string"},` +
			`"assumptions":{"type":"array","items":{"type":"string"}},"justification":{"type":"string"}}}}}}`),
	},
	SchemaReview: {Role: RoleCritic, PromptID: SchemaReview + ".v1", SchemaName: SchemaReview, GateOnly: true, Rules: protocol.Rules(rulesReview),
		System: "You are the Critic of an auditable agent protocol. You review proposals for safety and policy risk. " +
			"Reject a proposal whose tool is not registered for the session; approve risky ones only conditionally.",
		Schema: json.RawMessage(`{"type":"object","required":["reviews"],"properties":{"reviews":{"type":"array","items":{"type":"object",` +
			`"required":["proposal_id","status","reason"],"properties":{"proposal_id":{"type":"string"},` +
			`"status":{"type":"string","enum":["approved","conditionally_approved","rejected"]},"reason":{"type":"string"}}}}}}`),
	},
	SchemaClaims: {Role: RoleExecutor, PromptID: SchemaClaims + ".v1", SchemaName: SchemaClaims, GateOnly: true, Rules: protocol.Rules(rulesClaims),
		System: "You are the Executor of an auditable agent protocol. You state one claim per completed tool execution. " +
			"A claim quotes the execution's result_text exactly and asserts nothing its output does not show.",
		Schema: json.RawMessage(`{"type":"object","required":["claims"],"properties":{"claims":{"type":"array","items":{"type":"object",` +
			`"required":["execution_id","text","confidence"],"properties":{"execution_id":{"type":"string"},"text":{"type":"string"},` +
			`"confidence":{"type":"number","minimum":0,"maximum":1}}}}}}`),
	},
}

// tasks are the calls' one-line instructions.
var tasks = map[string]string{
	SchemaPlan:   "turn each step of the task into one proposal unit: an objective, its assumptions and a justification",
	SchemaReview: "review each proposal for safety and policy risk: approved, conditionally_approved or rejected, with a reason",
	SchemaClaims: "state one evidence-backed claim per execution, quoting its result_text, with a confidence between 0 and 1",
}

// Answer is the rules backend: the answer to the structured call named
// schema (SchemaPlan, SchemaReview or SchemaClaims) over its DATA document,
// exactly what a model is asked to produce. It returns an error wrapping
// debate.ErrInvalid for an unknown schema or data it cannot read.
func Answer(schema string, data json.RawMessage) (json.RawMessage, error) {
	return prompts.Answer(schema, data)
}

func rulesPlan(d planData) planAnswer {
	out := planAnswer{Proposals: []planProposal{}}
	for _, s := range d.Steps {
		goal := cmp.Or(s.ExpectedEvidence, "the output of "+s.Tool)
		out.Proposals = append(out.Proposals, planProposal{
			StepID:    s.ID,
			Objective: fmt.Sprintf("Step %s: run %s to establish %s", s.ID, s.Tool, goal),
			Assumptions: []string{
				fmt.Sprintf("the input of step %s is the task's own, unchanged", s.ID),
				fmt.Sprintf("%s is a deterministic built-in tool", s.Tool),
			},
			Justification: fmt.Sprintf("the objective %q needs %s", protocol.Clip(d.Objective, 120), goal),
		})
	}
	return out
}

func checkPlan(d planData, a planAnswer) []debate.Violation {
	var vs []debate.Violation
	seen := map[string]bool{}
	for i, pr := range a.Proposals {
		f := fmt.Sprintf("proposals[%d]", i)
		if !slices.ContainsFunc(d.Steps, func(s Step) bool { return s.ID == pr.StepID }) {
			vs = append(vs, debate.Violation{Rule: "UNKNOWN_STEP", Field: f + ".step_id", Detail: fmt.Sprintf("no step %q in the task", pr.StepID)})
		}
		if seen[pr.StepID] {
			vs = append(vs, debate.Violation{Rule: "DUPLICATE", Field: f + ".step_id", Detail: fmt.Sprintf("step %q has two proposals", pr.StepID)})
		}
		seen[pr.StepID] = true
		if strings.TrimSpace(pr.Objective) == "" || strings.TrimSpace(pr.Justification) == "" {
			vs = append(vs, debate.Violation{Rule: "INCOMPLETE", Field: f, Detail: "objective and justification are required"})
		}
	}
	for _, s := range d.Steps {
		if !seen[s.ID] {
			vs = append(vs, debate.Violation{Rule: "MISSING_STEP", Field: "proposals", Detail: fmt.Sprintf("step %q has no proposal", s.ID)})
		}
	}
	return vs
}

// policyReview is the critic's policy, in code: a tool the tenant did not
// register is rejected; a risk class above low is approved only
// conditionally (its intent must pass the critic's vetting).
func policyReview(registered []string, it reviewItem) (string, string) {
	switch {
	case !slices.Contains(registered, it.Tool):
		return ReviewRejected, fmt.Sprintf("tool %s is not registered for this session", it.Tool)
	case it.RiskClass != RiskLow:
		return ReviewConditional, fmt.Sprintf("risk class %s: the intent needs the critic's approval before execution", it.RiskClass)
	}
	return ReviewApproved, fmt.Sprintf("low-risk use of the registered tool %s", it.Tool)
}

// strictness ranks the review statuses: the model's review of a proposal
// stands when it is at least as strict as the policy's.
var strictness = map[string]int{ReviewApproved: 0, ReviewConditional: 1, ReviewRejected: 2}

func rulesReview(d reviewData) reviewAnswer {
	out := reviewAnswer{Reviews: []review{}}
	for _, it := range d.Proposals {
		st, why := policyReview(d.RegisteredTools, it)
		out.Reviews = append(out.Reviews, review{ProposalID: it.ProposalID, Status: st, Reason: why})
	}
	return out
}

func checkReview(d reviewData, a reviewAnswer) []debate.Violation {
	var vs []debate.Violation
	seen := map[string]bool{}
	for i, r := range a.Reviews {
		f := fmt.Sprintf("reviews[%d]", i)
		if !slices.ContainsFunc(d.Proposals, func(it reviewItem) bool { return it.ProposalID == r.ProposalID }) || seen[r.ProposalID] {
			vs = append(vs, debate.Violation{Rule: "UNKNOWN_PROPOSAL", Field: f + ".proposal_id", Detail: fmt.Sprintf("%q is not a proposal to review, or is reviewed twice", r.ProposalID)})
		}
		seen[r.ProposalID] = true
		if !slices.Contains([]string{ReviewApproved, ReviewConditional, ReviewRejected}, r.Status) {
			vs = append(vs, debate.Violation{Rule: "SCHEMA", Field: f + ".status", Detail: "approved, conditionally_approved or rejected"})
		}
		if strings.TrimSpace(r.Reason) == "" {
			vs = append(vs, debate.Violation{Rule: "INCOMPLETE", Field: f + ".reason", Detail: "a review gives its reason"})
		}
	}
	for _, it := range d.Proposals {
		if !seen[it.ProposalID] {
			vs = append(vs, debate.Violation{Rule: "MISSING_REVIEW", Field: "reviews", Detail: fmt.Sprintf("proposal %q is not reviewed", it.ProposalID)})
		}
	}
	return vs
}

func rulesClaims(d claimData) claimAnswer {
	out := claimAnswer{Claims: []claimText{}}
	for _, it := range d.Executions {
		subject := cmp.Or(it.ExpectedEvidence, "step "+it.StepID)
		out.Claims = append(out.Claims, claimText{ExecutionID: it.ExecutionID,
			Text: fmt.Sprintf("%s: %s returned %s.", subject, it.Tool, it.ResultText), Confidence: 0.9})
	}
	return out
}

func checkClaims(d claimData, a claimAnswer) []debate.Violation {
	var vs []debate.Violation
	seen := map[string]bool{}
	for i, c := range a.Claims {
		f := fmt.Sprintf("claims[%d]", i)
		k := slices.IndexFunc(d.Executions, func(it claimItem) bool { return it.ExecutionID == c.ExecutionID })
		switch {
		case k < 0 || seen[c.ExecutionID]:
			vs = append(vs, debate.Violation{Rule: "UNKNOWN_EXECUTION", Field: f + ".execution_id", Detail: fmt.Sprintf("%q is not a completed execution, or is claimed twice", c.ExecutionID)})
		case !strings.Contains(c.Text, d.Executions[k].ResultText):
			vs = append(vs, debate.Violation{Rule: "NO_FREE_FACTS", Field: f + ".text", Detail: fmt.Sprintf("the claim must quote the execution's result %q", d.Executions[k].ResultText)})
		}
		seen[c.ExecutionID] = true
		if math.IsNaN(c.Confidence) || c.Confidence < 0 || c.Confidence > 1 {
			vs = append(vs, debate.Violation{Rule: "SCHEMA", Field: f + ".confidence", Detail: "between 0 and 1"})
		}
	}
	for _, it := range d.Executions {
		if !seen[it.ExecutionID] {
			vs = append(vs, debate.Violation{Rule: "MISSING_CLAIM", Field: "claims", Detail: fmt.Sprintf("execution %q has no claim", it.ExecutionID)})
		}
	}
	return vs
}

// ask makes the structured call schema of node over data, with the
// tenant's model or the rules backend, and returns the answer check
// accepted, the model calls made (nil for the rules backend), a
// *protocol.Rejected when the answer failed its gate, or the model's error.
//
// The gate is the protocol's, in code: it runs on the model's answer
// whatever the model client reported, so a client that under-reports its
// violations cannot let an answer through (fail closed).
func ask[D, A any](ctx context.Context, p *proto, in *orchestrator.NodeInput, node, schema string, data D, check func(D, A) []debate.Violation) (A, *debate.ModelCall, error) {
	var a A
	c := protocol.Call{Prompt: prompts[schema], CacheKey: cacheKey(in, node), Task: tasks[schema], Data: data, Check: gate(data, check)}
	c.Rules = func(encoded json.RawMessage) (json.RawMessage, error) {
		answer, err := Answer(schema, encoded)
		return answer, orchestrator.Permanent(err) // DATA of ours that the rules cannot read
	}
	ans, err := p.cfg.ModelFor.Ask(ctx, in, c)
	if err == nil {
		err = ans.Decode(c.Role, schema, &a)
	}
	return a, ans.Model, err
}

// gate adapts a check of an answer against its DATA to the answer's JSON.
func gate[D, A any](data D, check func(D, A) []debate.Violation) func(json.RawMessage) []debate.Violation {
	return func(answer json.RawMessage) []debate.Violation {
		var a A
		if err := json.Unmarshal(answer, &a); err != nil {
			return []debate.Violation{{Rule: "SCHEMA", Field: "answer", Detail: err.Error()}}
		}
		return check(data, a)
	}
}

// cacheKey is the response cache prefix of a node's model calls: the
// debate, the node, the round and the attempt. A re-run of the same attempt
// (after a crash) reuses the persisted responses; a retried node (a new
// attempt) asks the model again instead of replaying the answers that
// failed it.
func cacheKey(in *orchestrator.NodeInput, node string) string {
	return fmt.Sprintf("%s/agentproto/%s/r%d/a%d", in.DebateID, node, in.Round, in.Attempt)
}

// stopOnAnswer turns ask's failures that end the session into its stop:
// a gate rejection is recorded (output.rejected) and the session waits for
// review, as does a spent token budget (budget.exceeded, signed by the
// role whose call it stopped); other errors are the engine's to retry.
func stopOnAnswer(schema string, mc *debate.ModelCall, err error) (*orchestrator.NodeOutput, error) {
	if rej, ok := errors.AsType[*protocol.Rejected](err); ok {
		return &orchestrator.NodeOutput{
			Events: []orchestrator.Emit{protocol.Rejection{Role: rej.Role, Schema: rej.Schema, Violations: rej.Violations, Model: mc}.Event()},
			Stop:   &orchestrator.Stop{Status: debate.DebateNeedsReview, Reason: ReasonOutputRejected},
		}, nil
	}
	return protocol.BudgetStop(prompts[schema].Role, err, mc, map[string]any{"schema": schema})
}

package agentproto

import (
	"fmt"
	"strings"

	"github.com/debated/debated/internal/orchestrator"
)

// Deliverables are the session's summary, recorded before the final
// statement (deliverables.created).
type Deliverables struct {
	SessionID  string            `json:"session_id"`
	DealID     string            `json:"deal_id"`
	Objective  string            `json:"objective"`
	Lifecycle  string            `json:"lifecycle"`
	PreCheck   string            `json:"pre_final_verification"`
	Proposals  []ProposalSummary `json:"proposals"`
	Executions []ExecSummary     `json:"executions"`
	Claims     []ClaimSummary    `json:"claims"`
	Refusals   int               `json:"refused_transitions"`
	Markdown   string            `json:"markdown"`
}

// ProposalSummary is one proposal's path through the session.
type ProposalSummary struct {
	ProposalID string `json:"proposal_id"`
	StepID     string `json:"step_id"`
	Tool       string `json:"tool"`
	RiskClass  string `json:"risk_class"`
	Review     string `json:"review"`
	Outcome    string `json:"outcome"`
	Attempts   int    `json:"attempts"`
}

// ExecSummary is one intent and its execution.
type ExecSummary struct {
	IntentID    string   `json:"intent_id"`
	ExecutionID string   `json:"execution_id,omitempty"`
	Status      string   `json:"status"`
	Result      string   `json:"result,omitempty"`
	Error       string   `json:"error,omitempty"`
	Artifacts   []string `json:"artifact_hashes,omitempty"`
}

// ClaimSummary is one issued claim.
type ClaimSummary struct {
	ClaimID    string   `json:"claim_id"`
	Text       string   `json:"text"`
	Confidence float64  `json:"confidence"`
	Evidence   []string `json:"evidence_refs"`
	Challenged string   `json:"challenged,omitempty"`
}

func buildDeliverables(in *orchestrator.NodeInput, o *Options, s *state) *Deliverables {
	d := &Deliverables{SessionID: in.DebateID, DealID: in.DealID, Objective: o.Task.Objective, Lifecycle: s.Lifecycle,
		PreCheck: s.PreCheck, Refusals: s.Refusals,
		Proposals: []ProposalSummary{}, Executions: []ExecSummary{}, Claims: []ClaimSummary{}}
	for _, pr := range s.Proposals {
		outcome := pr.Outcome
		if outcome == "" && !pr.approved() {
			outcome = "not executed"
		}
		d.Proposals = append(d.Proposals, ProposalSummary{ProposalID: pr.ID, StepID: pr.StepID, Tool: pr.Tool,
			RiskClass: pr.Risk, Review: pr.Review, Outcome: outcome, Attempts: pr.Attempts})
	}
	for _, it := range s.Intents {
		d.Executions = append(d.Executions, ExecSummary{IntentID: it.ID, ExecutionID: it.ExecutionID, Status: it.Status,
			Result: resultText(it.Output), Error: it.Error, Artifacts: it.Artifacts})
	}
	for _, c := range s.Claims {
		d.Claims = append(d.Claims, ClaimSummary{ClaimID: c.ID, Text: c.Text, Confidence: c.Confidence, Evidence: c.Evidence, Challenged: c.Challenged})
	}
	d.Markdown = markdown(d)
	return d
}

func markdown(d *Deliverables) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Agent session %s\n\n**Objective:** %s\n\n", d.SessionID, d.Objective)
	b.WriteString("## Proposals\n\n| proposal | tool | risk | review | outcome | attempts |\n|---|---|---|---|---|---|\n")
	for _, p := range d.Proposals {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d |\n", p.ProposalID, p.Tool, p.RiskClass, p.Review, p.Outcome, p.Attempts)
	}
	b.WriteString("\n## Claims\n\n")
	for _, c := range d.Claims {
		fmt.Fprintf(&b, "- **%s** (confidence %.2f): %s", c.ClaimID, c.Confidence, c.Text)
		if c.Challenged != "" {
			fmt.Fprintf(&b, " — *challenged: %s*", c.Challenged)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nPre-final verification: %s. Refused transitions: %d.\n", d.PreCheck, d.Refusals)
	return b.String()
}

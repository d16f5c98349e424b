package stratmaster

import (
	"context"
	"fmt"
	"strings"

	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
)

// Artifact names (seed 004 names no files; docs/decisions.md): one review
// per pass, then the task's final state, plan and debate log.
const (
	ArtifactAgentState = "agent_state.json"
	ArtifactPlan       = "plan.json"
	ArtifactDebateLog  = "debate_log.json"
)

// ReviewArtifact is the name of pass n's constitutional review.
func ReviewArtifact(pass int) string { return fmt.Sprintf("constitution_review_pass%d.json", pass) }

// review is the constitutional critic's node: it checks the pass against
// the constitution and either accepts the work, sends it back to research
// with its feedback (while revisions remain), or gives up for review.
func (p *proto) review(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	in, s := t.NodeInput, t.State
	r := review(t.Opts.cons, s.Pass, s.Hypotheses, s.Plan, evidenceByID(s.Evidence))
	sum := reviewSummary{Pass: s.Pass, Passed: r.Passed}
	for _, fb := range r.Feedback { // one per failed principle or metric, in order
		sum.Failed = append(sum.Failed, fb.Source)
	}
	s.Reviews = append(s.Reviews, sum)
	events := []orchestrator.Emit{
		{Type: EventReview, Payload: r},
		{Type: EventArtifact, Payload: map[string]any{"name": ReviewArtifact(s.Pass), "content": r}},
	}
	switch {
	case r.Passed:
		s.Status, s.StopReason = StatusComplete, ReasonSatisfied
		s.StopWhy = fmt.Sprintf("pass %d satisfies constitution %s v%s", s.Pass, t.Opts.cons.ID, t.Opts.cons.Version)
	case s.Revisions < *t.Opts.MaxRevisions:
		s.Revisions++
		s.Directives.apply(r.Feedback)
		events = append(events, orchestrator.Emit{Type: EventRevision, Payload: map[string]any{
			"pass": s.Pass, "revision": s.Revisions, "max_revisions": *t.Opts.MaxRevisions,
			"failed": sum.Failed, "feedback": r.Feedback, "directives": s.Directives,
		}})
	default:
		s.Status, s.StopReason = StatusNeedsReview, ReasonUnsatisfied
		s.StopWhy = fmt.Sprintf("after %d revision(s) pass %d still breaks %s", s.Revisions, s.Pass, strings.Join(sum.Failed, ", "))
		events = append(events, statusEvent(s, in, s.StopWhy))
	}
	return t.Save(events, nil)
}

// AgentState is seed 004's shared state as the task ends: the
// agent_state.json artifact.
type AgentState struct {
	TenantID   string       `json:"tenant_id"`
	TaskID     string       `json:"task_id"`
	Hypotheses []Hypothesis `json:"hypotheses"`
	Evidence   []Evidence   `json:"evidence"`
	Plan       *Plan        `json:"plan"`
	DebateLog  []DebateTurn `json:"debate_log"`
	Status     string       `json:"status"`
}

// Deliverables are the task's deliverables (deliverables.created).
type Deliverables struct {
	TaskID       string          `json:"task_id"`
	DealID       string          `json:"deal_id"`
	Question     string          `json:"question"`
	Status       string          `json:"status"`
	DebateStatus string          `json:"debate_status"`
	StopReason   string          `json:"stop_reason"`
	StopWhy      string          `json:"stop_why"`
	Passes       int             `json:"passes"`
	Revisions    int             `json:"revisions"`
	Constitution map[string]any  `json:"constitution"`
	Hypotheses   []Hypothesis    `json:"hypotheses"`
	SetAside     []SetAside      `json:"set_aside"`
	Plan         *Plan           `json:"plan"`
	Reviews      []reviewSummary `json:"reviews"`
	DebateLog    []DebateTurn    `json:"debate_log"`
	Markdown     string          `json:"markdown"`
}

// finalize ends the task with the status its last node decided.
func (p *proto) finalize(_ context.Context, t *turn) (*orchestrator.NodeOutput, error) {
	s := t.State
	if s.StopReason == "" { // unreachable through the graph; never complete by default
		s.Status, s.StopReason, s.StopWhy = StatusNeedsReview, ReasonUnsatisfied, "finalize reached without a decision"
	}
	return t.Save(closing(t), &orchestrator.Stop{Status: debateStatus(s.Status), Reason: s.StopReason})
}

// closing is what ends a task, whichever node ends it: the artifacts, the
// deliverables and the final task.status.
func closing(t *turn) []orchestrator.Emit {
	in, s := t.NodeInput, t.State
	st := AgentState{TenantID: in.TenantID, TaskID: in.DebateID, Hypotheses: protocol.NonNil(s.Hypotheses), Evidence: protocol.NonNil(s.Evidence),
		Plan: s.Plan, DebateLog: protocol.NonNil(s.DebateLog), Status: s.Status}
	d := Deliverables{
		TaskID: in.DebateID, DealID: in.DealID, Question: t.Opts.Question, Status: s.Status,
		DebateStatus: string(debateStatus(s.Status)), StopReason: s.StopReason, StopWhy: s.StopWhy,
		Passes: s.Pass, Revisions: s.Revisions,
		Constitution: map[string]any{"id": t.Opts.cons.ID, "version": t.Opts.cons.Version},
		Hypotheses:   protocol.NonNil(s.Hypotheses), SetAside: protocol.NonNil(s.SetAside), Plan: s.Plan, Reviews: protocol.NonNil(s.Reviews),
		DebateLog: protocol.NonNil(s.DebateLog),
	}
	d.Markdown = d.markdown()
	events := []orchestrator.Emit{
		{Type: EventArtifact, Payload: map[string]any{"name": ArtifactAgentState, "content": st}},
		{Type: EventArtifact, Payload: map[string]any{"name": ArtifactDebateLog, "content": map[string]any{"task_id": in.DebateID, "debate_log": protocol.NonNil(s.DebateLog)}}},
	}
	if s.Plan != nil {
		events = append(events, orchestrator.Emit{Type: EventArtifact, Payload: map[string]any{"name": ArtifactPlan, "content": s.Plan}})
	}
	return append(events,
		orchestrator.Emit{Type: EventDeliverables, Payload: d},
		statusEvent(s, in, s.StopReason+": "+s.StopWhy))
}

// markdown renders the deliverables for people.
func (d *Deliverables) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# StratMaster task %s\n\n", d.TaskID)
	fmt.Fprintf(&b, "- **Question:** %s\n- **Deal:** %s\n- **Status:** %s (debate %s), %s\n- **Why:** %s\n- **Constitution:** %v v%v; %d pass(es), %d revision(s)\n\n",
		d.Question, d.DealID, d.Status, d.DebateStatus, d.StopReason, d.StopWhy, d.Constitution["id"], d.Constitution["version"], d.Passes, d.Revisions)
	b.WriteString("## Hypotheses\n\n")
	if len(d.Hypotheses) == 0 {
		b.WriteString("None presented.\n")
	} else {
		b.WriteString("| id | stance | confidence | evidence | statement |\n|---|---|---|---|---|\n")
		for _, h := range d.Hypotheses {
			contested := ""
			if h.Contested {
				contested = " (contested)"
			}
			fmt.Fprintf(&b, "| %s | %s | %.2f%s | %s | %s |\n", h.ID, h.Stance, h.Confidence, contested,
				strings.Join(h.EvidenceIDs, ", "), mdCell(h.Statement))
		}
	}
	if len(d.SetAside) > 0 {
		b.WriteString("\n### Set aside\n\n")
		for _, sa := range d.SetAside {
			fmt.Fprintf(&b, "- %s: %s\n", mdCell(sa.Statement), sa.Reason)
		}
	}
	if d.Plan != nil {
		fmt.Fprintf(&b, "\n## Plan\n\n%s\n\n", d.Plan.Summary)
		for _, r := range d.Plan.Recommendations {
			fmt.Fprintf(&b, "- [%s] %s\n", r.Priority, r.Text)
		}
		for _, r := range d.Plan.Risks {
			fmt.Fprintf(&b, "- [risk] %s\n", r.Text)
		}
	}
	b.WriteString("\n## Constitutional reviews\n\n")
	for _, r := range d.Reviews {
		verdict := "satisfied"
		if !r.Passed {
			verdict = "failed " + strings.Join(r.Failed, ", ")
		}
		fmt.Fprintf(&b, "- pass %d: %s\n", r.Pass, verdict)
	}
	if len(d.DebateLog) > 0 {
		b.WriteString("\n## Debate\n\n")
		for _, t := range d.DebateLog {
			fmt.Fprintf(&b, "- pass %d, %s (%s) on %s: %s\n", t.Pass, t.Speaker, t.Kind, t.HypothesisID, mdCell(t.Text))
		}
	}
	return b.String()
}

func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

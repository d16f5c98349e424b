package agentproto

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/tools"
	"github.com/gowebpki/jcs"
)

// Verification statuses (seed 003: a session completes on pass or
// pass-with-warnings).
const (
	VerificationPass = "pass"
	VerificationWarn = "pass_with_warnings"
	VerificationFail = "fail"
)

// Rules of the protocol's invariants, in Report problems beside the
// ledger's own rules.
const (
	RuleLifecycle   = "lifecycle"
	RuleApproval    = "approval"
	RuleArtifact    = "artifact"
	RuleEvidence    = "evidence"
	RuleFinalBundle = "final_bundle"
	RuleTraceRef    = "trace_ref"
	RuleToolAudit   = "tool_audit"
)

// Report is a verification run's outcome.
type Report struct {
	Status string `json:"status"`
	// CheckedThroughSeq and HeadHash name the last event checked: the
	// immutable trace identifiers the report refers to.
	CheckedThroughSeq int64  `json:"checked_through_seq"`
	HeadHash          string `json:"head_hash"`
	Events            int    `json:"events"`
	// SignaturesChecked is false when no public keys were given.
	SignaturesChecked bool             `json:"signatures_checked"`
	Checks            []string         `json:"checks"`
	Problems          []ledger.Problem `json:"problems,omitempty"`
	Warnings          []string         `json:"warnings,omitempty"`
}

// Verify checks a session's events in order: the ledger's verifier (seq,
// hash chain, hashes, signatures by keys, role guard, seed 003's ordering
// rules) under LedgerPolicy, then the protocol's invariants
// (CheckInvariants). With nil keys every check but the signatures runs
// and a warning says so. Status is fail with any problem,
// pass_with_warnings with warnings only, else pass.
func Verify(events []debate.Event, keys map[string]ledger.PublicKeyInfo) Report {
	r := Report{Events: len(events), SignaturesChecked: keys != nil,
		Checks: []string{"ledger: seq, chain, hashes, signatures, role guard, ordering", "invariants: lifecycle, approval, artifacts, tool call audits, evidence, final bundle, trace references"}}
	if keys == nil {
		r.Checks[0] = "ledger: seq, chain, hashes, role guard, ordering"
		r.Warnings = append(r.Warnings, "signatures were not checked: no public keys")
	}
	if n := len(events); n > 0 {
		r.CheckedThroughSeq, r.HeadHash = events[n-1].Seq, events[n-1].Hash
	}
	lr := ledger.Verify(events, keys, LedgerPolicy())
	for _, pr := range lr.Problems {
		if keys == nil && (pr.Rule == ledger.RuleKeyID || pr.Rule == ledger.RuleSigner || pr.Rule == ledger.RuleSignature) {
			continue
		}
		r.Problems = append(r.Problems, pr)
	}
	ps, ws := CheckInvariants(events)
	r.Problems = append(r.Problems, ps...)
	r.Warnings = append(r.Warnings, ws...)
	switch {
	case len(r.Problems) > 0:
		r.Status = VerificationFail
	case len(r.Warnings) > 0:
		r.Status = VerificationWarn
	default:
		r.Status = VerificationPass
	}
	return r
}

// report is the auditor's verification of the trace read from the ledger.
func (p *proto) report(tenantID string, trace []debate.Event) Report {
	var keys map[string]ledger.PublicKeyInfo
	if p.cfg.Keys != nil {
		keys = p.cfg.Keys.PublicKeys(tenantID, ledger.Actors(trace))
	}
	return Verify(trace, keys)
}

// contentHash is the hex SHA-256 of a JSON value's RFC 8785 form: how
// intents name their normalised input and events reference artifacts.
func contentHash(raw json.RawMessage) (string, error) {
	c, err := jcs.Transform(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// invariants is the state of one CheckInvariants walk.
type invariants struct {
	problems []ledger.Problem
	warnings []string

	life      string
	facts     Facts
	proposals map[string]string // proposal id → review status ("" before review)
	intents   map[string]string // intent id → proposal id
	approved  map[string]bool   // intents the critic approved
	open      map[string]bool   // intents neither blocked nor finished
	artifacts map[string]bool   // content hashes of artifact.created
	completed map[string]bool   // execution ids completed
	audited   map[string]string // execution id → result_status of its agent.tool_call
	claims    map[string]bool
	hashes    map[int64]string // seq → hash
}

func (v *invariants) add(seq int64, rule, format string, args ...any) {
	v.problems = append(v.problems, ledger.Problem{Seq: seq, Rule: rule, Detail: fmt.Sprintf(format, args...)})
}

// stored checks that what (`claim "c-1"`) references artifacts, each held
// by an earlier artifact.created; none is the problem's detail without one.
func (v *invariants) stored(seq int64, rule, what, none string, hashes []string) {
	if len(hashes) == 0 {
		v.add(seq, rule, "%s %s", what, none)
	}
	for _, h := range hashes {
		if !v.artifacts[h] {
			v.add(seq, rule, "%s references artifact %s, which no earlier artifact.created holds", what, h)
		}
	}
}

// CheckInvariants checks seed 003's invariants that the ledger's own rules
// do not: the lifecycle follows the state machine, each transition signed
// by its designated role with its guard met; every intent is for a
// proposal the critic approved (rejected proposals never execute); every
// execution follows the critic's approval of its intent, and an
// agent.tool_call audit of its call whose status agrees with its outcome
// (completed only on SUCCESS); every execution references stored input/output artifacts whose content hashes match;
// every claim is issued once, by the executor, on completed executions,
// with artifact evidence; the final statement bundles every claim; the
// completed verification references the trace it checked. It returns the
// problems and the warnings (rejected proposals, blocked intents, failed
// executions, challenged claims, refused transitions).
func CheckInvariants(events []debate.Event) ([]ledger.Problem, []string) {
	v := &invariants{life: StateInitialized, facts: Facts{Settled: true}, proposals: map[string]string{}, intents: map[string]string{},
		approved: map[string]bool{}, open: map[string]bool{}, artifacts: map[string]bool{}, completed: map[string]bool{},
		audited: map[string]string{}, claims: map[string]bool{}, hashes: map[int64]string{}}
	for i := range events {
		v.event(&events[i])
		v.hashes[events[i].Seq] = events[i].Hash
	}
	return v.problems, v.warnings
}

var protocolTypes = RoleGuard()

// payload is the members of an event's payload that the invariants read.
type payload struct {
	From         string          `json:"from"`
	To           string          `json:"to"`
	Reason       string          `json:"reason"`
	ProposalID   string          `json:"proposal_id"`
	Status       string          `json:"status"`
	IntentID     string          `json:"intent_id"`
	ExecutionID  string          `json:"execution_id"`
	ExecutionIDs []string        `json:"execution_ids"`
	Hashes       []string        `json:"artifact_hashes"`
	ResultStatus string          `json:"result_status"`
	ArtifactHash string          `json:"artifact_hash"`
	Content      json.RawMessage `json:"content"`
	ClaimID      string          `json:"claim_id"`
	EvidenceRefs []string        `json:"evidence_refs"`
	PreFinal     string          `json:"pre_final_status"`
	DebateID     string          `json:"debate_id"`
	CheckedSeq   int64           `json:"checked_through_seq"`
	HeadHash     string          `json:"head_hash"`
	Transition   *payload        `json:"transition"`
	Claims       []payload       `json:"claims"`
}

func (v *invariants) event(e *debate.Event) {
	if e.Type == orchestrator.EventDebateAborted {
		v.facts.Abort = true
		v.transition(&debate.Event{Seq: e.Seq, Actor: orchestrator.ActorOperator}, v.life, StateAborted)
		return
	}
	if _, ours := protocolTypes[e.Type]; !ours {
		return // the engine's bookkeeping
	}
	var m payload
	if err := json.Unmarshal(e.Payload, &m); err != nil {
		v.add(e.Seq, ledger.RuleMalformed, "payload of %s: %v", e.Type, err)
		return
	}
	switch e.Type {
	case EventSessionInitialized:
		v.facts.Initialized = true
	case EventTransition:
		v.transition(e, m.From, m.To)
	case EventTransitionRefused:
		v.warnings = append(v.warnings, fmt.Sprintf("seq %d: transition %s → %s refused: %s", e.Seq, m.From, m.To, m.Reason))
	case EventProposalCreated:
		v.proposals[m.ProposalID] = ""
		v.facts.Proposals++
	case EventProposalReviewed:
		if _, ok := v.proposals[m.ProposalID]; !ok {
			v.add(e.Seq, RuleApproval, "review of proposal %q, which no earlier proposal_created names", m.ProposalID)
		}
		v.proposals[m.ProposalID] = m.Status
		switch m.Status {
		case ReviewApproved, ReviewConditional:
			v.facts.Approved++
		case ReviewRejected:
			v.warnings = append(v.warnings, fmt.Sprintf("seq %d: proposal %s rejected: %s", e.Seq, m.ProposalID, m.Reason))
		}
	case EventIntentSigned:
		if st := v.proposals[m.ProposalID]; st != ReviewApproved && st != ReviewConditional {
			v.add(e.Seq, RuleApproval, "intent %q for proposal %q, which is not approved (%q)", m.IntentID, m.ProposalID, st)
		}
		v.intents[m.IntentID] = m.ProposalID
		v.open[m.IntentID] = true
	case EventIntentApproved:
		if _, ok := v.intents[m.IntentID]; !ok {
			v.add(e.Seq, RuleApproval, "approval of intent %q, which is not signed earlier", m.IntentID)
		}
		v.approved[m.IntentID] = true
	case EventIntentBlocked:
		delete(v.open, m.IntentID)
		v.warnings = append(v.warnings, fmt.Sprintf("seq %d: intent %s blocked: %s", e.Seq, m.IntentID, m.Reason))
	case EventExecutionStarted:
		if !v.approved[m.IntentID] {
			v.add(e.Seq, RuleApproval, "execution of intent %q without the critic's approval", m.IntentID)
		}
	case EventArtifact:
		h, err := contentHash(m.Content)
		switch {
		case err != nil || len(m.Content) == 0:
			v.add(e.Seq, RuleArtifact, "artifact without JSON content")
		case h != m.ArtifactHash:
			v.add(e.Seq, RuleArtifact, "artifact_hash %s, the content hashes to %s", m.ArtifactHash, h)
		default:
			v.artifacts[h] = true
		}
	case EventToolCall:
		switch {
		case m.ExecutionID == "":
			v.add(e.Seq, RuleToolAudit, "tool call audit without execution_id")
		case v.audited[m.ExecutionID] != "":
			v.add(e.Seq, RuleToolAudit, "execution %q has two tool call audits", m.ExecutionID)
		case m.ResultStatus == "":
			v.add(e.Seq, RuleToolAudit, "tool call audit of execution %q without result_status", m.ExecutionID)
		default:
			v.audited[m.ExecutionID] = m.ResultStatus
		}
	case EventExecutionCompleted, EventExecutionFailed:
		switch st := v.audited[m.ExecutionID]; {
		case st == "":
			v.add(e.Seq, RuleToolAudit, "execution %q has no agent.tool_call audit before it", m.ExecutionID)
		case e.Type == EventExecutionCompleted && st != tools.StatusSuccess:
			v.add(e.Seq, RuleToolAudit, "execution %q completed, its tool call audit says %s", m.ExecutionID, st)
		case e.Type == EventExecutionFailed && st == tools.StatusSuccess:
			v.add(e.Seq, RuleToolAudit, "execution %q failed, its tool call audit says SUCCESS", m.ExecutionID)
		}
		v.stored(e.Seq, RuleArtifact, fmt.Sprintf("execution %q", m.ExecutionID), "stores no input or output artifact", m.Hashes)
		delete(v.open, m.IntentID)
		if e.Type == EventExecutionCompleted {
			v.completed[m.ExecutionID] = true
		} else {
			v.warnings = append(v.warnings, fmt.Sprintf("seq %d: execution %s failed", e.Seq, m.ExecutionID))
		}
	case EventClaimIssued:
		v.claim(e, &m)
	case EventClaimChallenged:
		v.warnings = append(v.warnings, fmt.Sprintf("seq %d: claim %s challenged: %s", e.Seq, m.ClaimID, m.Reason))
	case EventVerificationStarted:
		if m.PreFinal == VerificationFail {
			v.facts.Integrity = true
		}
	case EventFinalStatement:
		for id := range v.claims {
			if !slices.ContainsFunc(m.Claims, func(c payload) bool { return c.ClaimID == id }) {
				v.add(e.Seq, RuleFinalBundle, "the final statement leaves out claim %q", id)
			}
		}
	case EventVerificationComplete:
		v.verification(e, &m)
	}
}

func (v *invariants) claim(e *debate.Event, m *payload) {
	switch {
	case m.ClaimID == "":
		v.add(e.Seq, RuleEvidence, "claim without claim_id")
	case v.claims[m.ClaimID]:
		v.add(e.Seq, RuleEvidence, "claim %q is issued twice", m.ClaimID)
	}
	v.claims[m.ClaimID] = true
	v.facts.Claims++
	v.stored(e.Seq, RuleEvidence, fmt.Sprintf("claim %q", m.ClaimID), "references no artifact", m.EvidenceRefs)
	for _, x := range m.ExecutionIDs {
		if !v.completed[x] {
			v.add(e.Seq, RuleEvidence, "claim %q rests on execution %q, which has not completed", m.ClaimID, x)
		}
	}
}

func (v *invariants) verification(e *debate.Event, m *payload) {
	switch {
	case m.DebateID != e.DebateID:
		v.add(e.Seq, RuleTraceRef, "the report names debate %q", m.DebateID)
	case m.CheckedSeq <= 0 || m.CheckedSeq >= e.Seq:
		v.add(e.Seq, RuleTraceRef, "the report checked through seq %d, not an earlier event", m.CheckedSeq)
	case v.hashes[m.CheckedSeq] != m.HeadHash:
		v.add(e.Seq, RuleTraceRef, "the report names head %s at seq %d, the trace has %s", m.HeadHash, m.CheckedSeq, v.hashes[m.CheckedSeq])
	}
	if m.Transition == nil {
		v.add(e.Seq, RuleLifecycle, "the verification run records no transition")
		return
	}
	v.facts.Verification = m.Status
	v.facts.Integrity = v.facts.Integrity || m.Status == VerificationFail
	v.transition(e, m.Transition.From, m.Transition.To)
}

func (v *invariants) transition(e *debate.Event, from, to string) {
	if from != v.life {
		v.add(e.Seq, RuleLifecycle, "transition from %s, the session is %s", from, v.life)
	}
	f := v.facts
	f.Settled = len(v.open) == 0
	if err := Request(from, to, e.Actor, f); err != nil {
		v.add(e.Seq, RuleLifecycle, "%v", err)
	}
	v.life = to
}

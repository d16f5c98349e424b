package ledger

// Event types that the built-in ordering rules know (seed 003). A protocol
// that never emits them is not affected by those rules.
const (
	TypeProposalCreated          = "proposal_created"
	TypeToolIntentSigned         = "tool_intent_signed"
	TypeToolIntentBlocked        = "tool_intent_blocked"
	TypeToolExecutionStarted     = "tool_execution_started"
	TypeToolExecutionCompleted   = "tool_execution_completed"
	TypeToolExecutionFailed      = "tool_execution_failed"
	TypeClaimIssued              = "claim_issued"
	TypeClaimChallenged          = "claim_challenged"
	TypeFinalStatementSigned     = "final_statement_signed"
	TypeVerificationRunStarted   = "verification_run_started"
	TypeVerificationRunCompleted = "verification_run_completed"
)

// Rule names a check in a Problem. The values are stable: reports and tests
// compare them.
const (
	// RuleMalformed: a field no sealed event can carry (empty actor, bad
	// prev_hash format, zero time, a payload that is not a JSON object, …).
	RuleMalformed = "malformed"
	// RuleSeq: seq does not continue the previous event's (gap, duplicate,
	// reordering) or the first event is not seq 1.
	RuleSeq = "seq"
	// RuleScope: the event belongs to another debate or tenant.
	RuleScope = "scope"
	// RulePrevHash: prev_hash is not the previous event's hash (GenesisHash
	// for the first event).
	RulePrevHash = "prev_hash"
	// RuleHash: hash is not the hash of the event's fields.
	RuleHash = "hash"
	// RuleKeyID: the key id is unknown, or its key does not match the id.
	RuleKeyID = "key_id"
	// RuleSigner: the key belongs to another tenant or actor than the event.
	RuleSigner = "signer"
	// RuleSignature: the signature is not canonical standard base64 of 64
	// bytes, or not a valid Ed25519 signature by the key of the recomputed
	// hash (of the stored hash, when that differs: see Verify).
	RuleSignature = "signature"
	// RuleRoleGuard: the actor may not emit this event type (Policy.RoleGuard).
	RuleRoleGuard = "role_guard"
	// RuleToolIntent: a tool intent or execution event breaks the intent
	// workflow (execution without an earlier signed, unblocked intent, …).
	RuleToolIntent = "tool_intent"
	// RuleClaimEvidence: a claim names an execution that has not finished
	// earlier, or names fewer than Policy.MinClaimExecutions.
	RuleClaimEvidence = "claim_evidence"
	// RuleClaimChallenge: a challenge names no earlier claim.
	RuleClaimChallenge = "claim_challenge"
	// RuleFinalStatement: a second final statement, a role event after the
	// final statement, or a completed verification run not preceded by it.
	RuleFinalStatement = "final_statement"
	// RuleTerminal: an event other than bookkeeping follows a terminal event.
	RuleTerminal = "terminal"
	// RuleTruncated: more problems were found than a report keeps.
	RuleTruncated = "truncated"
)

// Policy is what a protocol adds to the integrity checks. Its zero value
// applies only the built-in ordering rules, which every protocol is subject
// to whenever their event types appear. Policy is serialisable: an export
// bundles it so that a ledger verifies offline under the rules it ran with.
//
// The built-in rules read these payload members (strings unless said):
//
//   - tool_intent_signed {"intent_id"}: required and unique.
//   - tool_intent_blocked {"intent_id"}: names an earlier signed intent,
//     which may no longer be executed (a retry signs a new intent).
//   - tool_execution_started {"intent_id", "execution_id"}: the intent is
//     signed earlier, not blocked and not yet finished; the execution id is
//     required and not started before.
//   - tool_execution_completed and tool_execution_failed {"intent_id",
//     "execution_id"}: the intent is signed earlier, not blocked, and
//     finishes once; the execution id is required, finishes once, and if it
//     was started, it was started for the same intent.
//   - claim_issued {"claim_id" optional, "execution_ids": [string]}: every
//     execution id names an execution completed or failed earlier, and there
//     are at least MinClaimExecutions of them. Other evidence members (such
//     as "evidence_refs" to the registry) are not the ledger's to check.
//   - claim_challenged {"claim_id"}: names an earlier claim_issued.
//   - final_statement_signed: at most one; after it only Bookkeeping events
//     and verification_run_started/completed may follow; every
//     verification_run_completed follows a final statement with nothing in
//     between but those.
type Policy struct {
	// RoleGuard maps an event type to the actors allowed to emit it. A type
	// not in the map may be emitted by any actor unless StrictRoles is set.
	RoleGuard map[string][]string `json:"role_guard,omitempty"`
	// StrictRoles refuses every type that RoleGuard does not list.
	StrictRoles bool `json:"strict_roles,omitempty"`
	// Bookkeeping lists the engine's own event types (checkpoints, status
	// changes) that may appear after a final statement or a terminal event.
	Bookkeeping []string `json:"bookkeeping,omitempty"`
	// Terminal lists event types after which only Bookkeeping types may
	// follow (the debate's end).
	Terminal []string `json:"terminal,omitempty"`
	// MinClaimExecutions is the least number of execution_ids a
	// claim_issued must name (seed 003's evidence guard); 0 by default.
	MinClaimExecutions int `json:"min_claim_executions,omitempty"`
}

// compiledPolicy is a Policy with its lists turned into sets.
type compiledPolicy struct {
	roles       map[string]map[string]bool
	strict      bool
	bookkeeping map[string]bool
	terminal    map[string]bool
	minClaim    int
}

func compilePolicy(p Policy) compiledPolicy {
	c := compiledPolicy{
		roles:       make(map[string]map[string]bool, len(p.RoleGuard)),
		strict:      p.StrictRoles,
		bookkeeping: setOf(p.Bookkeeping),
		terminal:    setOf(p.Terminal),
		minClaim:    p.MinClaimExecutions,
	}
	for t, actors := range p.RoleGuard {
		c.roles[t] = setOf(actors)
	}
	return c
}

func setOf(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

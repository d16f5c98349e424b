package debate

import "encoding/json"

// Agent roles of the IDIS debate (seed 000 §2.2).
const (
	RoleAdvocate            = "advocate"
	RoleSanadBreaker        = "sanad_breaker"
	RoleContradictionFinder = "contradiction_finder"
	RoleRiskOfficer         = "risk_officer"
	RoleArbiter             = "arbiter"
)

// IDISRoles lists the five roles in the order they first speak.
var IDISRoles = []string{RoleAdvocate, RoleSanadBreaker, RoleContradictionFinder, RoleRiskOfficer, RoleArbiter}

// Recommendations an advocate (or any agent taking a position) may make.
const (
	RecommendInvest      = "INVEST"
	RecommendConditional = "INVEST_WITH_CONDITIONS"
	RecommendPass        = "PASS"
)

// AgentOutput is one agent turn (seed 000 §3.2). Its JSON form is the wire
// format of model-backed agents and of ValidateOutput; the fields after
// MuhasabahRecord are typed parts of seed 000's structured_content.
type AgentOutput struct {
	AgentID           string          `json:"agent_id"`
	Role              string          `json:"role"`
	RoundNumber       int             `json:"round_number"`
	Content           string          `json:"content"`
	StructuredContent json.RawMessage `json:"structured_content,omitempty"`
	// ClaimRefs and CalcRefs are the registry ids the content rests on.
	ClaimRefs []string   `json:"claim_refs"`
	CalcRefs  []string   `json:"calc_refs,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Muhasabah Muhasabah  `json:"muhasabah_record"`
	Position  *Position  `json:"position,omitempty"`
	// Challenges are attacks on claims (sanad breaker, observers).
	Challenges []Challenge `json:"challenges,omitempty"`
	// Rulings are the arbiter's decisions on the round's challenges.
	Rulings []Ruling `json:"rulings,omitempty"`
	// EvidenceRequests ask the evidence_call_retrieval node for more.
	EvidenceRequests []EvidenceRequest `json:"evidence_requests,omitempty"`
	// OpenQuestions the agent wants answered before a decision.
	OpenQuestions []string `json:"open_questions,omitempty"`
	Timestamp     string   `json:"timestamp,omitempty"`
	// Model describes the model calls behind a model-backed output; the
	// backend sets it, never the model.
	Model *ModelCall `json:"model,omitempty"`
}

// ModelCall records which prompt and model produced an output and what it
// cost.
type ModelCall struct {
	Model            string `json:"model"`
	PromptID         string `json:"prompt_id"`
	PromptSHA256     string `json:"prompt_sha256"`
	Calls            int    `json:"calls"`
	CachedCalls      int    `json:"cached_calls,omitempty"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
}

// Muhasabah is the self-accounting record every output carries (seed 000
// §3.3).
type Muhasabah struct {
	SupportedClaimIDs       []string             `json:"supported_claim_ids"`
	SupportedCalcIDs        []string             `json:"supported_calc_ids,omitempty"`
	EvidenceSummary         string               `json:"evidence_summary,omitempty"`
	CounterHypothesis       string               `json:"counter_hypothesis,omitempty"`
	FalsifiabilityTests     []FalsifiabilityTest `json:"falsifiability_tests,omitempty"`
	Uncertainties           []Uncertainty        `json:"uncertainties,omitempty"`
	FailureModes            []string             `json:"failure_modes,omitempty"`
	Confidence              float64              `json:"confidence"`
	ConfidenceJustification string               `json:"confidence_justification,omitempty"`
}

// FalsifiabilityTest says what evidence would prove the output wrong.
type FalsifiabilityTest struct {
	TestDescription  string `json:"test_description"`
	RequiredEvidence string `json:"required_evidence"`
	PassFailRule     string `json:"pass_fail_rule"`
}

// Uncertainty is an acknowledged weakness.
type Uncertainty struct {
	Uncertainty string `json:"uncertainty"`
	Impact      string `json:"impact"`
	Mitigation  string `json:"mitigation"`
}

// ToolCall is a tool an agent asks the server to run. The server checks
// the permission and quota of every call, whatever the agent asks.
type ToolCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// ToolResult is what a tool call returned to the agent.
type ToolResult struct {
	// Status is SUCCESS, DENIED (not permitted or over quota), INVALID
	// (bad arguments) or ERROR.
	Status string
	Output json.RawMessage
	Error  string
}

// Position is an agent's stance: a recommendation and its confidence.
type Position struct {
	Recommendation string  `json:"recommendation"`
	Confidence     float64 `json:"confidence"`
}

// Challenge attacks a claim's evidence (seed 000 §6.3: it must name
// claims, a defect type and evidence).
type Challenge struct {
	ChallengeID  string   `json:"challenge_id"`
	ClaimRefs    []string `json:"claim_refs"`
	DefectType   string   `json:"defect_type"`
	Severity     string   `json:"severity,omitempty"`
	CureProtocol string   `json:"cure_protocol,omitempty"`
	EvidenceRefs []string `json:"evidence_refs"`
	Description  string   `json:"description"`
}

// Ruling is the arbiter's decision on one challenge.
type Ruling struct {
	ChallengeID string `json:"challenge_id"`
	// Upheld: the challenge stands; otherwise dismissed.
	Upheld    bool   `json:"upheld"`
	Frivolous bool   `json:"frivolous,omitempty"`
	Reason    string `json:"reason"`
}

// EvidenceRequest asks for more evidence on claims.
type EvidenceRequest struct {
	Query     string   `json:"query"`
	ClaimRefs []string `json:"claim_refs,omitempty"`
}

// Violation is one broken gate rule: a stable rule code (NO_FREE_FACTS,
// FALSIFIABILITY_MISSING, ...), the field it concerns and what is wrong.
type Violation struct {
	Rule   string `json:"rule"`
	Field  string `json:"field,omitempty"`
	Detail string `json:"detail"`
}

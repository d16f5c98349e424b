package stratmaster

import (
	"encoding/json"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/protocol"
)

// Schema names of the protocol's structured calls. The model answers one
// JSON object of the named schema; the rules backend (Rules) answers the
// same from the same DATA.
const (
	SchemaResearchPlan = "stratmaster_research_plan"
	SchemaHypotheses   = "stratmaster_hypotheses"
	SchemaChallenges   = "stratmaster_challenges"
	SchemaRebuttal     = "stratmaster_rebuttal"
	SchemaPlan         = "stratmaster_plan"
)

// catalogClaim is a claim of the deal as the researcher sees it.
type catalogClaim struct {
	ClaimID string            `json:"claim_id"`
	Key     string            `json:"key"`
	Class   debate.ClaimClass `json:"class"`
	Text    string            `json:"text"`
}

// gradedClaim is a claim with its grading (package sanad).
type gradedClaim struct {
	ClaimID       string                     `json:"claim_id"`
	Key           string                     `json:"key"`
	Text          string                     `json:"text"`
	Grade         debate.Grade               `json:"grade"`
	Verdict       debate.Verdict             `json:"verdict"`
	Corroboration debate.CorroborationStatus `json:"corroboration,omitempty"`
	Material      bool                       `json:"material,omitempty"`
}

// researchData is the researcher's DATA.
type researchData struct {
	Question   string         `json:"question"`
	Pass       int            `json:"pass"`
	DealID     string         `json:"deal_id"`
	Claims     []catalogClaim `json:"claims"`
	Known      []string       `json:"known_evidence_ids"`
	Directives Directives     `json:"directives"`
}

// searchSpec is one search_evidence call the researcher plans.
type searchSpec struct {
	Query    string             `json:"query"`
	MinGrade debate.SourceGrade `json:"min_grade,omitempty"`
	Limit    int                `json:"limit,omitempty"`
}

// researchPlan is the researcher's answer: the tool calls the server runs
// for it (search_evidence, then lookup_claim with its evidence).
type researchPlan struct {
	Searches  []searchSpec `json:"searches"`
	Lookups   []string     `json:"lookups"`
	Rationale string       `json:"rationale"`
}

// synthData is the synthesiser's DATA.
type synthData struct {
	Question   string        `json:"question"`
	Pass       int           `json:"pass"`
	Evidence   []Evidence    `json:"evidence"`
	Claims     []gradedClaim `json:"claims"`
	Directives Directives    `json:"directives"`
}

// draft is a hypothesis as the synthesiser proposes it; the protocol adds
// the id, provenance and fingerprint.
type draft struct {
	Statement   string   `json:"statement"`
	Stance      string   `json:"stance"`
	ClaimIDs    []string `json:"claim_ids"`
	EvidenceIDs []string `json:"evidence_ids"`
	Confidence  float64  `json:"confidence"`
	Rationale   string   `json:"rationale"`
}

// synthAnswer is the synthesiser's answer.
type synthAnswer struct {
	Hypotheses []draft    `json:"hypotheses"`
	SetAside   []SetAside `json:"set_aside"`
}

// challengeData is the adversary's DATA.
type challengeData struct {
	Question   string        `json:"question"`
	Pass       int           `json:"pass"`
	Reasons    []string      `json:"debate_reasons"`
	Hypotheses []Hypothesis  `json:"hypotheses"`
	Evidence   []Evidence    `json:"evidence"`
	Claims     []gradedClaim `json:"claims"`
}

// challengeAnswer is the adversary's answer.
type challengeAnswer struct {
	Challenges []Challenge `json:"challenges"`
}

// rebuttalData is the strategist's DATA in the debate.
type rebuttalData struct {
	Question   string       `json:"question"`
	Pass       int          `json:"pass"`
	Hypotheses []Hypothesis `json:"hypotheses"`
	Challenges []Challenge  `json:"challenges"`
	Evidence   []Evidence   `json:"evidence"`
}

// rebuttalAnswer is the strategist's answer to the challenges.
type rebuttalAnswer struct {
	Responses []Response `json:"responses"`
}

// planData is the strategist's DATA for the plan.
type planData struct {
	Question   string       `json:"question"`
	Pass       int          `json:"pass"`
	Hypotheses []Hypothesis `json:"hypotheses"`
	DebateLog  []DebateTurn `json:"debate_log"`
	Directives Directives   `json:"directives"`
}

// prompts are the protocol's structured calls: the role that answers each
// schema, its system prompt (role-level constants only; the material goes
// in DATA), its answer's JSON Schema and its rules answer.
var prompts = protocol.Prompts{
	SchemaResearchPlan: {Role: RoleResearcher, PromptID: SchemaResearchPlan + ".v1", SchemaName: SchemaResearchPlan, Rules: protocol.Rules(ruleResearch),
		System: "You are the Researcher of a strategy task. From the question, the deal's claim catalogue and the critic's directives in DATA, plan the evidence searches (search_evidence queries) and the claims whose evidence to look up (lookup_claim). The server runs the calls; plan only what DATA supports. Follow every directive.",
		Schema: json.RawMessage(`{"type":"object","required":["searches","lookups","rationale"],"additionalProperties":false,"properties":{
"searches":{"type":"array","maxItems":10,"items":{"type":"object","required":["query"],"additionalProperties":false,"properties":{"query":{"type":"string"},"min_grade":{"type":"string","enum":["","A","B","C","D"]},"limit":{"type":"integer","minimum":1,"maximum":50}}}},
"lookups":{"type":"array","maxItems":20,"items":{"type":"string"}},
"rationale":{"type":"string"}}}`),
	},
	SchemaHypotheses: {Role: RoleSynthesiser, PromptID: SchemaHypotheses + ".v1", SchemaName: SchemaHypotheses, Rules: protocol.Rules(ruleSynthesise),
		System: "You are the Synthesiser of a strategy task. From the collected evidence and graded claims in DATA, state hypotheses that answer the question. Each hypothesis cites the evidence ids and claim ids it rests on, all from DATA, and a confidence in [0, 1] no higher than its evidence grades allow. Add counter-hypotheses where evidence is weak or conflicting. Set aside, with a reason, any hypothesis the directives do not allow.",
		Schema: json.RawMessage(`{"type":"object","required":["hypotheses","set_aside"],"additionalProperties":false,"properties":{
"hypotheses":{"type":"array","maxItems":30,"items":{"type":"object","required":["statement","stance","claim_ids","evidence_ids","confidence"],"additionalProperties":false,"properties":{"statement":{"type":"string"},"stance":{"type":"string","enum":["supports","counter"]},"claim_ids":{"type":"array","items":{"type":"string"}},"evidence_ids":{"type":"array","items":{"type":"string"}},"confidence":{"type":"number","minimum":0,"maximum":1},"rationale":{"type":"string"}}}},
"set_aside":{"type":"array","items":{"type":"object","required":["statement","reason"],"additionalProperties":false,"properties":{"statement":{"type":"string"},"claim_ids":{"type":"array","items":{"type":"string"}},"reason":{"type":"string"}}}}}}`),
	},
	SchemaChallenges: {Role: RoleAdversary, PromptID: SchemaChallenges + ".v1", SchemaName: SchemaChallenges, Rules: protocol.Rules(ruleChallenge),
		System: "You are the Adversary in a strategy debate. Challenge the hypotheses in DATA whose evidence is weak, thin or conflicting, naming the hypothesis id and the evidence ids your argument rests on. Challenge only what DATA shows.",
		Schema: json.RawMessage(`{"type":"object","required":["challenges"],"additionalProperties":false,"properties":{
"challenges":{"type":"array","maxItems":30,"items":{"type":"object","required":["hypothesis_id","argument"],"additionalProperties":false,"properties":{"hypothesis_id":{"type":"string"},"argument":{"type":"string"},"evidence_ids":{"type":"array","items":{"type":"string"}}}}}}}`),
	},
	SchemaRebuttal: {Role: RoleStrategist, PromptID: SchemaRebuttal + ".v1", SchemaName: SchemaRebuttal, Rules: protocol.Rules(ruleRebut),
		System: "You are the Strategist in a strategy debate. Answer each challenge in DATA once: defend the hypothesis when its evidence carries it, concede otherwise, with your argument.",
		Schema: json.RawMessage(`{"type":"object","required":["responses"],"additionalProperties":false,"properties":{
"responses":{"type":"array","maxItems":30,"items":{"type":"object","required":["hypothesis_id","decision","argument"],"additionalProperties":false,"properties":{"hypothesis_id":{"type":"string"},"decision":{"type":"string","enum":["defend","concede"]},"argument":{"type":"string"}}}}}}`),
	},
	SchemaPlan: {Role: RoleStrategist, PromptID: SchemaPlan + ".v1", SchemaName: SchemaPlan, Rules: protocol.Rules(rulePlan),
		System: "You are the Strategist of a strategy task. From the hypotheses in DATA, draft a plan: a summary, recommendations and risks, each citing the hypothesis ids it rests on. Do not use any term the directives tell you to avoid.",
		Schema: json.RawMessage(`{"type":"object","required":["summary","recommendations","risks"],"additionalProperties":false,"properties":{
"summary":{"type":"string"},
"recommendations":{"type":"array","maxItems":30,"items":{"type":"object","required":["text","hypothesis_ids"],"additionalProperties":false,"properties":{"text":{"type":"string"},"hypothesis_ids":{"type":"array","items":{"type":"string"}},"priority":{"type":"string","enum":["high","medium","low"]}}}},
"risks":{"type":"array","maxItems":30,"items":{"type":"object","required":["text","hypothesis_ids"],"additionalProperties":false,"properties":{"text":{"type":"string"},"hypothesis_ids":{"type":"array","items":{"type":"string"}},"priority":{"type":"string","enum":["high","medium","low"]}}}}}}`),
	},
}

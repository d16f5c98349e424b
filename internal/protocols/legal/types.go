package legal

// Agents of the debate as the seed names them in its JSON (§3), and the
// role names that sign their events.
const (
	AgentNLA = "NLA"
	AgentALA = "ALA"

	RoleNLA        = "nla"
	RoleALA        = "ala"
	RoleSupervisor = "supervisor"
)

// Domains of a context passage.
const (
	DomainNational        = "national"
	DomainAdatMinangkabau = "adat_minangkabau"
	DomainAdatBali        = "adat_bali"
	DomainAdatJawa        = "adat_jawa"
	DomainRuleEngine      = "rule_engine"
)

// Issue types of a critique (seed §3).
const (
	IssueEvidenceGap    = "evidence_gap"
	IssueLogicGap       = "logic_gap"
	IssueConflict       = "conflict"
	IssueDomainMismatch = "domain_mismatch"
	IssueOverclaim      = "overclaim"
)

// Severities of a critique (seed §3).
const (
	SeverityCritical = "CRITICAL"
	SeverityMajor    = "MAJOR"
	SeverityMinor    = "MINOR"
)

// Passage is one retrieved context item: a vector hit, a knowledge-graph
// fact or a rule engine result.
type Passage struct {
	// SourceID is unique in the context; claims cite it as evidence.
	SourceID string `json:"source_id"`
	// Domain is one of national, adat_minangkabau, adat_bali, adat_jawa,
	// rule_engine.
	Domain string `json:"domain"`
	Text   string `json:"text"`
	// Triple, optional, is the passage's knowledge-graph fact; claims built
	// from it carry it, and conflicts are found between triples.
	Triple *Triple `json:"triple,omitempty"`
}

// Triple is a knowledge-graph fact: what a norm says (Object) about a
// Predicate of a Subject (e.g. "ancestral_land" / "heirs" /
// "matrilineal_kin").
type Triple struct {
	Subject   string `json:"subject"`
	Predicate string `json:"predicate"`
	Object    string `json:"object"`
}

// Output is an agent's answer or revision in one round (seed §3).
type Output struct {
	Round         int      `json:"round"`
	Agent         string   `json:"agent"`
	Answer        string   `json:"answer"`
	Claims        []Claim  `json:"claims"`
	Uncertainties []string `json:"uncertainties"`
	OpenQuestions []string `json:"open_questions"`
}

// Claim is one claim of an Output. Risk, Triple and Justification extend
// the seed's schema (docs/decisions.md): a claim without evidence must set
// Risk (seed §1), Triple states the claim as a fact conflicts are computed
// on, and Justification says why the claim prevails over a conflicting
// norm.
type Claim struct {
	ID            string   `json:"id"`
	Statement     string   `json:"statement"`
	Evidence      []string `json:"evidence"`
	Confidence    float64  `json:"confidence"`
	Assumptions   []string `json:"assumptions"`
	Risk          bool     `json:"risk,omitempty"`
	Triple        *Triple  `json:"triple,omitempty"`
	Justification string   `json:"justification,omitempty"`
}

// CritiqueSet is what one agent says of the other's output in one round
// (seed §3).
type CritiqueSet struct {
	Round     int        `json:"round"`
	Agent     string     `json:"agent"`
	Target    string     `json:"target"`
	Critiques []Critique `json:"critiques"`
}

// Critique is one critique of a claim.
type Critique struct {
	ID            string `json:"id"`
	TargetClaimID string `json:"target_claim_id"`
	IssueType     string `json:"issue_type"`
	Description   string `json:"description"`
	Severity      string `json:"severity"`
	SuggestedFix  string `json:"suggested_fix"`
}

// Synthesis is the supervisor's answer, written from the final revisions
// and the debate summary only (seed §9).
type Synthesis struct {
	Answer string `json:"answer"`
	// AgreedClaims and DisputedClaims reference final claims as
	// "NLA.C1" / "ALA.C2".
	AgreedClaims   []string `json:"agreed_claims"`
	DisputedClaims []string `json:"disputed_claims"`
	// NeedsHumanReview may raise the summary's flag, never clear it.
	NeedsHumanReview bool   `json:"needs_human_review"`
	Rationale        string `json:"rationale"`
}

func roleOf(agent string) string {
	if agent == AgentNLA {
		return RoleNLA
	}
	return RoleALA
}

// other returns the agent an agent debates against.
func other(agent string) string {
	if agent == AgentNLA {
		return AgentALA
	}
	return AgentNLA
}

// remit reports whether a passage's domain is an agent's to argue from
// (seed §2: NLA national law; ALA adat norms and the rule engine).
func remit(agent, domain string) bool {
	if agent == AgentNLA {
		return domain == DomainNational
	}
	return domain != DomainNational
}

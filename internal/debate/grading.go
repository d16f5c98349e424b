package debate

import (
	"strings"
	"time"
)

// Outputs of sanad grading (SANAD.md). They are never imported: a deal's
// grades, verdicts and defects are computed from its registry, so they are
// reproducible from the inputs alone.

// Grade is the trust grade of a claim or a calc, A (best) to D (unusable). It
// shares the values of SourceGrade (GradeA … GradeD): a claim's grade starts
// from its primary source's grade and moves from there.
type Grade = SourceGrade

// GradeRank orders grades: A is 0, B 1, C 2, D 3. Any other value ranks as
// D, so an unknown grade is never trusted.
func GradeRank(g Grade) int {
	switch g {
	case GradeA:
		return 0
	case GradeB:
		return 1
	case GradeC:
		return 2
	}
	return 3
}

// GradeOfRank is the inverse of GradeRank; ranks outside 0..3 are clamped
// (below 0 gives A, above 3 gives D).
func GradeOfRank(r int) Grade {
	switch {
	case r <= 0:
		return GradeA
	case r == 1:
		return GradeB
	case r == 2:
		return GradeC
	}
	return GradeD
}

// DefectType is a kind of defect in a claim's evidence chain (SANAD.md,
// seed 000 §4.4 flag_defect).
type DefectType string

// Defect types. The first six are detected by the grader; the others are in
// the taxonomy for agents (flag_defect) and future detectors.
const (
	DefectInconsistency     DefectType = "INCONSISTENCY"
	DefectUnitMismatch      DefectType = "UNIT_MISMATCH"
	DefectTimeWindow        DefectType = "TIME_WINDOW_MISMATCH"
	DefectStaleness         DefectType = "STALENESS"
	DefectMissingLink       DefectType = "MISSING_LINK"
	DefectBrokenChain       DefectType = "BROKEN_CHAIN"
	DefectUnknownSource     DefectType = "UNKNOWN_SOURCE"
	DefectConcealment       DefectType = "CONCEALMENT"
	DefectAnomalyVsStronger DefectType = "ANOMALY_VS_STRONGER_SOURCES"
	DefectChronoImpossible  DefectType = "CHRONO_IMPOSSIBLE"
	DefectChainGrafting     DefectType = "CHAIN_GRAFTING"
	DefectCircularity       DefectType = "CIRCULARITY"
	DefectScopeDrift        DefectType = "SCOPE_DRIFT"
	DefectImplausibility    DefectType = "IMPLAUSIBILITY"
)

// DefectTypes lists every defect type in declared order.
var DefectTypes = []DefectType{
	DefectInconsistency, DefectUnitMismatch, DefectTimeWindow, DefectStaleness, DefectMissingLink,
	DefectBrokenChain, DefectUnknownSource, DefectConcealment, DefectAnomalyVsStronger,
	DefectChronoImpossible, DefectChainGrafting, DefectCircularity, DefectScopeDrift, DefectImplausibility,
}

// Severity says what a defect does to a grade: FATAL makes it D, each MAJOR
// lowers it one step, MINOR changes nothing.
type Severity string

// Severities, worst first.
const (
	SeverityFatal Severity = "FATAL"
	SeverityMajor Severity = "MAJOR"
	SeverityMinor Severity = "MINOR"
)

// Severities lists every severity, worst first.
var Severities = []Severity{SeverityFatal, SeverityMajor, SeverityMinor}

// CureProtocol is the action that can cure a defect.
type CureProtocol string

// Cure protocols.
const (
	CureRequestSource    CureProtocol = "REQUEST_SOURCE"
	CureRequireReaudit   CureProtocol = "REQUIRE_REAUDIT"
	CureHumanArbitration CureProtocol = "HUMAN_ARBITRATION"
	CureReconstructChain CureProtocol = "RECONSTRUCT_CHAIN"
	CureDiscardClaim     CureProtocol = "DISCARD_CLAIM"
)

// CureProtocols lists every cure protocol in declared order.
var CureProtocols = []CureProtocol{CureRequestSource, CureRequireReaudit, CureHumanArbitration, CureReconstructChain, CureDiscardClaim}

// DefaultSeverity is the severity SANAD.md gives the defect type. The
// grader's six detected types have a fixed severity; for the types agents
// flag it is the usual one, which a flag may override.
func (t DefectType) DefaultSeverity() Severity {
	switch t {
	case DefectBrokenChain, DefectChainGrafting, DefectCircularity, DefectChronoImpossible, DefectConcealment:
		return SeverityFatal
	case DefectScopeDrift:
		return SeverityMinor
	}
	return SeverityMajor
}

// DefaultCure is the cure protocol SANAD.md gives the defect type.
func (t DefectType) DefaultCure() CureProtocol {
	switch t {
	case DefectBrokenChain, DefectChainGrafting, DefectCircularity:
		return CureReconstructChain
	case DefectAnomalyVsStronger, DefectImplausibility:
		return CureHumanArbitration
	case DefectConcealment, DefectChronoImpossible:
		return CureRequireReaudit
	}
	return CureRequestSource
}

// DefectStatus is where a defect is in its life: OPEN, then CURED or WAIVED.
// Only OPEN defects count against a grade.
type DefectStatus string

// Defect statuses.
const (
	DefectOpen   DefectStatus = "OPEN"
	DefectCured  DefectStatus = "CURED"
	DefectWaived DefectStatus = "WAIVED"
)

// DefectOrigin says who found a defect.
type DefectOrigin string

// Defect origins.
const (
	// OriginDetected: found by the grader; its id is derived from deal,
	// claim and type, so a re-grade finds the same record.
	OriginDetected DefectOrigin = "DETECTED"
	// OriginFlagged: flagged by an agent or a person (flag_defect).
	OriginFlagged DefectOrigin = "FLAGGED"
)

// Defect is one flaw found in a claim's evidence chain.
type Defect struct {
	ID           string // detected: derived from the deal, claim and type
	DealID       string
	Origin       DefectOrigin
	ClaimID      string
	ClaimKey     string
	Type         DefectType
	Severity     Severity
	CureProtocol CureProtocol
	Status       DefectStatus
	Description  string
	// EvidenceRefs are the ids (evidence items, calcs, chain nodes or
	// dangling references) that show the defect, sorted.
	EvidenceRefs []string
	// Actor flagged the defect ("sanad" for the grader) or, once CURED or
	// WAIVED, closed it; Reason says why it was closed.
	Actor     string
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Open reports whether the defect still counts against its claim.
func (d Defect) Open() bool { return d.Status == DefectOpen || d.Status == "" }

// Validate checks a defect as flagged or closed by an actor: a known type,
// severity, cure protocol and status, a claim, and an actor and a reason
// when the status is CURED or WAIVED. Returns a *ValidationError.
func (d Defect) Validate() error {
	var v Violations
	checkID(&v, "claim_id", d.ClaimID)
	checkEnum(&v, "defect_type", d.Type, DefectTypes, true)
	checkEnum(&v, "severity", d.Severity, Severities, true)
	checkEnum(&v, "cure_protocol", d.CureProtocol, CureProtocols, true)
	checkEnum(&v, "status", d.Status, []DefectStatus{DefectOpen, DefectCured, DefectWaived}, true)
	checkText(&v, "description", d.Description, MaxTextLen)
	checkRefs(&v, "evidence_refs", d.EvidenceRefs)
	if d.Status == DefectCured || d.Status == DefectWaived {
		if strings.TrimSpace(d.Actor) == "" {
			v.Add("actor", "is required when the status is %s", d.Status)
		}
		if strings.TrimSpace(d.Reason) == "" {
			v.Add("reason", "is required when the status is %s", d.Status)
		}
	}
	return v.Err()
}

// Verdict is what grading concludes about a claim's statement.
type Verdict string

// Verdicts. BLOCKED is the verdict of a claim No-Free-Facts keeps out of
// IC-bound output (MISSING_LINK), as the GDBS data writes it.
const (
	VerdictVerified     Verdict = "VERIFIED"
	VerdictContradicted Verdict = "CONTRADICTED"
	VerdictInflated     Verdict = "INFLATED"
	VerdictUnverified   Verdict = "UNVERIFIED"
	VerdictBlocked      Verdict = "BLOCKED"
)

// Action is what the debate must do about a claim.
type Action string

// Actions.
const (
	ActionNone                    Action = "NONE"
	ActionRedFlag                 Action = "RED_FLAG"
	ActionRequestData             Action = "REQUEST_DATA"
	ActionPartnerOverrideRequired Action = "PARTNER_OVERRIDE_REQUIRED"
	ActionRejectNoFreeFacts       Action = "REJECT_NO_FREE_FACTS"
)

// CorroborationStatus counts a claim's independent supporting sources:
// none, one (āḥād), two, or three and more (mutawātir).
type CorroborationStatus string

// Corroboration statuses.
const (
	CorroborationNone      CorroborationStatus = "NONE"
	CorroborationAhad1     CorroborationStatus = "AHAD_1"
	CorroborationAhad2     CorroborationStatus = "AHAD_2"
	CorroborationMutawatir CorroborationStatus = "MUTAWATIR"
)

// CorroborationOf maps an independent count to its status: 0 NONE, 1
// AHAD_1, 2 AHAD_2, 3 or more MUTAWATIR.
func CorroborationOf(independent int) CorroborationStatus {
	switch {
	case independent <= 0:
		return CorroborationNone
	case independent == 1:
		return CorroborationAhad1
	case independent == 2:
		return CorroborationAhad2
	}
	return CorroborationMutawatir
}

// Step is one step of an explanation: the rule applied and what it found,
// in the order the grader applied them.
type Step struct {
	Rule string // short rule name, e.g. "base_grade", "upgrade", "defect", "verdict"
	Text string // what the rule found, naming the evidence
}

// String renders the step as "rule: text".
func (s Step) String() string { return s.Rule + ": " + s.Text }

// ClaimGrade is the graded state of one claim.
type ClaimGrade struct {
	ClaimID  string
	ClaimKey string
	// Metric is the metric the grader read the claim as ("ARR",
	// "GROSS_MARGIN", ...), empty when it recognised none.
	Metric    string
	BaseGrade Grade // the primary source's grade, D without one
	Grade     Grade
	Verdict   Verdict
	Action    Action
	// Defects are the claim's OPEN defects, at most one per type.
	Defects          []Defect
	Corroboration    CorroborationStatus
	IndependentCount int
	// Blocked is true when No-Free-Facts keeps the claim out of IC-bound
	// output (a MISSING_LINK).
	Blocked bool
	Steps   []Step
}

// CalcResult is a recomputed calc and its grade.
type CalcResult struct {
	CalcID string
	Type   CalcType
	// Grade is the worst grade among the calc's inputs.
	Grade Grade
	// Output holds the recomputed values, rounded half-up, e.g.
	// {"gross_margin_percent": 68.5} or {"runway_months": 24.7}. It is
	// empty when the inputs do not allow the computation.
	Output map[string]float64
	Steps  []Step
}

// DealGrading is the grading of a whole deal.
type DealGrading struct {
	DealID string
	// Claims are ordered by claim key, then claim id.
	Claims []ClaimGrade
	// Defects are every OPEN defect of the deal, ordered by claim key, then
	// type.
	Defects     []Defect
	GradeDCount int
	// SanadCoverage is the share of claims whose primary span resolves,
	// rounded half-up to 3 decimals (0 for a deal without claims).
	SanadCoverage float64
	// BlockedClaimKeys are the keys of the blocked claims, sorted.
	BlockedClaimKeys []string
	// Calcs are ordered by calc id.
	Calcs []CalcResult
}

// Claim returns the grade of the claim with the given key, or false.
func (g *DealGrading) Claim(key string) (ClaimGrade, bool) {
	for _, c := range g.Claims {
		if c.ClaimKey == key {
			return c, true
		}
	}
	return ClaimGrade{}, false
}

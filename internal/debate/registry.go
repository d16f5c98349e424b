package debate

import (
	"time"
)

// Enumerations of the claim registry. Their values are spelled as the deal
// files of the benchmark layout spell them ("FINANCIAL", "PITCH_DECK"); the
// gRPC layer maps them to protobuf enums.
type (
	// ClaimClass is the kind of statement a claim makes.
	ClaimClass string
	// Materiality is how much a claim matters to the investment decision.
	Materiality string
	// SourceGrade is the reliability of a source itself, A (best) to D.
	SourceGrade string
	// SpanType says how a span is located in its document.
	SpanType string
	// ChainNodeType is the role of a node in a sanad's transmission chain.
	ChainNodeType string
	// ArtifactType is the kind of document a span comes from.
	ArtifactType string
	// CalcType names a deterministic calculation.
	CalcType string
)

// Known enumeration values.
const (
	ClaimClassFinancial   ClaimClass = "FINANCIAL"
	ClaimClassTraction    ClaimClass = "TRACTION"
	ClaimClassMarketSize  ClaimClass = "MARKET_SIZE"
	ClaimClassCompetition ClaimClass = "COMPETITION"
	ClaimClassTeam        ClaimClass = "TEAM"
	ClaimClassLegal       ClaimClass = "LEGAL"
	ClaimClassTechnical   ClaimClass = "TECHNICAL"
	ClaimClassOther       ClaimClass = "OTHER"

	MaterialityLow      Materiality = "LOW"
	MaterialityMedium   Materiality = "MEDIUM"
	MaterialityHigh     Materiality = "HIGH"
	MaterialityCritical Materiality = "CRITICAL"

	GradeA SourceGrade = "A"
	GradeB SourceGrade = "B"
	GradeC SourceGrade = "C"
	GradeD SourceGrade = "D"

	SpanTypePageText SpanType = "PAGE_TEXT"
	SpanTypeCell     SpanType = "CELL"
	SpanTypeTimecode SpanType = "TIMECODE"

	ChainNodeSource        ChainNodeType = "SOURCE"
	ChainNodeCorroboration ChainNodeType = "CORROBORATION"
	ChainNodeExtraction    ChainNodeType = "EXTRACTION"
	ChainNodeTransform     ChainNodeType = "TRANSFORM"

	ArtifactPitchDeck  ArtifactType = "PITCH_DECK"
	ArtifactFinModel   ArtifactType = "FIN_MODEL"
	ArtifactDataRoom   ArtifactType = "DATA_ROOM_FILE"
	ArtifactTranscript ArtifactType = "TRANSCRIPT"
	ArtifactOther      ArtifactType = "OTHER"

	CalcGrossMargin CalcType = "GROSS_MARGIN"
	CalcRunway      CalcType = "RUNWAY"
)

// Valid values of each enumeration, in their declared order.
var (
	ClaimClasses   = []ClaimClass{ClaimClassFinancial, ClaimClassTraction, ClaimClassMarketSize, ClaimClassCompetition, ClaimClassTeam, ClaimClassLegal, ClaimClassTechnical, ClaimClassOther}
	Materialities  = []Materiality{MaterialityLow, MaterialityMedium, MaterialityHigh, MaterialityCritical}
	SourceGrades   = []SourceGrade{GradeA, GradeB, GradeC, GradeD}
	SpanTypes      = []SpanType{SpanTypePageText, SpanTypeCell, SpanTypeTimecode}
	ChainNodeTypes = []ChainNodeType{ChainNodeSource, ChainNodeCorroboration, ChainNodeExtraction, ChainNodeTransform}
	ArtifactTypes  = []ArtifactType{ArtifactPitchDeck, ArtifactFinModel, ArtifactDataRoom, ArtifactTranscript, ArtifactOther}
	CalcTypes      = []CalcType{CalcGrossMargin, CalcRunway}
)

// Deal is one investment opportunity and the root of its claim registry.
type Deal struct {
	ID                   string
	ExternalRef          string
	CompanyName          string
	Stage                string
	Sector               string
	Status               string
	MaterialityThreshold Decimal
	CreatedAt            time.Time
	UpdatedAt            time.Time
}

// TimeWindow is the period a value speaks of. Dates are ISO 8601 (YYYY-MM-DD)
// or empty.
type TimeWindow struct {
	Label     string
	StartDate string
	EndDate   string
}

// ClaimValue is the figure a claim states.
type ClaimValue struct {
	Value      Decimal
	Unit       string // "USD", "USD/month", "percent", "months", ...
	Currency   string // empty when the value is not money
	AsOf       string // ISO 8601 date or empty
	TimeWindow *TimeWindow
}

// Claim is one statement about a deal that the debate argues over.
type Claim struct {
	ID            string
	DealID        string
	Key           string // short human key, e.g. "C1"
	Class         ClaimClass
	Text          string
	Predicate     string
	Value         *ClaimValue
	Materiality   Materiality
	ICBound       bool
	PrimarySpanID string // may be empty or name no span: the grader judges it
	CreatedBy     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Material reports whether the claim is in a material position: HIGH or
// CRITICAL materiality, or bound for the investment committee.
func (c Claim) Material() bool {
	return c.ICBound || c.Materiality == MaterialityHigh || c.Materiality == MaterialityCritical
}

// EvidenceItem is a piece of evidence quoting one span.
type EvidenceItem struct {
	ID                 string
	SourceSpanID       string
	SourceSystem       string
	UpstreamOriginID   string
	RetrievalTimestamp time.Time
	SourceGrade        SourceGrade
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Locator places a span in its document: a page and box, or a sheet and
// cell.
type Locator struct {
	Page  int32
	BBox  []float64
	Sheet string
	Cell  string
}

// Span is a text excerpt or a cell of a document.
type Span struct {
	ID          string
	DocumentID  string
	Type        SpanType
	Locator     Locator
	TextExcerpt string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ChainNode is one step of a transmission chain.
type ChainNode struct {
	ID        string
	Type      ChainNodeType
	InputRefs []string
	OutputRef string
}

// Sanad is the transmission chain through which a claim reached us.
type Sanad struct {
	ID                       string
	ClaimID                  string
	PrimaryEvidenceID        string
	CorroboratingEvidenceIDs []string
	ExtractionConfidence     float64
	DhabtScore               float64
	Chain                    []ChainNode
	CreatedAt                time.Time
	UpdatedAt                time.Time
}

// Document is an ingested artifact. A higher version of the same artifact
// type ingested later supersedes a lower one.
type Document struct {
	ID           string
	ArtifactType ArtifactType
	VersionLabel string
	IngestedAt   time.Time
}

// Calc is a deterministic calculation over claims and model cells. Its
// output is never imported: the grader recomputes it.
type Calc struct {
	ID            string
	CalcSanadID   string
	Type          CalcType
	InputClaimIDs []string
	Inputs        map[string]Decimal
	InputSpanIDs  map[string]string
	FormulaHash   string
	CodeVersion   string
	CreatedAt     time.Time
}

// DealBundle is a deal with its whole claim registry, as imported in one
// atomic call. Slices carry no meaning in their order.
type DealBundle struct {
	Deal      Deal
	Claims    []Claim
	Evidence  []EvidenceItem
	Spans     []Span
	Sanads    []Sanad
	Documents []Document
	Calcs     []Calc
	// Enrichment is the tenant-supplied enrichment data of the deal. The
	// tag keeps a bundle without enrichment hashing as before it existed.
	Enrichment []EnrichmentRecord `json:",omitempty"`
}

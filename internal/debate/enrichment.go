package debate

// Entity types an enrichment record describes (seed 000 §4.6).
const (
	EntityCompany = "COMPANY"
	EntityPerson  = "PERSON"
	EntityMarket  = "MARKET"
)

// EntityTypes are the valid EnrichmentRecord.EntityType values.
var EntityTypes = []string{EntityCompany, EntityPerson, EntityMarket}

// MaxEnrichment bounds the enrichment records of one imported deal.
const MaxEnrichment = 10000

// EnrichmentRecord is one tenant-supplied third-party data point about an
// entity of a deal (a company, a person or a market). The query_enrichment
// tool serves them as grade C/D claims that need corroboration. Value is
// kept as text: the supplier's figure, unparsed.
type EnrichmentRecord struct {
	ID          string
	EntityType  string // COMPANY, PERSON or MARKET
	EntityName  string
	DataPoint   string
	Value       string
	Unit        string
	Source      string
	AsOf        string // ISO 8601 date or empty
	SourceGrade SourceGrade
}

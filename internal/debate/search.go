package debate

// EvidenceHit is one evidence item a store's full-text search found.
type EvidenceHit struct {
	EvidenceID  string
	SpanID      string
	SourceGrade SourceGrade
	// Relevance is in [0, 1], higher is better.
	Relevance   float64
	TextExcerpt string
}

package debate

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// ContentHash returns the SHA-256 (hex) of the bundle's content in a
// canonical order: every list of resources is sorted by id first, so the
// order of the input arrays never changes the hash. It identifies an import
// for idempotency. It fails only on a bundle that Validate rejects (a
// non-finite number).
func (b *DealBundle) ContentHash() (string, error) {
	c := *b
	c.Claims = sortedBy(b.Claims, func(x Claim) string { return x.ID })
	c.Evidence = sortedBy(b.Evidence, func(x EvidenceItem) string { return x.ID })
	c.Spans = sortedBy(b.Spans, func(x Span) string { return x.ID })
	c.Sanads = sortedBy(b.Sanads, func(x Sanad) string { return x.ID })
	c.Documents = sortedBy(b.Documents, func(x Document) string { return x.ID })
	c.Calcs = sortedBy(b.Calcs, func(x Calc) string { return x.ID })
	// encoding/json sorts map keys, so the encoding is canonical.
	data, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

func sortedBy[T any](xs []T, key func(T) string) []T {
	out := slices.Clone(xs)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return out
}

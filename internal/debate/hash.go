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
	// Empty is nil, and omitempty drops it: no enrichment hashes as before.
	c.Enrichment = sortedBy(b.Enrichment, func(x EnrichmentRecord) string { return x.ID })
	// An empty list and no list mean the same; so do an empty map and none.
	for i := range c.Spans {
		c.Spans[i].Locator.BBox = nilIfEmpty(c.Spans[i].Locator.BBox)
	}
	for i := range c.Sanads {
		s := &c.Sanads[i]
		s.CorroboratingEvidenceIDs = nilIfEmpty(s.CorroboratingEvidenceIDs)
		s.Chain = slices.Clone(nilIfEmpty(s.Chain))
		for j := range s.Chain {
			s.Chain[j].InputRefs = nilIfEmpty(s.Chain[j].InputRefs)
		}
	}
	for i := range c.Calcs {
		x := &c.Calcs[i]
		x.InputClaimIDs = nilIfEmpty(x.InputClaimIDs)
		if len(x.Inputs) == 0 {
			x.Inputs = nil
		}
		if len(x.InputSpanIDs) == 0 {
			x.InputSpanIDs = nil
		}
	}
	// encoding/json sorts map keys, so the encoding is canonical.
	data, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

func sortedBy[T any](xs []T, key func(T) string) []T {
	if len(xs) == 0 {
		return nil
	}
	out := slices.Clone(xs)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return out
}

func nilIfEmpty[T any](xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

// IsKeyVersion reports whether v names a version of a signing or
// checkpoint key: 1 to 64 ASCII letters, digits, '.', '_' or '-'.
func IsKeyVersion(v string) bool {
	if v == "" || len(v) > 64 {
		return false
	}
	for i := range len(v) {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// IsHashHex reports whether s is a SHA-256 digest as the ledger writes
// it: 64 lowercase hexadecimal digits.
func IsHashHex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// IsUUIDText reports whether s is a UUID in its 8-4-4-4-12 hexadecimal
// form (either case), the only form the service writes.
func IsUUIDText(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range 36 {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
				return false
			}
		}
	}
	return true
}

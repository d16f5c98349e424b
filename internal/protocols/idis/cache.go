package idis

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/debated/debated/internal/debate"
)

// cacheLimit bounds each cache; past it the cache is emptied (a debate's
// next turn reloads what it needs).
const cacheLimit = 1024

// caches keep what turns reload most: a deal's graded registry (deals are
// immutable once imported; the grading is keyed by the defect records it
// was made with) and its defect records (see defectsTTL). Transcripts have
// their own cache (Transcripts).
type caches struct {
	deals   boundedMap[*dealView]
	defects boundedMap[defectsEntry]
}

// boundedMap is a map emptied once it holds cacheLimit entries, safe for
// concurrent use.
type boundedMap[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func (b *boundedMap[V]) get(key string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[key]
	return v, ok
}

func (b *boundedMap[V]) put(key string, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) >= cacheLimit {
		b.m = map[string]V{}
	}
	b.m[key] = v
}

// defectsEntry is a deal's defect records as read at a time: turns within
// defectsTTL of each other share one read.
type defectsEntry struct {
	at      time.Time
	records []debate.Defect
}

// defectsTTL bounds how late a debate sees a defect cured, waived or
// flagged in the registry while it runs.
const defectsTTL = 250 * time.Millisecond

// defectsOf returns the defect records read within defectsTTL of now.
func (c *caches) defectsOf(key string, now time.Time) ([]debate.Defect, bool) {
	e, ok := c.defects.get(key)
	if !ok || now.Sub(e.at) > defectsTTL {
		return nil, false
	}
	return e.records, true
}

func dealKey(tenant, dealID string, records []debate.Defect) string {
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(records) // a []Defect always encodes
	return tenant + "\x00" + dealID + "\x00" + hex.EncodeToString(h.Sum(nil))
}

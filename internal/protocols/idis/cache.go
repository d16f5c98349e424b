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
	mu      sync.Mutex
	deals   map[string]*dealView
	defects map[string]defectsEntry
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

func (c *caches) defectsOf(key string, now time.Time) ([]debate.Defect, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.defects[key]
	if !ok || now.Sub(e.at) > defectsTTL {
		return nil, false
	}
	return e.records, true
}

func (c *caches) putDefects(key string, records []debate.Defect, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.defects == nil || len(c.defects) >= cacheLimit {
		c.defects = map[string]defectsEntry{}
	}
	c.defects[key] = defectsEntry{at: now, records: records}
}

func dealKey(tenant, dealID string, records []debate.Defect) string {
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(records) // a []Defect always encodes
	return tenant + "\x00" + dealID + "\x00" + hex.EncodeToString(h.Sum(nil))
}

func (c *caches) deal(key string) *dealView {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deals[key]
}

func (c *caches) putDeal(key string, v *dealView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deals == nil || len(c.deals) >= cacheLimit {
		c.deals = map[string]*dealView{}
	}
	c.deals[key] = v
}

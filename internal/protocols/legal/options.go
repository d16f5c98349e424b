package legal

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/debated/debated/internal/debate"
)

// Options of a legal debate (seed §3's inputs).
type Options struct {
	// Query is the legal question. Required, at most MaxQueryChars.
	Query string `json:"query"`
	// Context is the retrieval result: 1–MaxPassages passages with unique
	// source ids and known domains.
	Context []Passage `json:"context"`
	// DomainHint is the router's result: pure_national, pure_adat, conflict
	// or consensus; empty when there is none.
	DomainHint string `json:"domain_hint,omitempty"`
	// MaxRounds is 2 (the default) or 3 (seed §4).
	MaxRounds int `json:"max_rounds"`
}

// Bounds of the options.
const (
	MaxQueryChars   = 2000
	MaxPassages     = 40
	MaxPassageChars = 4000
	MaxIDChars      = 100
	maxTripleChars  = 200
	DefaultRounds   = 2
	MaxRounds       = 3
)

var (
	domains     = []string{DomainNational, DomainAdatMinangkabau, DomainAdatBali, DomainAdatJawa, DomainRuleEngine}
	domainHints = []string{"pure_national", "pure_adat", "conflict", "consensus"}
)

func defaults() Options { return Options{MaxRounds: DefaultRounds} }

func check(o *Options, v *debate.Violations) {
	switch q := strings.TrimSpace(o.Query); {
	case q == "":
		v.Add("options.query", "required")
	case utf8.RuneCountInString(q) > MaxQueryChars:
		v.Add("options.query", "at most %d characters", MaxQueryChars)
	}
	switch {
	case len(o.Context) == 0:
		v.Add("options.context", "at least one passage is required")
	case len(o.Context) > MaxPassages:
		v.Add("options.context", "at most %d passages, got %d", MaxPassages, len(o.Context))
	}
	seen := map[string]int{}
	for i, p := range o.Context {
		f := fmt.Sprintf("options.context[%d]", i)
		switch {
		case strings.TrimSpace(p.SourceID) == "":
			v.Add(f+".source_id", "required")
		case len(p.SourceID) > MaxIDChars:
			v.Add(f+".source_id", "at most %d characters", MaxIDChars)
		default:
			if j, dup := seen[p.SourceID]; dup {
				v.Add(f+".source_id", "duplicate source id %q (also context[%d])", p.SourceID, j)
			}
			seen[p.SourceID] = i
		}
		if !slices.Contains(domains, p.Domain) {
			v.Add(f+".domain", "must be one of %s", strings.Join(domains, ", "))
		}
		switch t := strings.TrimSpace(p.Text); {
		case t == "":
			v.Add(f+".text", "required")
		case utf8.RuneCountInString(t) > MaxPassageChars:
			v.Add(f+".text", "at most %d characters", MaxPassageChars)
		}
		if tr := p.Triple; tr != nil {
			for _, part := range [][2]string{{"subject", tr.Subject}, {"predicate", tr.Predicate}, {"object", tr.Object}} {
				if strings.TrimSpace(part[1]) == "" || len(part[1]) > maxTripleChars {
					v.Add(f+".triple."+part[0], "required, at most %d characters", maxTripleChars)
				}
			}
		}
	}
	if o.DomainHint != "" && !slices.Contains(domainHints, o.DomainHint) {
		v.Add("options.domain_hint", "must be one of %s, or empty", strings.Join(domainHints, ", "))
	}
	if o.MaxRounds < DefaultRounds || o.MaxRounds > MaxRounds {
		v.Add("options.max_rounds", "must be %d or %d", DefaultRounds, MaxRounds)
	}
}

func (o Options) sources() map[string]Passage {
	m := make(map[string]Passage, len(o.Context))
	for _, p := range o.Context {
		m[p.SourceID] = p
	}
	return m
}

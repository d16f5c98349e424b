package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// frivolous says why a challenge fails seed 000 §6.3, or "" when it
// passes: it must name claims, a defect type of the taxonomy and evidence,
// and (DESIGN.md §3.10) every id it names must exist in this deal, its
// severity and cure protocol (when given) must be known, and a claim is
// never its own evidence (as internal/gate rules). why
// names no id (it goes into content); detail quotes the offending id.
func (v *view) frivolous(ch debate.Challenge) (why, detail string) {
	switch {
	case len(ch.ClaimRefs) == 0:
		return "it references no claim_ids", ""
	case strings.TrimSpace(ch.DefectType) == "":
		return "it specifies no defect type", ""
	case !slices.Contains(debate.DefectTypes, debate.DefectType(ch.DefectType)):
		return "its defect type is not in the taxonomy", fmt.Sprintf("%q", clip(ch.DefectType, 40))
	case len(ch.EvidenceRefs) == 0:
		return "it cites no evidence for the claimed defect", ""
	}
	for _, id := range ch.ClaimRefs {
		if v.byID[id] == nil {
			return "a claim ref names no claim of this deal", fmt.Sprintf("%q", clip(id, 80))
		}
	}
	if ch.Severity != "" && !slices.Contains(debate.Severities, debate.Severity(ch.Severity)) {
		return "its severity is not FATAL, MAJOR or MINOR", fmt.Sprintf("%q", clip(ch.Severity, 40))
	}
	if ch.CureProtocol != "" && !slices.Contains(debate.CureProtocols, debate.CureProtocol(ch.CureProtocol)) {
		return "its cure protocol is not in the taxonomy", fmt.Sprintf("%q", clip(ch.CureProtocol, 40))
	}
	for _, id := range ch.EvidenceRefs {
		if !v.refs[id] {
			return "an evidence ref names nothing in this deal", fmt.Sprintf("%q", clip(id, 80))
		}
		if slices.Contains(ch.ClaimRefs, id) {
			return "it cites the claim it attacks as its own evidence", fmt.Sprintf("%q", clip(id, 80))
		}
	}
	return "", ""
}

// judgement is how the registry answers a challenge.
type judgement struct {
	frivolous string       // why it fails §6.3, "" when valid
	upheld    bool         // a claim it names supports it
	reason    string       // what decided
	claims    []*claimView // the deal's claims it names, in its order
	support   []*claimView // those that support it
}

// judge rules on a challenge against the registry: frivolous when it fails
// §6.3, upheld when at least one claim it names has that defect open or is
// graded C or D in a material position, dismissed otherwise.
func (v *view) judge(ch debate.Challenge) judgement {
	var j judgement
	for _, id := range ch.ClaimRefs {
		if c := v.byID[id]; c != nil && !slices.Contains(j.claims, c) {
			j.claims = append(j.claims, c)
		}
	}
	if why, detail := v.frivolous(ch); why != "" {
		j.frivolous = why
		if detail != "" {
			why += ": " + detail
		}
		j.reason = "Frivolous: " + why + " (seed 000 §6.3)."
		return j
	}
	var yes, no []string
	for _, c := range j.claims {
		ok, why := v.supports(c, debate.DefectType(ch.DefectType))
		if ok {
			j.support = append(j.support, c)
			yes = append(yes, why)
		} else {
			no = append(no, why)
		}
	}
	if len(j.support) > 0 {
		j.upheld = true
		j.reason = sentence("Upheld: " + strings.Join(yes, "; "))
		return j
	}
	j.reason = sentence("Dismissed: " + strings.Join(no, "; "))
	return j
}

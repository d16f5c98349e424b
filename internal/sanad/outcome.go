package sanad

import (
	"slices"

	"github.com/debated/debated/internal/debate"
)

// Outcome is a grading in the shape of the GDBS expected files
// (testdata/gdbs/expected/deal_NNN.json): claims by key with their grade,
// verdict, action and open defect count, the deal's open defects, grade D
// count, sanad coverage, blocked claim keys and calcs. The CLI prints it;
// tests compare it.
type Outcome struct {
	DealID           string                  `json:"deal_id"`
	Claims           map[string]ClaimOutcome `json:"claims"`
	Defects          []DefectOutcome         `json:"defects"`
	GradeDCount      int                     `json:"grade_d_count"`
	SanadCoverage    float64                 `json:"sanad_coverage"`
	BlockedClaimKeys []string                `json:"blocked_claim_keys"`
	Calcs            []CalcOutcome           `json:"calcs,omitempty"`
}

// ClaimOutcome is one claim of an Outcome.
type ClaimOutcome struct {
	ClaimID     string `json:"claim_id"`
	Grade       string `json:"grade"`
	Verdict     string `json:"verdict"`
	Action      string `json:"action"`
	DefectCount int    `json:"defect_count"`
}

// DefectOutcome is one defect of an Outcome.
type DefectOutcome struct {
	DefectType   string `json:"defect_type"`
	Severity     string `json:"severity"`
	ClaimKey     string `json:"claim_key"`
	CureProtocol string `json:"cure_protocol"`
}

// CalcOutcome is one calc of an Outcome.
type CalcOutcome struct {
	CalcID   string             `json:"calc_id"`
	CalcType string             `json:"calc_type"`
	Grade    string             `json:"calc_grade"`
	Output   map[string]float64 `json:"output"`
}

// OutcomeOf summarises g in the expected-file shape. Defects are ordered by
// claim key then type; every calc is listed.
func OutcomeOf(g *debate.DealGrading) Outcome {
	o := Outcome{
		DealID:           g.DealID,
		Claims:           make(map[string]ClaimOutcome, len(g.Claims)),
		Defects:          []DefectOutcome{},
		GradeDCount:      g.GradeDCount,
		SanadCoverage:    g.SanadCoverage,
		BlockedClaimKeys: append([]string{}, g.BlockedClaimKeys...),
	}
	for _, c := range g.Claims {
		o.Claims[c.ClaimKey] = ClaimOutcome{
			ClaimID: c.ClaimID, Grade: string(c.Grade), Verdict: string(c.Verdict),
			Action: string(c.Action), DefectCount: len(c.Defects),
		}
	}
	for _, d := range g.Defects {
		o.Defects = append(o.Defects, DefectOutcome{
			DefectType: string(d.Type), Severity: string(d.Severity), ClaimKey: d.ClaimKey, CureProtocol: string(d.CureProtocol),
		})
	}
	slices.SortStableFunc(o.Defects, compareDefects)
	for _, c := range g.Calcs {
		o.Calcs = append(o.Calcs, CalcOutcome{CalcID: c.CalcID, CalcType: string(c.Type), Grade: string(c.Grade), Output: c.Output})
	}
	return o
}

func compareDefects(a, b DefectOutcome) int {
	if a.ClaimKey != b.ClaimKey {
		if a.ClaimKey < b.ClaimKey {
			return -1
		}
		return 1
	}
	if a.DefectType < b.DefectType {
		return -1
	}
	if a.DefectType > b.DefectType {
		return 1
	}
	return 0
}

package idis

import (
	"math"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/tools"
)

// usageFor returns the tool calls made so far in round: quotas are per
// round, so a new round starts from nothing.
func (s *state) usageFor(round int) tools.Usage {
	if s.UsageRound != round {
		return tools.Usage{}
	}
	return s.Usage.Clone()
}

// forMerge is the result as a parallel branch hands it to merge: the
// accepted output cut down to what apply reads of it, since the branch's
// result is encoded and decoded on its way (and nothing else reads it).
// apply(res) and apply(res.forMerge()) change a state alike.
func (res turnResult) forMerge() turnResult {
	if a := res.Accepted; a != nil {
		res.Accepted = &debate.AgentOutput{Muhasabah: debate.Muhasabah{Confidence: a.Muhasabah.Confidence},
			Position: a.Position, EvidenceRequests: a.EvidenceRequests, OpenQuestions: a.OpenQuestions}
	}
	return res
}

// apply folds one turn's result into the state. It reads of the accepted
// output only what forMerge keeps.
func (s *state) apply(res turnResult, round int) {
	s.Round = round
	if s.UsageRound != round {
		s.Usage, s.UsageRound = tools.Usage{}, round
	}
	for role, byTool := range res.Usage {
		if s.Usage[role] == nil {
			s.Usage[role] = map[string]int{}
		}
		for tool, n := range byTool {
			s.Usage[role][tool] = max(s.Usage[role][tool], n) // branches start from the same counts
		}
	}
	u := s.util(res.Role)
	u.QuotaBreaches += res.Breaches
	s.Flagged = append(s.Flagged, res.Flagged...)
	s.Reviews = append(s.Reviews, res.Reviews...)
	if res.Rejected {
		u.GateRejections++
		s.Rejected++
		return
	}
	out := res.Accepted
	if out == nil {
		return
	}
	s.Accepted++
	conf := out.Muhasabah.Confidence
	rec := ""
	if out.Position != nil {
		conf, rec = out.Position.Confidence, out.Position.Recommendation
	}
	s.RoundConf[res.Role] = conf
	b := band{Round: round, Recommendation: rec, Band: math.Floor(conf*10) / 10, Confidence: conf}
	hist := s.Positions[res.Role]
	if n := len(hist); n > 0 && hist[n-1].Round == round {
		hist[n-1] = b // the advocate's rebuttal revises its opening
	} else {
		hist = append(hist, b)
	}
	s.Positions[res.Role] = hist
	for _, r := range out.EvidenceRequests {
		s.EvidenceAsked = true
		if r.Query != "" {
			s.PendingQueries = appendNew(s.PendingQueries, r.Query)
		}
	}
	for _, q := range out.OpenQuestions {
		s.OpenQuestions = appendNew(s.OpenQuestions, q)
	}
}

package legal

// state is the protocol state between nodes. It holds only the latest
// output and critiques of each agent, so it stays bounded (at most three
// rounds of at most MaxClaims claims); every output of every round is in
// the ledger as an artifact.created event.
type state struct {
	MaxRounds int `json:"max_rounds"`
	// Outputs are the agents' latest accepted outputs, by agent.
	Outputs map[string]*Output `json:"outputs"`
	// Change is each agent's AnswerChange of its latest revision.
	Change map[string]float64 `json:"answer_change"`
	// Critiques are the latest critiques, by author.
	Critiques map[string]*CritiqueSet `json:"critiques"`
	// RoundRejected: an output of the current round failed the gates.
	RoundRejected bool        `json:"round_rejected"`
	Rejections    []Rejection `json:"rejections"`
	Decisions     []Decision  `json:"decisions"`
	// Artifacts are the names of the artifacts emitted, in order.
	Artifacts []string `json:"artifacts"`
	// Summary is set when the debate has ended (converged or escalated).
	Summary   *Summary   `json:"summary,omitempty"`
	Synthesis *Synthesis `json:"synthesis,omitempty"`
	// SynthesisRejected: the supervisor's answer failed the gates.
	SynthesisRejected bool `json:"synthesis_rejected"`
}

func newState(maxRounds int) *state {
	return &state{MaxRounds: maxRounds, Outputs: map[string]*Output{}, Change: map[string]float64{},
		Critiques: map[string]*CritiqueSet{}, Rejections: []Rejection{}, Decisions: []Decision{}, Artifacts: []string{}}
}

// inForce returns the latest critique sets, NLA's first.
func (s *state) inForce() []*CritiqueSet {
	var out []*CritiqueSet
	for _, a := range []string{AgentNLA, AgentALA} {
		if cs := s.Critiques[a]; cs != nil {
			out = append(out, cs)
		}
	}
	return out
}

// signals are the state's inputs to Calm and Decide for round.
func (s *state) signals(round int) Signals {
	var ks []Critique
	for _, cs := range s.inForce() {
		ks = append(ks, cs.Critiques...)
	}
	return Signals{Round: round, MaxRounds: s.MaxRounds, Critiques: ks, Change: s.Change,
		Outputs: s.Outputs, Rejected: s.RoundRejected}
}

// branchResult is one agent branch's result, merged into the state in declared
// order.
type branchResult struct {
	Agent     string       `json:"agent"`
	Kind      string       `json:"kind"`
	Round     int          `json:"round"`
	Output    *Output      `json:"output,omitempty"`
	Critiques *CritiqueSet `json:"critiques,omitempty"`
	Rejected  *Rejection   `json:"rejected,omitempty"`
	// Artifact is the accepted output's artifact name.
	Artifact string `json:"artifact,omitempty"`
}

// Kinds of turn (and of the DATA document's "kind").
const (
	KindAnswer    = "answer"
	KindCritique  = "critique"
	KindRevision  = "revision"
	KindSynthesis = "synthesis"
)

// apply merges a turn into the state.
func (s *state) apply(t branchResult) {
	if t.Rejected != nil {
		s.RoundRejected = true
		s.Rejections = append(s.Rejections, *t.Rejected)
		return
	}
	s.Artifacts = append(s.Artifacts, t.Artifact)
	switch t.Kind {
	case KindAnswer:
		s.Outputs[t.Agent] = t.Output
	case KindRevision:
		if prev := s.Outputs[t.Agent]; prev != nil {
			s.Change[t.Agent] = AnswerChange(prev.Answer, t.Output.Answer)
		}
		s.Outputs[t.Agent] = t.Output
	case KindCritique:
		s.Critiques[t.Agent] = t.Critiques
	}
}

// Package legal is the legal debate of seed 002 (Exp 07), protocol
// legal.adat.v1: a National Law Agent (NLA) and an Adat Law Agent (ALA)
// answer a legal question in parallel from retrieved context passages,
// critique each other's output, revise for the critiques they received and
// are critiqued again while conflict stays high, for 2 rounds by default and
// at most 3; explicit convergence criteria (§5) and escalation rules (§6)
// end the debate, and a supervisor synthesises from the final revisions and
// the debate summary alone. Every output passes the gates of §8 (gate.go)
// before it enters the debate; a rejected output is recorded with its
// violations (output.rejected) and escalates the debate. Every accepted
// output is an artifact.created event named as §7 asks
// (debate_round1_nla.json, critique_round1_nla_on_ala.json, …,
// debate_summary.json).
//
// The debate's inputs are its options (see Options); the API's deal_id is
// used as the case id and is not read otherwise.
package legal

import (
	"time"

	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocol"
)

// Name is the protocol's name.
const Name = "legal.adat.v1"

// Config wires the protocol.
type Config struct {
	// ModelFor returns the model for the tenant of ctx; a nil ModelFor or
	// a nil Caller means the deterministic rules backend.
	ModelFor protocol.Models
}

// Event types the protocol emits.
const (
	// EventArtifact is an accepted output, critique set or the summary:
	// {"name": FILE, "content": OBJECT, "model": MODEL_CALLS?}.
	EventArtifact = protocol.EventArtifact
	// EventRejected is an output the gates refused, with its violations.
	EventRejected = protocol.EventRejected
	// EventDecision is a convergence check's Decision.
	EventDecision = "convergence.decision"
	// EventSynthesis is the supervisor's accepted Synthesis.
	EventSynthesis = "supervisor.synthesis"
	// EventDeliverables is the debate's Deliverables.
	EventDeliverables = protocol.EventDeliverables
	// EventBudgetExceeded stops a debate whose model budget ran out.
	EventBudgetExceeded = protocol.EventBudgetExceeded
)

// Node names.
const (
	NodeAnswers    = "initial_answers"
	NodeCritique   = "cross_critique"
	NodeCheck      = "convergence_check"
	NodeRevision   = "revision"
	NodeSupervisor = "supervisor_synthesis"
	NodeFinalize   = "finalize"
)

// ReasonTokenBudget is the stop reason of a debate whose model calls
// reached the debate's token budget.
const ReasonTokenBudget = protocol.ReasonTokenBudget

// agentTimeout bounds one attempt of a model-backed turn (a call and its
// repairs).
const agentTimeout = 5 * time.Minute

type (
	node = protocol.Node[Options, state]
	turn = protocol.Turn[Options, state]
)

// Protocol returns the legal.adat.v1 protocol over cfg.
func Protocol(cfg Config) *orchestrator.Protocol {
	p := &proto{models: cfg.ModelFor}
	group := func(name, kind string, edges []string, next func(*state) string) *node {
		n := &node{Name: name, Merge: merge, Edges: edges, Next: next}
		for _, a := range []string{AgentNLA, AgentALA} {
			n.Branches = append(n.Branches, &node{Name: roleOf(a) + "_" + kind, Actor: roleOf(a),
				Run: p.branch(a, kind, name), Timeout: agentTimeout})
		}
		return n
	}
	return protocol.Compile(&protocol.Spec[Options, state]{
		Name:        Name,
		Description: "legal debate (seed 002): NLA ‖ ALA answer from context passages, cross-critique, revision; 2 rounds by default, 3 at most; convergence (§5) and escalation (§6) rules; supervisor synthesis; per-round artifacts and debate_summary.json",
		Roles:       []string{RoleNLA, RoleALA, RoleSupervisor},
		Start:       NodeAnswers,
		MaxSteps:    20,
		// Nodes read the state and the deal, never the ledger: a step may be
		// computed while the previous one commits.
		Pipelined: true,
		Defaults:  defaults,
		Check:     check,
		NewState:  func() *state { return newState(DefaultRounds) },
		Init: func(o *Options, _ orchestrator.InitInput) (*state, error) {
			return newState(o.MaxRounds), nil
		},
		RoleGuard: map[string][]string{
			EventArtifact:       {RoleNLA, RoleALA, orchestrator.ActorEngine},
			EventRejected:       {RoleNLA, RoleALA, RoleSupervisor},
			EventDecision:       {orchestrator.ActorEngine},
			EventSynthesis:      {RoleSupervisor},
			EventDeliverables:   {orchestrator.ActorEngine},
			EventBudgetExceeded: {RoleNLA, RoleALA, RoleSupervisor},
		},
		Nodes: []*node{
			group(NodeAnswers, KindAnswer, []string{NodeCritique, NodeCheck}, afterAnswers),
			group(NodeCritique, KindCritique, []string{NodeCheck}, nil),
			{Name: NodeCheck, Actor: orchestrator.ActorEngine, Run: decide, EndsRound: true,
				Edges: []string{NodeRevision, NodeSupervisor}, Next: afterCheck},
			group(NodeRevision, KindRevision, []string{NodeCritique, NodeCheck}, afterRevision),
			{Name: NodeSupervisor, Actor: RoleSupervisor, Run: p.supervise, Timeout: agentTimeout, Edges: []string{NodeFinalize}},
			{Name: NodeFinalize, Actor: orchestrator.ActorEngine, Run: finalize},
		},
	})
}

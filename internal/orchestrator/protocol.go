package orchestrator

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/debated/debated/internal/debate"
)

// Defaults of a Node.
const (
	// DefaultTimeout bounds one attempt of a node without a Timeout.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxAttempts is the attempts of a node without MaxAttempts
	// (seed 004: 3 attempts, then needs_review).
	DefaultMaxAttempts = 3
)

// Protocol is a debate protocol: a graph of nodes over roles, its options,
// its initial state and the rules the ledger enforces for it. A Protocol is
// read-only once registered; Validate checks it.
type Protocol struct {
	// Name identifies the protocol (Debate.Protocol).
	Name        string
	Description string
	// Roles are the actors that sign the protocol's events. ActorEngine and
	// ActorOperator are reserved and may not be listed.
	Roles []string
	// Start is the first node.
	Start string
	// Nodes in declared order. Node names are unique across the protocol,
	// branches of parallel groups included.
	Nodes []*Node
	// MaxSteps bounds the node steps of one debate, loops included (a
	// parallel group is one step). A debate that would exceed it stops with
	// status needs_review and reason ReasonMaxSteps. Required.
	MaxSteps int
	// Options validates and defaults the protocol options of a new debate
	// and returns them as canonical JSON. Its errors are
	// *debate.ValidationError with field paths under "options.". Nil means
	// the protocol takes no options; see ValidateOptions.
	Options func(raw json.RawMessage) (json.RawMessage, error)
	// Init returns the initial protocol state (any JSON value; nil means
	// {}). It runs at the first step, under the Start node's timeout and
	// attempts. Nil means the initial state is {}.
	Init func(ctx context.Context, in InitInput) (json.RawMessage, error)
	// RoleGuard maps an event type the protocol emits to the actors allowed
	// to emit it; Step refuses an output that breaks it, and the ledger
	// verifies it (merged with EngineRoleGuard, see MergedRoleGuard).
	RoleGuard map[string][]string
	// Tools maps a role to the tools it may call (listed by ListProtocols;
	// enforced by the tools layer).
	Tools map[string][]string
	// Pipelined lets the runner compute a debate's next step while the
	// previous step's commit is in flight (Engine.StepAhead), so a step
	// costs the longer of its work and its commit instead of their sum. A
	// step computed ahead commits only after the previous one (it is fenced
	// by that step's head) and is thrown away if that commit fails. Set it
	// only if no node reads the debate's ledger, or every node that does
	// reads it through NodeInput.HeadSeq and adds NodeInput.Pending.
	Pipelined bool
	// Deliverables, optional, renders a finished debate for
	// GetDeliverables from its ledger and its last deliverables.created
	// payload: the artifacts the protocol derives beyond the ledger's
	// artifact.created events, and the Markdown of the deliverables. Nil
	// means no further artifacts and the payload's top-level "markdown"
	// string. It must not fail: what it cannot read it leaves out.
	Deliverables func(events []debate.Event, deliverables json.RawMessage) (artifacts []debate.Artifact, markdown string)
	// CheckOutput, optional, checks one of the protocol's agent outputs
	// (JSON) against a deal and its defect records with the fail-closed
	// gates its debates apply, storing nothing (ValidateOutput). An output
	// of the wrong shape gives violations of rule SCHEMA; the error is for
	// an output that is not an object at all (a *debate.ValidationError is
	// not one: its violations are returned as SCHEMA violations instead).
	CheckOutput func(b *debate.DealBundle, defects []debate.Defect, output []byte) ([]debate.Violation, error)
}

// Node is one node of a protocol graph: a task node (Run) or a parallel
// group (Branches and Merge).
type Node struct {
	// Name is unique in the protocol.
	Name string
	// Actor is the role that signs the node's events by default: one of
	// the protocol's Roles or ActorEngine (for bookkeeping nodes). Required
	// for task nodes and branches; a group's defaults to ActorEngine.
	Actor string
	// Run is a task node's work.
	Run NodeFunc
	// Branches make the node a parallel group: they run concurrently on the
	// same input state, each with its own timeout and attempts, and Merge
	// combines their outputs, in declared order, into the group's output
	// state. Branches are task nodes without edges of their own.
	Branches []*Node
	// Merge combines the branches' outputs (outs[i] is Branches[i]'s) into
	// the new state. Required for a group. It runs once: an error fails the
	// step without retry, because the same outputs would merge the same.
	Merge func(state json.RawMessage, outs []*NodeOutput) (json.RawMessage, error)
	// Edges are the nodes that may follow this one. Without Next, no edge
	// ends the debate after this node and a single edge is a static edge.
	// With Next (a conditional edge), Next must return one of Edges or ""
	// (which ends the debate); Validate checks every edge exists.
	Edges []string
	// Next picks the next node from the node's output state. Nil means a
	// static edge (or the end, without Edges).
	Next func(state json.RawMessage) (string, error)
	// Timeout bounds one attempt (DefaultTimeout when 0).
	Timeout time.Duration
	// MaxAttempts is how many attempts a failing node gets
	// (DefaultMaxAttempts when 0).
	MaxAttempts int
	// EndsRound: after this node the engine emits round.completed and the
	// next node runs in the next round (so nodes that follow the last round,
	// such as a finaliser, run in round n+1). A debate that ends at this
	// node keeps its round.
	EndsRound bool
}

// NodeFunc is the work of a task node. It must honour ctx: the engine
// abandons an attempt that outlives its timeout (its result is discarded),
// and a cancelled ctx means shutdown. Its input is read-only. An error or a
// panic fails the attempt; wrap an error with Permanent to skip the
// remaining attempts.
type NodeFunc func(ctx context.Context, in *NodeInput) (*NodeOutput, error)

// InitInput is what a protocol's Init receives.
type InitInput struct {
	DebateID string
	TenantID string
	DealID   string
	// Options are the debate's canonical options.
	Options json.RawMessage
}

// NodeInput is what a node receives.
type NodeInput struct {
	DebateID string
	TenantID string
	DealID   string
	// Round is the current round (1-based).
	Round int
	// Attempt is this attempt's number (1-based).
	Attempt int
	// HeadSeq is the seq of the debate's last committed event when the
	// step began: every event up to it is in the ledger, and none after it
	// until this step commits. A node that keeps what it read of the ledger
	// knows from it whether it has read everything.
	HeadSeq int64
	// Pending, for a step computed ahead (Protocol.Pipelined), are the
	// previous step's events, which come right after HeadSeq and may still
	// be committing: the node must treat them as part of the ledger (this
	// step commits only if they do). Empty otherwise.
	Pending []debate.Event
	// State is the protocol state in canonical JSON.
	State json.RawMessage
	// Options are the debate's canonical options.
	Options json.RawMessage
	// Gate is the human gate resolved since the previous step, if any: the
	// node after a gate branches on its Status (approved or rejected).
	Gate *debate.HumanGate
}

// NodeOutput is what a node returns. A nil output changes nothing and emits
// nothing.
type NodeOutput struct {
	// State is the new protocol state (nil = unchanged): any JSON value,
	// stored and hashed in its RFC 8785 form, where numbers are IEEE 754
	// doubles (keep integers below 2^53, or encode them as strings).
	State json.RawMessage
	// Canonical says State is in that form already (canon.Marshal's): the
	// engine stores and hashes it as it is. Set it for such bytes only.
	Canonical bool
	// Events are the node's own events, in order.
	Events []Emit
	// Gate asks for a human gate: the debate waits in awaiting_review until
	// an operator resolves it, then runs the next node with the gate.
	Gate *GateRequest
	// Stop ends the debate after this node.
	Stop *Stop
}

// Emit is one event a node emits.
type Emit struct {
	// Type is the event type; the engine's own types are refused.
	Type string
	// Actor signs the event: the node's Actor when empty, else one of the
	// protocol's Roles.
	Actor string
	// Payload is encoded as JSON and must be a JSON object (nil is {}); a
	// json.RawMessage or []byte is used as is, a canon.Text is not even
	// canonicalised again. Top-level members "claim_id", "claim_ids",
	// "defect_id" and "defect_ids" are collected into node.completed's
	// claims and defects.
	Payload any
}

// GateRequest asks for a human gate (seed 000 §4.5).
type GateRequest struct {
	// Reason is shown to the reviewer. Required.
	Reason   string
	ClaimIDs []string
}

// Stop ends the debate after the node.
type Stop struct {
	// Status is completed (the default when empty), needs_review or failed.
	Status debate.DebateStatus
	// Reason is the debate's stop reason (e.g. CONSENSUS). Required.
	Reason string
}

func (n *Node) isGroup() bool { return len(n.Branches) > 0 }

// timeout and maxAttempts apply the defaults of a validated node (whose
// limits are never negative).
func (n *Node) timeout() time.Duration { return cmp.Or(n.Timeout, DefaultTimeout) }

func (n *Node) maxAttempts() int { return cmp.Or(n.MaxAttempts, DefaultMaxAttempts) }

func (n *Node) actor() string { return cmp.Or(n.Actor, ActorEngine) }

// Validate checks the protocol's shape: a name, MaxSteps > 0, unique
// non-reserved roles, unique node names, an existing Start, task nodes with
// Run and an Actor among the roles (or ActorEngine), groups with branches
// and Merge, branches that are plain task nodes, edges that name existing
// top-level nodes (a conditional edge needs Next, Next needs Edges), every
// node reachable from Start, and role guards and tools that name known
// roles and no engine event type. Returns a *debate.ValidationError
// (errors.Is debate.ErrInvalid) naming every bad field.
func (p *Protocol) Validate() error {
	var v debate.Violations
	if p.Name == "" {
		v.Add("name", "required")
	}
	if p.MaxSteps <= 0 {
		v.Add("max_steps", "must be positive, got %d", p.MaxSteps)
	}
	roles := map[string]bool{}
	for i, r := range p.Roles {
		f := fmt.Sprintf("roles[%d]", i)
		switch {
		case r == "":
			v.Add(f, "empty role")
		case r == ActorEngine || r == ActorOperator:
			v.Add(f, "%q is reserved for the engine", r)
		case roles[r]:
			v.Add(f, "duplicate role %q", r)
		}
		roles[r] = true
	}
	top := map[string]*Node{}
	names := map[string]string{} // every node name → its field path
	name := func(f, n string) {
		if n == "" {
			v.Add(f+".name", "required")
			return
		}
		if prev, ok := names[n]; ok {
			v.Add(f+".name", "duplicate node name %q (also %s)", n, prev)
			return
		}
		names[n] = f
	}
	actor := func(f, a string, optional bool) {
		switch {
		case a == "" && optional:
		case a == "":
			v.Add(f+".actor", "required")
		case a != ActorEngine && !roles[a]:
			v.Add(f+".actor", "%q is not a role of the protocol", a)
		}
	}
	if len(p.Nodes) == 0 {
		v.Add("nodes", "at least one node is required")
	}
	for i, n := range p.Nodes {
		f := fmt.Sprintf("nodes[%d]", i)
		if n == nil {
			v.Add(f, "nil node")
			continue
		}
		name(f, n.Name)
		if _, dup := top[n.Name]; n.Name != "" && !dup {
			top[n.Name] = n
		}
		checkLimits(&v, f, n)
		if n.isGroup() {
			actor(f, n.Actor, true)
			if n.Run != nil {
				v.Add(f+".run", "a parallel group has branches, not Run")
			}
			if n.Merge == nil {
				v.Add(f+".merge", "required for a parallel group")
			}
			for j, b := range n.Branches {
				bf := fmt.Sprintf("%s.branches[%d]", f, j)
				if b == nil {
					v.Add(bf, "nil branch")
					continue
				}
				name(bf, b.Name)
				actor(bf, b.Actor, false)
				checkLimits(&v, bf, b)
				switch {
				case b.Run == nil:
					v.Add(bf+".run", "required")
				case b.isGroup():
					v.Add(bf+".branches", "parallel groups do not nest")
				}
				if b.Merge != nil {
					v.Add(bf+".merge", "a branch has no Merge")
				}
				if b.Next != nil || len(b.Edges) > 0 {
					v.Add(bf+".edges", "a branch has no edges; the group's edges apply")
				}
				if b.EndsRound {
					v.Add(bf+".ends_round", "a branch cannot end a round; the group can")
				}
			}
			continue
		}
		actor(f, n.Actor, false)
		if n.Run == nil {
			v.Add(f+".run", "required (or Branches for a parallel group)")
		}
		if n.Merge != nil {
			v.Add(f+".merge", "only a parallel group has Merge")
		}
	}
	for i, n := range p.Nodes {
		if n == nil {
			continue
		}
		f := fmt.Sprintf("nodes[%d]", i)
		switch {
		case n.Next == nil && len(n.Edges) > 1:
			v.Add(f+".next", "%d edges need a Next function to choose", len(n.Edges))
		case n.Next != nil && len(n.Edges) == 0:
			v.Add(f+".edges", "a conditional edge must declare its targets")
		}
		seen := map[string]bool{}
		for j, e := range n.Edges {
			ef := fmt.Sprintf("%s.edges[%d]", f, j)
			switch {
			case e == "":
				v.Add(ef, "empty target")
			case seen[e]:
				v.Add(ef, "duplicate target %q", e)
			case top[e] == nil && names[e] != "":
				v.Add(ef, "%q is a branch; only a top-level node can be a target", e)
			case top[e] == nil:
				v.Add(ef, "unknown node %q", e)
			}
			seen[e] = true
		}
	}
	switch {
	case p.Start == "":
		v.Add("start", "required")
	case top[p.Start] == nil:
		v.Add("start", "unknown node %q", p.Start)
	default:
		reached := map[string]bool{p.Start: true}
		for queue := []string{p.Start}; len(queue) > 0; queue = queue[1:] {
			for _, e := range top[queue[0]].Edges {
				if top[e] != nil && !reached[e] {
					reached[e] = true
					queue = append(queue, e)
				}
			}
		}
		for i, n := range p.Nodes {
			if n != nil && n.Name != "" && top[n.Name] == n && !reached[n.Name] {
				v.Add(fmt.Sprintf("nodes[%d]", i), "node %q is unreachable from %q", n.Name, p.Start)
			}
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(p.RoleGuard)) {
		f := "role_guard[" + typ + "]"
		if typ == "" {
			v.Add(f, "empty event type")
		}
		if _, ok := engineGuard[typ]; ok {
			v.Add(f, "%q is an engine event type", typ)
		}
		if len(p.RoleGuard[typ]) == 0 {
			v.Add(f, "lists no actor")
		}
		for j, a := range p.RoleGuard[typ] {
			if a != ActorEngine && !roles[a] {
				v.Add(fmt.Sprintf("%s[%d]", f, j), "%q is not a role of the protocol", a)
			}
		}
	}
	for _, role := range slices.Sorted(maps.Keys(p.Tools)) {
		f := "tools[" + role + "]"
		if !roles[role] {
			v.Add(f, "%q is not a role of the protocol", role)
		}
		for j, t := range p.Tools[role] {
			if t == "" {
				v.Add(fmt.Sprintf("%s[%d]", f, j), "empty tool name")
			}
		}
	}
	return v.Err()
}

func checkLimits(v *debate.Violations, f string, n *Node) {
	if n.Timeout < 0 {
		v.Add(f+".timeout", "must not be negative")
	}
	if n.MaxAttempts < 0 {
		v.Add(f+".max_attempts", "must not be negative")
	}
}

// ValidateOptions validates and defaults raw options for a new debate of the
// protocol and returns them in canonical JSON (an object). Without an
// Options function, empty input, null and {} give {} and anything else is
// refused. Returns a *debate.ValidationError (errors.Is debate.ErrInvalid)
// with field paths under "options", or Options' own error.
func (p *Protocol) ValidateOptions(raw json.RawMessage) (json.RawMessage, error) {
	if p.Options == nil {
		switch string(bytes.TrimSpace(raw)) {
		case "", "null", "{}":
			return json.RawMessage("{}"), nil
		}
		var v debate.Violations
		v.Add("options", "protocol %q takes no options", p.Name)
		return nil, v.Err()
	}
	out, err := p.Options(raw)
	if err != nil {
		return nil, err
	}
	c, err := canonicalObject(out)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: protocol %q returned options that are not a JSON object: %w", p.Name, err)
	}
	return c, nil
}

// MergedRoleGuard returns EngineRoleGuard merged with the protocol's
// RoleGuard (which Validate keeps disjoint from it): the role guard of the
// ledger's policy for debates of this protocol. Actor lists are sorted.
func (p *Protocol) MergedRoleGuard() map[string][]string {
	out := EngineRoleGuard()
	for t, actors := range p.RoleGuard {
		out[t] = slices.Sorted(slices.Values(actors))
	}
	return out
}

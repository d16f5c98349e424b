package orchestrator

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/debated/debated/internal/debate"
)

// Step executes exactly one node of debate d and returns what to commit
// atomically; it writes nothing. cp is the debate's last checkpoint (nil
// before the first step) and gate the human gate resolved since cp, if any:
// the gate GateID(d.ID, cp.Step), which the node receives in NodeInput.Gate.
//
// The first step (d.NextNode "" and cp nil) runs the protocol's Init and
// the Start node and begins the commit with debate.started. Every commit is
// fenced by ExpectSeq/ExpectHash = d.LastSeq/d.HeadHash and its events are
// sealed in order after that head. A node that fails every attempt commits
// node.failed and debate.stopped with status needs_review; a node that
// would exceed the protocol's MaxSteps stops the debate with needs_review
// and ReasonMaxSteps; a checkpoint whose state does not match its output
// hash fails the debate (ReasonCheckpointIntegrity); a next node the
// protocol lacks stops it with needs_review (ReasonUnknownNode).
//
// Step returns ctx's error and no commit if ctx is cancelled (shutdown): the
// node runs again on resume. It returns an error wrapping
// debate.ErrFailedPrecondition if the debate is not runnable (queued or
// running), runs an unregistered protocol, is inconsistent with cp (a
// NextNode without checkpoint, another debate's checkpoint, …), or gate is
// not the resolved gate of the previous step, or a gate was resolved since
// cp and is not given. Any other error (the sealer's) is an internal one.
func (e *Engine) Step(ctx context.Context, d debate.Debate, cp *debate.Checkpoint, gate *debate.HumanGate) (*debate.StepCommit, error) {
	return e.step(ctx, d, cp, gate, nil)
}

func (e *Engine) step(ctx context.Context, d debate.Debate, cp *debate.Checkpoint, gate *debate.HumanGate, pending []debate.Event) (*debate.StepCommit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := e.cfg.Protocols.lookupFor(ctx, d.TenantID, d.Protocol)
	switch {
	case err == nil:
	case errors.Is(err, debate.ErrNotFound) || errors.Is(err, debate.ErrInvalid):
		return nil, fmt.Errorf("debate %q: %w: %w", d.ID, err, debate.ErrFailedPrecondition)
	default:
		// A tenant's protocol could not be read (the store failed): the
		// step runs again.
		return nil, fmt.Errorf("orchestrator: debate %s: %w", d.ID, err)
	}
	if err := checkStep(&d, cp, gate); err != nil {
		return nil, fmt.Errorf("debate %q: %w: %w", d.ID, err, debate.ErrFailedPrecondition)
	}
	s := &step{e: e, p: p, d: &d, cp: cp, gate: gate, round: max(d.Round, 1), num: 1, t0: e.now(), pending: pending}
	if cp != nil {
		s.num = cp.Step + 1
	}
	return s.run(ctx)
}

// Pipelined reports whether the runner may compute the debates of protocol
// name a step ahead (Protocol.Pipelined; false for an unknown protocol).
func (e *Engine) Pipelined(name string) bool {
	p, err := e.cfg.Protocols.lookup(name)
	return err == nil && p.Pipelined
}

// StepAhead is Step for the step after one whose commit is still in flight:
// d and cp are as that commit leaves them (the runner applies it before it
// lands), and pending are its events, which the nodes receive in
// NodeInput.Pending with HeadSeq the head before them. The step's commit is
// fenced by the pending step's head, so it can only land after it; if the
// pending commit fails, throw the step away. Returns an error wrapping
// debate.ErrFailedPrecondition if the protocol is not Pipelined or pending
// does not end at d's head, and otherwise what Step returns.
func (e *Engine) StepAhead(ctx context.Context, d debate.Debate, cp *debate.Checkpoint, pending []debate.Event) (*debate.StepCommit, error) {
	if !e.Pipelined(d.Protocol) {
		return nil, fmt.Errorf("debate %q: protocol %q is not pipelined: %w", d.ID, d.Protocol, debate.ErrFailedPrecondition)
	}
	if n := len(pending); n > 0 && (pending[n-1].Seq != d.LastSeq || pending[n-1].Hash != d.HeadHash) {
		return nil, fmt.Errorf("debate %q: pending events end at seq %d, the debate's head is %d: %w",
			d.ID, pending[n-1].Seq, d.LastSeq, debate.ErrFailedPrecondition)
	}
	return e.step(ctx, d, cp, nil, pending)
}

func checkStep(d *debate.Debate, cp *debate.Checkpoint, gate *debate.HumanGate) error {
	switch {
	case !d.Status.Runnable():
		return fmt.Errorf("status %s is not runnable", d.Status)
	case cp == nil && d.NextNode != "":
		return fmt.Errorf("next node %q without a checkpoint", d.NextNode)
	case cp == nil && gate != nil:
		return fmt.Errorf("gate %s before the first step", gate.ID)
	case cp == nil:
		return nil
	case cp.DebateID != d.ID:
		return fmt.Errorf("checkpoint of debate %s", cp.DebateID)
	case d.NextNode == "":
		return fmt.Errorf("checkpoint %d but no next node", cp.Step)
	case cp.NextNode != d.NextNode:
		return fmt.Errorf("checkpoint %d runs %q next, the debate %q", cp.Step, cp.NextNode, d.NextNode)
	case cp.Seq > d.LastSeq:
		return fmt.Errorf("checkpoint %d at seq %d is past the ledger's head %d", cp.Step, cp.Seq, d.LastSeq)
	case gate == nil && d.LastSeq > cp.Seq:
		// Only ResolveGate appends between steps without ending the debate.
		return fmt.Errorf("the ledger moved past checkpoint %d (a gate was resolved) but no gate was given", cp.Step)
	case gate == nil:
		return nil
	case gate.DebateID != d.ID || gate.ID != GateID(d.ID, cp.Step):
		return fmt.Errorf("gate %s is not the gate of step %d (%s)", gate.ID, cp.Step, GateID(d.ID, cp.Step))
	case gate.Status != debate.GateApproved && gate.Status != debate.GateRejected:
		return fmt.Errorf("gate %s is %s, not resolved", gate.ID, gate.Status)
	case d.LastSeq == cp.Seq:
		return fmt.Errorf("gate %s given but no resolution was committed since checkpoint %d", gate.ID, cp.Step)
	}
	return nil
}

// step is one execution of Engine.Step.
type step struct {
	e     *Engine
	p     *compiled
	d     *debate.Debate
	cp    *debate.Checkpoint
	gate  *debate.HumanGate
	round int
	num   int // this step's number: cp.Step+1
	// pending are the previous step's events when this step is computed
	// while they commit (StepAhead): d is already past them.
	pending []debate.Event
	t0, t1  time.Time
}

func (s *step) run(ctx context.Context) (*debate.StepCommit, error) {
	first := s.cp == nil
	name := s.d.NextNode
	if first {
		name = s.p.Start
	}
	var state []byte
	var inHash string
	if !first {
		var err error
		state, inHash, err = checkpointState(s.cp)
		switch {
		case err != nil:
			return s.stop(debate.DebateFailed, ReasonCheckpointIntegrity, name, fmt.Sprintf("checkpoint %d: state is not JSON: %v", s.cp.Step, err))
		case s.cp.OutputHash != "" && s.cp.OutputHash != inHash:
			return s.stop(debate.DebateFailed, ReasonCheckpointIntegrity, name,
				fmt.Sprintf("checkpoint %d: state hashes to %s, recorded %s", s.cp.Step, inHash, s.cp.OutputHash))
		}
	}
	if s.num > s.p.MaxSteps {
		return s.stop(debate.DebateNeedsReview, ReasonMaxSteps, name, "")
	}
	node := s.p.nodes[name]
	if node == nil {
		return s.stop(debate.DebateNeedsReview, ReasonUnknownNode, name, fmt.Sprintf("protocol %q has no node %q", s.p.Name, name))
	}

	var initRes outcome
	if first {
		state, initRes = s.init(ctx, node)
		switch {
		case initRes.canceled != nil:
			return nil, initRes.canceled
		case initRes.err != nil:
			s.t1 = s.e.now()
			return s.failure(node, "", nodeResult{events: initRes.retryEvents(node.Name, "init"), attempts: initRes.attempts, err: initRes.err}, "init")
		}
		inHash = hashHex(state)
	}

	var res nodeResult
	if node.isGroup() {
		res = s.runGroup(ctx, node, state, inHash)
	} else {
		out, o := retry(ctx, s, node, "", s.firstAttempt(), s.taskAttempt(node, state, inHash, false))
		res = nodeResult{out: out, attempts: o.attempts, err: o.err, canceled: o.canceled, events: o.retryEvents(node.Name, "")}
		if out != nil {
			res.events = append(res.events, out.events...)
		}
	}
	if res.canceled != nil {
		return nil, res.canceled
	}
	s.t1 = s.e.now()
	res.events = append(initRes.retryEvents(node.Name, "init"), res.events...)
	if res.err != nil {
		return s.failure(node, inHash, res, "")
	}
	return s.success(node, inHash, res)
}

// init runs the protocol's Init under the Start node's timeout and
// attempts, and returns the canonical initial state.
func (s *step) init(ctx context.Context, start *Node) ([]byte, outcome) {
	if s.p.Init == nil {
		return []byte("{}"), outcome{}
	}
	in := InitInput{DebateID: s.d.ID, TenantID: s.d.TenantID, DealID: s.d.DealID, Options: s.options()}
	return retry(ctx, s, start, "init", 1, func(ctx context.Context, _ int) ([]byte, error) {
		in := in
		in.Options = bytes.Clone(in.Options)
		raw, err := call(ctx, s, start.Name, start.timeout(), func(ctx context.Context) (json.RawMessage, error) {
			return s.p.Init(ctx, in)
		})
		if err != nil {
			return nil, err
		}
		if raw == nil {
			return []byte("{}"), nil
		}
		c, _, err := canonical(raw)
		if err != nil {
			return nil, fmt.Errorf("initial state: %w", err)
		}
		return c, nil
	})
}

// firstAttempt numbers the first attempt of the step's node: the attempts
// that committed steps already spent (Debate.Attempt) count.
func (s *step) firstAttempt() int { return max(s.d.Attempt, 0) + 1 }

func (s *step) options() json.RawMessage {
	if len(s.d.Options) == 0 {
		return json.RawMessage("{}")
	}
	return s.d.Options
}

func (s *step) input(state []byte) NodeInput {
	in := NodeInput{
		DebateID: s.d.ID, TenantID: s.d.TenantID, DealID: s.d.DealID,
		Round: s.round, HeadSeq: s.d.LastSeq, State: state, Options: s.options(),
	}
	if len(s.pending) > 0 {
		in.HeadSeq, in.Pending = s.pending[0].Seq-1, s.pending
	}
	if s.gate != nil {
		g := *s.gate
		in.Gate = &g
	}
	return in
}

// nodeResult is the outcome of running a node (a task or a group).
type nodeResult struct {
	out *checked
	// events are, in order: each failed-and-retried attempt's node.retry
	// and, on success, the node's own events; a group's are branch by
	// branch in declared order.
	events   []pendingEvent
	attempts int
	branches []branchSummary
	// err is the final failure; failedBranches names a group's failed
	// branches in declared order.
	err            error
	failedBranches []string
	canceled       error // see outcome
}

// taskAttempt returns one attempt of a task node: Run under the node's
// timeout in its own goroutine, then the output's checks (and, for a
// top-level node, its edge) in the caller's.
func (s *step) taskAttempt(n *Node, state []byte, hash string, branch bool) func(context.Context, int) (*checked, error) {
	base := s.input(state)
	return func(ctx context.Context, attempt int) (*checked, error) {
		in := base
		in.Attempt = attempt
		// Each attempt owns its input: an abandoned attempt may still read
		// (or scribble on) the one it was given.
		in.State, in.Options = bytes.Clone(base.State), bytes.Clone(base.Options)
		out, err := call(ctx, s, n.Name, n.timeout(), func(ctx context.Context) (*NodeOutput, error) {
			return n.Run(ctx, &in)
		})
		if err != nil {
			return nil, err
		}
		return s.check(n, out, state, hash, branch)
	}
}

// checked is a node output that passed the engine's checks.
type checked struct {
	out    *NodeOutput
	events []pendingEvent
	state  []byte // canonical output state
	hash   string
	gate   *GateRequest
	stop   *Stop
	next   string
}

// check validates a node's output: event types and actors (the role
// guard), payloads, the state, the gate and stop requests, and, for a
// top-level task node, picks the next node.
func (s *step) check(n *Node, out *NodeOutput, state []byte, hash string, branch bool) (*checked, error) {
	if out == nil {
		out = &NodeOutput{}
	}
	c := &checked{out: out, state: state, hash: hash, gate: out.Gate, stop: out.Stop}
	if len(out.Events) > 0 {
		c.events = make([]pendingEvent, 0, len(out.Events))
	}
	for i, em := range out.Events {
		actor := cmp.Or(em.Actor, n.actor())
		switch _, engine := engineGuard[em.Type]; {
		case em.Type == "":
			return nil, fmt.Errorf("events[%d]: empty event type", i)
		case engine:
			return nil, fmt.Errorf("events[%d]: %q is an engine event type", i, em.Type)
		case actor != n.actor() && !s.p.roles[actor]:
			return nil, fmt.Errorf("events[%d]: actor %q is not a role of the protocol", i, actor)
		}
		if g, ok := s.p.guard[em.Type]; ok && !g[actor] {
			return nil, fmt.Errorf("events[%d]: role guard: %q may not emit %q", i, actor, em.Type)
		}
		payload, err := marshalPayload(em.Payload)
		if err != nil {
			return nil, fmt.Errorf("events[%d]: payload: %w", i, err)
		}
		c.events = append(c.events, pendingEvent{typ: em.Type, actor: actor, node: n.Name, payload: payload})
	}
	switch {
	case out.State != nil && out.Canonical:
		c.state, c.hash = out.State, hashHex(out.State)
	case out.State != nil:
		var err error
		if c.state, c.hash, err = canonical(out.State); err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
	}
	if err := checkDecisions(out.Gate, out.Stop); err != nil {
		return nil, err
	}
	if branch || c.stop != nil {
		return c, nil
	}
	next, err := s.next(n, c.state)
	if err != nil {
		return nil, err
	}
	if c.gate != nil && next == "" {
		return nil, fmt.Errorf("gate: node %q asks for a gate but has no next node to resume at", n.Name)
	}
	c.next = next
	return c, nil
}

func checkDecisions(g *GateRequest, st *Stop) error {
	switch {
	case g != nil && st != nil:
		return fmt.Errorf("an output cannot both stop the debate and ask for a gate")
	case g != nil && g.Reason == "":
		return fmt.Errorf("gate: reason is required")
	case st == nil:
		return nil
	case st.Reason == "":
		return fmt.Errorf("stop: reason is required")
	}
	switch st.Status {
	case "", debate.DebateCompleted, debate.DebateNeedsReview, debate.DebateFailed:
		return nil
	}
	return fmt.Errorf("stop: status %q is not completed, needs_review or failed", st.Status)
}

// next follows n's edge from its output state.
func (s *step) next(n *Node, state []byte) (string, error) {
	if n.Next == nil {
		if len(n.Edges) == 0 {
			return "", nil
		}
		return n.Edges[0], nil
	}
	name, err := guard(s, n.Name, func() (string, error) { return n.Next(bytes.Clone(state)) })
	if err != nil {
		return "", fmt.Errorf("next: %w", err)
	}
	if name != "" && !slices.Contains(n.Edges, name) {
		return "", fmt.Errorf("next: %q is not an edge of %q", name, n.Name)
	}
	return name, nil
}

// success builds the commit of a node that completed.
func (s *step) success(n *Node, inHash string, res nodeResult) (*debate.StepCommit, error) {
	c := res.out
	counts := map[string]int{}
	var claims, defects orderedSet
	own := 0
	for _, ev := range res.events {
		if ev.typ == EventNodeRetry {
			continue
		}
		own++
		counts[ev.typ]++
		collectRefs(ev.payload.(json.RawMessage), &claims, &defects)
	}
	completed := completedPayload{
		Node: n.Name, Step: s.num, Attempts: res.attempts, InputHash: inHash, OutputHash: c.hash,
		EventCount: own, Events: counts, Claims: claims.list, Defects: defects.list,
		Branches: res.branches, Gate: c.gate != nil, NextNode: c.next,
		DurationMS: s.t1.Sub(s.t0).Milliseconds(),
	}
	if c.stop != nil {
		completed.Stop = &stopPayload{Status: string(stopStatus(c.stop)), Reason: c.stop.Reason}
	}

	commit := &debate.StepCommit{Status: debate.DebateRunning, NextNode: c.next, Round: s.round}
	var stopped *stoppedPayload
	switch {
	case c.stop != nil:
		stopped = &stoppedPayload{Status: string(stopStatus(c.stop)), Reason: c.stop.Reason, Node: n.Name}
	case c.next == "":
		stopped = &stoppedPayload{Status: string(debate.DebateCompleted), Reason: ReasonEnd, Node: n.Name}
	case s.num >= s.p.MaxSteps:
		stopped = &stoppedPayload{Status: string(debate.DebateNeedsReview), Reason: ReasonMaxSteps, Node: n.Name, NextNode: c.next}
	case c.gate != nil:
		commit.Status = debate.DebateAwaitingReview
		commit.OpenGate = &debate.HumanGate{
			ID: GateID(s.d.ID, s.num), DebateID: s.d.ID, Node: n.Name, Reason: c.gate.Reason,
			ClaimIDs: append([]string(nil), c.gate.ClaimIDs...), Status: debate.GateOpen, CreatedAt: s.t1,
		}
	}
	if stopped != nil {
		commit.Status = debate.DebateStatus(stopped.Status)
		commit.StopReason = stopped.Reason
		commit.NextNode = ""
	}

	pend := s.opening(n, inHash)
	pend = append(pend, s.at(res.events)...)
	pend = append(pend, pendingEvent{typ: EventNodeCompleted, actor: ActorEngine, node: n.Name, payload: completed, at: s.t1})
	if n.EndsRound {
		pend = append(pend, pendingEvent{typ: EventRoundCompleted, actor: ActorEngine, node: n.Name, payload: roundPayload{Round: s.round}, at: s.t1})
		if stopped == nil {
			commit.Round = s.round + 1
		}
	}
	if g := commit.OpenGate; g != nil {
		pend = append(pend, pendingEvent{typ: EventGateCreated, actor: ActorEngine, node: n.Name, at: s.t1,
			payload: gateCreatedPayload{GateID: g.ID, Reason: g.Reason, ClaimIDs: nonNil(g.ClaimIDs), NextNode: c.next}})
	}
	if stopped != nil {
		pend = append(pend, pendingEvent{typ: EventDebateStopped, actor: ActorEngine, node: n.Name, payload: *stopped, at: s.t1})
	}
	events, err := s.e.seal(s.d, s.round, pend)
	if err != nil {
		return nil, err
	}
	commit.Checkpoint = &debate.Checkpoint{
		DebateID: s.d.ID, Step: s.num, Seq: events[len(events)-1].Seq, Node: n.Name,
		NextNode: commit.NextNode, Round: commit.Round, State: c.state,
		InputHash: inHash, OutputHash: c.hash, CreatedAt: s.t1,
	}
	return s.finish(commit, events), nil
}

func stopStatus(st *Stop) debate.DebateStatus { return cmp.Or(st.Status, debate.DebateCompleted) }

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// opening is the start of a step's events: debate.started on the first
// step, then node.started.
func (s *step) opening(n *Node, inHash string) []pendingEvent {
	pend := make([]pendingEvent, 0, 8)
	if s.cp == nil {
		var opts any = s.options()
		if !json.Valid(s.options()) {
			opts = string(s.options()) // recorded as it is rather than failing the step
		}
		pend = append(pend, pendingEvent{typ: EventDebateStarted, actor: ActorEngine, at: s.t0,
			payload: startedPayload{Protocol: s.p.Name, DealID: s.d.DealID, Options: opts, StateHash: inHash}})
	}
	return append(pend, pendingEvent{typ: EventNodeStarted, actor: ActorEngine, node: n.Name, at: s.t0,
		payload: nodeStartedPayload{Node: n.Name, Round: s.round, Step: s.num, Attempt: s.firstAttempt(), InputHash: inHash}})
}

// at stamps events with the step's end time.
func (s *step) at(pend []pendingEvent) []pendingEvent {
	for i := range pend {
		pend[i].at = s.t1
	}
	return pend
}

// failure builds the commit of a node that failed all its attempts (seed
// 004: needs_review). No checkpoint: the last one stays the resume point.
func (s *step) failure(n *Node, inHash string, res nodeResult, phase string) (*debate.StepCommit, error) {
	msg := s.e.cfg.Redact(res.err.Error())
	pend := s.opening(n, inHash)
	for _, ev := range s.at(res.events) {
		// A failed group's successful branches never merged: their
		// outputs are not part of the debate; their retries happened.
		if ev.typ == EventNodeRetry {
			pend = append(pend, ev)
		}
	}
	pend = append(pend,
		pendingEvent{typ: EventNodeFailed, actor: ActorEngine, node: n.Name, at: s.t1, payload: failedPayload{
			Node: n.Name, Step: s.num, Phase: phase, Attempts: res.attempts, Error: msg, FailedBranches: res.failedBranches}},
		pendingEvent{typ: EventDebateStopped, actor: ActorEngine, node: n.Name, at: s.t1, payload: stoppedPayload{
			Status: string(debate.DebateNeedsReview), Reason: ReasonNodeFailed, Node: n.Name, Error: msg}},
	)
	s.e.cfg.Logger.LogAttrs(context.Background(), slog.LevelError, "node failed",
		slog.String("debate_id", s.d.ID), slog.String("tenant_id", s.d.TenantID), slog.String("node", n.Name),
		slog.Int("round", s.round), slog.Int("attempt", res.attempts), slog.String("error", msg))
	events, err := s.e.seal(s.d, s.round, pend)
	if err != nil {
		return nil, err
	}
	return s.finish(&debate.StepCommit{
		Status: debate.DebateNeedsReview, StopReason: ReasonNodeFailed, Error: "node " + n.Name + ": " + msg,
		Round: s.round, Attempt: res.attempts,
	}, events), nil
}

// stop builds the commit of a step that ends the debate without running a
// node: debate.stopped alone.
func (s *step) stop(status debate.DebateStatus, reason, next, msg string) (*debate.StepCommit, error) {
	events, err := s.e.seal(s.d, s.round, []pendingEvent{{typ: EventDebateStopped, actor: ActorEngine, node: next, at: s.t0,
		payload: stoppedPayload{Status: string(status), Reason: reason, NextNode: next, Error: msg}}})
	if err != nil {
		return nil, err
	}
	s.t1 = s.t0
	return s.finish(&debate.StepCommit{Status: status, StopReason: reason, Error: msg, Round: s.round}, events), nil
}

func (s *step) finish(c *debate.StepCommit, events []debate.Event) *debate.StepCommit {
	c.DebateID = s.d.ID
	c.ExpectSeq, c.ExpectHash = s.d.LastSeq, s.d.HeadHash
	c.Events = events
	c.At = s.t1
	return c
}

package orchestrator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/redact"
)

// Sealer seals ledger events; package ledger implements it, the engine
// declares it. The engine calls it from one goroutine per step, in order.
type Sealer interface {
	// SealCanonical returns es completed as consecutive events after prev
	// (nil for the first event of a debate): Seq, PrevHash, Hash, KeyID and
	// Signature, each signed by the key of its TenantID and Actor. The
	// payloads are already in RFC 8785 form (the engine encodes each payload
	// once) and are hashed as given. prev may carry only DebateID, TenantID,
	// Seq and Hash (the engine knows the ledger's head from the debate, not
	// the head event). It must be deterministic: the same inputs give the
	// same bytes.
	SealCanonical(prev *debate.Event, es []debate.Event) ([]debate.Event, error)
}

// Config configures an Engine. Protocols and Sealer are required.
type Config struct {
	// Protocols are the protocols the engine runs.
	Protocols *Registry
	// Sealer seals the events of every commit.
	Sealer Sealer
	// Now is the clock (time.Now by default). The engine reads it twice
	// per step, from the step's goroutine: when the node starts and when
	// it ends. Times are stored in UTC, truncated to microseconds.
	Now func() time.Time
	// Rand returns a number in [0, 1) for backoff jitter
	// (math/rand/v2.Float64 by default). Calls are serialised. Jitter only
	// affects timing, never a commit's bytes.
	Rand func() float64
	// Sleep waits d or until ctx is done, returning ctx's error then; any
	// error abandons the step like a cancelled ctx (no commit). It may be
	// called concurrently by the branches of a parallel group. By default a
	// timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// BaseBackoff (100ms by default) and MaxBackoff (2s by default) shape
	// the retry delays: after the n-th failed attempt the engine sleeps a
	// uniformly random duration in [0, min(MaxBackoff, BaseBackoff·2^(n-1)))
	// ("full jitter").
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
	// MaxParallel bounds the branches of a parallel group that run at once
	// (16 by default).
	MaxParallel int
	// Logger receives retries and recovered panics (discarded by default).
	Logger *slog.Logger
	// Redact masks secrets in a failed attempt's error text before it is
	// logged or sealed into node.retry / node.failed / debate.stopped and
	// the debate's error: a ledger event can never be removed, and an error
	// may quote what an upstream said. Default redact.Text (credential
	// shapes only); cmd/ passes the Redactor that knows the configured keys.
	// It must be deterministic for a given input.
	Redact func(string) string
}

// Defaults of Config.
const (
	DefaultBaseBackoff = 100 * time.Millisecond
	DefaultMaxBackoff  = 2 * time.Second
	DefaultMaxParallel = 16
)

// Engine runs protocols one node at a time. It is safe for concurrent use:
// it holds no per-debate state, so one Engine serves every debate.
type Engine struct {
	cfg     Config // with its defaults filled in
	randMu  sync.Mutex
	workers workers
}

// New returns an Engine. It returns an error wrapping debate.ErrInvalid if
// Protocols or Sealer is missing, a backoff or MaxParallel is negative, or
// MaxBackoff is below BaseBackoff.
func New(cfg Config) (*Engine, error) {
	var errs []error
	if cfg.Protocols == nil {
		errs = append(errs, errors.New("config: Protocols is required"))
	}
	if cfg.Sealer == nil {
		errs = append(errs, errors.New("config: Sealer is required"))
	}
	if cfg.BaseBackoff < 0 || cfg.MaxBackoff < 0 {
		errs = append(errs, errors.New("backoffs must not be negative"))
	}
	if cfg.MaxParallel < 0 {
		errs = append(errs, errors.New("MaxParallel must not be negative"))
	}
	cfg.BaseBackoff = cmp.Or(cfg.BaseBackoff, DefaultBaseBackoff)
	cfg.MaxBackoff = cmp.Or(cfg.MaxBackoff, DefaultMaxBackoff)
	cfg.MaxParallel = cmp.Or(cfg.MaxParallel, DefaultMaxParallel)
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Redact == nil {
		cfg.Redact = redact.Text
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Sleep == nil {
		cfg.Sleep = Sleep
	}
	if cfg.MaxBackoff < cfg.BaseBackoff {
		errs = append(errs, fmt.Errorf("MaxBackoff %s is below BaseBackoff %s", cfg.MaxBackoff, cfg.BaseBackoff))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("orchestrator: %w: %w", debate.ErrInvalid, err)
	}
	return &Engine{cfg: cfg, workers: workers{jobs: make(chan func())}}, nil
}

// Sleep waits d or until ctx is done, returning ctx's error then: the
// default Config.Sleep (and the model client's).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// now reads the clock as the ledger stores times.
func (e *Engine) now() time.Time { return e.cfg.Now().UTC().Truncate(time.Microsecond) }

// backoff is the delay after the failed attempt number failed (1-based).
func (e *Engine) backoff(failed int) time.Duration {
	d := e.cfg.BaseBackoff
	for i := 1; i < failed && d < e.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, e.cfg.MaxBackoff)
	e.randMu.Lock()
	r := e.cfg.Rand()
	e.randMu.Unlock()
	if r < 0 || r >= 1 {
		r = 0
	}
	return time.Duration(r * float64(d))
}

// Permanent marks a node error as not worth retrying: the attempt that
// returns it is the node's last. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// head is the ledger's head as the sealer's prev: nil for an empty ledger.
func head(d *debate.Debate) *debate.Event {
	if d.LastSeq == 0 {
		return nil
	}
	return &debate.Event{DebateID: d.ID, TenantID: d.TenantID, Seq: d.LastSeq, Hash: d.HeadHash}
}

// pendingEvent is an event waiting to be sealed.
type pendingEvent struct {
	typ, actor, node string
	payload          any // a json.RawMessage is canonical (marshalPayload's) and used as is
	at               time.Time
}

// seal seals events in order after d's head.
func (e *Engine) seal(d *debate.Debate, round int, pend []pendingEvent) ([]debate.Event, error) {
	evs := make([]debate.Event, 0, len(pend))
	for _, p := range pend {
		payload, ok := p.payload.(json.RawMessage)
		if !ok {
			var err error
			if payload, err = marshalPayload(p.payload); err != nil {
				return nil, fmt.Errorf("orchestrator: encode %s payload: %w", p.typ, err)
			}
		}
		evs = append(evs, debate.Event{
			DebateID: d.ID, TenantID: d.TenantID, Type: p.typ, Actor: p.actor, Node: p.node,
			Round: round, Payload: payload, Time: p.at,
		})
	}
	out, err := e.cfg.Sealer.SealCanonical(head(d), evs)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: seal a step's events: %w", err)
	}
	return out, nil
}

// Abort returns the commit of an operator's abort (seed 003): a
// debate.aborted event signed by ActorOperator with the reason, who
// aborted (by) and the authority of the act (see ResolveGate), and status
// aborted. An empty reason is ReasonAborted. The debate's open gate, if
// the caller passes it, is closed as cancelled (no one may resolve it
// once the debate is over) and named in the event. Returns an error
// wrapping debate.ErrFailedPrecondition if the debate is already terminal.
func (e *Engine) Abort(d debate.Debate, reason string, by debate.Authority, open ...debate.HumanGate) (*debate.StepCommit, error) {
	if d.Status.Terminal() {
		return nil, fmt.Errorf("debate %q is already %s: %w", d.ID, d.Status, debate.ErrFailedPrecondition)
	}
	reason = cmp.Or(reason, ReasonAborted)
	now := e.now()
	actor := cmp.Or(by.Actor(), ActorOperator)
	payload := abortedPayload{Reason: reason, By: actor, Authority: authorityOrNil(by)}
	var cancelled *debate.HumanGate
	for _, g := range open {
		if g.Status == debate.GateOpen && g.DebateID == d.ID {
			c := g
			c.Status, c.Resolution, c.ResolvedBy, c.ResolvedAt = debate.GateCancelled, "debate aborted: "+reason, actor, &now
			c.ClaimIDs = append([]string(nil), g.ClaimIDs...)
			cancelled, payload.CancelledGate = &c, c.ID
			break
		}
	}
	events, err := e.seal(&d, d.Round, []pendingEvent{{
		typ: EventDebateAborted, actor: ActorOperator, node: d.NextNode, at: now, payload: payload,
	}})
	if err != nil {
		return nil, err
	}
	return &debate.StepCommit{
		DebateID: d.ID, ExpectSeq: d.LastSeq, ExpectHash: d.HeadHash, Events: events,
		Status: debate.DebateAborted, StopReason: reason, Error: d.Error, Round: d.Round, At: now,
		ResolveGate: cancelled,
	}, nil
}

// resolvable says, in the operator's terms and naming the gate and the
// debate, why gate of d cannot be resolved now; nil if it can. The error
// wraps debate.ErrFailedPrecondition.
func resolvable(d debate.Debate, gate debate.HumanGate) error {
	switch {
	case gate.DebateID != d.ID:
		return fmt.Errorf("gate %q is not a gate of debate %q: %w", gate.ID, d.ID, debate.ErrFailedPrecondition)
	case gate.Status == debate.GateApproved || gate.Status == debate.GateRejected:
		return fmt.Errorf("gate %q of debate %q is already resolved (%s by %s): %w",
			gate.ID, d.ID, gate.Status, cmp.Or(gate.ResolvedBy, "an operator"), debate.ErrFailedPrecondition)
	case gate.Status == debate.GateCancelled:
		return fmt.Errorf("gate %q of debate %q was cancelled when the debate stopped: %w", gate.ID, d.ID, debate.ErrFailedPrecondition)
	case gate.Status != debate.GateOpen:
		return fmt.Errorf("gate %q of debate %q is %s, not open: %w", gate.ID, d.ID, gate.Status, debate.ErrFailedPrecondition)
	case d.Status != debate.DebateAwaitingReview:
		return fmt.Errorf("debate %q is %s, not awaiting review: no gate of it can be resolved now: %w", d.ID, d.Status, debate.ErrFailedPrecondition)
	}
	return nil
}

// authorityOrNil returns a, or nil when no key authorised the act (an
// in-process call), so the payload then has no authority field.
func authorityOrNil(a debate.Authority) *debate.Authority {
	if a.KeyID == "" {
		return nil
	}
	return &a
}

// ResolveGate returns the commit of an operator's decision on the debate's
// open human gate: a human_gate.resolved event signed by ActorOperator
// (payload: gate_id, status, reason, by — the claimed actor, else the key —
// and authority: the authenticated key id and scopes and the claim), the gate updated (approved or
// rejected, Resolution, ResolvedBy, ResolvedAt), status running and Enqueue
// set, so that a worker runs the next node; that node receives the gate in
// NodeInput.Gate. Returns an error wrapping debate.ErrFailedPrecondition
// unless the debate is awaiting_review and the gate is an open gate of it.
func (e *Engine) ResolveGate(d debate.Debate, gate debate.HumanGate, approve bool, reason string, authority debate.Authority) (*debate.StepCommit, error) {
	if err := resolvable(d, gate); err != nil {
		return nil, err
	}
	now := e.now()
	by := cmp.Or(authority.Actor(), ActorOperator)
	g := gate
	g.Status = debate.GateRejected
	if approve {
		g.Status = debate.GateApproved
	}
	g.Resolution, g.ResolvedBy, g.ResolvedAt = reason, by, &now
	g.ClaimIDs = append([]string(nil), gate.ClaimIDs...)
	events, err := e.seal(&d, d.Round, []pendingEvent{{
		typ: EventGateResolved, actor: ActorOperator, node: gate.Node, at: now,
		payload: gateResolvedPayload{GateID: gate.ID, Status: string(g.Status), Reason: reason, By: by, Authority: authorityOrNil(authority)},
	}})
	if err != nil {
		return nil, err
	}
	return &debate.StepCommit{
		DebateID: d.ID, ExpectSeq: d.LastSeq, ExpectHash: d.HeadHash, Events: events,
		Status: debate.DebateRunning, Round: d.Round, NextNode: d.NextNode, Attempt: d.Attempt,
		ResolveGate: &g, Enqueue: true, At: now,
	}, nil
}

// Package runner executes debates durably: it loads a debate's head and last
// checkpoint, asks the engine for the next step, commits the step in one
// fenced transaction, publishes its events to local watchers, and repeats
// until the debate is terminal or waits for a person. Two schedulers drive
// it: River jobs on PostgreSQL (any replica can carry any debate on) and an
// in-process scheduler on the embedded store (unfinished debates resume at
// start-up).
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Store is what the runner reads and writes.
type Store interface {
	DebateGet(ctx context.Context, id string) (debate.Debate, error)
	CheckpointLatest(ctx context.Context, debateID string) (debate.Checkpoint, error)
	GateGet(ctx context.Context, debateID, gateID string) (debate.HumanGate, error)
	StepCommit(ctx context.Context, c debate.StepCommit) error
}

// Engine computes a debate's next step without writing anything.
type Engine interface {
	Step(ctx context.Context, d debate.Debate, cp *debate.Checkpoint, gate *debate.HumanGate) (*debate.StepCommit, error)
}

// Publisher hands committed events to the watchers on this replica (and
// to whatever else follows the ledgers this replica writes, such as a
// protocol's cache).
type Publisher interface {
	Publish(tenantID, debateID string, events []debate.Event)
}

// Publishers hands committed events to each of its publishers in turn.
type Publishers []Publisher

// Publish implements Publisher.
func (ps Publishers) Publish(tenantID, debateID string, events []debate.Event) {
	for _, p := range ps {
		p.Publish(tenantID, debateID, events)
	}
}

// Config configures a Runner.
type Config struct {
	Store     Store
	Engine    Engine
	Publisher Publisher // optional
	Logger    *slog.Logger
	// CommitTimeout bounds one commit, which runs even when the run's
	// context has been cancelled, so finished work is not thrown away;
	// default 10s.
	CommitTimeout time.Duration
	// Tracer makes a span per run and per node step (the global
	// OpenTelemetry provider's by default: a no-op unless configured).
	Tracer trace.Tracer
	// OnStep, if set, is called after every committed step of debate d
	// (as it stood before the step), with the step's time (metrics).
	OnStep func(d debate.Debate, c *debate.StepCommit, elapsed time.Duration)
}

// Runner drives debates step by step.
type Runner struct {
	cfg Config
	log *slog.Logger
	// ahead is cfg.Engine when it can compute steps ahead (else nil).
	ahead Pipeliner
}

// New returns a runner. Returns an error if the store or engine is missing.
func New(cfg Config) (*Runner, error) {
	if cfg.Store == nil || cfg.Engine == nil {
		return nil, errors.New("runner: store and engine are required")
	}
	cfg.CommitTimeout = cmp.Or(cfg.CommitTimeout, 10*time.Second)
	cfg.Tracer = cmp.Or(cfg.Tracer, otel.Tracer("github.com/debated/debated/internal/runner"))
	ahead, _ := cfg.Engine.(Pipeliner)
	return &Runner{cfg: cfg, log: cmp.Or(cfg.Logger, slog.Default()), ahead: ahead}, nil
}

// TenantContext returns ctx acting for tenantID, as the runner does for the
// debates it carries (jobs are not tied to an API key).
func TenantContext(ctx context.Context, tenantID string) context.Context {
	return debate.WithPrincipal(ctx, debate.Principal{TenantID: tenantID, KeyID: "runner"})
}

// Run carries the debate on until it is terminal or awaits review (nil), or
// ctx ends (ctx's error: the debate is handed back and resumes from its last
// commit). A step that loses the commit race to another worker is dropped
// and the runner continues from the new head.
//
// For a Pipelined protocol (see orchestrator.Protocol) the runner computes
// each step while the previous one commits, and commits it once that
// commit has landed (a step's commit is fenced by the head the previous
// one writes, so it can never land first); when the previous commit fails,
// the step computed ahead is thrown away. A step's events are published
// as soon as its commit lands, while the next step may still be computing.
func (r *Runner) Run(ctx context.Context, tenantID, debateID string) (err error) {
	ctx = TenantContext(ctx, tenantID)
	ctx, span := r.cfg.Tracer.Start(ctx, "debate.run", trace.WithAttributes(
		attribute.String("tenant_id", tenantID), attribute.String("debate_id", debateID)))
	defer func() {
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()
	var d debate.Debate
	var cp *debate.Checkpoint
	fresh := false     // d and cp are exactly what the store holds
	var ahead *planned // the step computed while the previous one committed
	for {
		if err := ctx.Err(); err != nil {
			ahead.drop()
			return err
		}
		if !fresh {
			ahead.drop()
			ahead = nil
			var err error
			if d, cp, err = r.load(ctx, debateID); err != nil {
				return err
			}
		}
		if !d.Status.Runnable() {
			ahead.drop()
			return nil
		}
		step := ahead
		ahead = nil
		if step == nil {
			gate, err := r.resolvedGate(ctx, d, cp)
			if err != nil {
				return err
			}
			if step, err = r.plan(ctx, d, func(sctx context.Context) (*debate.StepCommit, error) {
				return r.cfg.Engine.Step(sctx, d, cp, gate)
			}); err != nil {
				return err
			}
		}
		commit := step.commit
		done := make(chan error, 1)
		go func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(step.ctx), r.cfg.CommitTimeout)
			defer cancel()
			err := r.cfg.Store.StepCommit(cctx, *commit)
			if err == nil && r.cfg.Publisher != nil {
				// At once, not after the step computed meanwhile: with
				// model-backed turns that is a whole turn later. The next
				// step's publish follows its own commit, which waits for
				// this one.
				r.cfg.Publisher.Publish(tenantID, debateID, commit.Events)
			}
			done <- err
		}()
		// The commit is what the store will hold: carry on from it without
		// reading it back.
		next, nextCP := d, cp
		apply(&next, &nextCP, commit)
		if r.ahead != nil && next.Status.Runnable() && commit.OpenGate == nil && r.ahead.Pipelined(next.Protocol) {
			// A failure here (ctx cancelled, say) leaves the step to be
			// computed again once the commit has landed.
			ahead, _ = r.plan(ctx, next, func(sctx context.Context) (*debate.StepCommit, error) {
				return r.ahead.StepAhead(sctx, next, nextCP, commit.Events)
			})
		}
		err := <-done
		step.span.SetAttributes(attribute.Int("events", len(commit.Events)), attribute.String("status", string(commit.Status)))
		if err != nil && !errors.Is(err, debate.ErrConflict) {
			step.span.RecordError(err)
			step.span.SetStatus(codes.Error, "commit failed")
		}
		step.span.End()
		if errors.Is(err, debate.ErrConflict) {
			r.log.InfoContext(ctx, "step lost the commit race; reloading", slog.String("debate_id", debateID), slog.Int64("seq", d.LastSeq))
			fresh = false
			continue
		}
		if err != nil {
			ahead.drop()
			return fmt.Errorf("runner: commit of %s: %w", debateID, err)
		}
		if r.cfg.OnStep != nil {
			r.cfg.OnStep(d, commit, time.Since(step.start))
		}
		d, cp, fresh = next, nextCP, true
	}
}

// Pipeliner is an Engine that can compute a debate's next step while the
// previous one commits (orchestrator.Engine is one).
type Pipeliner interface {
	// Pipelined reports whether debates of the protocol may be computed
	// ahead.
	Pipelined(protocol string) bool
	// StepAhead computes the step after one whose commit is in flight: d
	// and cp as that commit leaves them, pending its events.
	StepAhead(ctx context.Context, d debate.Debate, cp *debate.Checkpoint, pending []debate.Event) (*debate.StepCommit, error)
}

// planned is a step computed and not yet committed, with its node span.
type planned struct {
	commit *debate.StepCommit
	ctx    context.Context // the span's
	span   trace.Span
	start  time.Time
}

// plan computes a step of d with compute, in a span named after its node.
// On an error it ends the span and returns ctx's error if ctx ended.
func (r *Runner) plan(ctx context.Context, d debate.Debate, compute func(context.Context) (*debate.StepCommit, error)) (*planned, error) {
	start := time.Now()
	node := cmp.Or(d.NextNode, "start")
	sctx, span := r.cfg.Tracer.Start(ctx, "node "+node, trace.WithAttributes(
		attribute.String("agent.node", node), attribute.String("tenant_id", d.TenantID),
		attribute.String("debate_id", d.ID), attribute.Int("round", d.Round), attribute.String("protocol", d.Protocol)))
	commit, err := compute(sctx)
	if err != nil {
		span.End()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("runner: step of %s: %w", d.ID, err)
	}
	return &planned{commit: commit, ctx: sctx, span: span, start: start}, nil
}

// drop ends the span of a step that will not be committed.
func (p *planned) drop() {
	if p != nil {
		p.span.SetAttributes(attribute.Bool("dropped", true))
		p.span.End()
	}
}

// load reads the debate and its last checkpoint.
func (r *Runner) load(ctx context.Context, debateID string) (debate.Debate, *debate.Checkpoint, error) {
	d, err := r.cfg.Store.DebateGet(ctx, debateID)
	if err != nil {
		return d, nil, fmt.Errorf("runner: load debate %s: %w", debateID, err)
	}
	switch c, err := r.cfg.Store.CheckpointLatest(ctx, debateID); {
	case err == nil:
		return d, &c, nil
	case errors.Is(err, debate.ErrNotFound):
		return d, nil, nil
	default:
		return d, nil, fmt.Errorf("runner: load checkpoint of %s: %w", debateID, err)
	}
}

// apply updates d and cp as the store does when it commits c.
func apply(d *debate.Debate, cp **debate.Checkpoint, c *debate.StepCommit) {
	if n := len(c.Events); n > 0 {
		d.LastSeq = c.Events[n-1].Seq
		d.HeadHash = c.Events[n-1].Hash
	}
	d.Status, d.StopReason, d.Error = c.Status, c.StopReason, c.Error
	d.Round, d.NextNode, d.Attempt = c.Round, c.NextNode, c.Attempt
	d.UpdatedAt = c.At
	if c.Checkpoint != nil {
		*cp = c.Checkpoint
	}
}

// resolvedGate returns the gate resolved since the last checkpoint, which
// the next node receives, or nil. A resolution is the only commit without a
// checkpoint, so the ledger being ahead of the checkpoint means the gate the
// checkpoint's step opened has been resolved.
func (r *Runner) resolvedGate(ctx context.Context, d debate.Debate, cp *debate.Checkpoint) (*debate.HumanGate, error) {
	if cp == nil || d.LastSeq <= cp.Seq {
		return nil, nil
	}
	g, err := r.cfg.Store.GateGet(ctx, d.ID, orchestrator.GateID(d.ID, cp.Step))
	if err != nil {
		return nil, fmt.Errorf("runner: load gate of %s: %w", d.ID, err)
	}
	return &g, nil
}

// Scheduler has the two writes that make a debate runnable. A store has
// them; a scheduler (River, Local) makes them through its store and
// schedules the debate they make runnable.
type Scheduler interface {
	DebateCreate(ctx context.Context, d debate.Debate) (debate.Debate, bool, error)
	StepCommit(ctx context.Context, c debate.StepCommit) error
}

// Scheduled returns st with its DebateCreate and StepCommit going through
// s: the debate store of the API, whose created debates, and those a
// resolved gate makes runnable again, are scheduled with their write.
func Scheduled(st debate.DebateStore, s Scheduler) debate.DebateStore {
	return scheduled{st, s}
}

type scheduled struct {
	debate.DebateStore
	s Scheduler
}

func (s scheduled) DebateCreate(ctx context.Context, d debate.Debate) (debate.Debate, bool, error) {
	return s.s.DebateCreate(ctx, d)
}

func (s scheduled) StepCommit(ctx context.Context, c debate.StepCommit) error {
	return s.s.StepCommit(ctx, c)
}

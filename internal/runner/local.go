package runner

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/debated/debated/internal/debate"
)

// Ref names a debate across tenants.
type Ref struct {
	TenantID string
	DebateID string
}

// Local schedules debates in this process: the embedded store's stand-in
// for River, with the same step semantics. It runs at most MaxWorkers
// debates at once; Submit never blocks.
type Local struct {
	runner *Runner
	store  Scheduler // the embedded store's writes, which Local schedules
	resume func(ctx context.Context) ([]Ref, error)
	log    *slog.Logger
	max    int

	mu      sync.Mutex
	ctx     context.Context // nil until Run
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	active  map[Ref]bool // running now
	again   map[Ref]bool // submitted again while running
	queue   []Ref
	running int
	stopped bool
}

// LocalConfig configures the in-process scheduler.
type LocalConfig struct {
	// MaxWorkers is how many debates run at once; default 16.
	MaxWorkers int
	// Resume lists the debates to carry on when Run starts (every tenant's
	// queued and running debates); nil resumes none.
	Resume func(ctx context.Context) ([]Ref, error)
	Logger *slog.Logger
}

// NewLocal returns an in-process scheduler over st running debates with r.
// Nothing runs until Run; DebateCreate, StepCommit and Submit work before
// (what they schedule waits for Run).
func NewLocal(st Scheduler, r *Runner, cfg LocalConfig) *Local {
	return &Local{runner: r, store: st, resume: cfg.Resume, log: cmp.Or(cfg.Logger, slog.Default()),
		max: cmp.Or(max(cfg.MaxWorkers, 0), 16), active: map[Ref]bool{}, again: map[Ref]bool{}}
}

// DebateCreate stores d (see debate.DebateStore) and, once it has
// committed, if it created the debate, runs it. If the process dies in
// between, Run's Resume finds the debate at the next start.
func (l *Local) DebateCreate(ctx context.Context, d debate.Debate) (debate.Debate, bool, error) {
	out, created, err := l.store.DebateCreate(ctx, d)
	if err == nil && created {
		l.Submit(out.TenantID, out.ID)
	}
	return out, created, err
}

// StepCommit commits c (see debate.DebateStore) and, once it has
// committed, if c.Enqueue, runs the debate.
func (l *Local) StepCommit(ctx context.Context, c debate.StepCommit) error {
	if err := l.store.StepCommit(ctx, c); err != nil || !c.Enqueue {
		return err
	}
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return err
	}
	l.Submit(tenant, c.DebateID)
	return nil
}

// Run resumes every unfinished debate Resume lists and schedules debates
// until ctx ends; then it hands every running debate back (they resume
// from their last commit at the next start) and returns once the runs
// have returned. It returns Resume's error without running anything.
func (l *Local) Run(ctx context.Context) error {
	var refs []Ref
	if l.resume != nil {
		var err error
		if refs, err = l.resume(ctx); err != nil {
			return err
		}
	}
	l.mu.Lock()
	l.ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l.dispatchLocked()
	l.mu.Unlock()
	for _, ref := range refs {
		l.Submit(ref.TenantID, ref.DebateID)
	}
	if len(refs) > 0 {
		l.log.InfoContext(ctx, "resuming unfinished debates", slog.Int("count", len(refs)))
	}
	<-ctx.Done()
	l.mu.Lock()
	l.stopped = true
	l.queue = nil
	l.cancel()
	l.mu.Unlock()
	l.wg.Wait()
	return nil
}

// Submit asks for the debate to be carried on. A debate already running is
// run again after its current run, so no submission is lost.
func (l *Local) Submit(tenantID, debateID string) {
	ref := Ref{tenantID, debateID}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	if l.active[ref] {
		l.again[ref] = true
		return
	}
	if !slices.Contains(l.queue, ref) {
		l.queue = append(l.queue, ref)
		l.dispatchLocked()
	}
}

func (l *Local) dispatchLocked() {
	for l.ctx != nil && l.running < l.max && len(l.queue) > 0 {
		ref := l.queue[0]
		l.queue = l.queue[1:]
		l.active[ref] = true
		l.running++
		l.wg.Add(1)
		go l.run(ref)
	}
}

func (l *Local) run(ref Ref) {
	defer l.wg.Done()
	for {
		err := l.runOne(ref)
		if err != nil && !errors.Is(err, context.Canceled) {
			l.log.Error("debate run failed", slog.String("tenant_id", ref.TenantID), slog.String("debate_id", ref.DebateID), slog.String("error", err.Error()))
		}
		l.mu.Lock()
		if l.again[ref] && !l.stopped {
			delete(l.again, ref)
			l.mu.Unlock()
			continue
		}
		delete(l.active, ref)
		l.running--
		l.dispatchLocked()
		l.mu.Unlock()
		return
	}
}

func (l *Local) runOne(ref Ref) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("panic in debate run")
			l.log.Error("panic in debate run", slog.Any("panic", p))
		}
	}()
	return l.runner.Run(l.ctx, ref.TenantID, ref.DebateID)
}

// QueueDepth reports how many debates are running or waiting for a slot.
func (l *Local) QueueDepth(context.Context) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running + len(l.queue), nil
}

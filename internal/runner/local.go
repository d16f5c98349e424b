package runner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
)

// RunnableLister lists the debates an in-process scheduler must resume at
// start-up (every tenant's queued and running debates).
type RunnableLister interface {
	RunnableDebates(ctx context.Context) ([]Ref, error)
}

// Ref names a debate across tenants.
type Ref struct {
	TenantID string
	DebateID string
}

// Local schedules debates in this process: the embedded store's stand-in
// for River, with the same step semantics. It runs at most MaxConcurrent
// debates at once; Submit never blocks.
type Local struct {
	runner *Runner
	log    *slog.Logger
	max    int

	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	active  map[Ref]bool // running now
	again   map[Ref]bool // submitted again while running
	queue   []Ref
	running int
	stopped bool
}

// NewLocal returns an in-process scheduler over r running at most max
// debates at once (default 16).
func NewLocal(r *Runner, max int, log *slog.Logger) *Local {
	if max <= 0 {
		max = 16
	}
	if log == nil {
		log = slog.Default()
	}
	return &Local{runner: r, log: log, max: max, active: map[Ref]bool{}, again: map[Ref]bool{}}
}

// Start begins scheduling and resumes every unfinished debate lister
// returns.
func (l *Local) Start(ctx context.Context, lister RunnableLister) error {
	l.mu.Lock()
	l.ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l.mu.Unlock()
	if lister == nil {
		return nil
	}
	refs, err := lister.RunnableDebates(ctx)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		l.Submit(ref.TenantID, ref.DebateID)
	}
	if len(refs) > 0 {
		l.log.Info("resuming unfinished debates", slog.Int("count", len(refs)))
	}
	return nil
}

// Submit asks for the debate to be carried on. A debate already running is
// run again after its current run, so no submission is lost.
func (l *Local) Submit(tenantID, debateID string) {
	ref := Ref{tenantID, debateID}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || l.ctx == nil {
		return
	}
	if l.active[ref] {
		l.again[ref] = true
		return
	}
	for _, q := range l.queue {
		if q == ref {
			return
		}
	}
	l.queue = append(l.queue, ref)
	l.dispatchLocked()
}

func (l *Local) dispatchLocked() {
	for l.running < l.max && len(l.queue) > 0 {
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

// Pending reports how many debates are running or waiting for a slot.
func (l *Local) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running + len(l.queue)
}

// Stop hands every running debate back (they resume from their last commit
// at the next start) and waits for the runs to return or ctx to end.
func (l *Local) Stop(ctx context.Context) error {
	l.mu.Lock()
	l.stopped = true
	l.queue = nil
	if l.cancel != nil {
		l.cancel()
	}
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

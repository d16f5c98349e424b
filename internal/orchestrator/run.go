package orchestrator

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"golang.org/x/sync/errgroup"
)

var errTimeout = errors.New("timed out")

// outcome is what retry tells of a node's attempts.
type outcome struct {
	attempts int           // the number of the last attempt made
	retries  []failedTrial // attempts that failed and were retried, in order
	err      error         // the last attempt's error when the node gave up
	// canceled, when ctx was cancelled (shutdown), is what Step returns
	// instead of a commit.
	canceled error
}

type failedTrial struct {
	attempt int
	err     string
}

// retryEvents turns the retried attempts into node.retry events.
func (o outcome) retryEvents(node, phase string) []pendingEvent {
	out := make([]pendingEvent, len(o.retries))
	for i, r := range o.retries {
		out[i] = pendingEvent{typ: EventNodeRetry, actor: ActorEngine, node: node,
			payload: retryPayload{Node: node, Phase: phase, Attempt: r.attempt, Error: r.err}}
	}
	return out
}

// retry runs try for attempts first, first+1, … until one succeeds, one
// fails permanently, n's MaxAttempts is reached or ctx is cancelled,
// sleeping a jittered exponential backoff between attempts.
func retry[T any](ctx context.Context, s *step, n *Node, phase string, first int, try func(ctx context.Context, attempt int) (T, error)) (T, outcome) {
	var zero T
	var o outcome
	for a := first; ; a++ {
		v, err := try(ctx, a)
		o.attempts = a
		if err == nil {
			return v, o
		}
		if ctx.Err() != nil {
			o.canceled = ctx.Err()
			return zero, o
		}
		if a >= n.maxAttempts() || isPermanent(err) {
			o.err = err
			return zero, o
		}
		msg := s.e.cfg.Redact(err.Error())
		o.retries = append(o.retries, failedTrial{attempt: a, err: msg})
		delay := s.e.backoff(a - first + 1)
		s.e.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "node attempt failed; retrying",
			slog.String("debate_id", s.d.ID), slog.String("tenant_id", s.d.TenantID), slog.String("node", n.Name),
			slog.String("phase", phase), slog.Int("round", s.round), slog.Int("attempt", a),
			slog.Duration("backoff", delay), slog.String("error", msg))
		if err := s.e.cfg.Sleep(ctx, delay); err != nil {
			o.canceled = cmp.Or(ctx.Err(), err)
			return zero, o
		}
	}
}

// workers run the engine's node calls on goroutines that outlive a call
// for a while: a node's call grows a fresh goroutine's stack several times
// over (decoding, the gates), which cost about 3% of an IDIS debate's CPU;
// a worker's stack has grown already. Every call still has a goroutine of
// its own: a call that finds no idle worker starts one.
type workers struct{ jobs chan func() }

// workerIdle is how long an idle worker waits for a call before it exits.
const workerIdle = 250 * time.Millisecond

// run runs fn on an idle worker, or on a new one. fn must not panic.
func (w *workers) run(fn func()) {
	select {
	case w.jobs <- fn:
	default:
		go w.work(fn)
	}
}

func (w *workers) work(fn func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		fn()
		idle.Reset(workerIdle)
		select {
		case fn = <-w.jobs:
		case <-idle.C:
			return
		}
	}
}

// call runs f in its own goroutine under timeout, recovering a panic into an
// error. When the timeout expires first the goroutine is abandoned (it ends
// when f returns; its result is dropped) and call returns a timeout error,
// so a node that ignores its context cannot hold a worker. When ctx itself
// is done, call returns ctx's error.
func call[T any](ctx context.Context, s *step, node string, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	var zero T
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned goroutine never blocks
	s.e.workers.run(func() {
		defer func() {
			if r := recover(); r != nil {
				s.recovered(node, r)
				done <- result{err: panicError(r)}
			}
		}()
		v, err := f(actx)
		done <- result{v: v, err: err}
	})
	// Made only when needed: most calls end in time.
	timedOut := func() error { return fmt.Errorf("%w after %s", errTimeout, timeout) }
	select {
	case r := <-done:
		if r.err != nil {
			if err := ctx.Err(); err != nil {
				return zero, err
			}
			if errors.Is(actx.Err(), context.DeadlineExceeded) {
				return zero, timedOut()
			}
		}
		return r.v, r.err
	case <-actx.Done():
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		select {
		case r := <-done: // finished at the deadline: keep a success
			if r.err == nil {
				return r.v, nil
			}
		default:
		}
		return zero, timedOut()
	}
}

// guard runs protocol code (Next, Merge) in the caller's goroutine,
// recovering a panic into an error.
func guard[T any](s *step, node string, f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.recovered(node, r)
			err = panicError(r)
		}
	}()
	return f()
}

func (s *step) recovered(node string, r any) {
	s.e.cfg.Logger.LogAttrs(context.Background(), slog.LevelError, "panic recovered",
		slog.String("debate_id", s.d.ID), slog.String("tenant_id", s.d.TenantID), slog.String("node", node),
		slog.Int("round", s.round), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
}

// runGroup runs a parallel group: every branch concurrently (at most
// MaxParallel at once) on the same input state, each with its own timeout,
// attempts and backoff. It waits for all of them (a failing branch does not
// cancel its siblings, so that a failure's commit does not depend on
// timing), then merges the outputs in declared order.
func (s *step) runGroup(ctx context.Context, g *Node, state []byte, hash string) nodeResult {
	type branchResult struct {
		c *checked
		o outcome
	}
	results := make([]branchResult, len(g.Branches))
	var eg errgroup.Group
	eg.SetLimit(min(s.e.cfg.MaxParallel, len(g.Branches)))
	for i, b := range g.Branches {
		eg.Go(func() error {
			defer func() {
				if r := recover(); r != nil { // the engine's own code: never take the process down
					s.recovered(b.Name, r)
					results[i] = branchResult{o: outcome{attempts: 1, err: panicError(r)}}
				}
			}()
			c, o := retry(ctx, s, b, "", 1, s.taskAttempt(b, state, hash, true))
			results[i] = branchResult{c: c, o: o}
			return nil
		})
	}
	_ = eg.Wait()
	if err := ctx.Err(); err != nil {
		return nodeResult{canceled: err}
	}

	res := nodeResult{attempts: 1}
	outs := make([]*NodeOutput, len(g.Branches))
	var gate *GateRequest
	var stop *Stop
	for i, b := range g.Branches {
		r := results[i]
		if r.o.canceled != nil {
			return nodeResult{canceled: r.o.canceled}
		}
		res.events = append(res.events, r.o.retryEvents(b.Name, "")...)
		res.attempts = max(res.attempts, r.o.attempts)
		if r.o.err != nil {
			res.failedBranches = append(res.failedBranches, b.Name)
			if res.err == nil {
				res.err = fmt.Errorf("branch %s: %w", b.Name, r.o.err)
			}
			continue
		}
		res.events = append(res.events, r.c.events...)
		counts := map[string]int{}
		for _, ev := range r.c.events {
			counts[ev.typ]++
		}
		res.branches = append(res.branches, branchSummary{Node: b.Name, Actor: b.actor(), Attempts: r.o.attempts, Events: counts})
		out := *r.c.out
		if out.State != nil {
			out.State = r.c.state // canonical
		}
		outs[i] = &out
		switch {
		case r.c.stop != nil && stop == nil:
			stop = r.c.stop
		case r.c.gate != nil && gate == nil:
			gate = &GateRequest{Reason: r.c.gate.Reason, ClaimIDs: append([]string(nil), r.c.gate.ClaimIDs...)}
		case r.c.gate != nil:
			gate.Reason += "; " + r.c.gate.Reason
			gate.ClaimIDs = append(gate.ClaimIDs, r.c.gate.ClaimIDs...)
		}
	}
	if res.err != nil {
		return res
	}
	// Merge and the edge run once: the same outputs would merge the same,
	// so an error here fails the step rather than re-running the branches.
	merged, err := guard(s, g.Name, func() ([]byte, error) { return g.Merge(bytes.Clone(state), outs) })
	if err != nil {
		res.err = fmt.Errorf("merge: %w", err)
		return res
	}
	c := &checked{out: &NodeOutput{}, state: state, hash: hash, stop: stop}
	if merged != nil {
		if c.state, c.hash, err = canonical(merged); err != nil {
			res.err = fmt.Errorf("merge: state: %w", err)
			return res
		}
	}
	if stop == nil {
		if c.next, err = s.next(g, c.state); err != nil {
			res.err = err
			return res
		}
		if gate != nil {
			if c.next == "" {
				res.err = fmt.Errorf("gate: group %q asks for a gate but has no next node to resume at", g.Name)
				return res
			}
			var seen orderedSet
			seen.add(gate.ClaimIDs...)
			gate.ClaimIDs = seen.list
			c.gate = gate
		}
	}
	res.out = c
	return res
}

// Package stream fans a debate's ledger out to its watchers. Each debate
// watched on this replica has one feed: a bounded window of its latest
// events, filled either by the local committer (Publish) or, for commits
// made on another replica, by one read from the store per notification
// (Poke). Watchers read the window when they are inside it and the store
// when they fall behind, so a slow watcher only slows itself: publishing
// never blocks on a watcher.
package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/debated/debated/internal/debate"
)

// Store is what the hub reads: a debate's events after a seq, and its
// status. Both are scoped to the tenant of ctx.
type Store interface {
	EventList(ctx context.Context, debateID string, afterSeq int64, limit int) ([]debate.Event, error)
	DebateGet(ctx context.Context, id string) (debate.Debate, error)
}

// Config tunes a hub. Zero values take the defaults.
type Config struct {
	// Window is how many recent events a feed keeps; default 4096.
	Window int
	// Poll is how often a watcher re-reads the store when it hears
	// nothing, in case a notification was lost; default 2s.
	Poll time.Duration
	// Batch is how many events one store read returns; default 500.
	Batch  int
	Logger *slog.Logger
}

// Hub holds the feeds of the debates watched on this replica.
type Hub struct {
	store Store
	cfg   Config
	log   *slog.Logger

	mu      sync.Mutex
	feeds   map[key]*feed
	closed  bool
	closing chan struct{}
}

type key struct{ tenant, debate string }

// feed is one debate's window of recent events.
type feed struct {
	mu      sync.Mutex
	events  []debate.Event // contiguous seqs, the latest at the end
	lastSeq int64
	wake    chan struct{} // closed and replaced on every change
	refs    int
	loading bool
}

// New returns a hub reading from store.
func New(store Store, cfg Config) *Hub {
	if cfg.Window <= 0 {
		cfg.Window = 4096
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Hub{store: store, cfg: cfg, log: log, feeds: map[key]*feed{}, closing: make(chan struct{})}
}

// ErrClosed is returned to watchers when the hub shuts down (the server
// ends their streams with UNAVAILABLE and they resume elsewhere).
var ErrClosed = errors.New("stream: hub closed")

// Close ends every watch with ErrClosed.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.closing)
	}
}

// Watching reports how many watchers the hub serves.
func (h *Hub) Watching() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, f := range h.feeds {
		f.mu.Lock()
		n += f.refs
		f.mu.Unlock()
	}
	return n
}

func (h *Hub) acquire(k key) *feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.feeds[k]
	if f == nil {
		f = &feed{wake: make(chan struct{})}
		h.feeds[k] = f
	}
	f.mu.Lock()
	f.refs++
	f.mu.Unlock()
	return f
}

func (h *Hub) release(k key, f *feed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f.mu.Lock()
	f.refs--
	empty := f.refs == 0
	f.mu.Unlock()
	if empty && h.feeds[k] == f {
		delete(h.feeds, k)
	}
}

func (h *Hub) lookup(k key) *feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.feeds[k]
}

// Publish hands freshly committed events (contiguous, in seq order) to the
// debate's watchers on this replica; each watcher derives the debate's
// status from them. It never blocks on a watcher. Events that do not
// continue the window make the watchers catch up from the store instead.
func (h *Hub) Publish(tenantID, debateID string, events []debate.Event) {
	f := h.lookup(key{tenantID, debateID})
	if f == nil {
		return
	}
	f.append(events, h.cfg.Window)
}

// Poke says that the debate changed on another replica: the feed reads the
// new events from the store once, for all its watchers.
func (h *Hub) Poke(tenantID, debateID string) {
	k := key{tenantID, debateID}
	f := h.lookup(k)
	if f == nil {
		return
	}
	f.mu.Lock()
	if f.loading {
		f.mu.Unlock()
		return
	}
	f.loading = true
	after := f.lastSeq
	f.mu.Unlock()
	go func() {
		defer func() {
			f.mu.Lock()
			f.loading = false
			f.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(debate.WithPrincipal(context.Background(), debate.Principal{TenantID: tenantID}), 10*time.Second)
		defer cancel()
		evs, err := h.store.EventList(ctx, debateID, after, h.cfg.Batch)
		if err != nil {
			h.log.Warn("stream: reading new events", slog.String("debate_id", debateID), slog.String("error", err.Error()))
			return
		}
		f.append(evs, h.cfg.Window)
		if len(evs) == h.cfg.Batch {
			h.Poke(tenantID, debateID)
		}
	}()
}

func (f *feed) append(events []debate.Event, window int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range events {
		switch {
		case e.Seq <= f.lastSeq:
			continue // already have it
		case e.Seq == f.lastSeq+1 || f.lastSeq == 0 && len(f.events) == 0:
			f.events = append(f.events, e)
			f.lastSeq = e.Seq
		default:
			// A gap: drop the window; watchers catch up from the store.
			f.events = f.events[:0]
			f.events = append(f.events, e)
			f.lastSeq = e.Seq
		}
	}
	if n := len(f.events) - window; n > 0 {
		f.events = append(f.events[:0:0], f.events[n:]...)
	}
	close(f.wake)
	f.wake = make(chan struct{})
}

// since returns the window's events after seq, whether the window covers
// seq (if not, read the store), and the feed's wake channel.
func (f *feed) since(after int64) ([]debate.Event, bool, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.events) == 0 || after < f.events[0].Seq-1 {
		return nil, false, f.wake
	}
	i := int(after - f.events[0].Seq + 1)
	if i >= len(f.events) {
		return nil, true, f.wake
	}
	out := append([]debate.Event(nil), f.events[i:]...)
	return out, true, f.wake
}

// Item is one streamed event with the debate's status as of that event.
type Item struct {
	Event  debate.Event
	Status debate.DebateStatus
}

// Watch sends every event of the debate with seq > after to send, in
// order, then follows the debate until it is terminal and every event has
// been sent. It returns nil then, ctx's error when the watcher leaves,
// ErrClosed when the hub closes, and send's error when sending fails. ctx
// carries the watcher's tenant. Returns debate.ErrNotFound for an unknown
// debate, and debate.ErrDataLoss when a terminal debate's recorded head is
// beyond the events the store has (they were removed behind its back).
func (h *Hub) Watch(ctx context.Context, debateID string, after int64, send func(Item) error) error {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return err
	}
	d, err := h.store.DebateGet(ctx, debateID)
	if err != nil {
		return err
	}
	k := key{tenant, debateID}
	f := h.acquire(k)
	defer h.release(k, f)
	var tracker statusTracker
	forceStore := false
	for {
		var evs []debate.Event
		covered := false
		var wake <-chan struct{}
		if !forceStore {
			evs, covered, wake = f.since(after)
		} else {
			_, _, wake = f.since(after)
		}
		forceStore = false
		if !covered {
			if evs, err = h.store.EventList(ctx, debateID, after, h.cfg.Batch); err != nil {
				return err
			}
		}
		for _, e := range evs {
			if err := send(Item{Event: e, Status: tracker.after(e)}); err != nil {
				return err
			}
			after = e.Seq
		}
		if len(evs) > 0 {
			continue // there may be more right away
		}
		// Caught up. Stop when the debate is terminal and its head is sent.
		if tracker.current.Terminal() || d.Status.Terminal() {
			if d, err = h.store.DebateGet(ctx, debateID); err != nil {
				return err
			}
			if d.Status.Terminal() && after >= d.LastSeq {
				return nil
			}
			if d.Status.Terminal() && !covered {
				// A terminal debate no longer moves: if the store still has
				// no event after this one, its recorded head names events
				// that are gone, and waiting would be forever.
				more, err := h.store.EventList(ctx, debateID, after, 1)
				if err != nil {
					return err
				}
				if len(more) == 0 {
					return fmt.Errorf("debate %s is %s with its head at seq %d, but its events stop at seq %d: %w",
						debateID, d.Status, d.LastSeq, after, debate.ErrDataLoss)
				}
			}
		}
		timer := time.NewTimer(h.cfg.Poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-h.closing:
			timer.Stop()
			return ErrClosed
		case <-wake:
			timer.Stop()
		case <-timer.C:
			// Nothing heard: a notification may have been lost. Read the
			// store, and the debate's status, next time round.
			forceStore = true
			if d, err = h.store.DebateGet(ctx, debateID); err != nil {
				return err
			}
		}
	}
}

// statusTracker derives a debate's status from its event types, so every
// streamed event says where the debate stood after it.
type statusTracker struct{ current debate.DebateStatus }

func (s *statusTracker) after(e debate.Event) debate.DebateStatus {
	if s.current.Terminal() && e.Type != "debate.aborted" {
		return s.current
	}
	switch e.Type {
	case "debate.aborted":
		s.current = debate.DebateAborted
	case "debate.stopped":
		var p struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(e.Payload, &p)
		if p.Status != "" {
			s.current = debate.DebateStatus(p.Status)
		} else {
			s.current = debate.DebateCompleted
		}
	case "human_gate.created":
		s.current = debate.DebateAwaitingReview
	default:
		s.current = debate.DebateRunning
	}
	return s.current
}

// Package stream fans a debate's ledger out to its watchers. Each debate
// watched on this replica has one feed: a bounded window of its latest
// events, filled either by the local committer (Publish) or, for commits
// made on another replica, by one read from the store per notification
// (Poke). Watchers read the window when they are inside it and the store
// when they fall behind, so a slow watcher only slows itself: publishing
// never blocks on a watcher and never waits for one.
//
// The window is shared: an event is held once per debate, not once per
// watcher, and so is whatever the server derives from it (its wire
// encoding, see Entry.Memo and Batch.Shared). A watcher holds only its
// position (a seq), so its memory does not grow with how far behind it is;
// one that falls out of the window reads the store by seq, in batches,
// until it is back inside. Publishing wakes the watchers of a debate once
// per commit, and with many watchers at most once per pace interval (see
// Config.PacePerWatcher), so that a large audience receives batches
// instead of taking the CPU from the debate it watches.
package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
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
	// WindowBytes bounds the window's events in bytes (see Entry.Size);
	// default 16 MiB. The window always keeps the latest event.
	WindowBytes int
	// Poll is how often a watcher re-reads the store when it hears
	// nothing, in case a notification was lost; default 2s.
	Poll time.Duration
	// Batch is how many events one store read returns; default 500.
	Batch int
	// MaxBatchBytes bounds the events of one Batch in bytes (Entry.Size);
	// a single larger event makes a batch of its own. Default 64 KiB
	// (gRPC's per-stream write quota: a bigger message would wait for the
	// client anyway).
	MaxBatchBytes int
	// MaxBatchEvents bounds the events of one Batch; default 512.
	MaxBatchEvents int
	// PacePerWatcher paces the wake-ups of a debate's watchers: each is
	// woken at most once per pace interval (PacePerWatcher × watchers, at
	// most MaxPace), the events published meanwhile going out together as
	// batches, and the watchers are spread over the interval in slots
	// woken one after another, so that a large audience shares the machine
	// with the debate instead of starving it. Below 2ms the interval is not
	// spread and watchers are woken at once (one watcher: at every
	// commit). Default 25µs; negative disables pacing.
	PacePerWatcher time.Duration
	// MaxPace caps the pace interval; default 25ms.
	MaxPace time.Duration
	// MaxBackoff caps the rest after a slot whose watchers took longer
	// than a tick to send: the next slot waits as long as that one took
	// (fan-out then takes at most about half the CPU it gets), at most
	// MaxBackoff. Default 5ms.
	MaxBackoff time.Duration
	Logger     *slog.Logger
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

	storeReads atomic.Int64
}

type key struct{ tenant, debate string }

// New returns a hub reading from store.
func New(store Store, cfg Config) *Hub {
	if cfg.Window <= 0 {
		cfg.Window = 4096
	}
	if cfg.WindowBytes <= 0 {
		cfg.WindowBytes = 16 << 20
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	if cfg.MaxBatchBytes <= 0 {
		cfg.MaxBatchBytes = 64 << 10
	}
	if cfg.MaxBatchEvents <= 0 {
		cfg.MaxBatchEvents = 512
	}
	if cfg.PacePerWatcher == 0 {
		cfg.PacePerWatcher = 25 * time.Microsecond
	}
	if cfg.MaxPace <= 0 {
		cfg.MaxPace = 25 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Millisecond
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
		n += int(f.refs.Load())
	}
	return n
}

// StoreReads reports how many event reads the hub has made from the store
// (watchers catching up and notifications from other replicas), for tests
// and metrics.
func (h *Hub) StoreReads() int64 { return h.storeReads.Load() }

func (h *Hub) acquire(k key) *feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.feeds[k]
	if f == nil {
		f = newFeed(h.cfg)
		h.feeds[k] = f
	}
	f.refs.Add(1)
	return f
}

func (h *Hub) release(k key, f *feed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.refs.Add(-1) == 0 && h.feeds[k] == f {
		delete(h.feeds, k)
		f.stop()
	}
}

func (h *Hub) lookup(k key) *feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.feeds[k]
}

// Publish hands freshly committed events (contiguous, in seq order) to the
// debate's watchers on this replica. It never blocks on a watcher: it
// appends to the debate's window and wakes the watchers (at once, or at
// the end of the current pace interval). Events that do not continue the
// window make the watchers catch up from the store instead.
func (h *Hub) Publish(tenantID, debateID string, events []debate.Event) {
	f := h.lookup(key{tenantID, debateID})
	if f == nil || len(events) == 0 {
		return
	}
	f.append(events)
}

// Poke says that the debate changed on another replica: the feed reads the
// new events from the store once, for all its watchers, and wakes them only
// if there were any.
func (h *Hub) Poke(tenantID, debateID string) {
	k := key{tenantID, debateID}
	f := h.lookup(k)
	if f == nil {
		return
	}
	f.mu.Lock()
	if f.loading {
		f.reload = true
		f.mu.Unlock()
		return
	}
	f.loading = true
	f.mu.Unlock()
	go h.load(tenantID, debateID, f)
}

// load reads the feed's new events from the store until it has them all
// (and again if a Poke came meanwhile).
func (h *Hub) load(tenantID, debateID string, f *feed) {
	ctx, cancel := context.WithTimeout(debate.WithPrincipal(context.Background(), debate.Principal{TenantID: tenantID}), 10*time.Second)
	defer cancel()
	for {
		h.storeReads.Add(1)
		evs, err := h.store.EventList(ctx, debateID, f.lastSeq(), h.cfg.Batch)
		if err != nil {
			h.log.Warn("stream: reading new events", slog.String("debate_id", debateID), slog.String("error", err.Error()))
		} else if len(evs) > 0 {
			f.append(evs)
		}
		f.mu.Lock()
		again := err == nil && (len(evs) == h.cfg.Batch || f.reload)
		f.reload = false
		if !again {
			f.loading = false
		}
		f.mu.Unlock()
		if !again {
			return
		}
	}
}

// Entry is one event of a debate as watchers receive it: the event, the
// debate's status as of it, and a memo for what the server derives from it
// once for every watcher (its wire encoding). Entries are shared between
// watchers: never modify one.
type Entry struct {
	Event  debate.Event
	Status debate.DebateStatus
	// Memo holds the server's encoding of the event, computed by the first
	// watcher that needs it.
	Memo Memo
	// single is the memo of the one-event batch of this entry.
	single Memo
}

// Size is an upper bound of the entry's encoded size in bytes: its
// strings plus a fixed allowance for field tags, numbers and the time.
func (e *Entry) Size() int {
	ev := &e.Event
	return 64 + len(ev.DebateID) + len(ev.Type) + len(ev.Actor) + len(ev.Node) + len(ev.Payload) +
		len(ev.PrevHash) + len(ev.Hash) + len(ev.KeyID) + len(ev.Signature)
}

// Memo holds a value computed once, by whichever caller asks first.
type Memo struct {
	once sync.Once
	v    any
	err  error
}

// Get returns the memo's value, computing it with fn on the first call;
// later calls (concurrent ones wait) return the same value and error.
func (m *Memo) Get(fn func() (any, error)) (any, error) {
	m.once.Do(func() { m.v, m.err = fn() })
	return m.v, m.err
}

// Batch is what a watcher sends in one message: consecutive entries, one
// when the watcher is live, several when it is behind.
type Batch struct {
	Entries []*Entry
	shared  *Memo
}

// Last returns the batch's last entry.
func (b Batch) Last() *Entry { return b.Entries[len(b.Entries)-1] }

// Status is the debate's status as of the batch's last event.
func (b Batch) Status() debate.DebateStatus { return b.Last().Status }

// Shared returns a value derived from the whole batch (its encoded
// message), computed once for every watcher that is sent the same events
// from the same window, and per watcher otherwise.
func (b Batch) Shared(fn func() (any, error)) (any, error) {
	if len(b.Entries) == 1 {
		return b.Entries[0].single.Get(fn)
	}
	if b.shared == nil {
		return fn()
	}
	return b.shared.Get(fn)
}

// Watch sends every event of the debate with seq > after to send, in
// order and in batches (see Batch), then follows the debate until it is
// terminal and every event has been sent. It returns nil then, ctx's error
// when the watcher leaves, ErrClosed when the hub closes, and send's error
// when sending fails. ctx carries the watcher's tenant. Returns
// debate.ErrNotFound for an unknown debate, and debate.ErrDataLoss when a
// terminal debate's recorded head is beyond the events the store has (they
// were removed behind its back).
func (h *Hub) Watch(ctx context.Context, debateID string, after int64, send func(Batch) error) error {
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
	sl := f.join()
	var tracker statusTracker
	var timer *time.Timer
	forceStore := false
	for {
		wake := sl.wakeChan()
		var batches []Batch
		covered := false
		if !forceStore {
			batches, covered = f.since(after)
			if !covered {
				// Behind the window: fill it from the store once for
				// every watcher in the same place (an audience joining
				// at seq 0), when what is missing fits in it.
				filled, err := h.fill(ctx, f, debateID, after, d.LastSeq)
				if err != nil {
					return err
				}
				if filled {
					batches, covered = f.since(after)
				}
			}
		}
		forceStore = false
		if !covered {
			h.storeReads.Add(1)
			evs, err := h.store.EventList(ctx, debateID, after, h.cfg.Batch)
			if err != nil {
				return err
			}
			batches = h.batchesOf(evs, &tracker)
		}
		for _, b := range batches {
			if err := send(b); err != nil {
				return err
			}
			after = b.Last().Event.Seq
			tracker.current = b.Status()
		}
		if len(batches) > 0 {
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
		if timer == nil {
			timer = time.NewTimer(h.cfg.Poll)
			defer timer.Stop()
		} else {
			timer.Reset(h.cfg.Poll)
		}
		sl.park()
		select {
		case <-ctx.Done():
			sl.unpark()
			return ctx.Err()
		case <-h.closing:
			sl.unpark()
			return ErrClosed
		case <-wake:
			sl.unpark()
			timer.Stop()
		case <-timer.C:
			sl.unpark()
			// Nothing heard: a notification may have been lost. Read the
			// store, and the debate's status, next time round.
			forceStore = true
			if d, err = h.store.DebateGet(ctx, debateID); err != nil {
				return err
			}
		}
	}
}

// batchesOf makes a watcher's own batches of events read from the store.
func (h *Hub) batchesOf(evs []debate.Event, tracker *statusTracker) []Batch {
	entries := make([]*Entry, len(evs))
	for i, e := range evs {
		entries[i] = &Entry{Event: e, Status: tracker.after(e)}
	}
	var out []Batch
	for len(entries) > 0 {
		n := cut(entries, h.cfg.MaxBatchEvents, h.cfg.MaxBatchBytes)
		out = append(out, Batch{Entries: entries[:n:n]})
		entries = entries[n:]
	}
	return out
}

// cut returns how many of entries (at least one) fit in one batch.
func cut(entries []*Entry, maxEvents, maxBytes int) int {
	n, size := 0, 0
	for n < len(entries) && n < maxEvents {
		size += entries[n].Size()
		if n > 0 && size > maxBytes {
			break
		}
		n++
	}
	return n
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

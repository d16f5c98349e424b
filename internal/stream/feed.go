package stream

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/debated/debated/internal/debate"
)

// feed is one debate's window of recent events on this replica, shared by
// all its watchers.
//
// Watchers park in slots, so that a large audience is woken a slot at a
// time, spread over the pace interval, instead of all at once: a thousand
// watchers woken together would fill the scheduler's run queues for tens of
// milliseconds, and the debate's own goroutines (and the network poller
// that wakes them when PostgreSQL answers) would wait behind them. With few
// watchers the pace is below a millisecond and every slot fires at once.
type feed struct {
	cfg  Config
	refs atomic.Int64

	// win is the current window; watchers read it without a lock. A window
	// is never modified once published (appends go past its length).
	win atomic.Pointer[window]
	// slots are where watchers park; next assigns them round robin.
	slots [numSlots]slot
	next  atomic.Int64
	// shared holds the memos of recent batches (span → *Memo). Watchers
	// look them up without taking mu, which the publisher needs: a
	// thousand watchers queueing on a mutex would hold up the commit
	// that publishes.
	shared sync.Map

	// fillMu makes watchers behind the window fill it one at a time (the
	// others then find it filled).
	fillMu sync.Mutex

	mu      sync.Mutex
	tracker statusTracker
	loading bool // a goroutine reads the store for Poke
	reload  bool // a Poke came while loading
	// dirty marks the slots with news their watchers have not been woken
	// for; the wheel goroutine (turning while any is) wakes one slot per
	// tick.
	dirty   uint64
	turning bool
	cursor  int
	stopped bool
	halt    chan struct{} // closed by stop: the wheel ends
}

// numSlots is how many slots a feed's watchers are spread over.
const numSlots = 32

// slot is a group of a feed's watchers woken together.
type slot struct {
	// wake is closed (and replaced) to wake the slot's watchers.
	wake atomic.Pointer[chan struct{}]
	// A round: how many watchers are parked, how many a wake-up woke, how
	// many have parked again since, when it fired (UnixNano) and how long
	// the last complete round took (ns). Approximate by design: they
	// only pace.
	parked, woken, reparked atomic.Int64
	fireAt, round           atomic.Int64
}

// window is a snapshot of a feed's entries: contiguous seqs, latest last.
type window struct {
	entries []*Entry
	bytes   int
}

// span names the entries [from, to] of a batch.
type span struct{ from, to int64 }

// sharedSpan is how far behind the head a batch's memo is kept: batches
// that end further back are forgotten as the window moves.
const sharedSpan = 1024

func newFeed(cfg Config) *feed {
	f := &feed{cfg: cfg, halt: make(chan struct{})}
	f.win.Store(&window{})
	for i := range f.slots {
		ch := make(chan struct{})
		f.slots[i].wake.Store(&ch)
	}
	return f
}

// join assigns a new watcher its slot.
func (f *feed) join() *slot { return &f.slots[(f.next.Add(1)-1)%numSlots] }

func (s *slot) wakeChan() <-chan struct{} { return *s.wake.Load() }

func (f *feed) lastSeq() int64 {
	w := f.win.Load()
	if len(w.entries) == 0 {
		return 0
	}
	return w.entries[len(w.entries)-1].Event.Seq
}

// append adds events to the window (those it already has are skipped; one
// that does not continue it starts the window over) and wakes the watchers
// if any were new.
func (f *feed) append(events []debate.Event) {
	f.mu.Lock()
	old := f.win.Load()
	entries, bytes := old.entries, old.bytes
	last := int64(0)
	if len(entries) > 0 {
		last = entries[len(entries)-1].Event.Seq
	}
	added := false
	for _, e := range events {
		switch {
		case e.Seq <= last:
			continue // already have it
		case e.Seq != last+1 && len(entries) > 0:
			// A gap: start the window over; watchers behind it catch up
			// from the store.
			entries, bytes = nil, 0
		}
		en := &Entry{Event: e, Status: f.tracker.after(e)}
		// Appending past the published length never disturbs a reader
		// of the old window; a full backing array is copied.
		entries = append(entries, en)
		bytes += en.Size()
		last = e.Seq
		added = true
	}
	if !added {
		f.mu.Unlock()
		return
	}
	// Trim to the bounds, keeping the latest entry; copy so the dropped
	// entries can be collected.
	drop := 0
	for len(entries)-drop > 1 && (len(entries)-drop > f.cfg.Window || bytes > f.cfg.WindowBytes) {
		bytes -= entries[drop].Size()
		drop++
	}
	if drop > 0 {
		entries = append(make([]*Entry, 0, len(entries)-drop+len(entries)/4), entries[drop:]...)
	}
	f.win.Store(&window{entries: entries, bytes: bytes})
	if last%64 == 0 {
		f.shared.Range(func(k, _ any) bool {
			if k.(span).to < last-sharedSpan {
				f.shared.Delete(k)
			}
			return true
		})
	}
	f.wakeLocked()
}

// wakeLocked, called with f.mu held, wakes the watchers for news: every
// slot at once when the pace is too short to spread, or one slot per tick
// by the wheel. It unlocks f.mu.
func (f *feed) wakeLocked() {
	tick := f.tick()
	if tick <= 0 || f.stopped {
		f.mu.Unlock()
		for i := range f.slots {
			f.slots[i].fire()
		}
		return
	}
	f.dirty = 1<<numSlots - 1
	if !f.turning {
		f.turning = true
		go f.turn(tick)
	}
	f.mu.Unlock()
}

// tick is the interval between two slots' wake-ups: the pace interval
// (PacePerWatcher × watchers, at most MaxPace) over the slots, or 0 when
// that is too short to be worth spreading and every slot is woken at once.
func (f *feed) tick() time.Duration {
	if f.cfg.PacePerWatcher <= 0 {
		return 0
	}
	pace := min(f.cfg.MaxPace, f.cfg.PacePerWatcher*time.Duration(f.refs.Load()))
	if pace < minSpread {
		return 0
	}
	return pace / numSlots
}

// minSpread is the shortest pace interval spread over the slots.
const minSpread = 2 * time.Millisecond

// turn is the wheel: it wakes the slots in turn, one tick apart, those
// with news, until no slot has any. Timers on an idle machine fire a
// millisecond or more late, longer than a tick with many watchers; the wheel
// keeps to its schedule by waking every slot whose time has come, so that a
// turn still takes one interval. A slot whose last round took longer than
// a tick pushes the schedule back by as long, at most MaxBackoff, so that
// fan-out takes at most about half the CPU it gets and the rest is the
// debate's.
func (f *feed) turn(tick time.Duration) {
	next := time.Now().Add(tick)
	t := time.NewTimer(tick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-f.halt:
			return
		}
		now := time.Now()
		var due []*slot
		f.mu.Lock()
		if t := f.tick(); t > 0 {
			tick = t
		}
		for !next.After(now) && f.dirty != 0 {
			i := f.cursor
			f.cursor = (f.cursor + 1) % numSlots
			if f.dirty&(1<<i) != 0 {
				f.dirty &^= 1 << i
				due = append(due, &f.slots[i])
			}
			next = next.Add(tick)
		}
		if f.dirty == 0 && len(due) == 0 || f.stopped {
			f.turning = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		for _, s := range due {
			s.fire()
			if r := time.Duration(s.round.Load()); r > tick {
				if later := now.Add(min(f.cfg.MaxBackoff, r)); later.After(next) {
					next = later
				}
			}
		}
		t.Reset(max(0, time.Until(next)))
	}
}

// fire wakes every watcher parked in the slot.
func (s *slot) fire() {
	s.woken.Store(s.parked.Load())
	s.reparked.Store(0)
	s.fireAt.Store(time.Now().UnixNano())
	ch := make(chan struct{})
	old := s.wake.Swap(&ch)
	close(*old)
}

// park records that a watcher has sent what it had and waits; the last of
// those a wake-up woke ends the round.
func (s *slot) park() {
	s.parked.Add(1)
	if s.reparked.Add(1) == s.woken.Load() {
		if at := s.fireAt.Swap(0); at != 0 {
			s.round.Store(time.Now().UnixNano() - at)
		}
	}
}

func (s *slot) unpark() { s.parked.Add(-1) }

// stop ends the feed's wheel once it has no watchers.
func (f *feed) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		close(f.halt)
	}
}

// since returns the window's entries after seq as batches, and whether the
// window covers seq (if not, the watcher reads the store).
func (f *feed) since(after int64) ([]Batch, bool) {
	w := f.win.Load()
	if !w.covers(after) {
		return nil, false
	}
	i := int(after - w.entries[0].Event.Seq + 1)
	if i >= len(w.entries) {
		return nil, true
	}
	rest := w.entries[i:]
	var out []Batch
	for len(rest) > 0 {
		n := cut(rest, f.cfg.MaxBatchEvents, f.cfg.MaxBatchBytes)
		b := Batch{Entries: rest[:n:n]}
		if n > 1 {
			b.shared = f.sharedMemo(span{rest[0].Event.Seq, rest[n-1].Event.Seq})
		}
		out = append(out, b)
		rest = rest[n:]
	}
	return out, true
}

// sharedMemo returns the memo of the batch s, the same for every watcher
// while the feed remembers it.
func (f *feed) sharedMemo(s span) *Memo {
	if m, ok := f.shared.Load(s); ok {
		return m.(*Memo)
	}
	m, _ := f.shared.LoadOrStore(s, &Memo{})
	return m.(*Memo)
}

// covers reports whether the window holds every event after seq (or seq is
// its head).
func (w *window) covers(after int64) bool {
	return len(w.entries) > 0 && after >= w.entries[0].Event.Seq-1
}

// fill reads the events after seq `after` that the feed's window lacks from
// the store, once for every watcher behind it, and puts them in the window
// if they fit: the watchers of a debate that join together (a committee
// opening its dashboards at seq 0) then share the entries and their
// encodings instead of each reading and encoding the ledger. It reports
// whether the window now covers after; if not (what is missing does not
// fit, judged first by the debate's head as the watcher last read it, or
// the window moved meanwhile), the watcher reads the store itself.
func (h *Hub) fill(ctx context.Context, f *feed, debateID string, after, head int64) (bool, error) {
	if head-after > int64(h.cfg.Window) {
		return false, nil // more than a window behind the head it had when it joined
	}
	f.fillMu.Lock()
	defer f.fillMu.Unlock()
	w := f.win.Load()
	if w.covers(after) {
		return true, nil
	}
	// Read up to the window's first event, or (an empty window) up to the
	// store's head, at most a window's worth.
	var until int64 = -1 // exclusive upper seq; -1: the head
	if len(w.entries) > 0 {
		until = w.entries[0].Event.Seq
		if until-1-after+int64(len(w.entries)) > int64(h.cfg.Window) {
			return false, nil
		}
	}
	var tracker statusTracker
	var fetched []*Entry
	bytes := 0
	for last := after; ; {
		limit := h.cfg.Batch
		if until >= 0 {
			limit = int(min(int64(limit), until-1-last))
			if limit <= 0 {
				break
			}
		}
		h.storeReads.Add(1)
		evs, err := h.store.EventList(ctx, debateID, last, limit)
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			en := &Entry{Event: e, Status: tracker.after(e)}
			fetched = append(fetched, en)
			bytes += en.Size()
			last = e.Seq
		}
		if len(fetched) > h.cfg.Window || bytes > h.cfg.WindowBytes {
			return false, nil // too far behind to hold: the watcher reads alone
		}
		if len(evs) < limit {
			break
		}
	}
	if len(fetched) == 0 || fetched[0].Event.Seq != after+1 {
		return false, nil
	}
	ok, news := f.prepend(fetched, bytes, tracker)
	if news {
		f.mu.Lock()
		f.wakeLocked()
	}
	return ok, nil
}

// prepend puts entries read from the store (contiguous, ending at or past
// the window's first) before the window, if they meet it and the whole
// fits its bounds. It reports whether it did, and whether the window was
// empty (the watchers parked at the head may lack these events: news).
func (f *feed) prepend(fetched []*Entry, bytes int, tracker statusTracker) (ok, news bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.win.Load()
	if len(cur.entries) == 0 {
		f.win.Store(&window{entries: fetched, bytes: bytes})
		f.tracker = tracker
		return true, true
	}
	// The fetched entries before the window's first, then the window
	// (whatever was published or trimmed meanwhile).
	first := cur.entries[0].Event.Seq
	if fetched[len(fetched)-1].Event.Seq < first-1 {
		return false, false // a gap: the window moved past what was read
	}
	n, total := 0, cur.bytes
	for n < len(fetched) && fetched[n].Event.Seq < first {
		total += fetched[n].Size()
		n++
	}
	if n+len(cur.entries) > f.cfg.Window || total > f.cfg.WindowBytes {
		return false, false
	}
	merged := append(append(make([]*Entry, 0, n+len(cur.entries)), fetched[:n]...), cur.entries...)
	f.win.Store(&window{entries: merged, bytes: total})
	return true, false
}

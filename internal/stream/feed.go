package stream

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/debated/debated/internal/debate"
)

// feed is one debate's window of recent events on this replica, shared by
// all its watchers.
type feed struct {
	cfg  Config
	refs atomic.Int64

	// win is the current window; watchers read it without a lock. A window
	// is never modified once published (appends go past its length).
	win atomic.Pointer[window]
	// wake is closed (and replaced) to wake the watchers.
	wake atomic.Pointer[chan struct{}]
	// shared holds the memos of recent batches (span → *Memo). Watchers
	// look them up without taking mu, which the publisher needs: a
	// thousand watchers queueing on a mutex would hold up the commit
	// that publishes.
	shared sync.Map

	// Rounds of wake-ups: how many watchers are parked, how many a wake-up
	// woke, how many have parked again since, when it fired (UnixNano)
	// and how long the last complete round took (ns). Approximate by
	// design: they only pace.
	parked, woken, reparked atomic.Int64
	fireAt, round           atomic.Int64

	mu       sync.Mutex
	tracker  statusTracker
	loading  bool // a goroutine reads the store for Poke
	reload   bool // a Poke came while loading
	lastFire time.Time
	pending  *time.Timer // a wake-up waiting for the pace interval
	stopped  bool
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
	f := &feed{cfg: cfg}
	f.win.Store(&window{})
	ch := make(chan struct{})
	f.wake.Store(&ch)
	return f
}

func (f *feed) wakeChan() <-chan struct{} { return *f.wake.Load() }

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
	fire := f.schedule(time.Now())
	f.mu.Unlock()
	if fire {
		f.fire()
	}
}

// schedule decides, under f.mu, whether the watchers are woken now (true)
// or at the end of the pace interval (a timer does it).
func (f *feed) schedule(now time.Time) bool {
	if f.pending != nil || f.stopped {
		return false // a wake-up is already on its way
	}
	pace := time.Duration(0)
	if f.cfg.PacePerWatcher > 0 {
		pace = min(f.cfg.MaxPace, f.cfg.PacePerWatcher*time.Duration(f.refs.Load()))
		// When a round takes longer than the pace (the machine is short
		// of CPU), rest as long as it took before the next: fan-out then
		// takes at most about half the CPU, the rest is the debate's.
		pace = max(pace, min(f.cfg.MaxBackoff, 2*time.Duration(f.round.Load())))
	}
	wait := f.lastFire.Add(pace).Sub(now)
	if wait <= 0 {
		f.lastFire = now
		return true
	}
	f.pending = time.AfterFunc(wait, func() {
		f.mu.Lock()
		f.pending = nil
		f.lastFire = time.Now()
		f.mu.Unlock()
		f.fire()
	})
	return false
}

// fire wakes every watcher waiting on the current wake channel.
func (f *feed) fire() {
	f.woken.Store(f.parked.Load())
	f.reparked.Store(0)
	f.fireAt.Store(time.Now().UnixNano())
	ch := make(chan struct{})
	old := f.wake.Swap(&ch)
	close(*old)
}

// park records that a watcher has sent what it had and waits; the last of
// those a wake-up woke ends the round.
func (f *feed) park() {
	f.parked.Add(1)
	if f.reparked.Add(1) == f.woken.Load() {
		if at := f.fireAt.Swap(0); at != 0 {
			f.round.Store(time.Now().UnixNano() - at)
		}
	}
}

func (f *feed) unpark() { f.parked.Add(-1) }

// stop ends the feed's pending wake-up once it has no watchers.
func (f *feed) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	if f.pending != nil {
		f.pending.Stop()
		f.pending = nil
	}
}

// since returns the window's entries after seq as batches, and whether the
// window covers seq (if not, the watcher reads the store).
func (f *feed) since(after int64) ([]Batch, bool) {
	w := f.win.Load()
	if len(w.entries) == 0 || after < w.entries[0].Event.Seq-1 {
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

package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestMain fails the package if a goroutine of the hub outlives the tests
// (the gist of goleak, which is not a dependency of the module).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(2 * time.Second)
		for {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			var leaked []string
			for _, g := range strings.Split(string(buf), "\n\n") {
				if strings.Contains(g, "internal/stream.") && !strings.Contains(g, "TestMain") {
					leaked = append(leaked, g)
				}
			}
			if len(leaked) == 0 {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "goroutines leaked by the hub:\n%s\n", strings.Join(leaked, "\n\n"))
				code = 1
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	os.Exit(code)
}

var stepAt = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

type bundle struct {
	store  *sqlite.Store
	hub    *Hub
	ctx    context.Context
	tenant string
	ledger *storetest.Ledger
	id     string
}

func setup(t *testing.T, cfg Config) *bundle {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "debated.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx, tenant, d := storetest.NewDebate(t, st)
	cfg.Logger = slog.New(slog.DiscardHandler)
	h := New(st, cfg)
	t.Cleanup(h.Close)
	return &bundle{store: st, hub: h, ctx: ctx, tenant: tenant, ledger: storetest.NewLedger(tenant, d, stepAt), id: d.ID}
}

// commit stores a step of n events; publish says whether the hub hears of
// it from the committer.
func (b *bundle) commit(t *testing.T, n int, publish bool) []debate.Event {
	t.Helper()
	c := b.ledger.Next(n)
	require.NoError(t, b.store.StepCommit(b.ctx, c))
	b.ledger.Commit(c)
	if publish {
		b.hub.Publish(b.tenant, b.id, c.Events)
	}
	return c.Events
}

// watcher collects what one Watch sends.
type watcher struct {
	batches chan Batch
	done    chan error
	cancel  context.CancelFunc
}

func (b *bundle) watch(t *testing.T, after int64, hold <-chan struct{}) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(b.ctx)
	w := &watcher{batches: make(chan Batch, 10000), done: make(chan error, 1), cancel: cancel}
	go func() {
		w.done <- b.hub.Watch(ctx, b.id, after, func(bt Batch) error {
			if hold != nil {
				<-hold
			}
			w.batches <- bt
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-w.done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("watch: %v", err)
		}
	})
	return w
}

// until reads batches until the watcher has seq last, checking that seqs
// come exactly once and in order from first; it returns the batches. A
// watch that ends fails it only if it sent less than that: a watch sends
// its last batch before it returns, but both may be ready at once.
func (w *watcher) until(t *testing.T, first, last int64) []Batch {
	t.Helper()
	var out []Batch
	next := first
	take := func(b Batch) {
		require.NotEmpty(t, b.Entries)
		for _, e := range b.Entries {
			require.Equal(t, next, e.Event.Seq, "exactly once, in order")
			next++
		}
		out = append(out, b)
	}
	timeout := time.After(20 * time.Second)
	for next <= last {
		select {
		case b := <-w.batches:
			take(b)
		case err := <-w.done:
			w.done <- err // for the cleanup, and for callers that wait on it
			for next <= last && len(w.batches) > 0 {
				take(<-w.batches)
			}
			if next <= last {
				t.Fatalf("watch ended at seq %d: %v", next-1, err)
			}
		case <-timeout:
			t.Fatalf("no seq %d", next)
		}
	}
	return out
}

// parked waits until n watchers of the bundle's debate have sent what they
// had and wait for news (so that what is committed next reaches them
// through the window, not through reads of their own).
func (b *bundle) parked(t *testing.T, n int64) {
	t.Helper()
	b.attached(t, int(n))
	f := b.hub.lookup(key{b.tenant, b.id})
	require.Eventually(t, func() bool {
		parked := int64(0)
		for i := range f.slots {
			parked += f.slots[i].parked.Load()
		}
		return parked == n
	}, 10*time.Second, time.Millisecond, "every watcher waits in its slot")
}

// attached waits until the hub counts n watchers.
func (b *bundle) attached(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return b.hub.Watching() == n }, 10*time.Second, time.Millisecond)
}

// TestBehindInBatchesLiveAlone: a watcher that joins behind gets the
// events it missed in batches of several; once live, a step of one event
// comes as a batch of one.
func TestBehindInBatchesLiveAlone(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.commit(t, 10, true)
	w := b.watch(t, 0, nil)
	got := w.until(t, 1, 10)
	require.Len(t, got, 1, "ten events behind: one batch")
	b.attached(t, 1)
	b.commit(t, 1, true)
	got = w.until(t, 11, 11)
	require.Len(t, got[0].Entries, 1)
	require.Equal(t, debate.DebateRunning, got[0].Status())
}

// TestBatchesBoundedInBytes: no batch exceeds MaxBatchBytes unless it is a
// single event, from the store and from the window alike.
func TestBatchesBoundedInBytes(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{MaxBatchBytes: 2000})
	b.commit(t, 30, true)
	check := func(batches []Batch) {
		t.Helper()
		require.Greater(t, len(batches), 1)
		for _, bt := range batches {
			size := 0
			for _, e := range bt.Entries {
				size += e.Size()
			}
			require.True(t, len(bt.Entries) == 1 || size <= 2000, "a batch of %d events, %d bytes", len(bt.Entries), size)
		}
	}
	w0 := b.watch(t, 0, nil)
	check(w0.until(t, 1, 30)) // from the store
	w0.cancel()
	b.attached(t, 0)
	hold := make(chan struct{})
	w := b.watch(t, 30, hold)
	b.attached(t, 1)
	b.commit(t, 30, true) // into the window while the watcher is held
	close(hold)
	check(w.until(t, 31, 60))
}

// TestSharedOncePerDebate: watchers at the same place share the window's
// entries, and a batch's shared value is computed once for all of them.
func TestSharedOncePerDebate(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PacePerWatcher: -1})
	hold := make(chan struct{})
	w1, w2 := b.watch(t, 0, hold), b.watch(t, 0, hold)
	b.parked(t, 2)
	b.commit(t, 1, true)
	b.commit(t, 5, true)
	close(hold)
	var shared, entries atomic.Int32
	var seen []*Entry
	spans := map[[2]int64]bool{}
	for _, w := range []*watcher{w1, w2} {
		for _, bt := range w.until(t, 1, 6) {
			_, err := bt.Shared(func() (any, error) { shared.Add(1); return nil, nil })
			require.NoError(t, err)
			spans[[2]int64{bt.Entries[0].Event.Seq, bt.Last().Event.Seq}] = true
			for _, e := range bt.Entries {
				_, _ = e.Memo.Get(func() (any, error) { entries.Add(1); return nil, nil })
			}
			seen = append(seen, bt.Entries...)
		}
	}
	require.Len(t, seen, 12)
	for i := range 6 {
		require.Same(t, seen[i], seen[6+i], "one entry per event for both watchers")
	}
	require.EqualValues(t, 6, entries.Load(), "each event's memo once, not per watcher")
	require.EqualValues(t, len(spans), shared.Load(), "each batch's shared value once, not per watcher")
}

// TestStalledWatcherDoesNotHoldPublish: a watcher whose sends block holds
// up neither Publish nor the other watchers; when it resumes after falling
// out of the window it catches up from the store, losing and repeating
// nothing.
func TestStalledWatcherDoesNotHoldPublish(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Window: 8})
	hold := make(chan struct{})
	stalled := b.watch(t, 0, hold)
	live := b.watch(t, 0, nil)
	b.attached(t, 2)
	for range 20 {
		b.commit(t, 3, true) // Publish returns although a watcher is stuck
	}
	live.until(t, 1, 60)
	reads := b.hub.StoreReads()
	close(hold)
	stalled.until(t, 1, 60)
	require.Greater(t, b.hub.StoreReads(), reads, "behind the window: read from the store")
}

// TestPokeReadsOnceAndWakesOnlyForNews: a notification from another
// replica makes the feed read the store once for all its watchers; one
// for events the feed already has wakes nobody.
func TestPokeReadsOnceAndWakesOnlyForNews(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	w1, w2 := b.watch(t, 0, nil), b.watch(t, 0, nil)
	b.parked(t, 2)
	reads := b.hub.StoreReads()
	b.commit(t, 4, false) // committed elsewhere
	b.hub.Poke(b.tenant, b.id)
	w1.until(t, 1, 4)
	w2.until(t, 1, 4)
	require.Equal(t, reads+1, b.hub.StoreReads(), "one read for both watchers")

	f := b.hub.lookup(key{b.tenant, b.id})
	wake := f.slots[0].wakeChan()
	b.hub.Poke(b.tenant, b.id) // nothing new
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return !f.loading
	}, 10*time.Second, time.Millisecond)
	select {
	case <-wake:
		t.Fatal("a notification without news woke the watchers")
	default:
	}
}

// TestWatchEndsAtTerminal: the stream ends after the event that makes the
// debate terminal, with that status.
func TestWatchEndsAtTerminal(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	w := b.watch(t, 0, nil)
	b.attached(t, 1)
	c := b.ledger.Next(1)
	c.Events[0].Type = "debate.aborted"
	c.Status = debate.DebateAborted
	require.NoError(t, b.store.StepCommit(b.ctx, c))
	b.hub.Publish(b.tenant, b.id, c.Events)
	got := w.until(t, 1, 1)
	require.Equal(t, debate.DebateAborted, got[0].Status())
	select {
	case err := <-w.done:
		require.NoError(t, err)
		w.done <- nil // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not end")
	}
}

// TestLargeAudienceWokenSlotBySlot: with a pace interval worth spreading, a
// commit wakes a debate's watchers a slot at a time over the interval, not
// all at once; every watcher still gets every event exactly once and in
// order, and a commit made while the wheel turns reaches them all too.
func TestLargeAudienceWokenSlotBySlot(t *testing.T) {
	t.Parallel()
	const n = 2 * numSlots
	// Pace 640ms over 32 slots: one slot every 20ms.
	b := setup(t, Config{PacePerWatcher: 10 * time.Millisecond, MaxPace: 640 * time.Millisecond, MaxBackoff: time.Millisecond})
	ws := make([]*watcher, n)
	for i := range ws {
		ws[i] = b.watch(t, 0, nil)
	}
	b.parked(t, n)

	start := time.Now()
	b.commit(t, 1, true)
	received := func() int {
		got := 0
		for _, w := range ws {
			got += len(w.batches)
		}
		return got
	}
	// The first slot is woken a tick after the commit, long before the
	// interval ends (a pace that woke everyone at once would wake no one
	// before it ends).
	require.Eventually(t, func() bool { return received() > 0 }, 20*time.Second, time.Millisecond)
	require.Less(t, time.Since(start), 600*time.Millisecond, "the first slot waits a tick, not the interval")
	// Timers never fire early: half-way through the interval at most
	// half the slots (and so about half the watchers) can have been woken.
	time.Sleep(time.Until(start.Add(300 * time.Millisecond)))
	require.LessOrEqual(t, received(), n/2+2, "watchers woken slot by slot, not at once")

	b.commit(t, 2, true) // while the wheel turns
	for _, w := range ws {
		w.until(t, 1, 3)
	}
}

// TestAudienceJoiningAtZeroReadsTheStoreOnce: watchers that join a debate
// at seq 0 fill the feed's window from the store once between them and
// share its entries (and so the events' encodings); a watcher too far
// behind for the window reads the store alone. All get every event exactly
// once and in order.
func TestAudienceJoiningAtZeroReadsTheStoreOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Batch: 100, Window: 400})
	for range 3 {
		b.commit(t, 100, false) // committed before anyone watched
	}
	reads := b.hub.StoreReads()
	const n = 20
	ws := make([]*watcher, n)
	for i := range ws {
		ws[i] = b.watch(t, 0, nil)
	}
	var firsts []*Entry
	for _, w := range ws {
		got := w.until(t, 1, 300)
		firsts = append(firsts, got[0].Entries[0])
	}
	// Three reads of 100 and one that finds the end, plus a spare for a
	// watcher that started reading before the window was filled.
	require.LessOrEqual(t, b.hub.StoreReads()-reads, int64(5), "one fill for the audience, not a read each")
	for _, e := range firsts[1:] {
		require.Same(t, firsts[0], e, "the watchers share the window's entries")
	}

	// 500 more: a new watcher at 0 is 800 behind, more than the window.
	for range 5 {
		b.commit(t, 100, true)
	}
	late := b.watch(t, 0, nil)
	late.until(t, 1, 800)
	for _, w := range ws {
		w.until(t, 301, 800)
	}
}

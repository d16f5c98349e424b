package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/debated/debated/internal/store/internal/rows"
	"github.com/jackc/pgx/v5/pgxpool"
)

// notifier sends the ledger notifications after the commits, grouped. A
// pg_notify inside the step's transaction makes every notifying commit take
// one lock for the whole cluster and hold it through the flush, so commits
// of different debates queue instead of sharing a flush. Sent after the
// commit, a notification can be lost in a crash: watchers poll the store as
// well, so they only see it a little later.
type notifier struct {
	pool    *pgxpool.Pool
	mu      sync.Mutex
	pending map[string]bool
	wake    chan struct{}
	done    chan struct{}
	stop    context.CancelFunc
}

func newNotifier(pool *pgxpool.Pool) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	n := &notifier{pool: pool, pending: map[string]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{}), stop: cancel}
	go n.loop(ctx)
	return n
}

// notify queues a notification for the debate; it never blocks.
func (n *notifier) notify(tenant, debateID string) {
	n.mu.Lock()
	n.pending[rows.NotifyPayload(tenant, debateID)] = true
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) loop(ctx context.Context) {
	defer close(n.done)
	for {
		select {
		case <-ctx.Done():
			n.flush(context.Background())
			return
		case <-n.wake:
		}
		n.flush(ctx)
	}
}

// flush sends every pending notification in one statement.
func (n *notifier) flush(ctx context.Context) {
	n.mu.Lock()
	if len(n.pending) == 0 {
		n.mu.Unlock()
		return
	}
	payloads := make([]string, 0, len(n.pending))
	for p := range n.pending {
		payloads = append(payloads, p)
	}
	n.pending = map[string]bool{}
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// A failure loses these notifications; watchers catch up by polling.
	_, _ = n.pool.Exec(ctx, `SELECT pg_notify('`+notifyChannel+`', p) FROM unnest($1::text[]) AS p`, payloads)
}

func (n *notifier) close() {
	n.stop()
	<-n.done
}

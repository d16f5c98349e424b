package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/debated/debated/internal/store/internal/rows"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// notifier sends the ledger notifications after the commits, grouped. A
// pg_notify inside the step's transaction makes every notifying commit take
// one lock for the whole cluster and hold it through the flush, so commits
// of different debates queue instead of sharing a flush. Sent after the
// commit, a notification can be lost in a crash: watchers poll the store as
// well, so they only see it a little later. A notification that fails to go
// out (PostgreSQL busy or restarting, no connection to be had) is kept and
// sent again, with backoff, until it goes or the store closes.
//
// The notifier sends on a connection of its own and remembers its backend
// pid: PostgreSQL tells a listener which backend sent each notification,
// so Listen on the same Store skips the notifications of its own commits,
// which the committer has already handed to this replica's watchers.
type notifier struct {
	pool    *pgxpool.Pool
	conn    *pgx.Conn // used only by loop
	pid     atomic.Uint32
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

// Retry backoff of a failed flush.
const (
	notifyMinBackoff = 50 * time.Millisecond
	notifyMaxBackoff = 2 * time.Second
)

func (n *notifier) loop(ctx context.Context) {
	defer close(n.done)
	var backoff time.Duration // after a failed flush
	for {
		var retry <-chan time.Time
		if backoff > 0 {
			retry = time.After(backoff)
		}
		select {
		case <-ctx.Done():
			n.flush(context.Background())
			return
		case <-n.wake:
		case <-retry:
		}
		if n.flush(ctx) {
			backoff = 0
		} else {
			backoff = min(max(2*backoff, notifyMinBackoff), notifyMaxBackoff)
		}
	}
}

// flush sends every pending notification in one statement. It reports
// whether they went; if not, they are pending again.
func (n *notifier) flush(ctx context.Context) bool {
	n.mu.Lock()
	if len(n.pending) == 0 {
		n.mu.Unlock()
		return true
	}
	payloads := make([]string, 0, len(n.pending))
	for p := range n.pending {
		payloads = append(payloads, p)
	}
	n.pending = map[string]bool{}
	n.mu.Unlock()
	if err := n.send(ctx, payloads); err != nil {
		n.mu.Lock()
		for _, p := range payloads {
			n.pending[p] = true
		}
		n.mu.Unlock()
		return false
	}
	return true
}

// send sends payloads on the notifier's connection, connecting first if it
// has none.
func (n *notifier) send(ctx context.Context, payloads []string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if n.conn == nil {
		conn, err := pgx.ConnectConfig(ctx, n.pool.Config().ConnConfig.Copy())
		if err != nil {
			return err
		}
		n.conn = conn
		n.pid.Store(conn.PgConn().PID())
	}
	if _, err := n.conn.Exec(ctx, `SELECT pg_notify('`+notifyChannel+`', p) FROM unnest($1::text[]) AS p`, payloads); err != nil {
		n.drop()
		return err
	}
	return nil
}

// drop closes the notifier's connection; the next flush makes another.
func (n *notifier) drop() {
	n.pid.Store(0)
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.conn.Close(cctx) // the connection is dropped either way
	n.conn = nil
}

// sentBy reports whether the notifier sent a notification from backend pid.
func (n *notifier) sentBy(pid uint32) bool { return pid != 0 && n.pid.Load() == pid }

func (n *notifier) close() {
	n.stop()
	<-n.done
	if n.conn != nil {
		n.drop()
	}
}

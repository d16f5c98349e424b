package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/debated/debated/internal/store/internal/rows"
)

// Backoff between two connections of Listen: it doubles from
// listenMinBackoff after each failure up to listenMaxBackoff, and starts
// over once a connection has listened.
const (
	listenMinBackoff = 100 * time.Millisecond
	listenMaxBackoff = 10 * time.Second
)

// SetListenErrorHandler makes Listen report each error that makes it
// reconnect to fn (for example to log it); nil, the default, drops them.
// fn runs on Listen's goroutine.
func (s *Store) SetListenErrorHandler(fn func(error)) {
	if fn == nil {
		s.hooks.listenError.Store(nil)
		return
	}
	s.hooks.listenError.Store(&fn)
}

// Listen calls fn with the tenant and debate of every StepCommit that wrote
// events on another Store (another replica) until ctx ends; then it returns
// nil. It is how a replica learns that a debate another replica runs has
// new events, to wake its watchers (DESIGN §3.8): fn should only signal
// them, and return quickly, since it runs on Listen's goroutine and holds
// up the notifications after it. The commits of this Store are not passed
// to fn: their committer hands their events to this replica's watchers
// itself (stream.Hub.Publish), and a second wake-up would only make every
// watcher look again and the hub read the store for nothing.
//
// Listen holds one connection of its own, outside the pool (made from the
// pool's connection config; LISTEN needs no privilege, so it does not SET
// ROLE), that runs LISTEN debated_events. When the connection fails it
// reconnects, with backoff, until ctx ends; errors go to the handler of
// SetListenErrorHandler. A notification sent while it is not connected is
// lost: watchers must catch up from the store (EventList after the last
// seq they saw) rather than count on every notification.
func (s *Store) Listen(ctx context.Context, fn func(tenantID, debateID string)) error {
	return s.listen(ctx, fn, nil)
}

// listen is Listen; listening, when non-nil, is called each time the
// connection has run LISTEN (tests wait on it).
func (s *Store) listen(ctx context.Context, fn func(tenantID, debateID string), listening func()) error {
	backoff := listenMinBackoff
	for {
		listened, err := s.listenOnce(ctx, fn, listening)
		if ctx.Err() != nil {
			return nil //nolint:nilerr // ctx ended: listening stopped as asked
		}
		if h := s.hooks.listenError.Load(); h != nil {
			(*h)(fmt.Errorf("postgres: listen %s (reconnecting in %s): %w", notifyChannel, backoff, err))
		}
		if listened {
			backoff = listenMinBackoff
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		backoff = min(2*backoff, listenMaxBackoff)
	}
}

// listenOnce connects, listens and delivers notifications until the
// connection fails or ctx ends. listened reports whether it got as far as
// LISTEN.
func (s *Store) listenOnce(ctx context.Context, fn func(tenantID, debateID string), listening func()) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx) // the connection is dropped either way
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	if listening != nil {
		listening()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, fmt.Errorf("wait for notification: %w", err)
		}
		if s.notify.sentBy(n.PID) {
			continue // this Store's own commit: its committer published it
		}
		if tenant, debateID, ok := rows.ParseNotifyPayload(n.Payload); ok {
			fn(tenant, debateID)
		}
	}
}

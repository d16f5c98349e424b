package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	middleware "github.com/grpc-ecosystem/go-grpc-middleware/v2"
	"golang.org/x/sync/singleflight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/debated/debated/internal/debate"
)

// keyHashKey carries, in a call's context, the hash of the API key the call
// authenticated with, so that a long-lived stream can check it again.
type keyHashKey struct{}

// errKeyRevoked is the cause a stream's context is cancelled with when its
// key stops being valid.
var errKeyRevoked = errors.New("server: API key revoked")

// keyChecker answers whether an API key is still valid, from a cache that
// is at most one interval old: every stream of a key re-checks it each
// interval, but a replica looks each key up at most once per interval,
// however many streams use it (a dashboard opens hundreds with one key).
// The lookup is the same one authentication makes, so a revocation made on
// any replica reaches every replica's streams within an interval.
type keyChecker struct {
	lookup   func(ctx context.Context, hash []byte) (debate.APIKey, error)
	interval time.Duration
	now      func() time.Time
	log      *slog.Logger

	mu      sync.Mutex
	checked map[string]keyCheck
	group   singleflight.Group
}

type keyCheck struct {
	valid bool
	at    time.Time
}

// valid reports whether the key with hash is unrevoked. A lookup that fails
// for another reason than the key's absence (the database is briefly
// unreachable) keeps the key valid: a blip must not end every stream.
func (k *keyChecker) valid(ctx context.Context, hash []byte) bool {
	id := string(hash)
	now := k.now()
	k.mu.Lock()
	c, ok := k.checked[id]
	if len(k.checked) > 4096 { // drop what no stream has asked about lately
		for h, e := range k.checked {
			if now.Sub(e.at) > 2*k.interval {
				delete(k.checked, h)
			}
		}
	}
	k.mu.Unlock()
	if ok && now.Sub(c.at) < k.interval {
		return c.valid
	}
	v, _, _ := k.group.Do(id, func() (any, error) {
		// Shared by every stream asking now: not bound to the first one's
		// context, which may end meanwhile.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(k.interval, 5*time.Second))
		defer cancel()
		_, err := k.lookup(lctx, hash)
		valid := !errors.Is(err, debate.ErrNotFound)
		if err != nil && valid {
			k.log.WarnContext(ctx, "re-checking a stream's API key", slog.String("error", err.Error()))
		}
		k.mu.Lock()
		k.checked[id] = keyCheck{valid: valid, at: k.now()}
		k.mu.Unlock()
		return valid, nil
	})
	return v.(bool) //nolint:forcetypeassert // the function above returns a bool
}

// streamKeyRecheck is the stream interceptor, after authentication, that
// ends a tenant-key stream with UNAUTHENTICATED within an interval of its
// key being revoked: authentication alone checks the key once, when the
// stream opens, and a WatchDebate can stay open for hours.
func (s *Server) streamKeyRecheck(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	hash, ok := ss.Context().Value(keyHashKey{}).([]byte)
	if !ok {
		return handler(srv, ss)
	}
	ctx, cancel := context.WithCancelCause(ss.Context())
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.keys.interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !s.keys.valid(ctx, hash) {
				cancel(errKeyRevoked)
				return
			}
		}
	}()
	w := middleware.WrapServerStream(ss)
	w.WrappedContext = ctx
	err := handler(srv, w)
	cancel(nil)
	<-done
	if errors.Is(context.Cause(ctx), errKeyRevoked) {
		return status.Error(codes.Unauthenticated, "invalid or revoked API key")
	}
	return err
}

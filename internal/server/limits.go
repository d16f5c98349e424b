package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/debated/debated/internal/debate"
	"golang.org/x/time/rate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// tenantLimiter holds one token bucket per tenant.
type tenantLimiter struct {
	rps   rate.Limit
	burst int
	mu    sync.Mutex
	byID  map[string]*rate.Limiter
}

func (l *tenantLimiter) limiter(tenant string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.byID[tenant]
	if lim == nil {
		lim = rate.NewLimiter(l.rps, l.burst)
		l.byID[tenant] = lim
	}
	return lim
}

// exhausted is a ResourceExhausted status with the time to wait before
// retrying (google.rpc.RetryInfo) and what ran out (QuotaFailure).
func exhausted(subject, what string, retry time.Duration) error {
	st := status.New(codes.ResourceExhausted, fmt.Sprintf("%s: retry in %s", what, retry.Round(time.Millisecond)))
	st, err := st.WithDetails(
		&errdetails.RetryInfo{RetryDelay: durationpb.New(retry)},
		&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{Subject: subject, Description: what}}},
	)
	if err != nil {
		return status.Error(codes.ResourceExhausted, what)
	}
	return st.Err()
}

// allow takes a token of the caller's tenant, or says how long to wait.
func (l *tenantLimiter) allow(ctx context.Context) error {
	p, ok := debate.PrincipalFrom(ctx)
	if !ok {
		return nil // the admin API and public methods are not tenant calls
	}
	r := l.limiter(p.TenantID).Reserve()
	if !r.OK() {
		return exhausted("tenant:"+p.TenantID, "tenant request rate exceeded", time.Second)
	}
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return exhausted("tenant:"+p.TenantID, "tenant request rate exceeded", d)
	}
	return nil
}

func (l *tenantLimiter) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := l.allow(ctx); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (l *tenantLimiter) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := l.allow(ss.Context()); err != nil {
		return err
	}
	return handler(srv, ss)
}

// checkRunning refuses a new debate when the tenant already has
// max queued or running ones.
func (ds *debateService) checkRunning(ctx context.Context) error {
	max := ds.s.cfg.MaxRunningDebates
	if max <= 0 {
		return nil
	}
	n := 0
	for _, st := range []debate.DebateStatus{debate.DebateQueued, debate.DebateRunning} {
		list, _, err := ds.Store.DebateList(ctx, debate.DebateFilter{Status: st}, debate.Page{Limit: max + 1})
		if err != nil {
			return err
		}
		n += len(list)
	}
	if n >= max {
		p, _ := debate.PrincipalFrom(ctx)
		return exhausted("tenant:"+p.TenantID, fmt.Sprintf("the tenant already runs %d debates (limit %d)", n, max), 5*time.Second)
	}
	return nil
}

// Package server is the gRPC API of debated: the interceptor chain
// (recovery, logging, authentication, validation) and the handlers of
// AdminService and RegistryService, plus health and reflection. Handlers
// take the tenant only from the authenticated context.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"buf.build/go/protovalidate"
	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/netguard"
	"github.com/debated/debated/internal/secretbox"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// Config configures the server. Zero values take the documented defaults.
type Config struct {
	// AdminToken authorises AdminService. Empty disables the admin API.
	AdminToken string
	// MaxRecvMsgSize bounds one request; default 16 MiB.
	MaxRecvMsgSize int
	// MaxSendMsgSize bounds one response; default 16 MiB.
	MaxSendMsgSize int
	// MaxConcurrentStreams per connection; default 1024.
	MaxConcurrentStreams uint32
	// Logger receives structured logs; default slog.Default().
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// TenantRPS and TenantBurst rate-limit each tenant's calls (a token
	// bucket per tenant); 0 disables the limit.
	TenantRPS   float64
	TenantBurst int
	// MaxRunningDebates bounds a tenant's queued and running debates;
	// CreateDebate beyond it answers ResourceExhausted. 0 disables it.
	MaxRunningDebates int
	// MaxConnectionAge closes a connection after this long (with
	// MaxConnectionAgeGrace for its calls to finish), so long-lived clients
	// rebalance onto new replicas; watchers resume from their cursor.
	// Default 30 minutes; grace default 1 minute.
	MaxConnectionAge      time.Duration
	MaxConnectionAgeGrace time.Duration
	// Secrets seals tenants' model API keys at rest; without it
	// SetTenantModel answers FailedPrecondition.
	Secrets *secretbox.Box
	// MaxGradeClaims refuses, up front, gradings of deals with more claims;
	// default DefaultMaxGradeClaims.
	MaxGradeClaims int
	// GradingClaimBudget bounds the claims of the gradings running at once
	// (GradeDeal, the defect calls that re-grade, ValidateOutput); more wait
	// their turn.
	// Default DefaultGradingClaimBudget.
	GradingClaimBudget int
	// AllowPrivateModelURLs lets SetTenantModel take a base URL on a
	// loopback, private, link-local or metadata address (netguard.Blocked);
	// by default such URLs, and host names resolving to them, are refused.
	AllowPrivateModelURLs bool
	// Resolver resolves the host of a tenant's model base URL; default
	// net.DefaultResolver.
	Resolver netguard.Resolver
	// StatsHandler, if set, observes every RPC (e.g. OpenTelemetry's
	// otelgrpc server handler).
	StatsHandler stats.Handler
	// KeyRecheck is how often an open stream (WatchDebate) checks that the
	// API key it was opened with is still valid; a stream of a revoked key
	// ends with UNAUTHENTICATED within about this long. Default 2s.
	KeyRecheck time.Duration
	// Unary and Stream interceptors run right after panic recovery (e.g.
	// metrics).
	Unary  []grpc.UnaryServerInterceptor
	Stream []grpc.StreamServerInterceptor
	// CheckpointKeys, if set, returns the checkpoint keys GetSigningKeys
	// publishes beside the ledger keys (nil: none configured yet).
	CheckpointKeys func() []debate.PublicKey
}

// Stores are the persistence the server needs.
type Stores struct {
	Tenants  debate.TenantStore
	Registry debate.RegistryStore
	Grading  debate.GradingStore
	// Debates, when set, enables DebateService.
	Debates *Debates
	// TenantModels, when set, enables the tenant model overrides.
	TenantModels debate.TenantModelStore
	// Log, when set, enables LogService, and DebateService checks debates
	// against the log and hands out checkpoints.
	Log *Log
}

// Server is the debated gRPC server.
type Server struct {
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	tenants  debate.TenantStore
	registry debate.RegistryStore
	grading  debate.GradingStore
	models   debate.TenantModelStore
	health   *health.Server
	grpc     *grpc.Server
	validate protovalidate.Validator
	hub      interface{ Close() }
	keys     *keyChecker
	// gradingBudget holds a weight per claim of every running grading.
	gradingBudget struct {
		sem      *semaphore.Weighted
		capacity int64
	}

	mu   sync.Mutex
	http *http.Server // set by ServeAll

	debatedv1.UnimplementedAdminServiceServer
	debatedv1.UnimplementedRegistryServiceServer
}

// New builds a server over the stores. Returns an error if a store is
// missing or the validator cannot be built.
func New(stores Stores, cfg Config) (*Server, error) {
	if stores.Tenants == nil || stores.Registry == nil || stores.Grading == nil {
		return nil, errors.New("server: tenant, registry and grading stores are required")
	}
	v, err := protovalidate.New()
	if err != nil {
		return nil, fmt.Errorf("server: validator: %w", err)
	}
	s := &Server{
		cfg:      cfg,
		log:      cmp.Or(cfg.Logger, slog.Default()),
		now:      cfg.Now,
		tenants:  stores.Tenants,
		registry: stores.Registry,
		grading:  stores.Grading,
		models:   stores.TenantModels,
		health:   health.NewServer(),
		validate: v,
	}
	if s.now == nil {
		s.now = time.Now
	}
	// The key cache ages by the wall clock, like the ticker that asks it, not
	// by cfg.Now (a test's fixed clock would make its entries last forever).
	s.keys = &keyChecker{lookup: s.tenants.APIKeyLookup, interval: cmp.Or(cfg.KeyRecheck, 2*time.Second),
		now: time.Now, log: s.log, checked: map[string]keyCheck{}}
	s.gradingBudget.capacity = int64(max(cmp.Or(cfg.GradingClaimBudget, DefaultGradingClaimBudget), 1))
	s.gradingBudget.sem = semaphore.NewWeighted(s.gradingBudget.capacity)
	authn := selector.UnaryServerInterceptor(auth.UnaryServerInterceptor(s.authenticate),
		selector.MatchFunc(func(_ context.Context, c interceptors.CallMeta) bool { return !isPublic(c.FullMethod()) }))
	authnStream := selector.StreamServerInterceptor(auth.StreamServerInterceptor(s.authenticate),
		selector.MatchFunc(func(_ context.Context, c interceptors.CallMeta) bool { return !isPublic(c.FullMethod()) }))
	rec := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		s.log.ErrorContext(ctx, "panic in handler", slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
		return status.Error(codes.Internal, "internal error")
	})
	logOpts := []logging.Option{logging.WithLogOnEvents(logging.FinishCall)}
	// recovery → (metrics) → logging → authentication (→ key re-check on
	// streams) → rate limit → validation → naming the subject of a bare
	// "not found".
	unary := append([]grpc.UnaryServerInterceptor{recovery.UnaryServerInterceptor(rec)}, cfg.Unary...)
	unary = append(unary, logging.UnaryServerInterceptor(slogAdapter(s.log), logOpts...), authn)
	stream := append([]grpc.StreamServerInterceptor{recovery.StreamServerInterceptor(rec)}, cfg.Stream...)
	stream = append(stream, logging.StreamServerInterceptor(slogAdapter(s.log), logOpts...), authnStream, s.streamKeyRecheck)
	if cfg.TenantRPS > 0 {
		lim := &tenantLimiter{rps: rate.Limit(cfg.TenantRPS), burst: max(cfg.TenantBurst, 1), byID: map[string]*rate.Limiter{}}
		unary = append(unary, lim.unary)
		stream = append(stream, lim.stream)
	}
	unary = append(unary, s.validateUnary, subjectUnary)
	stream = append(stream, s.validateStream, subjectStream)
	opts := []grpc.ServerOption{}
	if cfg.StatsHandler != nil {
		opts = append(opts, grpc.StatsHandler(cfg.StatsHandler))
	}
	s.grpc = grpc.NewServer(append(opts,
		grpc.ForceServerCodecV2(newUTF8Codec()),
		grpc.MaxRecvMsgSize(cmp.Or(cfg.MaxRecvMsgSize, 16<<20)),
		grpc.MaxSendMsgSize(cmp.Or(cfg.MaxSendMsgSize, 16<<20)),
		grpc.MaxConcurrentStreams(cmp.Or(cfg.MaxConcurrentStreams, 1024)),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 2 * time.Minute, Timeout: 20 * time.Second,
			MaxConnectionAge: cmp.Or(cfg.MaxConnectionAge, 30*time.Minute), MaxConnectionAgeGrace: cmp.Or(cfg.MaxConnectionAgeGrace, time.Minute)}),
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
	)...)
	debatedv1.RegisterAdminServiceServer(s.grpc, s)
	debatedv1.RegisterRegistryServiceServer(s.grpc, s)
	if stores.Debates != nil {
		if !stores.Debates.valid() {
			return nil, errors.New("server: Debates needs a store, an engine, protocols, keys and a hub")
		}
		s.hub = stores.Debates.Hub
		debatedv1.RegisterDebateServiceServer(s.grpc, &debateService{s: s, Debates: *stores.Debates, tlog: stores.Log})
		debatedv1.RegisterKeyServiceServer(s.grpc, &keyService{s: s, keys: stores.Debates.Keys,
			protocols: stores.Debates.Protocols, custom: stores.Debates.Custom, checkpoint: checkpointKeys(cfg, stores.Log)})
		debatedv1.RegisterDealAuditServiceServer(s.grpc, &dealAuditService{s: s, keys: stores.Debates.Keys, tlog: stores.Log})
		if stores.Debates.Custom != nil {
			debatedv1.RegisterProtocolServiceServer(s.grpc, &protocolService{s: s, custom: stores.Debates.Custom})
		}
	}
	if stores.Log != nil {
		if !stores.Log.valid() {
			return nil, errors.New("server: Log needs a store, a checkpoint keyring and an origin")
		}
		debatedv1.RegisterLogServiceServer(s.grpc, &logService{s: s, l: stores.Log})
	}
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	for name := range s.grpc.GetServiceInfo() {
		s.health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	return s, nil
}

// GRPC returns the underlying gRPC server, e.g. to serve it on a bufconn.
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// HealthServer returns a plaintext gRPC server with only the health service
// (the same status as the API's), for probes on a port of their own.
func (s *Server) HealthServer() *grpc.Server {
	hs := grpc.NewServer()
	healthpb.RegisterHealthServer(hs, s.health)
	return hs
}

// Serve accepts connections on lis until Shutdown. It returns nil after a
// graceful shutdown.
func (s *Server) Serve(lis net.Listener) error {
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Shutdown marks the server not serving (so readiness probes fail first),
// ends watch streams with UNAVAILABLE and a resume cursor, runs each of
// then (e.g. handing running debates back), stops accepting new calls and
// waits for running ones until ctx ends, then stops hard.
func (s *Server) Shutdown(ctx context.Context, then ...func()) {
	s.health.Shutdown()
	if s.hub != nil {
		s.hub.Close()
	}
	for _, f := range then {
		f()
	}
	s.mu.Lock()
	hs := s.http
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		if hs != nil {
			// Browser calls drain like gRPC ones; at ctx's end they are cut.
			if err := hs.Shutdown(ctx); err != nil {
				_ = hs.Close()
			}
		}
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
		if hs != nil {
			_ = hs.Close()
		}
		<-done
	}
}

// validateUnary checks every request's text (no NUL, valid UTF-8) and its
// protovalidate rules, and answers InvalidArgument with
// google.rpc.BadRequest field violations.
func (s *Server) validateUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := s.checkRequest(ctx, req); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// validationError turns protovalidate's error into a *debate.ValidationError
// naming each field by its path in the request.
func validationError(err error) error {
	var ve *protovalidate.ValidationError
	if errors.As(err, &ve) {
		return &debate.ValidationError{Violations: protovalidateViolations(ve)}
	}
	return err
}

// slogAdapter lets the logging interceptor write to slog.
func slogAdapter(l *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		l.Log(ctx, slog.Level(lvl), msg, fields...)
	})
}

// checkpointKeys returns what GetSigningKeys publishes as checkpoint keys:
// Config.CheckpointKeys if set, else the keys of the log's keyring.
func checkpointKeys(cfg Config, l *Log) func() []debate.PublicKey {
	if cfg.CheckpointKeys != nil || l == nil || l.Keys == nil {
		return cfg.CheckpointKeys
	}
	return l.Keys.PublicKeys
}

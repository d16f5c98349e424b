// Command debated is the debated gRPC service.
//
//	debated serve   [--listen HOST:PORT] [--database-url URL] ...
//	debated migrate [--database-url URL]
//
// Every flag has a DEBATED_* environment variable; a flag given on the
// command line wins. With no database URL the service runs on an embedded
// SQLite file.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/metrics"
	"github.com/debated/debated/internal/redact"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/postgres"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/web"
)

// DefaultGCPercent is the garbage collector's target when GOGC is not set:
// the service allocates much short-lived JSON per step and keeps little
// (a live heap of tens of megabytes), so letting the heap grow to five
// times the live data before collecting saves a fifth of the collector's
// CPU and more for a few megabytes (docs/benchmarks.md). Under a container
// memory limit the collector also keeps the heap below MemoryLimitShare of
// it (see tuneGC). GOGC and GOMEMLIMIT still rule when set.
const DefaultGCPercent = 400

// MemoryLimitShare is the share of the container's memory limit that the
// service sets as the collector's soft limit when GOMEMLIMIT is not set.
const MemoryLimitShare = 0.8

func main() {
	tuneGC(os.Getenv, "/sys/fs/cgroup")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "debated:", err)
		os.Exit(1)
	}
}

// tuneGC sets the collector's target to DefaultGCPercent unless GOGC is
// set, and its soft memory limit to MemoryLimitShare of the memory limit
// of the cgroup under cgroupRoot (if it has one) unless GOMEMLIMIT is set.
func tuneGC(getenv func(string) string, cgroupRoot string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		if limit, ok := cgroupMemoryLimit(cgroupRoot); ok {
			debug.SetMemoryLimit(int64(float64(limit) * MemoryLimitShare))
		}
	}
}

// cgroupMemoryLimit reads the memory limit of the cgroup mounted at root:
// cgroup v2's memory.max, else cgroup v1's memory/memory.limit_in_bytes.
// ok is false when neither file holds a limit ("max", or v1's "unlimited"
// page-rounded maximum).
func cgroupMemoryLimit(root string) (limit int64, ok bool) {
	for _, name := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 {
			return 0, false // "max", or no limit
		}
		return n, true
	}
	return 0, false
}

const usage = `usage: debated <command> [flags]

commands:
  serve     run the gRPC service
  migrate   apply database migrations (PostgreSQL) and exit
  version   print the version

Run "debated <command> -h" for the flags of a command.
`

// config is everything the binary reads from flags and the environment.
type config struct {
	listen            string
	httpListen        string
	corsOrigins       []string
	databaseURL       string
	dataDir           string
	migrateOnStart    bool
	shutdownTimeout   time.Duration
	logLevel          string
	logFormat         string
	signingKeys       string
	signingKeyCurrent string
	workers           int
	jobSlice          time.Duration
	rescueAfter       time.Duration
	metricsAddr       string
	pprof             bool
	healthAddr        string
	encryptionKey     string
	llmBaseURL        string
	llmAPIKey         string
	llmModel          string
	llmTimeout        time.Duration
	llmBudget         int
	// secrets masks the configured secrets in logs and ledgers (set by run).
	secrets *redact.Redactor
	tlog    logConfig
	// server is the API's configuration: the flags set its limits, serve
	// the rest.
	server server.Config
}

// run is main without the process: tests call it with their own arguments,
// environment and a ready callback that receives the listening address.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready func(net.Addr)) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve", "migrate":
	case "version":
		fmt.Fprintln(stdout, version())
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
	cfg, err := parseConfig(cmd, rest, getenv, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, cfg.logLevel, cfg.logFormat)
	if err != nil {
		return err
	}
	cfg.secrets = configuredSecrets(cfg)
	// No configured secret or credential shape reaches the log output,
	// whoever logged it.
	log = slog.New(redact.NewHandler(log.Handler(), cfg.secrets))
	if cmd == "migrate" {
		if cfg.databaseURL == "" {
			return errors.New("migrate needs a PostgreSQL URL (--database-url or DEBATED_DATABASE_URL); the embedded store migrates itself")
		}
		if err := migrate(ctx, cfg.databaseURL); err != nil {
			return err
		}
		log.InfoContext(ctx, "migrations applied")
		return nil
	}
	stopTracing, err := setupTracing(ctx, getenv, log)
	if err != nil {
		return err
	}
	defer stopTracing(context.WithoutCancel(ctx))
	return serve(ctx, cfg, log, ready)
}

func parseConfig(cmd string, args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("debated "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &envFlags{fs: fs, getenv: getenv}
	env := f.env
	str := func(p *string, name, envName, def, usage string) {
		envVar(f, fs.StringVar, parseString, p, name, envName, def, usage)
	}
	num := func(p *int, name, envName, def, usage string) {
		envVar(f, fs.IntVar, strconv.Atoi, p, name, envName, def, usage)
	}
	dur := func(p *time.Duration, name, envName, def, usage string) {
		envVar(f, fs.DurationVar, time.ParseDuration, p, name, envName, def, usage)
	}
	var cfg config
	f.secret(&cfg.databaseURL, "database-url", "DEBATED_DATABASE_URL", "PostgreSQL URL (its password is a secret); empty runs on the embedded SQLite store")
	str(&cfg.logLevel, "log-level", "DEBATED_LOG_LEVEL", "info", "debug, info, warn or error")
	str(&cfg.logFormat, "log-format", "DEBATED_LOG_FORMAT", "json", "json or text")
	if cmd == "serve" {
		str(&cfg.listen, "listen", "DEBATED_LISTEN", "localhost:50051", "gRPC listen address HOST:PORT")
		str(&cfg.httpListen, "http-listen", "DEBATED_HTTP_LISTEN", "", "an extra address serving only HTTP (Connect, gRPC-Web, REST, the dashboard); the gRPC port serves them too")
		fs.Func("cors-origins", "comma-separated origins allowed to call the API from a browser; empty: same origin only (DEBATED_CORS_ORIGINS)", func(v string) error {
			cfg.corsOrigins = splitList(v)
			return nil
		})
		cfg.corsOrigins = splitList(getenv("DEBATED_CORS_ORIGINS"))
		str(&cfg.dataDir, "data-dir", "DEBATED_DATA_DIR", ".data", "folder of the embedded store's database file")
		f.secret(&cfg.server.AdminToken, "admin-token", "DEBATED_ADMIN_TOKEN", "bootstrap token for AdminService; empty disables it")
		envVar(f, fs.BoolVar, strconv.ParseBool, &cfg.migrateOnStart, "migrate", "DEBATED_MIGRATE_ON_START", "true", "apply PostgreSQL migrations at start-up")
		dur(&cfg.shutdownTimeout, "shutdown-timeout", "DEBATED_SHUTDOWN_TIMEOUT", "25s", "how long SIGTERM waits for running calls")
		num(&cfg.server.MaxRecvMsgSize, "max-recv-msg-bytes", "DEBATED_MAX_RECV_MSG_BYTES", strconv.Itoa(16<<20), "largest request accepted")
		f.secret(&cfg.signingKeys, "signing-keys", "DEBATED_SIGNING_KEYS", "ledger signing secrets VERSION:BASE64[,...]; required with PostgreSQL")
		str(&cfg.signingKeyCurrent, "signing-key-current", "DEBATED_SIGNING_KEY_CURRENT", "", "the version that signs; default the last")
		num(&cfg.workers, "workers", "DEBATED_WORKERS", "16", "debates this replica runs at once")
		dur(&cfg.jobSlice, "job-slice", "DEBATED_JOB_SLICE", "20s", "how long a job runs a debate before handing it back (PostgreSQL)")
		envVar(f, fs.Float64Var, parseFloat, &cfg.server.TenantRPS, "tenant-rps", "DEBATED_TENANT_RPS", "0", "calls per second per tenant; 0 disables the limit")
		num(&cfg.server.TenantBurst, "tenant-burst", "DEBATED_TENANT_BURST", "100", "burst of the per-tenant rate limit")
		num(&cfg.server.MaxRunningDebates, "max-running-debates", "DEBATED_MAX_RUNNING_DEBATES", "0", "queued and running debates per tenant; 0 disables the limit")
		num(&cfg.server.MaxGradeClaims, "max-grade-claims", "DEBATED_MAX_GRADE_CLAIMS", strconv.Itoa(server.DefaultMaxGradeClaims), "gradings of deals with more claims are refused")
		num(&cfg.server.GradingClaimBudget, "grading-claim-budget", "DEBATED_GRADING_CLAIM_BUDGET", strconv.Itoa(server.DefaultGradingClaimBudget), "claims of the gradings running at once; more wait")
		str(&cfg.llmBaseURL, "llm-base-url", "DEBATED_LLM_BASE_URL", "", "OpenAI-compatible API base URL; empty keeps the rules backend")
		cfg.llmAPIKey = env("DEBATED_LLM_API_KEY", "") // an environment variable only: flags show in process lists
		str(&cfg.llmModel, "llm-model", "DEBATED_LLM_MODEL", "", "the model the roles use (the Reasoning class)")
		dur(&cfg.llmTimeout, "llm-timeout", "DEBATED_LLM_TIMEOUT", "60s", "timeout of one model call")
		num(&cfg.llmBudget, "llm-token-budget", "DEBATED_LLM_TOKEN_BUDGET", "0", "tokens one debate may spend; 0 means no limit")
		envVar(f, fs.BoolVar, strconv.ParseBool, &cfg.server.AllowPrivateModelURLs, "llm-allow-private", "DEBATED_LLM_ALLOW_PRIVATE", "false",
			"let tenants' model base URLs reach loopback, private, link-local and metadata addresses")
		cfg.encryptionKey = env("DEBATED_ENCRYPTION_KEY", "") // an environment variable only: flags show in process lists
		str(&cfg.healthAddr, "health-addr", "DEBATED_HEALTH_ADDR", "", "plaintext gRPC health-only address for probes; empty: health on the API port only")
		str(&cfg.metricsAddr, "metrics-addr", "DEBATED_METRICS_ADDR", "", "HTTP address of /metrics (Prometheus); empty disables it")
		envVar(f, fs.BoolVar, strconv.ParseBool, &cfg.pprof, "pprof", "DEBATED_PPROF", "false", "also serve Go's profiles at /debug/pprof/ on the metrics address")
		dur(&cfg.rescueAfter, "rescue-after", "DEBATED_RESCUE_AFTER", "60s", "when a dead replica's debates are taken over (PostgreSQL)")
		dur(&cfg.server.KeyRecheck, "key-recheck", "DEBATED_KEY_RECHECK", "2s", "how often open streams re-check their API key; a revoked key's streams end within it")
		logFlags(f, &cfg.tlog)
	}
	if f.err != nil {
		return cfg, f.err
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return cfg, nil
}

// envFlags declares a command's flags, each defaulting to its DEBATED_*
// variable (a flag on the command line wins); err is the first variable
// that does not parse.
type envFlags struct {
	fs     *flag.FlagSet
	getenv func(string) string
	err    error
}

// env returns the variable name, or def when it is empty.
func (f *envFlags) env(name, def string) string { return cmp.Or(f.getenv(name), def) }

// envVar declares the flag name with declare (a flag.FlagSet method), its
// default the variable envName parsed with parse (def when unset), and the
// variable's name after its usage.
func envVar[T any](f *envFlags, declare func(*T, string, T, string), parse func(string) (T, error), p *T, name, envName, def, usage string) {
	v, err := parse(f.env(envName, def))
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("%s: %w", envName, err)
	}
	declare(p, name, v, usage+" ("+envName+")")
}

// secret declares a string flag whose default is the variable envName,
// like envVar, but whose help (also printed after a bad flag, into the
// logs) never shows that value.
func (f *envFlags) secret(p *string, name, envName, usage string) {
	f.fs.StringVar(p, name, "", usage+" ("+envName+")")
	*p = f.getenv(envName)
}

func parseString(s string) (string, error) { return s, nil }
func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// splitList splits a comma-separated list, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "json":
		return slog.New(traceHandler{slog.NewJSONHandler(w, opts)}), nil
	case "text":
		return slog.New(traceHandler{slog.NewTextHandler(w, opts)}), nil
	default:
		return nil, fmt.Errorf("log format %q: want json or text", format)
	}
}

// stores is the persistence a running service uses: its tenants, deals,
// debates and protocols, the transparency log, the model response cache
// (a node re-run after a crash or a handover reuses the responses instead
// of paying twice) and the deals' enrichment records (query_enrichment).
type stores interface {
	debate.TenantStore
	debate.RegistryStore
	debate.GradingStore
	debate.DebateStore
	debate.TenantModelStore
	debate.ProtocolStore
	logStore
	llm.ResponseCache
	EnrichmentList(ctx context.Context, dealID string) ([]debate.EnrichmentRecord, error)
	Close()
}

// openStores opens the store of cfg; deal audit events are sealed with
// keys.
func openStores(ctx context.Context, cfg config, keys *ledger.Keyring, log *slog.Logger) (stores, error) {
	if cfg.databaseURL == "" {
		// serve made the data folder before the keyring was read.
		path := filepath.Join(cfg.dataDir, "debated.db")
		log.InfoContext(ctx, "using the embedded store", slog.String("path", path))
		return sqlite.OpenConfig(ctx, sqlite.Config{Path: path, DealSealer: ledger.NewDealSealer(keys)})
	}
	if cfg.migrateOnStart {
		if err := migrate(ctx, cfg.databaseURL); err != nil {
			return nil, err
		}
	}
	log.InfoContext(ctx, "using PostgreSQL")
	return postgres.New(ctx, postgres.Config{URL: cfg.databaseURL, DealSealer: ledger.NewDealSealer(keys)})
}

// migrate applies the schema's and River's migrations.
func migrate(ctx context.Context, url string) error {
	if err := postgres.Migrate(ctx, url); err != nil {
		return err
	}
	return runner.MigrateRiver(ctx, url, postgres.AppRole)
}

func serve(ctx context.Context, cfg config, log *slog.Logger, ready func(net.Addr)) error {
	// The embedded store's data folder (which holds its signing secret) is
	// made before the keyring is read.
	if cfg.databaseURL == "" {
		if err := os.MkdirAll(cfg.dataDir, 0o750); err != nil {
			return fmt.Errorf("data dir: %w", err)
		}
	}
	keys, err := signingKeyring(cfg)
	if err != nil {
		return err
	}
	st, err := openStores(ctx, cfg, keys, log)
	if err != nil {
		return err
	}
	defer st.Close()
	m := metrics.New()
	box, err := secretsBox(cfg)
	if err != nil {
		return err
	}
	// Before any debate runs: every tenant's model key is masked in logs
	// and ledgers from the start (see learnTenantKeys).
	lctx, cancelLearn := context.WithTimeout(ctx, 30*time.Second)
	if n, err := learnTenantKeys(lctx, st, box, cfg.secrets); err != nil {
		log.WarnContext(ctx, "reading tenants' model keys to mask them", slog.Int("keys", n), slog.String("error", err.Error()))
	}
	cancelLearn()
	tl, integrate, err := newLog(ctx, cfg, st, log)
	if err != nil {
		return err
	}
	debates, components, err := newDebates(cfg, st, keys, log, m, box)
	if err != nil {
		return err
	}
	components = append(components, integrate)
	var servers []func(context.Context) error // stopped last
	if cfg.metricsAddr != "" {
		metricsServer, err := newMetricsServer(cfg.metricsAddr, cfg.pprof, m, log)
		if err != nil {
			return err
		}
		servers = append(servers, metricsServer)
	}
	cfg.server.Secrets = box
	cfg.server.StatsHandler = otelgrpc.NewServerHandler()
	cfg.server.Unary = []grpc.UnaryServerInterceptor{m.GRPC.UnaryServerInterceptor()}
	cfg.server.Stream = []grpc.StreamServerInterceptor{m.GRPC.StreamServerInterceptor()}
	cfg.server.Logger = log
	srv, err := server.New(server.Stores{Tenants: st, Registry: st, Grading: st, Debates: debates, TenantModels: st, Log: tl}, cfg.server)
	if err != nil {
		return err
	}
	handler, err := srv.HTTPHandler(server.HTTPConfig{CORSOrigins: cfg.corsOrigins, Static: web.Dist()})
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	var extra []net.Listener
	if cfg.httpListen != "" {
		hl, err := net.Listen("tcp", cfg.httpListen)
		if err != nil {
			_ = lis.Close()
			return fmt.Errorf("http listener: %w", err)
		}
		extra = append(extra, hl)
		log.InfoContext(ctx, "http listening", slog.String("addr", hl.Addr().String()))
	}
	if cfg.healthAddr != "" {
		hl, err := net.Listen("tcp", cfg.healthAddr)
		if err != nil {
			return fmt.Errorf("health listener: %w", err)
		}
		hs := srv.HealthServer()
		servers = append(servers, serveUntil(func() error { return hs.Serve(hl) }, hs.Stop))
		log.InfoContext(ctx, "health listening", slog.String("addr", hl.Addr().String()))
	}
	log.InfoContext(ctx, "debated listening", slog.String("addr", lis.Addr().String()), slog.Bool("admin_api", cfg.server.AdminToken != ""))
	// Every long-running component has one shape, Run(ctx) error, which
	// returns once ctx ends and the component has stopped (see
	// docs/decisions.md); one failing stops the service.
	workFailed, stopWork := runAll(components)
	serversFailed, stopServers := runAll(servers)
	if ready != nil {
		ready(lis.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeAll(lis, handler, extra...) }()
	select {
	case err := <-errc:
		return errors.Join(err, stopWork(), stopServers())
	case <-ctx.Done():
	case <-workFailed:
	case <-serversFailed:
	}
	log.Info("shutting down", slog.Duration("grace", cfg.shutdownTimeout))
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.shutdownTimeout)
	defer cancel()
	// Readiness fails and watchers are told to resume elsewhere first; then
	// running debates are handed back (the components stop); then in-flight
	// calls drain; the health and metrics servers answer until the end.
	var failed error
	srv.Shutdown(sctx, func() { failed = stopWork() })
	if err := errors.Join(failed, <-errc, stopServers()); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// runAll runs each component in its own goroutine. failed is closed when
// one fails; stop ends them all, waits for them and returns the first
// error.
func runAll(components []func(context.Context) error) (failed <-chan struct{}, stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	g, gctx := errgroup.WithContext(ctx)
	for _, run := range components {
		g.Go(func() error {
			if err := run(gctx); err != nil && gctx.Err() == nil {
				return err
			}
			return nil
		})
	}
	return gctx.Done(), func() error { cancel(); return g.Wait() }
}

// newMetricsServer listens on addr and returns the component that serves
// /metrics there, and with withPprof Go's profiles at /debug/pprof/ (the
// metrics address is the operator's, never the API's port).
func newMetricsServer(addr string, withPprof bool, m *metrics.Metrics, log *slog.Logger) (func(context.Context) error, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("metrics listening", slog.String("addr", lis.Addr().String()))
	return serveUntil(func() error {
		if err := hs.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("metrics server: %w", err)
		}
		return nil
	}, func() { _ = hs.Close() }), nil
}

// serveUntil is the component (Run(ctx) error) of a server: serve until
// ctx ends, then stop, and return serve's error.
func serveUntil(serve func() error, stop func()) func(context.Context) error {
	return func(ctx context.Context) error {
		stopped := make(chan struct{})
		defer close(stopped)
		go func() {
			select {
			case <-ctx.Done():
				stop()
			case <-stopped:
			}
		}()
		return serve()
	}
}

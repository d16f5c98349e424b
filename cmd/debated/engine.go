package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/metrics"
	"github.com/debated/debated/internal/netguard"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/agentproto"
	"github.com/debated/debated/internal/protocols/custom"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/idis/model"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/protocols/legal"
	"github.com/debated/debated/internal/protocols/stratmaster"
	"github.com/debated/debated/internal/protocols/synthetic"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/secretbox"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/postgres"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/stream"
	"github.com/debated/debated/internal/tools"
)

// dataDirSecret returns the secret (prefix, then BASE64) kept in the data
// folder's file name, making a random 32-byte one on first use (the
// embedded store's signing, checkpoint ("v1:") and encryption ("") keys).
func dataDirSecret(dataDir, name, prefix string) (string, error) {
	path := filepath.Join(dataDir, name)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return "", err
		}
		data = []byte(prefix + base64.StdEncoding.EncodeToString(secret) + "\n")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
	} else if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// protocols registers every protocol the service runs.
func protocols(cfg config, st stores, log *slog.Logger, m *metrics.Metrics, box *secretbox.Box, keys *ledger.Keyring, transcripts *idis.Transcripts, spent *budgets) (*orchestrator.Registry, *custom.Catalog, error) {
	newModel := func(base, key, model string, client *http.Client) (*llm.Backend, error) {
		b, err := llm.NewBackend(llm.Config{
			BaseURL: base, APIKey: key, Model: model, CallTimeout: cfg.llmTimeout,
			Budget: cfg.llmBudget, Restore: ledgerUsage(st), Logger: log, Cache: st, Redactor: cfg.secrets, HTTPClient: client,
			OnUsage: func(u llm.Usage) { m.ObserveTokens(u.TenantID, u.Role, u.PromptTokens, u.CompletionTokens) },
		})
		if err == nil {
			spent.add(b)
		}
		return b, err
	}
	// The deployment's own model is the operator's choice (often a local
	// server); a tenant's is checked again at every connection, on the
	// address actually dialled, unless the operator allows private ones.
	newTenantModel := func(base, key, model string) (*llm.Backend, error) {
		var client *http.Client
		if !cfg.server.AllowPrivateModelURLs {
			client = netguard.HTTPClient()
		}
		return newModel(base, key, model, client)
	}
	var service *llm.Backend // nil: the rules backends
	if cfg.llmBaseURL != "" {
		if cfg.llmModel == "" {
			return nil, nil, errors.New("DEBATED_LLM_MODEL is required with DEBATED_LLM_BASE_URL")
		}
		var err error
		if service, err = newModel(cfg.llmBaseURL, cfg.llmAPIKey, cfg.llmModel, nil); err != nil {
			return nil, nil, err
		}
		log.Info("roles are model-backed", slog.String("model", cfg.llmModel))
	}
	backendFor := tenantBackend(st, box, service, newTenantModel)
	ruleSet := rules.New()
	rolesFor := func(ctx context.Context) (map[string]roles.Role, error) {
		b, err := backendFor(ctx)
		if err != nil || b == nil {
			return ruleSet, err
		}
		return model.Roles(b)
	}
	// modelFor is the model of the tenant of ctx for the other protocols'
	// structured calls; nil means their rules backends.
	modelFor := func(ctx context.Context) (llm.Caller, error) {
		b, err := backendFor(ctx)
		if err != nil || b == nil {
			return nil, err
		}
		return b, nil
	}
	icfg := idis.Config{Registry: st, Ledger: st, Enrichment: st.EnrichmentList, RolesFor: rolesFor, Transcripts: transcripts}
	if es, ok := st.(evidenceSearcher); ok {
		// PostgreSQL full-text search; the embedded store ranks in memory.
		icfg.Searcher = pgSearcher{es}
	}
	builtin := []*orchestrator.Protocol{synthetic.Protocol(), idis.Protocol(icfg),
		agentproto.Protocol(agentproto.Config{Registry: st, Ledger: st, Keys: keys, ModelFor: modelFor}),
		stratmaster.Protocol(stratmaster.Config{Registry: st, ModelFor: modelFor, Searcher: icfg.Searcher}),
		legal.Protocol(legal.Config{ModelFor: modelFor})}
	// The protocols tenants register as data run model-backed roles only;
	// the registry finds them through the catalog.
	cat, err := custom.NewCatalog(st, orchestrator.Named(builtin), custom.Config{Registry: st, ModelFor: modelFor, Searcher: icfg.Searcher})
	if err != nil {
		return nil, nil, err
	}
	reg, err := orchestrator.NewResolvingRegistry(cat.Resolver(), builtin...)
	if err != nil {
		return nil, nil, err
	}
	return reg, cat, nil
}

// ledgerUsage reads the tokens a debate spent from its ledger (for a
// backend's budget, after a restart or a move to this replica).
func ledgerUsage(st debate.DebateStore) func(ctx context.Context, debateID string) (int, error) {
	return func(ctx context.Context, debateID string) (int, error) {
		evs, err := debate.Ledger(ctx, st, debateID)
		return debate.TokensUsed(evs), err
	}
}

// evidenceSearcher is the PostgreSQL store's full-text search.
type evidenceSearcher interface {
	EvidenceSearch(ctx context.Context, dealID, query string, minGrade debate.SourceGrade, limit int) ([]debate.EvidenceHit, int, error)
}

// pgSearcher adapts the PostgreSQL store's full-text search to the tools.
type pgSearcher struct{ s evidenceSearcher }

func (p pgSearcher) SearchEvidence(ctx context.Context, dealID, query string, _ debate.ClaimClass, minGrade debate.SourceGrade, limit int) ([]tools.Hit, int, error) {
	return p.s.EvidenceSearch(ctx, dealID, query, minGrade, limit)
}

// signingKeyring is the keyring that signs debate ledgers and deal audit
// logs: DEBATED_SIGNING_KEYS (the last version signs unless
// DEBATED_SIGNING_KEY_CURRENT names another), or on the embedded store a
// secret kept in the data folder, so ledgers verify across restarts.
func signingKeyring(cfg config) (*ledger.Keyring, error) {
	current := cfg.signingKeyCurrent
	if cfg.signingKeys == "" {
		current = "" // the data folder's one secret signs
	}
	secrets, current, err := keyringSecrets(cfg, "DEBATED_SIGNING_KEYS", cfg.signingKeys, current, "signing.key")
	if err != nil {
		return nil, err
	}
	return ledger.NewKeyring(secrets, current)
}

// scheduler carries debates on: River jobs on PostgreSQL, the in-process
// scheduler on the embedded store. Its DebateCreate and StepCommit are the
// store's, plus the scheduling of the debate they make runnable.
type scheduler interface {
	runner.Scheduler
	Run(ctx context.Context) error
	QueueDepth(ctx context.Context) (int, error)
}

// riverStore is what the PostgreSQL store offers beyond stores: River
// runs on it and its ledger notifications reach every replica.
type riverStore interface {
	runner.RiverStore
	Listen(ctx context.Context, fn func(tenantID, debateID string)) error
	GroupCommitStats() postgres.GroupCommitStats
}

// resumable is the embedded store's list of the debates to resume at
// start-up.
type resumable interface {
	RunnableDebates(ctx context.Context) ([]sqlite.RunnableDebate, error)
}

// newDebates assembles the engine, the runner and the scheduler of the
// store's kind, and returns what DebateService needs and the long-running
// components to run (see docs/decisions.md, one lifecycle shape).
func newDebates(cfg config, st stores, keys *ledger.Keyring, log *slog.Logger, m *metrics.Metrics, box *secretbox.Box) (*server.Debates, []func(context.Context) error, error) {
	transcripts := idis.NewTranscripts()
	spent := &budgets{}
	reg, cat, err := protocols(cfg, st, log, m, box, keys, transcripts, spent)
	if err != nil {
		return nil, nil, err
	}
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys), Logger: log, Redact: cfg.secrets.String})
	if err != nil {
		return nil, nil, err
	}
	hub := stream.New(st, stream.Config{Logger: log})
	// The IDIS transcript cache and the model budgets follow the ledgers
	// this replica writes.
	run, err := runner.New(runner.Config{Store: st, Engine: eng, Publisher: runner.Publishers{hub, transcripts, spent}, Logger: log, OnStep: m.ObserveStep})
	if err != nil {
		return nil, nil, err
	}
	var sched scheduler
	var components []func(context.Context) error
	switch s := st.(type) {
	case riverStore:
		rv, err := runner.NewRiver(s, run, runner.RiverConfig{
			MaxWorkers: cfg.workers, Slice: cfg.jobSlice, RescueAfter: cfg.rescueAfter, StopTimeout: cfg.shutdownTimeout, Logger: log,
		})
		if err != nil {
			return nil, nil, err
		}
		sched = rv
		m.Counter("debated_step_commit_transactions_total", "Transactions that committed node steps (a group commit is one).",
			func() float64 { return float64(s.GroupCommitStats().Transactions) })
		m.Counter("debated_step_commits_grouped_total", "Node steps committed through the group committer.",
			func() float64 { return float64(s.GroupCommitStats().Steps) })
		components = append(components, func(ctx context.Context) error { return s.Listen(ctx, hub.Poke) })
	case resumable:
		sched = runner.NewLocal(st, run, runner.LocalConfig{MaxWorkers: cfg.workers, Logger: log,
			Resume: func(ctx context.Context) ([]runner.Ref, error) {
				list, err := s.RunnableDebates(ctx)
				refs := make([]runner.Ref, len(list))
				for i, d := range list {
					refs[i] = runner.Ref(d)
				}
				return refs, err
			}})
	default:
		return nil, nil, fmt.Errorf("no scheduler for store %T", st)
	}
	m.Gauge("debated_queue_depth", "Debate jobs waiting or running (all replicas on PostgreSQL).", func() float64 {
		qctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := sched.QueueDepth(qctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
	m.Gauge("debated_watchers", "Watch streams open on this replica.", func() float64 { return float64(hub.Watching()) })
	deps := &server.Debates{Store: runner.Scheduled(st, sched), Engine: eng, Protocols: reg, Custom: cat, Keys: keys, Hub: hub, Outputs: idis.Name,
		Observe: func(d debate.Debate, c *debate.StepCommit) { m.ObserveStep(d, c, 0) }}
	return deps, append(components, sched.Run), nil
}

// secretsBox returns the box that seals tenants' model API keys: from
// DEBATED_ENCRYPTION_KEY, or on the embedded store a key made on first use
// in the data folder; nil (tenant models disabled) with PostgreSQL and no
// key.
func secretsBox(cfg config) (*secretbox.Box, error) {
	raw := cfg.encryptionKey
	if raw == "" && cfg.databaseURL == "" {
		var err error
		if raw, err = dataDirSecret(cfg.dataDir, "encryption.key", ""); err != nil {
			return nil, err
		}
	}
	if raw == "" {
		return nil, nil
	}
	secret, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fmt.Errorf("DEBATED_ENCRYPTION_KEY: %w", err)
	}
	return secretbox.New(secret)
}

// tenantBackend picks each tenant's model: its own when it set one
// (SetTenantModel), else the deployment's. Backends are cached per tenant
// and configuration, so a change takes effect on the next turn.
func tenantBackend(st stores, box *secretbox.Box, deflt *llm.Backend,
	newModel func(base, key, model string) (*llm.Backend, error)) func(ctx context.Context) (*llm.Backend, error) {
	var mu sync.Mutex
	cache := map[string]*llm.Backend{}
	type seen struct {
		m     debate.TenantModel
		found bool
		at    time.Time
	}
	recent := map[string]seen{} // tenant → its override as read at most 2 s ago
	return func(ctx context.Context) (*llm.Backend, error) {
		tenant, err := debate.TenantFrom(ctx)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		r, ok := recent[tenant]
		mu.Unlock()
		if !ok || time.Since(r.at) > 2*time.Second {
			m, err := st.TenantModelGet(ctx, tenant)
			if err != nil && !errors.Is(err, debate.ErrNotFound) {
				return nil, err
			}
			r = seen{m: m, found: err == nil, at: time.Now()}
			mu.Lock()
			if len(recent) > 10000 {
				recent = map[string]seen{}
			}
			recent[tenant] = r
			mu.Unlock()
		}
		if !r.found {
			return deflt, nil
		}
		m := r.m
		if box == nil {
			return nil, errors.New("a tenant model is set but DEBATED_ENCRYPTION_KEY is not")
		}
		key := ""
		if len(m.APIKeyCiphertext) > 0 {
			pt, err := box.Open(m.APIKeyCiphertext, server.TenantModelContext(tenant))
			if err != nil {
				return nil, err
			}
			key = string(pt)
		}
		sum := sha256.Sum256([]byte(tenant + "\x00" + m.BaseURL + "\x00" + m.Model + "\x00" + key))
		ck := hex.EncodeToString(sum[:])
		mu.Lock()
		defer mu.Unlock()
		if set, ok := cache[ck]; ok {
			return set, nil
		}
		set, err := newModel(m.BaseURL, key, m.Model)
		if err != nil {
			return nil, err
		}
		cache[ck] = set
		return set, nil
	}
}

// budgets holds every model backend this replica made, so that a debate's
// token count is dropped from each when the debate ends here (the runner
// publishes its final events to it). Without it a backend kept one entry
// per debate for the life of the process.
type budgets struct {
	mu       sync.Mutex
	backends []*llm.Backend
}

func (b *budgets) add(x *llm.Backend) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = append(b.backends, x)
}

// Publish implements runner.Publisher: a stopped or aborted debate is
// forgotten by every backend.
func (b *budgets) Publish(_, debateID string, events []debate.Event) {
	if !slices.ContainsFunc(events, func(e debate.Event) bool { return slices.Contains(orchestrator.TerminalEventTypes(), e.Type) }) {
		return
	}
	b.mu.Lock()
	backends := slices.Clone(b.backends)
	b.mu.Unlock()
	for _, x := range backends {
		x.Forget(debateID)
	}
}

// Package llm is the model backend of the agent-call runtime: any
// protocol's roles call a chat model behind an OpenAI-compatible endpoint
// through github.com/sashabaranov/go-openai, and never trust it.
//
// What every model call gets, whatever the protocol:
//
//   - A structured call (Backend.JSON) sends a system prompt of role-level
//     constants, the material as one JSON document between DATA markers,
//     labelled as untrusted data and escaped so that no text of the
//     material can close the block (WriteDataBlock), and a JSON schema for
//     the answer; a gate checks the answer, and while it fails the
//     violations are sent back for at most MaxRepairs repairs. The tools a
//     call offers run through the caller (which checks permission and
//     quota), for at most MaxToolRounds rounds.
//   - Every model call has a timeout (CallTimeout) and is retried with
//     exponential backoff and jitter on 429 (honouring Retry-After), 5xx,
//     timeouts and transport errors, Retry.Attempts times in all; then it
//     fails with ErrModel and the engine retries the node. The error never
//     carries the endpoint's body verbatim: it holds an UpstreamError
//     (status, class, a short excerpt with every secret the Redactor knows
//     and every credential-shaped token masked), and so do the log lines;
//     configured secrets are masked in the model's answers too.
//   - Cancelling ctx stops the call in flight. Token usage is reported per
//     call (OnUsage), an optional per-debate token budget is checked before
//     each call (ErrBudgetExceeded), and an optional ResponseCache lets a
//     re-run node reuse the responses it already paid for.
package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/redact"
	"github.com/debated/debated/internal/roles"
)

// ErrBudgetExceeded is returned (wrapped) by JSON when the next
// model call would take the debate over Config.Budget: its estimate
// (prompt characters / 4 + MaxTokens) plus the tokens the debate already
// used exceeds the budget. No request is sent.
var ErrBudgetExceeded = fmt.Errorf("llm: %w", roles.ErrBudgetExceeded)

// ErrModel is returned (wrapped, with the cause) by JSON when a
// model call failed: a non-retryable status, a response without choices, or
// Retry.Attempts failed attempts. The engine retries the node or marks it
// needs_review.
var ErrModel = errors.New("llm: model call failed")

// ResponseCache persists raw model responses so that a re-run node reuses
// them instead of paying twice. Keys are the JSONCall's CacheKey followed
// by "/<role>/<call index>", the call index counting the model calls of
// one JSONCall from 0. ModelResponseGet reports a miss with false and a
// nil error. Errors are logged and the call goes on as a miss: a cache
// never fails a turn. The stores implement it.
type ResponseCache interface {
	ModelResponseGet(ctx context.Context, key string) ([]byte, bool, error)
	ModelResponsePut(ctx context.Context, key string, resp []byte) error
}

// Usage is the token usage of one model call (cache hits are not reported).
type Usage struct {
	TenantID, DebateID, Role       string
	PromptTokens, CompletionTokens int
}

// Retry is the retry policy of one model call.
type Retry struct {
	// Attempts in all, including the first; default 3.
	Attempts int
	// Base is the first backoff delay, doubled at each attempt up to Max;
	// defaults 500ms and 8s. The delay is jittered: half of it fixed, half
	// random.
	Base, Max time.Duration
	// MaxRetryAfter caps the wait a 429's Retry-After header asks for;
	// default 60s.
	MaxRetryAfter time.Duration
}

// Config configures the backend. Only Model is required.
type Config struct {
	// BaseURL of the OpenAI-compatible API, e.g. "https://api.openai.com/v1"
	// (the default) or "http://localhost:8000/v1".
	BaseURL string
	// APIKey is sent as a bearer token; it is never logged.
	APIKey string
	// Model is the model name.
	Model string
	// MaxTokens bounds each completion (sent as max_completion_tokens, which
	// reasoning models require instead of max_tokens); default 4096.
	MaxTokens int
	// Temperature; 0 leaves the server's default.
	Temperature float32
	// CallTimeout bounds one HTTP attempt; default 60s.
	CallTimeout time.Duration
	// MaxToolRounds bounds the rounds of tool calls per turn of a protocol
	// that offers tools; default 4.
	MaxToolRounds int
	// MaxRepairs bounds the repair requests per turn; 0 means the default
	// 2, a negative value means no repair.
	MaxRepairs int
	Retry      Retry
	// Budget is the most tokens (prompt + completion) one debate may use,
	// 0 for no budget. It is tracked in memory by the backend, from what
	// Restore says the debate used before.
	Budget int
	// Restore, optional, returns the tokens a debate used before this
	// backend saw it (from its ledger: debate.TokensUsed), so that a
	// budget holds across restarts and replicas. It is asked once per
	// debate, at its first call under a budget; its error fails that call.
	Restore func(ctx context.Context, debateID string) (int, error)
	// TranscriptChars bounds the transcript part of a protocol's DATA
	// block, in bytes of JSON; default 24000. The oldest turns are dropped
	// first.
	TranscriptChars int
	// DataChars bounds each list (claims, calcs, defects, evidence) of a
	// protocol's DATA block, in bytes of JSON; default 48000.
	DataChars int
	// HTTPClient; default a new http.Client.
	HTTPClient *http.Client
	// Sleep waits between attempts; default a timer that stops when ctx
	// ends. Tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for the jitter; default math/rand/v2.
	Rand func() float64
	// Now reads the clock, for Retry-After dates; default time.Now.
	Now func() time.Time
	// Cache, optional, stores responses (see ResponseCache).
	Cache ResponseCache
	// OnUsage, optional, receives the usage of every call the model
	// answered. It must be safe for concurrent use.
	OnUsage func(Usage)
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Redactor masks secrets in what an endpoint answers before it is
	// logged, returned in an error or recorded; NewBackend adds APIKey to
	// it. Share one Redactor between the deployment's and every tenant's
	// backends so that each masks all the keys this process has loaded.
	// Default: a new Redactor knowing APIKey only.
	Redactor *redact.Redactor
}

// String describes the configuration without the API key.
func (c Config) String() string {
	return fmt.Sprintf("llm.Config{BaseURL:%q Model:%q MaxTokens:%d APIKey:%s}", c.BaseURL, c.Model, c.MaxTokens, redacted(c.APIKey))
}

// LogValue logs the configuration without the API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(slog.String("base_url", c.BaseURL), slog.String("model", c.Model),
		slog.Int("max_tokens", c.MaxTokens), slog.String("api_key", redacted(c.APIKey)))
}

func redacted(key string) string {
	if key == "" {
		return "(none)"
	}
	return "(redacted)"
}

// Defaults of Config.
const (
	DefaultMaxTokens       = 4096
	DefaultCallTimeout     = 60 * time.Second
	DefaultMaxToolRounds   = 4
	DefaultMaxRepairs      = 2
	DefaultAttempts        = 3
	DefaultBackoffBase     = 500 * time.Millisecond
	DefaultBackoffMax      = 8 * time.Second
	DefaultMaxRetryAfter   = 60 * time.Second
	DefaultTranscriptChars = 24000
	DefaultDataChars       = 48000
)

// Backend holds what a model's roles share: the client, the configuration
// and the per-debate token usage. It is safe for concurrent use.
type Backend struct {
	cfg    Config
	client *openai.Client

	mu   sync.Mutex
	used map[string]int // debate id → tokens used or reserved
}

// NewBackend validates cfg and applies the defaults. It
// returns an error wrapping debate.ErrInvalid when Model is empty or a
// number is negative (MaxRepairs excepted).
func NewBackend(cfg Config) (*Backend, error) {
	switch {
	case cfg.Model == "":
		return nil, fmt.Errorf("%w: llm: Model is required", debate.ErrInvalid)
	case cfg.MaxTokens < 0 || cfg.CallTimeout < 0 || cfg.MaxToolRounds < 0 || cfg.Budget < 0 ||
		cfg.Retry.Attempts < 0 || cfg.Retry.Base < 0 || cfg.Retry.Max < 0 || cfg.Retry.MaxRetryAfter < 0 ||
		cfg.TranscriptChars < 0 || cfg.DataChars < 0:
		return nil, fmt.Errorf("%w: llm: negative limit in config", debate.ErrInvalid)
	}
	cfg.MaxTokens = cmp.Or(cfg.MaxTokens, DefaultMaxTokens)
	cfg.CallTimeout = cmp.Or(cfg.CallTimeout, DefaultCallTimeout)
	cfg.MaxToolRounds = cmp.Or(cfg.MaxToolRounds, DefaultMaxToolRounds)
	cfg.MaxRepairs = max(cmp.Or(cfg.MaxRepairs, DefaultMaxRepairs), 0)
	cfg.Retry.Attempts = cmp.Or(cfg.Retry.Attempts, DefaultAttempts)
	cfg.Retry.Base = cmp.Or(cfg.Retry.Base, DefaultBackoffBase)
	cfg.Retry.Max = cmp.Or(cfg.Retry.Max, DefaultBackoffMax)
	cfg.Retry.MaxRetryAfter = cmp.Or(cfg.Retry.MaxRetryAfter, DefaultMaxRetryAfter)
	cfg.TranscriptChars = cmp.Or(cfg.TranscriptChars, DefaultTranscriptChars)
	cfg.DataChars = cmp.Or(cfg.DataChars, DefaultDataChars)
	cfg.HTTPClient = cmp.Or(cfg.HTTPClient, &http.Client{})
	if cfg.Sleep == nil {
		cfg.Sleep = orchestrator.Sleep
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Redactor = cmp.Or(cfg.Redactor, redact.New())
	cfg.Redactor.Add(cfg.APIKey)

	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cmp.Or(cfg.BaseURL, oc.BaseURL)
	oc.HTTPClient = metaDoer{c: cfg.HTTPClient}
	return &Backend{cfg: cfg, client: openai.NewClientWithConfig(oc), used: map[string]int{}}, nil
}

// Config returns the backend's configuration with its defaults applied.
func (b *Backend) Config() Config { return b.cfg }

// Used returns the tokens the debate used (plus the estimates of calls in
// flight).
func (b *Backend) Used(debateID string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used[debateID]
}

// AddUsage adds tokens to a debate's usage (Config.Restore restores a
// debate's usage after a restart).
func (b *Backend) AddUsage(debateID string, tokens int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used[debateID] += tokens
}

// Forget drops a finished debate's usage, so that the map does not grow
// forever.
func (b *Backend) Forget(debateID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.used, debateID)
}

// reserve books estimate tokens for a call of the debate, or returns
// ErrBudgetExceeded.
func (b *Backend) reserve(ctx context.Context, debateID string, estimate int) error {
	if err := b.restore(ctx, debateID); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if used := b.used[debateID]; b.cfg.Budget > 0 && used+estimate > b.cfg.Budget {
		return fmt.Errorf("%w: debate %s used %d of %d tokens, the next call may take %d",
			ErrBudgetExceeded, debateID, used, b.cfg.Budget, estimate)
	}
	b.used[debateID] += estimate
	return nil
}

// restore starts the usage of a debate the backend does not track yet at
// what Config.Restore says it used.
func (b *Backend) restore(ctx context.Context, debateID string) error {
	if b.cfg.Budget <= 0 || b.cfg.Restore == nil {
		return nil
	}
	b.mu.Lock()
	_, known := b.used[debateID]
	b.mu.Unlock()
	if known {
		return nil
	}
	n, err := b.cfg.Restore(ctx, debateID)
	if err != nil {
		return fmt.Errorf("llm: the token usage of debate %s: %w", debateID, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, known := b.used[debateID]; !known {
		b.used[debateID] = n
	}
	return nil
}

// settle replaces a reservation by the tokens the call actually used.
func (b *Backend) settle(debateID string, estimate, actual int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used[debateID] += actual - estimate
}

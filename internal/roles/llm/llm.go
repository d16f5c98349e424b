// Package llm is the model-backed backend of roles.Role: each of the five
// IDIS roles (seed 000 §2.2, model class "Reasoning") is played by a chat
// model behind any OpenAI-compatible endpoint, through
// github.com/sashabaranov/go-openai.
//
// A turn is built so that the model is never trusted:
//
//   - The system prompt is an embedded, versioned template per role
//     (prompts/<role>.v1.tmpl); PromptID gives its id and SHA-256 for the
//     caller to record. It never contains deal text.
//   - The deal context (claims with grades, open defects, calcs, evidence
//     excerpts, the transcript so far within a character budget) goes in the
//     user message as one JSON document between DATA markers, labelled as
//     untrusted data. The JSON is escaped so that no text of the deal can
//     close the block.
//   - The response format is a hand-built JSON schema of the AgentOutput +
//     Muḥāsabah shape whose required fields are exactly those gate.ParseOutput
//     requires (strict mode is off: it would force every optional field to
//     be present, and the gate refuses nulls).
//   - Only the role's permitted tools (tools.IDISMatrix) are offered as
//     functions, and every call still goes through in.Tools, where the
//     server checks permission and quota; a refused call's result is given
//     back to the model as the tool message.
//   - The tool loop is bounded: after MaxToolRounds rounds of tool calls the
//     model is asked once more with no tools offered; tool calls it still
//     makes are ignored and its content is parsed as the answer (so an
//     empty answer goes to the repair loop like any unparseable one).
//   - The answer is parsed with gate.ParseOutput and checked with
//     gate.Validate against gate.NewFacts(in.Deal, in.Grading). While it
//     fails, the violations are sent back and the model may repair it, at
//     most MaxRepairs times. If it is still invalid, Turn returns it anyway
//     with a nil error: the protocol's gate rejects and records it. An
//     answer that never parsed is returned as an output whose Content is
//     the model's last answer (clipped) and whose Muḥāsabah record is empty,
//     which the gate always rejects (MISSING_MUHASABAH). The output's
//     tool_calls are the calls of the turn the server ran successfully,
//     whatever the model wrote there.
//
// Every model call has a timeout (CallTimeout) and is retried with
// exponential backoff and jitter on 429 (honouring Retry-After), 5xx,
// timeouts and transport errors, Retry.Attempts times in all; then Turn
// fails with ErrModel and the engine retries the node. The error never
// carries the endpoint's body verbatim: it holds an UpstreamError (status,
// class, a short excerpt with every secret the Redactor knows and every
// credential-shaped token masked), and so do the log lines; configured
// secrets are masked in the model's answers too. Cancelling ctx stops
// the call in flight. Token usage is reported per call (OnUsage), an
// optional per-debate token budget is checked before each call (ErrBudget
// Exceeded), and an optional ResponseCache lets a re-run node reuse the
// responses it already paid for.
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
	"github.com/debated/debated/internal/redact"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/tools"
)

// ErrBudgetExceeded is returned (wrapped) by Turn when the next model call
// would take the debate over Config.Budget: its estimate (prompt characters
// / 4 + MaxTokens) plus the tokens the debate already used exceeds the
// budget. No request is sent.
var ErrBudgetExceeded = fmt.Errorf("llm: %w", roles.ErrBudgetExceeded)

// ErrModel is returned (wrapped, with the cause) by Turn when a model call
// failed: a non-retryable status, a response without choices, or
// Retry.Attempts failed attempts. The engine retries the node or marks it
// needs_review.
var ErrModel = errors.New("llm: model call failed")

// ResponseCache persists raw model responses so that a re-run node reuses
// them instead of paying twice. Keys are the caller's prefix (WithCacheKey)
// followed by "/<role>/<call index>", the call index counting the model
// calls of one Turn from 0. Get reports a miss with false and a nil error.
// Errors are logged and the call goes on as a miss: a cache never fails a
// turn.
type ResponseCache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Put(ctx context.Context, key string, resp []byte) error
}

type cacheKey struct{}

// WithCacheKey returns a context whose turns use the response cache under
// prefix, which should name the debate, the node and its attempt
// ("<debate_id>/<node>/<attempt>"): a re-run of the same attempt reuses the
// responses, a new attempt asks the model again. Without a prefix the cache
// is not used.
func WithCacheKey(ctx context.Context, prefix string) context.Context {
	return context.WithValue(ctx, cacheKey{}, prefix)
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
	// Model is the "Reasoning" model class's model name.
	Model string
	// MaxTokens bounds each completion (sent as max_completion_tokens, which
	// reasoning models require instead of max_tokens); default 4096.
	MaxTokens int
	// Temperature; 0 leaves the server's default.
	Temperature float32
	// CallTimeout bounds one HTTP attempt; default 60s.
	CallTimeout time.Duration
	// MaxToolRounds bounds the rounds of tool calls per turn; default 4.
	MaxToolRounds int
	// MaxRepairs bounds the repair requests per turn; 0 means the default
	// 2, a negative value means no repair.
	MaxRepairs int
	Retry      Retry
	// Budget is the most tokens (prompt + completion) one debate may use,
	// 0 for no budget. It is tracked in memory by the backend and starts
	// from zero when the process restarts, unless the caller restores it
	// (Backend.AddUsage) from the usage it persisted through OnUsage.
	Budget int
	// TranscriptChars bounds the transcript part of the DATA block, in
	// bytes of JSON; default 24000. The oldest turns are dropped first.
	TranscriptChars int
	// DataChars bounds the claim, calc, defect and evidence lists of the
	// DATA block, in bytes of JSON each; default 48000.
	DataChars int
	// Matrix gives each role its tools; default tools.IDISMatrix.
	Matrix tools.Matrix
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

// Backend holds what the five roles share: the client, the configuration
// and the per-debate token usage.
type Backend struct {
	cfg    Config
	client *openai.Client
	log    *slog.Logger
	redact *redact.Redactor
	roles  map[string]roles.Role

	mu   sync.Mutex
	used map[string]int // debate id → tokens used or reserved
}

// New returns the five IDIS roles backed by the model cfg names, keyed by
// role id. See NewBackend for the errors.
func New(cfg Config) (map[string]roles.Role, error) {
	b, err := NewBackend(cfg)
	if err != nil {
		return nil, err
	}
	return b.Roles(), nil
}

// NewBackend validates cfg, applies the defaults and builds the roles. It
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
	cfg.MaxRepairs = cmp.Or(cfg.MaxRepairs, DefaultMaxRepairs)
	cfg.MaxRepairs = max(cfg.MaxRepairs, 0)
	cfg.Retry.Attempts = cmp.Or(cfg.Retry.Attempts, DefaultAttempts)
	cfg.Retry.Base = cmp.Or(cfg.Retry.Base, DefaultBackoffBase)
	cfg.Retry.Max = cmp.Or(cfg.Retry.Max, DefaultBackoffMax)
	cfg.Retry.MaxRetryAfter = cmp.Or(cfg.Retry.MaxRetryAfter, DefaultMaxRetryAfter)
	cfg.TranscriptChars = cmp.Or(cfg.TranscriptChars, DefaultTranscriptChars)
	cfg.DataChars = cmp.Or(cfg.DataChars, DefaultDataChars)
	if cfg.Matrix == nil {
		cfg.Matrix = tools.IDISMatrix
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	if cfg.Redactor == nil {
		cfg.Redactor = redact.New()
	}
	cfg.Redactor.Add(cfg.APIKey)

	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = cfg.BaseURL
	}
	oc.HTTPClient = metaDoer{c: cfg.HTTPClient}
	b := &Backend{cfg: cfg, client: openai.NewClientWithConfig(oc), log: lg, redact: cfg.Redactor, used: map[string]int{}}
	b.roles = make(map[string]roles.Role, len(debate.IDISRoles))
	for _, name := range debate.IDISRoles {
		r, err := newRole(b, name)
		if err != nil {
			return nil, err
		}
		b.roles[name] = r
	}
	return b, nil
}

// Roles returns the five roles keyed by role id (a new map each time).
func (b *Backend) Roles() map[string]roles.Role {
	m := make(map[string]roles.Role, len(b.roles))
	for k, v := range b.roles {
		m[k] = v
	}
	return m
}

// Used returns the tokens the debate used (plus the estimates of calls in
// flight).
func (b *Backend) Used(debateID string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used[debateID]
}

// AddUsage adds tokens to a debate's usage, to restore it after a restart.
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
func (b *Backend) reserve(debateID string, estimate int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if used := b.used[debateID]; b.cfg.Budget > 0 && used+estimate > b.cfg.Budget {
		return fmt.Errorf("%w: debate %s used %d of %d tokens, the next call may take %d",
			ErrBudgetExceeded, debateID, used, b.cfg.Budget, estimate)
	}
	b.used[debateID] += estimate
	return nil
}

// settle replaces a reservation by the tokens the call actually used.
func (b *Backend) settle(debateID string, estimate, actual int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used[debateID] += actual - estimate
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/debated/debated/internal/canon"
	"github.com/debated/debated/internal/debate"
)

// EventToolCall is the event type of a tool call's audit record (seed 000
// §6.1).
const EventToolCall = "agent.tool_call"

// Config configures an Invoker for one role set, deal, debate and round.
type Config struct {
	// Matrix gives each role its tools; nil refuses every call.
	Matrix Matrix
	// Limits are the per-round quotas and flag_defect's requirements; the
	// zero value means DefaultLimits().
	Limits Limits
	// Deal is what the tools read; nil behaves as an empty deal.
	Deal *Deal
	// Searcher runs search_evidence when set; without one the Invoker ranks
	// the deal's evidence in memory.
	Searcher Searcher
	// DealID is the deal the calls are scoped to; empty means the bundle's
	// deal id.
	DealID string
	// DebateID and Round are written into every audit record.
	DebateID string
	Round    int
	// Usage holds the calls already made this round (the protocol keeps it
	// between the nodes of a round). It is copied, never changed.
	Usage Usage
	// NewID makes the ids of flagged defects and review requests. It is
	// called under the Invoker's lock, so it needs no locking of its own;
	// with concurrent roles its calls interleave as the calls do. Nil
	// derives each id from the deal, debate, round, role and the role's
	// call sequence (a UUIDv5), which is deterministic whatever the
	// interleaving.
	NewID func() string
	// Now is the clock of audit timestamps and created_at fields; nil means
	// time.Now. Times are recorded in UTC.
	Now func() time.Time
	// Tools, when set, are the tools the Invoker runs instead of the shared
	// deal tools of this package (Names): every call is checked, counted and
	// audited the same way, and a name not in Tools is an unknown tool.
	Tools map[string]Func
	// Why, if set, ends the message of a permission refusal: what decides
	// the matrix, for the agent (e.g. "it is not registered for this
	// session").
	Why string
}

// Func is a tool a protocol brings (Config.Tools): it receives the call's
// arguments and returns its output. An error wrapping ErrNotFound is a
// lookup of something the registry does not hold (INVALID, RuleNotFound),
// one wrapping ErrArguments a call the agent got wrong (INVALID,
// RuleArguments); any other error, or a panic, is the server's failure
// (ERROR).
type Func func(ctx context.Context, args json.RawMessage) (any, error)

// The errors a Func reports a caller's mistake with.
var (
	ErrArguments = errors.New("invalid arguments")
	ErrNotFound  = errors.New("not found")
)

// Result is what a call returned to the agent.
type Result struct {
	// Status is StatusSuccess, StatusDenied, StatusInvalid or StatusError.
	Status string `json:"status"`
	// Output is the tool's output in RFC 8785 form (SUCCESS only).
	Output json.RawMessage `json:"output,omitempty"`
	// Rule says why a call was refused (DENIED or INVALID): RulePermission,
	// RuleQuota, RuleUnknownTool, RuleArguments, RuleNotFound or
	// RuleRequirement.
	Rule string `json:"rule,omitempty"`
	// Field is the first bad argument of an INVALID call, by its path
	// ("evidence_refs[2]"), or "tool" for an unknown tool.
	Field string `json:"field,omitempty"`
	// Error says what is wrong, for the agent to repair its call. It names
	// arguments and rules, never the server's internals.
	Error string `json:"error,omitempty"`
}

// Hash returns "sha256:" and the hex SHA-256 of the result's RFC 8785 JSON
// encoding (status, output, rule, field and error): the result_hash of its
// audit record.
func (r Result) Hash() string {
	c, err := canon.Marshal(r)
	if err != nil {
		// Output is canonical JSON already, so this cannot happen; hash
		// the status alone rather than fail the audit.
		c = []byte(`{"status":` + strconv.Quote(r.Status) + `}`)
	}
	return sha256Ref(c)
}

// Audit is the agent.tool_call event of one call (seed 000 §6.1), allowed
// or refused. Its JSON form is the event payload.
type Audit struct {
	EventType string `json:"event_type"` // always EventToolCall
	AgentID   string `json:"agent_id"`   // the role
	ToolName  string `json:"tool_name"`
	// ToolArgs are the arguments in RFC 8785 form ({} for none). Malformed
	// arguments are recorded by size, digest and excerpt (canonicalArgs).
	ToolArgs     json.RawMessage `json:"tool_args"`
	ResultStatus string          `json:"result_status"`
	ResultHash   string          `json:"result_hash"` // Result.Hash()
	DebateID     string          `json:"debate_id"`
	RoundNumber  int             `json:"round_number"`
	Timestamp    time.Time       `json:"timestamp"`
	// Rule is the refusal rule of a DENIED or INVALID call.
	Rule string `json:"rule,omitempty"`
}

// ErrToolFailed is wrapped by the error Bound.Call returns for an ERROR
// result, together with the cause (a Searcher error, the context's error).
var ErrToolFailed = errors.New("tool failed")

// Invoker runs the tool calls of one round of one debate. It is safe for
// concurrent use: the roles of a parallel node share one. Given the same
// Config and the same calls in the same order per role, it returns the same
// results, audits and effects.
type Invoker struct {
	cfg  Config // with its own copies of the matrix, limits and tools
	deal *dealIndex

	mu      sync.Mutex
	usage   Usage
	seq     map[string]int // calls per role so far
	audits  []entry[Audit]
	flagged []entry[debate.Defect]
	reviews []entry[ReviewRequest]
}

// entry is a record with the role and call sequence it is ordered by.
type entry[T any] struct {
	role string
	seq  int
	v    T
}

// NewInvoker returns an Invoker for cfg. It copies the matrix, limits and
// usage. The deal is indexed once per Deal value and the index shared by
// every Invoker given the same *Deal (a protocol keeps one per deal and
// hands it to each step); the deal must not change once given.
func NewInvoker(cfg Config) *Invoker {
	if cfg.Limits.MaxCallsPerRound == nil && cfg.Limits.DefaultMaxCalls == 0 &&
		cfg.Limits.FlagDefectMinEvidenceRefs == 0 && cfg.Limits.FlagDefectMinDescription == 0 {
		cfg.Limits = DefaultLimits()
	}
	l := &cfg.Limits
	l.FlagDefectMinEvidenceRefs = orDefault(l.FlagDefectMinEvidenceRefs, DefaultFlagDefectMinEvidenceRefs)
	l.FlagDefectMinDescription = orDefault(l.FlagDefectMinDescription, DefaultFlagDefectMinDescription)
	if cfg.DealID == "" && cfg.Deal != nil && cfg.Deal.Bundle != nil {
		cfg.DealID = cfg.Deal.Bundle.Deal.ID
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Matrix, cfg.Limits, cfg.Tools = cfg.Matrix.Clone(), cfg.Limits.clone(), maps.Clone(cfg.Tools)
	return &Invoker{cfg: cfg, deal: cfg.Deal.index(cfg.DealID), usage: cfg.Usage.Clone(), seq: map[string]int{}}
}

// known reports whether the Invoker runs tool, and names the tools it runs.
func (inv *Invoker) known(tool string) (bool, []string) {
	if inv.cfg.Tools == nil {
		return slices.Contains(Names, tool), Names
	}
	_, ok := inv.cfg.Tools[tool]
	return ok, slices.Sorted(maps.Keys(inv.cfg.Tools))
}

// call is one call in flight.
type call struct {
	role string
	tool string
	seq  int
	at   time.Time
}

// Call runs one tool call of role and returns its result and its audit
// record. It checks, in order: that the tool exists (else INVALID,
// RuleUnknownTool), that the matrix lets the role call it (else DENIED,
// RulePermission), that the role's quota for the round is not spent (else
// DENIED, RuleQuota), and the arguments (else INVALID with RuleArguments,
// RuleRequirement or RuleNotFound). A call that passes the first three
// checks counts toward the quota whatever its outcome, except an ERROR,
// which is the server's failure; refused calls count toward nothing. Every
// call, whatever its outcome, is also appended to Audits. Call never
// panics: a panic of a tool becomes an ERROR result.
func (inv *Invoker) Call(ctx context.Context, role string, c debate.ToolCall) (Result, Audit) {
	res, audit, _ := inv.Invoke(ctx, role, c)
	return res, audit
}

// Invoke is Call that also returns the cause of an ERROR result (wrapping
// ErrToolFailed), for callers that fail their step on it.
func (inv *Invoker) Invoke(ctx context.Context, role string, tc debate.ToolCall) (Result, Audit, error) {
	args, wellFormed := canonicalArgs(tc.Args)

	inv.mu.Lock()
	inv.seq[role]++
	c := call{role: role, tool: tc.Tool, seq: inv.seq[role], at: inv.cfg.Now().UTC()}
	var res Result
	admitted := false
	known, names := inv.known(tc.Tool)
	switch {
	case !known:
		res = refusal(StatusInvalid, RuleUnknownTool, "tool", "unknown tool; the tools are "+strings.Join(names, ", "))
	case !inv.cfg.Matrix.Allows(role, tc.Tool):
		msg := "the " + role + " role may not call " + tc.Tool
		if inv.cfg.Why != "" {
			msg += ": " + inv.cfg.Why
		}
		res = refusal(StatusDenied, RulePermission, "", msg)
	case inv.usage.Count(role, tc.Tool) >= inv.cfg.Limits.MaxCalls(tc.Tool):
		res = refusal(StatusDenied, RuleQuota, "", fmt.Sprintf("at most %d %s calls per round", inv.cfg.Limits.MaxCalls(tc.Tool), tc.Tool))
	default:
		admitted = true
		inv.count(role, tc.Tool, 1) // reserved now, so concurrent calls cannot overrun the quota
	}
	inv.mu.Unlock()

	var cause error
	if admitted {
		res, cause = inv.run(ctx, c, tc.Args, wellFormed)
		if res.Status == StatusError {
			inv.mu.Lock()
			inv.count(role, tc.Tool, -1)
			inv.mu.Unlock()
		}
	}

	audit := Audit{
		EventType:    EventToolCall,
		AgentID:      role,
		ToolName:     auditName(tc.Tool),
		ToolArgs:     args,
		ResultStatus: res.Status,
		ResultHash:   res.hash(),
		DebateID:     inv.cfg.DebateID,
		RoundNumber:  inv.cfg.Round,
		Timestamp:    c.at,
		Rule:         res.Rule, // set by refusals (DENIED, INVALID) only
	}
	inv.mu.Lock()
	inv.audits = append(inv.audits, entry[Audit]{role, c.seq, audit})
	inv.mu.Unlock()
	return res, audit, cause
}

// count adds n to role's calls of tool; the caller holds mu.
func (inv *Invoker) count(role, tool string, n int) {
	if inv.usage[role] == nil {
		inv.usage[role] = map[string]int{}
	}
	inv.usage[role][tool] += n
}

// auditName keeps an unknown tool name recordable: valid UTF-8, at most 128
// bytes.
func auditName(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	if len(name) > 128 {
		cut := 128
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut]
	}
	return name
}

// run parses the arguments and runs an admitted call. The error is the
// cause of an ERROR result.
func (inv *Invoker) run(ctx context.Context, c call, raw json.RawMessage, wellFormed bool) (res Result, cause error) {
	defer func() {
		if r := recover(); r != nil {
			res, cause = errorResult(), fmt.Errorf("%w: %s: panic: %v", ErrToolFailed, c.tool, r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return errorResult(), fmt.Errorf("%w: %s: %w", ErrToolFailed, c.tool, err)
	}
	if f := inv.cfg.Tools[c.tool]; f != nil {
		return inv.runCustom(ctx, c, f, raw, wellFormed)
	}
	tool := builtins[c.tool]
	a, bad := parseArgs(raw, wellFormed, tool.fields)
	if bad != nil {
		return bad.result(), nil
	}
	out, bad, err := tool.run(inv, ctx, c, a)
	switch {
	case err != nil:
		return errorResult(), fmt.Errorf("%w: %s: %w", ErrToolFailed, c.tool, err)
	case bad != nil:
		return bad.result(), nil
	}
	return success(c.tool, out)
}

// runCustom runs a protocol's tool (Config.Tools).
func (inv *Invoker) runCustom(ctx context.Context, c call, f Func, raw json.RawMessage, wellFormed bool) (Result, error) {
	if !wellFormed {
		return refusal(StatusInvalid, RuleArguments, "", "the arguments must be a JSON object"), nil
	}
	out, err := f(ctx, raw)
	switch {
	case errors.Is(err, ErrNotFound):
		return refusal(StatusInvalid, RuleNotFound, "", err.Error()), nil
	case errors.Is(err, ErrArguments):
		return refusal(StatusInvalid, RuleArguments, "", err.Error()), nil
	case err != nil:
		return errorResult(), fmt.Errorf("%w: %s: %w", ErrToolFailed, c.tool, err)
	}
	return success(c.tool, out)
}

// success is the SUCCESS result of a tool's output, in RFC 8785 form. It
// fails only when out holds a value JSON cannot carry (a NaN or infinite
// number of a deal that was never validated).
func success(tool string, out any) (Result, error) {
	output, err := canon.Marshal(out)
	if err != nil {
		return errorResult(), fmt.Errorf("%w: %s: encoding the output: %w", ErrToolFailed, tool, err)
	}
	return Result{Status: StatusSuccess, Output: output}, nil
}

func refusal(status, rule, field, msg string) Result {
	return Result{Status: status, Rule: rule, Field: field, Error: msg}
}

func errorResult() Result {
	return Result{Status: StatusError, Error: "the tool could not run; the call may be retried"}
}

// id returns the id of an effect of call c; the caller holds mu.
func (inv *Invoker) id(c call) string {
	if inv.cfg.NewID != nil {
		return inv.cfg.NewID()
	}
	name := fmt.Sprintf("debated/tools\x00%s\x00%s\x00%d\x00%s\x00%d", inv.deal.dealID, inv.cfg.DebateID, inv.cfg.Round, c.role, c.seq)
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String()
}

// Usage returns the calls made this round, the Config's and this Invoker's,
// per role and tool: the protocol stores it for the next node of the round.
func (inv *Invoker) Usage() Usage {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.usage.Clone()
}

// Audits returns the audit record of every call made through this Invoker,
// ordered by role (byte order), then by the order the role's calls started.
// Calls of different roles that ran concurrently have no order between
// them; this one makes the result independent of their interleaving.
func (inv *Invoker) Audits() []Audit {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return sorted(inv.audits)
}

// Flagged returns the defects flag_defect created, in the order of Audits.
// The protocol records them (a defect.flagged event each).
func (inv *Invoker) Flagged() []debate.Defect {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	out := sorted(inv.flagged)
	for i := range out {
		out[i].EvidenceRefs = slices.Clone(out[i].EvidenceRefs)
	}
	return out
}

// ReviewRequests returns the reviews request_human_review asked for, in the
// order of Audits. The protocol turns them into human gates.
func (inv *Invoker) ReviewRequests() []ReviewRequest {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	out := sorted(inv.reviews)
	for i := range out {
		out[i].ClaimIDs = slices.Clone(out[i].ClaimIDs)
	}
	return out
}

func sorted[T any](es []entry[T]) []T {
	es = slices.Clone(es)
	slices.SortStableFunc(es, func(a, b entry[T]) int {
		return cmp.Or(cmp.Compare(a.role, b.role), cmp.Compare(a.seq, b.seq))
	})
	out := make([]T, len(es))
	for i, e := range es {
		out[i] = e.v
	}
	return out
}

// Bound is an Invoker bound to one role: what a role's turn calls its tools through
// receives.
type Bound struct {
	inv  *Invoker
	role string
}

// Bind returns the tools of role, for a role's turn. Its calls are
// checked and audited like Invoker.Call's, and their audit records are in
// Audits.
func (inv *Invoker) Bind(role string) *Bound { return &Bound{inv: inv, role: role} }

// Role returns the role the tools are bound to.
func (b *Bound) Role() string { return b.role }

// Call runs the call for the bound role. A refusal is a result, not an
// error: the agent reads it and may repair its call. The error is non-nil
// only for an ERROR result (an infrastructure failure: the Searcher failed,
// ctx ended); it wraps ErrToolFailed and the cause, and the call is audited
// all the same.
func (b *Bound) Call(ctx context.Context, c debate.ToolCall) (debate.ToolResult, error) {
	res, _, err := b.inv.Invoke(ctx, b.role, c)
	out := debate.ToolResult{Status: res.Status, Output: res.Output, Error: res.Error}
	if res.Rule != "" {
		out.Error = res.Rule + ": " + res.Error
	}
	return out, err
}

package ledger

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/debated/debated/internal/debate"
)

// MaxProblems is how many problems a Report keeps; a last problem of rule
// RuleTruncated says that more were found.
const MaxProblems = 100

// Report is the outcome of verifying a ledger.
type Report struct {
	// OK is true when no problem was found.
	OK bool `json:"ok"`
	// FirstBadSeq is the position (1-based) of the first event with a
	// problem, which is the seq that event must carry: every event before it
	// verifies. It is 0 when OK.
	FirstBadSeq int64 `json:"first_bad_seq"`
	// Problems lists what was found, in ledger order.
	Problems []Problem `json:"problems,omitempty"`
}

// Problem is one failed check.
type Problem struct {
	// Seq is the position (1-based) of the event in the ledger, which is
	// the seq it must carry. When the event claims another seq (after a
	// deleted, duplicated or reordered event), Detail says so.
	Seq int64 `json:"seq"`
	// Rule is one of the Rule constants.
	Rule string `json:"rule"`
	// Detail says what is wrong, for people.
	Detail string `json:"detail"`
}

// ErrVerification is wrapped by every *VerificationError.
var ErrVerification = errors.New("ledger: verification failed")

// VerificationError is what Verifier.Next returns for a bad event.
// errors.Is(err, ErrVerification) holds for it.
type VerificationError struct {
	Problems []Problem
}

// Error implements error.
func (e *VerificationError) Error() string {
	parts := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		parts = append(parts, fmt.Sprintf("seq %d: %s: %s", p.Seq, p.Rule, p.Detail))
	}
	return "ledger: verification failed: " + strings.Join(parts, "; ")
}

// Unwrap returns ErrVerification.
func (e *VerificationError) Unwrap() error { return ErrVerification }

// Verify checks a debate's events in the given order against keys (key id →
// public key and owner) and policy. It checks, per event: seq continues the
// previous event's from 1 (a gap, a duplicate or a reordering shows at the
// first event where it happens), one debate and tenant throughout, prev_hash
// is the previous event's hash, the hash recomputes, the key id is known and
// matches its key, the key belongs to the event's tenant and actor, the
// signature is valid for the recomputed hash, and the policy's rules. (When
// the hash does not recompute, the signature is checked against the stored
// hash, so that a changed event reports RuleHash alone and a forged hash
// reports RuleSignature too.)
//
// Problems do not cascade: each event is compared with the event before it
// in the list, so a deleted event shows once, where it is missing. A chain
// cannot show a cut after its last event: compare the head (last seq and
// hash) with the one the server reports. Verify never panics; an empty
// ledger is OK.
func Verify(events []Event, keys map[string]PublicKeyInfo, policy Policy) Report {
	c := newChecker(keys, policy)
	return c.run(events)
}

// Verifier verifies a ledger one event at a time, as a watcher reads it,
// with the same checks as Verify. It is not safe for concurrent use.
type Verifier struct {
	c        *checker
	err      error
	headSeq  int64
	headHash string
}

// NewVerifier returns a verifier expecting seq 1 first. keys is copied.
func NewVerifier(keys map[string]PublicKeyInfo, policy Policy) *Verifier {
	return &Verifier{c: newChecker(maps.Clone(keys), policy), headHash: GenesisHash}
}

// Next checks e as the event after the last one given. It returns a
// *VerificationError (errors.Is ErrVerification) listing e's problems; once
// an event has failed, the chain is broken and every later call returns
// that same error.
func (v *Verifier) Next(e Event) error {
	if v.err != nil {
		return v.err
	}
	if ps := v.c.check(&e); len(ps) > 0 {
		v.err = &VerificationError{Problems: ps}
		return v.err
	}
	v.headSeq, v.headHash = e.Seq, e.Hash
	return nil
}

// Head returns the seq and hash of the last verified event (0 and
// GenesisHash before the first).
func (v *Verifier) Head() (int64, string) { return v.headSeq, v.headHash }

// checker holds the state of one verification.
type checker struct {
	keys     map[string]PublicKeyInfo
	keyErr   map[string]string // key id → why its key is unusable ("" if usable)
	policy   compiledPolicy
	debateID string
	tenantID string
	scoped   bool
	trusted  bool // keys come from outside the bundle (VerifyBundleTrusted)

	pos      int64  // position of the event being checked
	prevSeq  int64  // seq claimed by the previous event
	prevHash string // hash claimed by the previous event

	intents  map[string]*intentState
	started  map[string]string // execution id → intent id
	finished map[string]bool   // execution ids completed or failed
	claims   map[string]bool
	finalSeq int64  // position of the first final statement, 0 if none
	lastRole string // type of the last event that is neither bookkeeping nor a verification run
	terminal string // type of the first terminal event, "" if none
	termSeq  int64
}

type intentState struct {
	seq      int64
	blocked  bool
	finished bool
}

func newChecker(keys map[string]PublicKeyInfo, p Policy) *checker {
	return &checker{
		keys:     keys,
		keyErr:   map[string]string{},
		policy:   compilePolicy(p),
		intents:  map[string]*intentState{},
		started:  map[string]string{},
		finished: map[string]bool{},
		claims:   map[string]bool{},
	}
}

// scope fixes the debate and tenant every event must belong to (a bundle's)
// before the first event.
func (c *checker) scope(debateID, tenantID string) {
	c.debateID, c.tenantID, c.scoped = debateID, tenantID, true
}

func (c *checker) run(events []Event) Report {
	r := Report{OK: true}
	for i := range events {
		ps := c.check(&events[i])
		if len(ps) == 0 {
			continue
		}
		if r.OK {
			r.OK, r.FirstBadSeq = false, ps[0].Seq
		}
		for _, p := range ps {
			if len(r.Problems) == MaxProblems {
				r.Problems = append(r.Problems, Problem{Seq: p.Seq, Rule: RuleTruncated, Detail: fmt.Sprintf("more than %d problems; the rest are not listed", MaxProblems)})
				return r
			}
			r.Problems = append(r.Problems, p)
		}
	}
	return r
}

// check verifies e as the event after the previous one and returns its
// problems.
func (c *checker) check(e *Event) []Problem {
	c.pos++
	var ps []Problem
	add := func(rule, format string, args ...any) {
		d := fmt.Sprintf(format, args...)
		if e.Seq != c.pos && rule != RuleSeq {
			d = fmt.Sprintf("(event claims seq %d) %s", e.Seq, d)
		}
		ps = append(ps, Problem{Seq: c.pos, Rule: rule, Detail: d})
	}

	if want := c.prevSeq + 1; e.Seq != want {
		switch {
		case c.pos == 1:
			add(RuleSeq, "the first event has seq %d, want 1", e.Seq)
		case e.Seq <= c.prevSeq:
			add(RuleSeq, "seq %d follows seq %d (a duplicated or reordered event)", e.Seq, c.prevSeq)
		default:
			add(RuleSeq, "seq %d follows seq %d (missing events)", e.Seq, c.prevSeq)
		}
	}
	if !c.scoped {
		c.scope(e.DebateID, e.TenantID)
	}
	if e.DebateID != c.debateID {
		add(RuleScope, "event of debate %q in the ledger of debate %q", e.DebateID, c.debateID)
	}
	if e.TenantID != c.tenantID {
		add(RuleScope, "event of tenant %q in a ledger of tenant %q", e.TenantID, c.tenantID)
	}
	wantPrev := GenesisHash
	if c.pos > 1 {
		wantPrev = c.prevHash
	}
	if e.PrevHash != wantPrev {
		add(RulePrevHash, "prev_hash %s is not the previous event's hash %s", short(e.PrevHash), short(wantPrev))
	}

	var sum []byte
	if err := checkFields(e); err != nil {
		add(RuleMalformed, "%v", err)
	} else if s, err := hashEvent(e); err != nil {
		add(RuleMalformed, "%v", err)
	} else {
		sum = s[:]
		if got := hex.EncodeToString(sum); e.Hash != got {
			add(RuleHash, "hash %s, the event hashes to %s", short(e.Hash), short(got))
			// The event is bad already. Check the signature against the
			// stored hash instead, to tell a changed event (signature still
			// good for its old hash) from a forged hash.
			sum = nil
			if debate.IsHashHex(e.Hash) {
				sum, _ = hex.DecodeString(e.Hash)
			}
		}
	}

	if info, problem := c.key(e.KeyID); problem != "" {
		add(RuleKeyID, "%s", problem)
	} else {
		if info.TenantID != e.TenantID || info.Actor != e.Actor {
			add(RuleSigner, "key %s belongs to tenant %q actor %q, the event to tenant %q actor %q",
				e.KeyID, info.TenantID, info.Actor, e.TenantID, e.Actor)
		}
		if sum != nil {
			if problem := checkSignature(info.Key, sum, e.Signature); problem != "" {
				add(RuleSignature, "%s", problem)
			}
		}
	}

	c.rules(e, add)

	c.prevSeq, c.prevHash = e.Seq, e.Hash
	return ps
}

// key returns the key named by id, or why it cannot be used.
func (c *checker) key(id string) (PublicKeyInfo, string) {
	info, ok := c.keys[id]
	if !ok {
		if c.trusted {
			return PublicKeyInfo{}, fmt.Sprintf("key id %q is not among the trusted keys", id)
		}
		return PublicKeyInfo{}, fmt.Sprintf("unknown key id %q", id)
	}
	problem, seen := c.keyErr[id]
	if !seen {
		_, fp, _ := strings.Cut(id, ":")
		switch {
		case len(info.Key) != ed25519.PublicKeySize:
			problem = fmt.Sprintf("key %s has %d bytes, want %d", id, len(info.Key), ed25519.PublicKeySize)
		case fp != fingerprint(info.Key):
			problem = fmt.Sprintf("key %s does not match its id (fingerprint %s)", id, fingerprint(info.Key))
		}
		c.keyErr[id] = problem
	}
	return info, problem
}

// checkSignature verifies sig (canonical standard base64) over sum.
func checkSignature(key ed25519.PublicKey, sum []byte, sig string) string {
	raw, err := base64.StdEncoding.Strict().DecodeString(sig)
	if err != nil || len(raw) != ed25519.SignatureSize || base64.StdEncoding.EncodeToString(raw) != sig {
		return "signature is not the standard base64 of 64 bytes"
	}
	if !ed25519.Verify(key, sum, raw) {
		return "signature does not verify with the event's key"
	}
	return ""
}

// rules applies the role guard and the ordering rules to e.
func (c *checker) rules(e *Event, add func(rule, format string, args ...any)) {
	p := &c.policy
	if allowed, ok := p.roles[e.Type]; ok {
		if !allowed[e.Actor] {
			add(RuleRoleGuard, "actor %q may not emit %q", e.Actor, e.Type)
		}
	} else if p.strict {
		add(RuleRoleGuard, "event type %q is not in the role guard", e.Type)
	}

	bookkeeping := p.bookkeeping[e.Type]
	if c.terminal != "" && !bookkeeping {
		add(RuleTerminal, "%q follows the terminal event %q at seq %d", e.Type, c.terminal, c.termSeq)
	}
	if c.terminal == "" && p.terminal[e.Type] {
		c.terminal, c.termSeq = e.Type, c.pos
	}

	switch e.Type {
	case TypeToolIntentSigned, TypeToolIntentBlocked, TypeToolExecutionStarted,
		TypeToolExecutionCompleted, TypeToolExecutionFailed:
		c.toolRules(e, readPayload(e.Payload), add)
	case TypeClaimIssued:
		m := readPayload(e.Payload)
		ids, err := stringList(m, "execution_ids")
		if err != nil {
			add(RuleClaimEvidence, "%v", err)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if !c.finished[id] {
				add(RuleClaimEvidence, "claim names execution %q, which has not completed or failed before it", id)
			}
			seen[id] = true
		}
		if len(seen) < p.minClaim {
			add(RuleClaimEvidence, "claim names %d executions, the policy requires %d", len(seen), p.minClaim)
		}
		if id, _ := stringField(m, "claim_id"); id != "" {
			c.claims[id] = true
		}
	case TypeClaimChallenged:
		id, err := stringField(readPayload(e.Payload), "claim_id")
		switch {
		case err != nil:
			add(RuleClaimChallenge, "%v", err)
		case id == "":
			add(RuleClaimChallenge, "challenge without claim_id")
		case !c.claims[id]:
			add(RuleClaimChallenge, "challenge of claim %q, which no earlier claim_issued names", id)
		}
	}

	verification := e.Type == TypeVerificationRunStarted || e.Type == TypeVerificationRunCompleted
	switch {
	case e.Type == TypeFinalStatementSigned:
		if c.finalSeq != 0 {
			add(RuleFinalStatement, "a second final statement (the first is at seq %d)", c.finalSeq)
		} else {
			c.finalSeq = c.pos
		}
	case e.Type == TypeVerificationRunCompleted:
		switch c.lastRole {
		case TypeFinalStatementSigned:
		case "":
			add(RuleFinalStatement, "verification run completed with no final statement before it")
		default:
			add(RuleFinalStatement, "verification run completed after %q; the final statement must be the last role event before it", c.lastRole)
		}
	case bookkeeping || verification:
	case c.lastRole == TypeFinalStatementSigned:
		add(RuleFinalStatement, "%q follows the final statement at seq %d", e.Type, c.finalSeq)
	}
	if e.Type == TypeFinalStatementSigned || !bookkeeping && !verification {
		c.lastRole = e.Type
	}
}

// toolRules checks the intent workflow of seed 003.
func (c *checker) toolRules(e *Event, m map[string]json.RawMessage, add func(rule, format string, args ...any)) {
	intent, err := stringField(m, "intent_id")
	if err != nil {
		add(RuleToolIntent, "%v", err)
		return
	}
	if intent == "" {
		add(RuleToolIntent, "%s without intent_id", e.Type)
		return
	}
	st := c.intents[intent]
	if e.Type == TypeToolIntentSigned {
		if st != nil {
			add(RuleToolIntent, "intent %q is signed twice (first at seq %d)", intent, st.seq)
			return
		}
		c.intents[intent] = &intentState{seq: c.pos}
		return
	}
	if st == nil {
		add(RuleToolIntent, "%s names intent %q, which no earlier tool_intent_signed names", e.Type, intent)
	}
	if e.Type == TypeToolIntentBlocked {
		if st != nil {
			st.blocked = true
		}
		return
	}
	if st != nil && st.blocked {
		add(RuleToolIntent, "%s of intent %q, which is blocked", e.Type, intent)
	}
	if st != nil && st.finished {
		add(RuleToolIntent, "%s of intent %q, which has finished; a retry signs a new intent", e.Type, intent)
	}
	exec, err := stringField(m, "execution_id")
	switch {
	case err != nil:
		add(RuleToolIntent, "%v", err)
		return
	case exec == "":
		add(RuleToolIntent, "%s without execution_id", e.Type)
		return
	}
	if e.Type == TypeToolExecutionStarted {
		if _, dup := c.started[exec]; dup {
			add(RuleToolIntent, "execution %q is started twice", exec)
			return
		}
		c.started[exec] = intent
		return
	}
	if c.finished[exec] {
		add(RuleToolIntent, "execution %q finishes twice", exec)
	}
	if was, ok := c.started[exec]; ok && was != intent {
		add(RuleToolIntent, "execution %q was started for intent %q, not %q", exec, was, intent)
	}
	c.finished[exec] = true
	if st != nil {
		st.finished = true
	}
}

// readPayload returns the members of a payload object; a payload that is not
// one (already reported as malformed) reads as empty.
func readPayload(p json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if len(p) == 0 || json.Unmarshal(p, &m) != nil {
		return nil
	}
	return m
}

// stringField returns the string member name of m ("" when absent or null).
// Members are matched exactly, unlike encoding/json's struct decoding.
func stringField(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok {
		return "", nil
	}
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("payload member %q is not a string", name)
	}
	if s == nil {
		return "", nil
	}
	return *s, nil
}

// stringList returns the list-of-strings member name of m.
func stringList(m map[string]json.RawMessage, name string) ([]string, error) {
	raw, ok := m[name]
	if !ok {
		return nil, nil
	}
	var xs []string
	if err := json.Unmarshal(raw, &xs); err != nil {
		return nil, fmt.Errorf("payload member %q is not a list of strings", name)
	}
	return xs, nil
}

// short abbreviates a hash for a problem's detail and quotes anything else.
func short(h string) string {
	if debate.IsHashHex(h) {
		return h[:12] + "…"
	}
	if len(h) > 16 {
		return fmt.Sprintf("%q…", h[:16])
	}
	return fmt.Sprintf("%q", h)
}

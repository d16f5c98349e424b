package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/debated/debated/internal/debate"
)

// The deal audit log (a deal's grade and verdict changes, defects, cures
// and waivers) is chained and signed like a debate's ledger, with the same
// hashing, keys and signatures. Its hashed object differs: it names the
// deal ("deal_id") instead of a debate and has no node or round. See
// docs/ledger.md, "Deal audit logs".
const (
	// DealProtocol is the name of the deal audit log's policy in the
	// published policies (GetSigningKeys) and in deal bundles.
	DealProtocol = "deal.audit.v1"
	// FormatDealV1 is the Format of a deal bundle.
	FormatDealV1 = "debated.deal.v1"
	// DealActorOperator signs the deal events of people's acts (flag, cure,
	// waive): who acted, as the caller claimed it, is the event's actor.
	DealActorOperator = "operator"
)

// dealSigners maps a deal event type to the actor whose key signs it.
var dealSigners = map[string]string{
	debate.EventClaimGradeChanged:   debate.ActorGrader,
	debate.EventClaimVerdictChanged: debate.ActorGrader,
	debate.EventDefectCreated:       debate.ActorGrader,
	debate.EventDefectFlagged:       DealActorOperator,
	debate.EventDefectCured:         DealActorOperator,
	debate.EventDefectWaived:        DealActorOperator,
}

// DealPolicy is the policy of every deal audit log: a strict role guard
// naming, for each event type, the one actor whose key signs it (the
// grader for what grading records, the operator for people's acts).
func DealPolicy() Policy {
	p := Policy{RoleGuard: make(map[string][]string, len(dealSigners)), StrictRoles: true}
	for typ, a := range dealSigners {
		p.RoleGuard[typ] = []string{a}
	}
	return p
}

// DealEvent is a deal audit event as a deal bundle carries it. A legacy
// event (recorded before the log was chained) has empty PrevHash, Hash,
// KeyID and Signature.
type DealEvent struct {
	DealID    string          `json:"deal_id"`
	TenantID  string          `json:"tenant_id"`
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	Actor     string          `json:"actor"`
	Payload   json.RawMessage `json:"payload"`
	Time      time.Time       `json:"time"`
	PrevHash  string          `json:"prev_hash,omitempty"`
	Hash      string          `json:"hash,omitempty"`
	KeyID     string          `json:"key_id,omitempty"`
	Signature string          `json:"signature,omitempty"`
}

// DealEventOf returns the bundle form of a stored deal event of tenantID,
// its payload in canonical JSON. It returns an error wrapping
// ErrInvalidEvent if the payload cannot be encoded.
func DealEventOf(tenantID string, e debate.DealEvent) (DealEvent, error) {
	var raw json.RawMessage
	if e.Payload != nil {
		var err error
		if raw, err = json.Marshal(e.Payload); err != nil {
			return DealEvent{}, fmt.Errorf("%w: payload: %w", ErrInvalidEvent, err)
		}
	}
	payload, err := preparePayload(raw)
	if err != nil {
		return DealEvent{}, err
	}
	return DealEvent{
		DealID: e.DealID, TenantID: tenantID, Seq: e.Seq, Type: e.Type, Actor: e.Actor,
		Payload: payload, Time: e.CreatedAt.UTC(),
		PrevHash: e.PrevHash, Hash: e.Hash, KeyID: e.KeyID, Signature: e.Signature,
	}, nil
}

// SplitLegacy returns the legacy events of a deal's log (the longest prefix
// of events without a hash) and the rest, which must all be chained.
func SplitLegacy(events []debate.DealEvent) (legacy, chained []debate.DealEvent) {
	i := 0
	for i < len(events) && events[i].Hash == "" {
		i++
	}
	return events[:i], events[i:]
}

// DealSealer seals deal events with a keyring's current keys. It
// implements debate.DealSealer and is safe for concurrent use.
type DealSealer struct {
	keys    *Keyring
	signers sync.Map // signerKey → Signer
}

// NewDealSealer returns a deal sealer over k.
func NewDealSealer(k *Keyring) *DealSealer { return &DealSealer{keys: k} }

var _ debate.DealSealer = (*DealSealer)(nil)

func (s *DealSealer) signer(tenant, actor string) Signer {
	k := signerKey{tenant, actor}
	v, ok := s.signers.Load(k)
	if !ok {
		v, _ = s.signers.LoadOrStore(k, s.keys.Signer(tenant, actor))
	}
	return v.(Signer)
}

// SealDeal implements debate.DealSealer: each event is chained after the
// previous one (GenesisHash for the deal's first chained event), hashed as
// docs/ledger.md says and signed by the key of (tenantID, the signer of its
// type). It returns an error wrapping ErrInvalidEvent for an unknown event
// type or an unusable field, and changes nothing the caller holds.
func (s *DealSealer) SealDeal(tenantID, prevHash string, events []debate.DealEvent) ([]debate.DealEvent, error) {
	prev := prevHash
	if prev == "" {
		prev = GenesisHash
	}
	out := make([]debate.DealEvent, len(events))
	signers := make([]Signer, len(events))
	sums := make([][]byte, len(events))
	for i, e := range events {
		actor, ok := dealSigners[e.Type]
		if !ok {
			return nil, fmt.Errorf("%w: deal event type %q has no signer", ErrInvalidEvent, e.Type)
		}
		de, err := DealEventOf(tenantID, e)
		if err != nil {
			return nil, err
		}
		signers[i] = s.signer(tenantID, actor)
		de.PrevHash, de.KeyID = prev, signers[i].KeyID()
		de.Time = de.Time.Truncate(time.Microsecond)
		if err := checkDealFields(&de); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
		}
		sum := sha256.Sum256(canonicalDealEvent(&de, de.Payload))
		sums[i] = sum[:]
		e.PrevHash, e.KeyID = de.PrevHash, de.KeyID
		e.Hash = hex.EncodeToString(sum[:])
		out[i] = e
		prev = e.Hash
	}
	// A grading of a large deal appends tens of thousands of events: sign
	// them in one batch when every key is the keyring's (see signBatch).
	keys := make([]*expandedKey, 0, len(signers))
	for _, sg := range signers {
		if ks, ok := sg.(*keySigner); ok && ks.err == nil && ks.exp != nil {
			keys = append(keys, ks.exp)
		}
	}
	if len(keys) == len(signers) {
		for i, sig := range signBatch(keys, sums) {
			out[i].Signature = encodeSig(sig)
		}
		return out, nil
	}
	for i, sg := range signers {
		sig, err := sg.Sign(sums[i])
		if err != nil {
			return nil, fmt.Errorf("ledger: sign deal event: %w", err)
		}
		out[i].Signature = encodeSig(sig)
	}
	return out, nil
}

// checkDealFields reports the first field of e that no sealed deal event
// can carry. The payload is checked when it is hashed.
func checkDealFields(e *DealEvent) error {
	for _, f := range []struct {
		name, value string
		required    bool
	}{
		{"deal_id", e.DealID, true}, {"tenant_id", e.TenantID, true}, {"type", e.Type, true},
		{"actor", e.Actor, false}, {"key_id", e.KeyID, true},
	} {
		if err := checkName(f.value, f.required); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	switch {
	case e.Seq < 1 || e.Seq > maxInt:
		return fmt.Errorf("seq %d out of range", e.Seq)
	case e.Time.IsZero():
		return errors.New("time is not set")
	case e.Time.UTC().Year() < 0 || e.Time.UTC().Year() > 9999:
		return errors.New("time is outside years 0-9999")
	case !debate.IsHashHex(e.PrevHash):
		return errors.New("prev_hash is not 64 lowercase hex digits")
	}
	return nil
}

// canonicalDealEvent writes the RFC 8785 form of the hashed object of a
// deal event given its canonical payload: the members actor, deal_id,
// key_id, payload, prev_hash, seq, tenant_id, time, type, in that (RFC
// 8785) order.
func canonicalDealEvent(e *DealEvent, payload []byte) []byte {
	b := make([]byte, 0, 320+len(e.Actor)+len(e.DealID)+len(e.TenantID)+len(e.Type)+len(payload))
	b = append(b, `{"actor":`...)
	b = appendString(b, e.Actor)
	b = append(b, `,"deal_id":`...)
	b = appendString(b, e.DealID)
	b = append(b, `,"key_id":`...)
	b = appendString(b, e.KeyID)
	b = append(b, `,"payload":`...)
	b = append(b, payload...)
	b = append(b, `,"prev_hash":`...)
	b = appendString(b, e.PrevHash)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"tenant_id":`...)
	b = appendString(b, e.TenantID)
	b = append(b, `,"time":"`...)
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","type":`...)
	b = appendString(b, e.Type)
	return append(b, '}')
}

// DealHash returns the hex hash of a deal event as SealDeal defines it,
// whatever e.Hash says. It returns an error wrapping ErrInvalidEvent for an
// event SealDeal would not have produced.
func DealHash(e *DealEvent) (string, error) {
	if err := checkDealFields(e); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	payload, err := canonicalPayload(e.Payload)
	if err != nil {
		return "", fmt.Errorf("%w: payload: %w", ErrInvalidEvent, err)
	}
	sum := sha256.Sum256(canonicalDealEvent(e, payload))
	return hex.EncodeToString(sum[:]), nil
}

// VerifyDeal checks a deal's chained events (after legacy legacy events,
// so the first carries seq legacy+1) against keys and policy: contiguous
// seq, one deal and tenant, the hash chain from GenesisHash, each hash, the
// key (known, matching its id, of the event's tenant, of the actor the
// policy's role guard names for the type) and the signature. It never
// panics.
func VerifyDeal(tenantID, dealID string, legacy int64, events []DealEvent, keys map[string]PublicKeyInfo, policy Policy) Report {
	return verifyDeal(tenantID, dealID, legacy, events, keys, policy, false)
}

func verifyDeal(tenantID, dealID string, legacy int64, events []DealEvent, keys map[string]PublicKeyInfo, policy Policy, trusted bool) Report {
	c := newChecker(keys, policy)
	c.trusted = trusted
	r := Report{OK: true}
	prevHash := GenesisHash
	for i := range events {
		e := &events[i]
		pos := legacy + int64(i) + 1
		var ps []Problem
		add := func(rule, format string, args ...any) {
			ps = append(ps, Problem{Seq: pos, Rule: rule, Detail: fmt.Sprintf(format, args...)})
		}
		if e.Seq != pos {
			add(RuleSeq, "seq %d at position %d (missing, duplicated or reordered events)", e.Seq, pos)
		}
		if e.DealID != dealID {
			add(RuleScope, "event of deal %q in the log of deal %q", e.DealID, dealID)
		}
		if e.TenantID != tenantID {
			add(RuleScope, "event of tenant %q in a log of tenant %q", e.TenantID, tenantID)
		}
		if e.PrevHash != prevHash {
			add(RulePrevHash, "prev_hash %s is not the previous event's hash %s", short(e.PrevHash), short(prevHash))
		}
		var sum []byte
		if err := checkDealFields(e); err != nil {
			add(RuleMalformed, "%v", err)
		} else if payload, err := canonicalPayload(e.Payload); err != nil {
			add(RuleMalformed, "payload: %v", err)
		} else {
			s := sha256.Sum256(canonicalDealEvent(e, payload))
			sum = s[:]
			if got := hex.EncodeToString(sum); e.Hash != got {
				add(RuleHash, "hash %s, the event hashes to %s", short(e.Hash), short(got))
				sum = nil
				if debate.IsHashHex(e.Hash) {
					sum, _ = hex.DecodeString(e.Hash)
				}
			}
		}
		allowed, known := c.policy.roles[e.Type]
		if !known && c.policy.strict {
			add(RuleRoleGuard, "event type %q is not in the role guard", e.Type)
		}
		if info, problem := c.key(e.KeyID); problem != "" {
			add(RuleKeyID, "%s", problem)
		} else {
			switch {
			case info.TenantID != e.TenantID:
				add(RuleSigner, "key %s belongs to tenant %q, the event to tenant %q", e.KeyID, info.TenantID, e.TenantID)
			case known && !allowed[info.Actor]:
				add(RuleRoleGuard, "key %s of actor %q may not sign %q", e.KeyID, info.Actor, e.Type)
			}
			if sum != nil {
				if problem := checkSignature(info.Key, sum, e.Signature); problem != "" {
					add(RuleSignature, "%s", problem)
				}
			}
		}
		prevHash = e.Hash
		if len(ps) == 0 {
			continue
		}
		if r.OK {
			r.OK, r.FirstBadSeq = false, pos
		}
		if len(r.Problems)+len(ps) > MaxProblems {
			r.Problems = append(r.Problems, Problem{Seq: pos, Rule: RuleTruncated, Detail: fmt.Sprintf("more than %d problems; the rest are not listed", MaxProblems)})
			return r
		}
		r.Problems = append(r.Problems, ps...)
	}
	return r
}

// DealBundle is the export of one deal's audit log: its legacy events (not
// verifiable), its chained events, the public keys that may have signed
// them and the policy, so that `debatectl verify` checks it offline.
type DealBundle struct {
	Format       string                   `json:"format"`
	DealID       string                   `json:"deal_id"`
	TenantID     string                   `json:"tenant_id"`
	Protocol     string                   `json:"protocol"`
	LegacyEvents []DealEvent              `json:"legacy_events"`
	Events       []DealEvent              `json:"events"`
	PublicKeys   map[string]PublicKeyInfo `json:"public_keys"`
	Policy       Policy                   `json:"policy"`
}

func (b *DealBundle) check() error {
	switch {
	case b.Format != FormatDealV1:
		return fmt.Errorf("%w: format %q, want %q", ErrInvalidBundle, b.Format, FormatDealV1)
	case b.DealID == "":
		return fmt.Errorf("%w: no deal_id", ErrInvalidBundle)
	case b.TenantID == "":
		return fmt.Errorf("%w: no tenant_id", ErrInvalidBundle)
	}
	return nil
}

// DealActors returns the distinct actors whose keys sign events, sorted.
func DealActors(events []DealEvent) []string {
	var out []string
	for _, e := range events {
		if a, ok := dealSigners[e.Type]; ok {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MarshalDealBundle returns the JSON form of b (Format FormatDealV1 when
// empty, Protocol DealProtocol when empty). It returns an error wrapping
// ErrInvalidBundle for another format or a missing deal or tenant id.
func MarshalDealBundle(b *DealBundle) ([]byte, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: nil bundle", ErrInvalidBundle)
	}
	c := *b
	if c.Format == "" {
		c.Format = FormatDealV1
	}
	if c.Protocol == "" {
		c.Protocol = DealProtocol
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	if c.Events == nil {
		c.Events = []DealEvent{}
	}
	if c.LegacyEvents == nil {
		c.LegacyEvents = []DealEvent{}
	}
	if c.PublicKeys == nil {
		c.PublicKeys = map[string]PublicKeyInfo{}
	}
	data, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidBundle, err)
	}
	return data, nil
}

// ParseDealBundle parses the JSON form of a deal bundle strictly (see
// ParseBundle).
func ParseDealBundle(data []byte) (*DealBundle, error) {
	return parseStrict(data, (*DealBundle).check)
}

// BundleFormat returns the "format" member of a bundle's JSON, so that a
// verifier can tell a debate bundle (FormatV1) from a deal bundle
// (FormatDealV1). It returns an error wrapping ErrInvalidBundle if data is
// not a JSON object with a string format.
func BundleFormat(data []byte) (string, error) {
	var head struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidBundle, err)
	}
	if head.Format == nil {
		return "", fmt.Errorf("%w: no format", ErrInvalidBundle)
	}
	return *head.Format, nil
}

// VerifyDealBundle verifies a deal bundle with its own keys and policy:
// integrity, not origin. Legacy events must be seq 1, 2, ... and carry no
// chain fields; they are not otherwise checked.
func VerifyDealBundle(b *DealBundle) Report {
	if b == nil {
		return Report{Problems: []Problem{{Rule: RuleMalformed, Detail: "no bundle"}}}
	}
	if err := b.check(); err != nil {
		return Report{Problems: []Problem{{Rule: RuleMalformed, Detail: err.Error()}}}
	}
	return b.verify(b.PublicKeys, b.Policy, false, nil)
}

// VerifyDealBundleTrusted verifies a deal bundle against trusted keys and
// the trusted policy of DealProtocol, reporting as VerifyBundleTrusted
// does.
func VerifyDealBundleTrusted(b *DealBundle, t Trust) Report {
	if b == nil {
		return Report{Problems: []Problem{{Rule: RuleMalformed, Detail: "no bundle"}}}
	}
	if err := b.check(); err != nil {
		return Report{Problems: []Problem{{Rule: RuleMalformed, Detail: err.Error()}}}
	}
	var pre []Problem
	if b.TenantID != t.TenantID {
		pre = append(pre, Problem{Rule: RuleUntrustedKey, Detail: fmt.Sprintf("the bundle is of tenant %q, the trusted keys of tenant %q", b.TenantID, t.TenantID)})
	}
	for _, id := range slices.Sorted(maps.Keys(b.PublicKeys)) {
		if trusted, ok := t.Keys[id]; ok && !bytes.Equal(trusted.Key, b.PublicKeys[id].Key) {
			pre = append(pre, Problem{Rule: RuleUntrustedKey, Detail: fmt.Sprintf("the bundle's public key of %s differs from the trusted key", id)})
		}
	}
	policy, ok := t.Policies[DealProtocol]
	switch {
	case b.Protocol != DealProtocol:
		pre = append(pre, Problem{Rule: RulePolicy, Detail: fmt.Sprintf("a deal bundle of protocol %q, want %q", b.Protocol, DealProtocol)})
	case !ok:
		pre = append(pre, Problem{Rule: RulePolicy, Detail: fmt.Sprintf("no trusted policy for protocol %q", DealProtocol)})
	case !PolicyEqual(policy, b.Policy):
		pre = append(pre, Problem{Rule: RulePolicy, Detail: fmt.Sprintf("the bundle's policy differs from the published policy of protocol %q", DealProtocol)})
	}
	if !ok {
		policy = b.Policy // still check the events' signers under something
	}
	return b.verify(t.Keys, policy, true, pre)
}

func (b *DealBundle) verify(keys map[string]PublicKeyInfo, policy Policy, trusted bool, pre []Problem) Report {
	for i, e := range b.LegacyEvents {
		switch {
		case e.Seq != int64(i)+1:
			pre = append(pre, Problem{Seq: int64(i) + 1, Rule: RuleSeq, Detail: fmt.Sprintf("legacy event at position %d has seq %d", i+1, e.Seq)})
		case e.Hash != "" || e.PrevHash != "" || e.KeyID != "" || e.Signature != "":
			pre = append(pre, Problem{Seq: e.Seq, Rule: RuleMalformed, Detail: "a legacy event carries chain fields"})
		case e.DealID != b.DealID || e.TenantID != b.TenantID:
			pre = append(pre, Problem{Seq: e.Seq, Rule: RuleScope, Detail: "legacy event of another deal or tenant"})
		}
	}
	r := verifyDeal(b.TenantID, b.DealID, int64(len(b.LegacyEvents)), b.Events, keys, policy, trusted)
	if len(pre) == 0 {
		return r
	}
	r.OK = false
	r.Problems = append(pre, r.Problems...)
	// The first bad seq is the smallest seq any problem names (legacy
	// problems come before the chain); bundle-level problems name none.
	r.FirstBadSeq = 0
	for _, p := range r.Problems {
		if p.Seq != 0 && (r.FirstBadSeq == 0 || p.Seq < r.FirstBadSeq) {
			r.FirstBadSeq = p.Seq
		}
	}
	return r
}

func encodeSig(sig []byte) string {
	if len(sig) != ed25519.SignatureSize {
		return base64.StdEncoding.EncodeToString(sig)
	}
	var b [88]byte // base64 of an Ed25519 signature, made on the stack
	base64.StdEncoding.Encode(b[:], sig)
	return string(b[:])
}

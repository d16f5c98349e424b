package ledger_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
)

// The test vectors of docs/ledger.md, under testdata/vectors: a small
// debate bundle and a small deal bundle, the trusted keys file an operator
// would publish for their tenant, tampered copies, and cases.json naming
// the verdict each must get. TestVectors checks them with this package;
// TestIndependentVerifier with the Python verifier written from the
// document alone. `go test ./internal/ledger -run TestVectors -update`
// writes them again (they are deterministic: fixed secrets and times).

var update = flag.Bool("update", false, "rewrite testdata/vectors")

const vectorsDir = "testdata/vectors"

// vectorCase is one entry of cases.json.
type vectorCase struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Bundle      string  `json:"bundle"`
	TrustedKeys string  `json:"trusted_keys,omitempty"`
	Expect      verdict `json:"expect"`
}

// verdict is what a verifier must conclude: whether the bundle verifies,
// the first bad seq (0 when ok, or when only the bundle as a whole is to
// blame) and the distinct rules of its problems, sorted.
type verdict struct {
	OK          bool     `json:"ok"`
	FirstBadSeq int64    `json:"first_bad_seq"`
	Rules       []string `json:"rules"`
}

func verdictOf(r ledger.Report) verdict {
	v := verdict{OK: r.OK, FirstBadSeq: r.FirstBadSeq, Rules: []string{}}
	for _, p := range r.Problems {
		v.Rules = append(v.Rules, p.Rule)
	}
	slices.Sort(v.Rules)
	v.Rules = slices.Compact(v.Rules)
	return v
}

const (
	vecTenant   = "tenant-vectors"
	vecDebate   = "debate-vectors"
	vecDeal     = "deal-vectors"
	vecProtocol = "vectors.v1"
)

func vecPolicy() ledger.Policy {
	return ledger.Policy{
		RoleGuard: map[string][]string{
			"debate.started":           {"engine"},
			"agent.output":             {"advocate", "critic"},
			"tool_intent_signed":       {"advocate"},
			"tool_execution_completed": {"advocate"},
			"claim_issued":             {"advocate"},
			"debate.stopped":           {"engine"},
			"checkpoint":               {"engine"},
		},
		StrictRoles: true,
		Bookkeeping: []string{"checkpoint"},
		Terminal:    []string{"debate.stopped"},
	}
}

func vecKeyring(t *testing.T, secrets map[string]string, current string) *ledger.Keyring {
	t.Helper()
	m := map[string][]byte{}
	for v, s := range secrets {
		m[v] = []byte(s)
	}
	kr, err := ledger.NewKeyring(m, current)
	require.NoError(t, err)
	return kr
}

// Two secret versions: the first events are signed under v1, the rest
// after a rotation to v2; both verify.
func vecKeyrings(t *testing.T) (v1, v2 *ledger.Keyring) {
	s := map[string]string{"v1": "vectors-secret-version-1-0123456789", "v2": "vectors-secret-version-2-0123456789"}
	return vecKeyring(t, map[string]string{"v1": s["v1"]}, "v1"), vecKeyring(t, s, "v2")
}

type vecEvent struct {
	typ, actor, node string
	round            int
	payload          string
	at               time.Time
}

func vecEvents() []vecEvent {
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	return []vecEvent{
		{"debate.started", "engine", "", 0, `{"deal_id":"deal-1","options":{"max_rounds":1}}`, t0},
		// Canonicalisation at work: member order, escapes, non-ASCII, and
		// numbers RFC 8785 rewrites.
		{"agent.output", "advocate", "opening", 1,
			`{"text":"ARR grew to 4.2M \u2014 \"per the deck\"\n","unicode":"é€😀","n":1.5e3,"big":12345678901234567890,
			  "small":1e-7,"huge":1e21,"list":[true,false,null,0.1,-0],"nested":{"b":1,"a":{"d":[],"c":{}}}}`,
			t0.Add(time.Second + 123450*time.Microsecond)},
		{"tool_intent_signed", "advocate", "opening", 1, `{"intent_id":"i1","tool":"calc.recompute"}`, t0.Add(2*time.Second + 500*time.Millisecond)},
		{"tool_execution_completed", "advocate", "opening", 1, `{"intent_id":"i1","execution_id":"x1","result_hash":"ab"}`, t0.Add(3 * time.Second)},
		{"claim_issued", "advocate", "opening", 1, `{"claim_id":"c1","execution_ids":["x1"]}`, t0.Add(4*time.Second + 7*time.Microsecond)},
		{"agent.output", "critic", "challenge", 1, `{"text":"the chain of c1 is broken"}`, t0.Add(5 * time.Second)},
		{"debate.stopped", "engine", "", 1, `{"reason":"end","status":"completed"}`, t0.Add(6 * time.Second)},
		{"checkpoint", "engine", "", 1, ``, t0.Add(7 * time.Second)},
	}
}

// sealFrom seals vs as the events after prev, each by the keyring that is
// current at that point (v1 for seq 1-3, v2 after).
func sealFrom(t *testing.T, prev *ledger.Event, vs []vecEvent, keyring func(seq int64) *ledger.Keyring) []ledger.Event {
	t.Helper()
	var out []ledger.Event
	for _, v := range vs {
		seq := int64(1)
		if prev != nil {
			seq = prev.Seq + 1
		}
		e := ledger.Event{DebateID: vecDebate, TenantID: vecTenant, Type: v.typ, Actor: v.actor, Node: v.node, Round: v.round, Time: v.at}
		if v.payload != "" {
			e.Payload = json.RawMessage(v.payload)
		}
		kr := keyring(seq)
		sealed, err := ledger.Seal(prev, e, kr.Signer(vecTenant, v.actor))
		require.NoError(t, err)
		out = append(out, sealed)
		prev = &out[len(out)-1]
	}
	return out
}

type vectors struct {
	files map[string][]byte
	cases []vectorCase
}

func (vs *vectors) add(name string, data []byte) { vs.files[name] = data }

func (vs *vectors) debateBundle(t *testing.T, name string, b *ledger.Bundle) {
	t.Helper()
	data, err := ledger.MarshalBundle(b)
	require.NoError(t, err)
	vs.add(name, data)
}

func (vs *vectors) dealBundle(t *testing.T, name string, b *ledger.DealBundle) {
	t.Helper()
	data, err := ledger.MarshalDealBundle(b)
	require.NoError(t, err)
	vs.add(name, data)
}

func (vs *vectors) expect(name, desc, bundle, trusted string, v verdict) {
	slices.Sort(v.Rules)
	if v.Rules == nil {
		v.Rules = []string{}
	}
	vs.cases = append(vs.cases, vectorCase{Name: name, Description: desc, Bundle: bundle, TrustedKeys: trusted, Expect: v})
}

func cloneEvents(es []ledger.Event) []ledger.Event {
	out := slices.Clone(es)
	for i := range out {
		out[i].Payload = slices.Clone(out[i].Payload)
	}
	return out
}

// buildVectors makes every vector file and case.
func buildVectors(t *testing.T) *vectors {
	t.Helper()
	vs := &vectors{files: map[string][]byte{}}
	v1, v2 := vecKeyrings(t)
	current := func(seq int64) *ledger.Keyring {
		if seq <= 3 {
			return v1
		}
		return v2
	}
	events := sealFrom(t, nil, vecEvents(), current)
	keys := v2.PublicKeys(vecTenant, ledger.Actors(events))
	genuine := ledger.NewBundle(vecDebate, vecTenant, events, keys, vecPolicy())
	genuine.Protocol = vecProtocol
	vs.debateBundle(t, "debate.json", genuine)

	// The trusted keys: what `debatectl --json keys` prints for the tenant.
	actors := []string{"advocate", "critic", "engine", debate.ActorGrader, ledger.DealActorOperator}
	resp := &debatedv1.GetSigningKeysResponse{TenantId: vecTenant}
	for _, k := range v2.Published(vecTenant, actors) {
		resp.Keys = append(resp.Keys, apiconv.PublicKeyToProto(k))
	}
	resp.Policies = []*debatedv1.LedgerPolicy{
		apiconv.PolicyToProto(ledger.DealProtocol, ledger.DealPolicy()),
		apiconv.PolicyToProto(vecProtocol, vecPolicy()),
	}
	// protojson varies its whitespace on purpose; the file is re-indented
	// so that it is stable.
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(resp)
	require.NoError(t, err)
	var compact, trusted bytes.Buffer
	require.NoError(t, json.Compact(&compact, raw))
	require.NoError(t, json.Indent(&trusted, compact.Bytes(), "", "  "))
	vs.add("trusted_keys.json", append(trusted.Bytes(), '\n'))

	ok := verdict{OK: true}
	vs.expect("debate", "the genuine debate bundle", "debate.json", "", ok)
	vs.expect("debate-trusted", "the genuine debate bundle against the published keys", "debate.json", "trusted_keys.json", ok)

	tamper := func(name, desc string, edit func(b *ledger.Bundle), trusted string, v verdict) {
		b := *genuine
		b.Events = cloneEvents(genuine.Events)
		edit(&b)
		vs.debateBundle(t, name+".json", &b)
		vs.expect(name, desc, name+".json", trusted, v)
	}
	tamper("payload-edited", "seq 2's payload changed after sealing", func(b *ledger.Bundle) {
		b.Events[1].Payload = json.RawMessage(strings.Replace(string(b.Events[1].Payload), "4.2M", "9.9M", 1))
	}, "", verdict{FirstBadSeq: 2, Rules: []string{ledger.RuleHash}})
	tamper("time-edited", "seq 6's time moved by one second", func(b *ledger.Bundle) {
		b.Events[5].Time = b.Events[5].Time.Add(time.Second)
	}, "", verdict{FirstBadSeq: 6, Rules: []string{ledger.RuleHash}})
	tamper("hash-forged", "seq 3's payload changed and its hash recomputed: the signature and the next prev_hash fail", func(b *ledger.Bundle) {
		b.Events[2].Payload = json.RawMessage(`{"intent_id":"i1","tool":"calc.other"}`)
		h, err := ledger.ComputeHash(&b.Events[2])
		require.NoError(t, err)
		b.Events[2].Hash = h
	}, "", verdict{FirstBadSeq: 3, Rules: []string{ledger.RulePrevHash, ledger.RuleSignature}})
	tamper("signature-swapped", "seq 5 carries seq 4's signature", func(b *ledger.Bundle) {
		b.Events[4].Signature = b.Events[3].Signature
	}, "", verdict{FirstBadSeq: 5, Rules: []string{ledger.RuleSignature}})
	tamper("event-deleted", "seq 4 removed: the claim then names an execution that never finished", func(b *ledger.Bundle) {
		b.Events = append(b.Events[:3:3], b.Events[4:]...)
	}, "", verdict{FirstBadSeq: 4, Rules: []string{ledger.RuleClaimEvidence, ledger.RulePrevHash, ledger.RuleSeq}})
	tamper("events-reordered", "seq 6 and 7 swapped: an agent output after the terminal event", func(b *ledger.Bundle) {
		b.Events[5], b.Events[6] = b.Events[6], b.Events[5]
	}, "", verdict{FirstBadSeq: 6, Rules: []string{ledger.RulePrevHash, ledger.RuleSeq, ledger.RuleTerminal}})
	tamper("role-violation", "seq 6 resealed (validly) as the engine's: the role guard refuses it", func(b *ledger.Bundle) {
		vs := vecEvents()[5:]
		vs[0].actor = "engine"
		b.Events = append(b.Events[:5:5], sealFrom(t, &b.Events[4], vs, current)...)
	}, "", verdict{FirstBadSeq: 6, Rules: []string{ledger.RuleRoleGuard}})
	tamper("key-replaced", "the bundle's public key of the advocate's key id replaced by the critic's", func(b *ledger.Bundle) {
		b.PublicKeys = map[string]ledger.PublicKeyInfo{}
		for id, k := range genuine.PublicKeys {
			b.PublicKeys[id] = k
		}
		// The critic's key of the smallest key id: the same file every run
		// (map order is random).
		var critic ledger.PublicKeyInfo
		for _, id := range slices.Sorted(maps.Keys(genuine.PublicKeys)) {
			if k := genuine.PublicKeys[id]; k.Actor == "critic" && critic.Key == nil {
				critic = k
			}
		}
		for id, k := range b.PublicKeys {
			if k.Actor == "advocate" {
				k.Key = critic.Key
				b.PublicKeys[id] = k
			}
		}
	}, "", verdict{FirstBadSeq: 2, Rules: []string{ledger.RuleKeyID}})

	// Re-signed with a forger's keys, key ids recomputed: consistent in
	// itself, refused against the published keys.
	forger := vecKeyring(t, map[string]string{"v1": "a-forger-secret-of-thirty-two-bytes"}, "v1")
	resigned := *genuine
	resigned.Events = sealFrom(t, nil, vecEvents(), func(int64) *ledger.Keyring { return forger })
	resigned.PublicKeys = forger.PublicKeys(vecTenant, ledger.Actors(resigned.Events))
	vs.debateBundle(t, "resigned.json", &resigned)
	vs.expect("resigned", "re-signed with other keys: integrity holds", "resigned.json", "", ok)
	vs.expect("resigned-trusted", "re-signed with other keys, against the published keys", "resigned.json", "trusted_keys.json",
		verdict{FirstBadSeq: 1, Rules: []string{ledger.RuleKeyID}})
	loose := *genuine
	loose.Policy = vecPolicy()
	loose.Policy.RoleGuard, loose.Policy.StrictRoles = nil, false
	vs.debateBundle(t, "policy-edited.json", &loose)
	vs.expect("policy-edited", "the role guard removed from the bundle's policy: integrity holds", "policy-edited.json", "", ok)
	vs.expect("policy-edited-trusted", "the role guard removed, against the published policy", "policy-edited.json", "trusted_keys.json",
		verdict{Rules: []string{ledger.RulePolicy}})

	// A deal's audit log: one legacy event, then three chained.
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	dealEvents := []debate.DealEvent{
		{Seq: 2, DealID: vecDeal, Type: debate.EventClaimGradeChanged, Actor: debate.ActorGrader, CreatedAt: t0.Add(time.Second),
			Payload: map[string]any{"claim_key": "C1", "from": "C", "to": "B"}},
		{Seq: 3, DealID: vecDeal, Type: debate.EventDefectCreated, Actor: debate.ActorGrader, CreatedAt: t0.Add(time.Second),
			Payload: map[string]any{"defect_id": "d1", "severity": "MAJOR"}},
		{Seq: 4, DealID: vecDeal, Type: debate.EventDefectCured, Actor: "analyst@fund", CreatedAt: t0.Add(2*time.Second + 250*time.Millisecond),
			Payload: map[string]any{"defect_id": "d1", "reason": "source reconciled"}},
	}
	sealDeal := func(kr *ledger.Keyring, es []debate.DealEvent) []ledger.DealEvent {
		sealed, err := ledger.NewDealSealer(kr).SealDeal(vecTenant, "", es)
		require.NoError(t, err)
		var out []ledger.DealEvent
		for _, e := range sealed {
			de, err := ledger.DealEventOf(vecTenant, e)
			require.NoError(t, err)
			out = append(out, de)
		}
		return out
	}
	legacy, err := ledger.DealEventOf(vecTenant, debate.DealEvent{Seq: 1, DealID: vecDeal, Type: debate.EventClaimVerdictChanged,
		Actor: debate.ActorGrader, CreatedAt: t0, Payload: map[string]any{"claim_key": "C1", "to": "VERIFIED"}})
	require.NoError(t, err)
	chained := sealDeal(v2, dealEvents)
	deal := &ledger.DealBundle{DealID: vecDeal, TenantID: vecTenant, Protocol: ledger.DealProtocol,
		LegacyEvents: []ledger.DealEvent{legacy}, Events: chained,
		PublicKeys: v2.PublicKeys(vecTenant, ledger.DealActors(chained)), Policy: ledger.DealPolicy()}
	vs.dealBundle(t, "deal.json", deal)
	vs.expect("deal", "the genuine deal bundle", "deal.json", "", ok)
	vs.expect("deal-trusted", "the genuine deal bundle against the published keys", "deal.json", "trusted_keys.json", ok)
	dealTamper := func(name, desc string, edit func(b *ledger.DealBundle), trusted string, v verdict) {
		b := *deal
		b.Events = slices.Clone(deal.Events)
		edit(&b)
		vs.dealBundle(t, name+".json", &b)
		vs.expect(name, desc, name+".json", trusted, v)
	}
	dealTamper("deal-payload-edited", "seq 3's payload changed", func(b *ledger.DealBundle) {
		b.Events[1].Payload = json.RawMessage(`{"defect_id":"d1","severity":"MINOR"}`)
	}, "", verdict{FirstBadSeq: 3, Rules: []string{ledger.RuleHash}})
	dealTamper("deal-actor-edited", "seq 4's actor (who cured the defect) changed", func(b *ledger.DealBundle) {
		b.Events[2].Actor = "partner@fund"
	}, "", verdict{FirstBadSeq: 4, Rules: []string{ledger.RuleHash}})
	dealTamper("deal-wrong-signer", "a cure signed (validly) by the grader's key: the grader may not sign people's acts", func(b *ledger.DealBundle) {
		es := slices.Clone(dealEvents)
		es[2].Type = debate.EventClaimGradeChanged // sealed as the grader's ...
		resealed := sealDeal(v2, es)
		resealed[2].Type = debate.EventDefectCured // ... then relabelled and re-signed by the grader
		sum, err := ledger.DealHash(&resealed[2])
		require.NoError(t, err)
		resealed[2].Hash = sum
		resealed[2].Signature = signWith(t, v2, debate.ActorGrader, sum)
		b.Events = resealed
		b.PublicKeys = v2.PublicKeys(vecTenant, []string{debate.ActorGrader, ledger.DealActorOperator})
	}, "", verdict{FirstBadSeq: 4, Rules: []string{ledger.RuleRoleGuard}})
	dealTamper("deal-legacy-forged", "a chained event relabelled as legacy by dropping its chain fields", func(b *ledger.DealBundle) {
		e := b.Events[0]
		e.PrevHash, e.Hash, e.KeyID, e.Signature = "", "", "", ""
		b.LegacyEvents = append(slices.Clone(b.LegacyEvents), e)
		b.Events = b.Events[1:]
	}, "", verdict{FirstBadSeq: 3, Rules: []string{ledger.RulePrevHash}})
	return vs
}

// signWith signs a hex digest with the current key of (vecTenant, actor).
func signWith(t *testing.T, kr *ledger.Keyring, actor, hexSum string) string {
	t.Helper()
	sum, err := hex.DecodeString(hexSum)
	require.NoError(t, err)
	sig, err := kr.Signer(vecTenant, actor).Sign(sum)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(sig)
}

// verifyVector verifies a vector file as `debatectl verify` does.
func verifyVector(t *testing.T, dir string, c vectorCase) ledger.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, c.Bundle))
	require.NoError(t, err)
	var trust *ledger.Trust
	if c.TrustedKeys != "" {
		raw, err := os.ReadFile(filepath.Join(dir, c.TrustedKeys))
		require.NoError(t, err)
		var resp debatedv1.GetSigningKeysResponse
		require.NoError(t, protojson.Unmarshal(raw, &resp))
		tr, err := apiconv.TrustFromProto(&resp)
		require.NoError(t, err)
		trust = &tr
	}
	format, err := ledger.BundleFormat(data)
	require.NoError(t, err)
	switch format {
	case ledger.FormatV1:
		b, err := ledger.ParseBundle(data)
		require.NoError(t, err)
		if trust != nil {
			return ledger.VerifyBundleTrusted(b, *trust)
		}
		return ledger.VerifyBundle(b)
	case ledger.FormatDealV1:
		b, err := ledger.ParseDealBundle(data)
		require.NoError(t, err)
		if trust != nil {
			return ledger.VerifyDealBundleTrusted(b, *trust)
		}
		return ledger.VerifyDealBundle(b)
	}
	t.Fatalf("%s: unknown format %q", c.Bundle, format)
	return ledger.Report{}
}

func TestVectors(t *testing.T) {
	t.Parallel()
	vs := buildVectors(t)
	cases, err := json.MarshalIndent(vs.cases, "", "  ")
	require.NoError(t, err)
	vs.add("cases.json", append(cases, '\n'))
	if *update {
		require.NoError(t, os.RemoveAll(vectorsDir))
		require.NoError(t, os.MkdirAll(vectorsDir, 0o755))
		for name, data := range vs.files {
			require.NoError(t, os.WriteFile(filepath.Join(vectorsDir, name), data, 0o644))
		}
	}
	// The committed vectors are what this code produces: the format has
	// not drifted from the document.
	entries, err := os.ReadDir(vectorsDir)
	require.NoError(t, err)
	require.Len(t, entries, len(vs.files), "run with -update after changing the vectors")
	for name, data := range vs.files {
		got, err := os.ReadFile(filepath.Join(vectorsDir, name))
		require.NoError(t, err)
		require.Equal(t, string(data), string(got), "%s differs from what the code produces (run with -update)", name)
	}
	// Every case gets its stated verdict.
	for _, c := range vs.cases {
		require.Equal(t, c.Expect, verdictOf(verifyVector(t, vectorsDir, c)), c.Name)
	}
}

// TestIndependentVerifier runs the verifier written in Python from
// docs/ledger.md alone (docs/ledger-verifier/verify.py) on every vector and
// requires the verdicts of cases.json.
func TestIndependentVerifier(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the independent verifier was not run")
	}
	if err := exec.Command(python, "-c", "import cryptography.hazmat.primitives.asymmetric.ed25519").Run(); err != nil {
		t.Skip("the Python package cryptography is not installed: the independent verifier was not run")
	}
	script := filepath.Join("..", "..", "docs", "ledger-verifier", "verify.py")
	data, err := os.ReadFile(filepath.Join(vectorsDir, "cases.json"))
	require.NoError(t, err)
	var cases []vectorCase
	require.NoError(t, json.Unmarshal(data, &cases))
	require.NotEmpty(t, cases)
	// One process for every case (batch mode), and one per case for the
	// command line and its exit status on two of them.
	var in strings.Builder
	for _, c := range cases {
		in.WriteString(filepath.Join(vectorsDir, c.Bundle) + "\t")
		if c.TrustedKeys != "" {
			in.WriteString(filepath.Join(vectorsDir, c.TrustedKeys))
		}
		in.WriteString("\n")
	}
	cmd := exec.Command(python, script, "--batch")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, len(cases))
	for i, c := range cases {
		var got verdict
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &got), "%s: %s", c.Name, lines[i])
		slices.Sort(got.Rules)
		if got.Rules == nil {
			got.Rules = []string{}
		}
		require.Equal(t, c.Expect, got, "%s: %s", c.Name, lines[i])
	}
	for _, c := range []vectorCase{cases[0], cases[len(cases)-1]} {
		args := []string{script, "--json"}
		if c.TrustedKeys != "" {
			args = append(args, "--trusted-keys", filepath.Join(vectorsDir, c.TrustedKeys))
		}
		args = append(args, filepath.Join(vectorsDir, c.Bundle))
		out, err := exec.Command(python, args...).Output()
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
			t.Fatalf("%s: %v\n%s", c.Name, err, out)
		}
		require.Equal(t, c.Expect.OK, err == nil, "%s: exit status 0 means ok: %s", c.Name, out)
	}
}

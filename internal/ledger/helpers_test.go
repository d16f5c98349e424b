package ledger

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testSecret returns a deterministic 32-byte secret distinct per label.
func testSecret(label string) []byte {
	return bytes.Repeat([]byte(label+"-"), 32)[:32]
}

// fixture is what most tests start from: a keyring of one version, a tenant
// and a debate, and a fixed clock.
type fixture struct {
	kr     *Keyring
	tenant string
	debate string
	t0     time.Time
}

func setup(t testing.TB) *fixture {
	t.Helper()
	kr, err := NewKeyring(map[string][]byte{"v1": testSecret("v1")}, "v1")
	require.NoError(t, err)
	return &fixture{
		kr:     kr,
		tenant: "tenant-a",
		debate: "debate-1",
		t0:     time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
	}
}

// spec is an event to append: its type, actor and payload (JSON text, ""
// for none).
type spec struct {
	typ, actor, payload string
}

func ev(typ, actor, payload string) spec { return spec{typ: typ, actor: actor, payload: payload} }

// seal appends one event after prev.
func (f *fixture) seal(t testing.TB, prev *Event, s spec) Event {
	t.Helper()
	seq := int64(1)
	if prev != nil {
		seq = prev.Seq + 1
	}
	e := Event{
		DebateID: f.debate,
		TenantID: f.tenant,
		Type:     s.typ,
		Actor:    s.actor,
		Node:     "node_" + s.actor,
		Round:    int(seq+1) / 3,
		Time:     f.t0.Add(time.Duration(seq) * time.Second),
	}
	if s.payload != "" {
		e.Payload = json.RawMessage(s.payload)
	}
	out, err := Seal(prev, e, f.kr.Signer(f.tenant, s.actor))
	require.NoError(t, err)
	return out
}

// chain seals the specs as a ledger.
func (f *fixture) chain(t testing.TB, specs ...spec) []Event {
	t.Helper()
	out := make([]Event, 0, len(specs))
	var prev *Event
	for _, s := range specs {
		out = append(out, f.seal(t, prev, s))
		prev = &out[len(out)-1]
	}
	return out
}

// keys returns the public keys of every version for the actors of events.
func (f *fixture) keys(events []Event) map[string]PublicKeyInfo {
	return f.kr.PublicKeys(f.tenant, append(Actors(events), "advocate", "arbiter", "engine"))
}

// plain is a six-event debate touching no ordering rule.
func plain() []spec {
	return []spec{
		ev("debate_started", "engine", `{"deal_id":"d1"}`),
		ev("agent_output", "advocate", `{"text":"ARR is 4.2M","claim_refs":["c1","c2"]}`),
		ev("agent_output", "sanad_breaker", `{"text":"the chain of c2 is broken","defects":[{"claim":"c2","kind":"BROKEN_CHAIN"}]}`),
		ev("agent_output", "advocate", `{"text":"rebuttal","n":1.5e3}`),
		ev("arbiter_decision", "arbiter", `{"stop":false}`),
		ev("checkpoint", "engine", ``),
	}
}

// rules returns the rules of a report's problems.
func rules(r Report) []string {
	out := make([]string, 0, len(r.Problems))
	for _, p := range r.Problems {
		out = append(out, p.Rule)
	}
	return slices.Compact(out)
}

// requireOK fails with the report's problems unless it is OK.
func requireOK(t testing.TB, r Report) {
	t.Helper()
	require.Truef(t, r.OK, "problems: %+v", r.Problems)
	require.Zero(t, r.FirstBadSeq)
	require.Empty(t, r.Problems)
}

// requireBad checks that a report fails first at seq with the given rule
// among that event's problems.
func requireBad(t testing.TB, r Report, seq int64, rule string) {
	t.Helper()
	require.Falsef(t, r.OK, "expected a %s problem at seq %d", rule, seq)
	require.Equalf(t, seq, r.FirstBadSeq, "problems: %+v", r.Problems)
	for _, p := range r.Problems {
		if p.Seq == seq && p.Rule == rule {
			return
		}
	}
	t.Fatalf("no %s problem at seq %d: %+v", rule, seq, r.Problems)
}

func clone(events []Event) []Event {
	out := slices.Clone(events)
	for i := range out {
		out[i].Payload = slices.Clone(out[i].Payload)
	}
	return out
}

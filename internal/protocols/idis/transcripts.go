package idis

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/debated/debated/internal/canon"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
)

// Transcripts is a replica's cache of IDIS transcripts: the accepted agent
// outputs of each debate, in ledger order. The ledger is append-only, so a
// turn reads only the events after those the cache has seen; and when the
// cache is also fed the events this replica commits (Transcripts is a
// runner.Publisher: pass the same value to Config.Transcripts and to the
// runner), a turn whose debate this replica ran until now reads nothing at
// all: the step's head seq (NodeInput.HeadSeq) tells it that it has seen
// everything. It is safe for concurrent use.
type Transcripts struct {
	mu   sync.Mutex
	byID map[string]*transcript // tenant NUL debate id
}

// NewTranscripts returns an empty cache.
func NewTranscripts() *Transcripts { return &Transcripts{byID: map[string]*transcript{}} }

// transcript is one debate's: every event with seq <= seen has been looked
// at, and outputs holds the agent.output ones among them.
type transcript struct {
	mu      sync.Mutex
	seen    int64
	outputs []debate.AgentOutput
	seqs    []int64 // of outputs
	// decoded are the outputs of the pending events a step decoded last
	// (Transcripts.pending), kept for the Publish of the same events once
	// they commit, which would decode them again.
	decoded []decodedOutput
	// spoken are outputs this replica's steps emitted, with their payloads
	// (Transcripts.spoken), until decode takes them (the last few: steps
	// computed and dropped leave theirs).
	spoken []decodedOutput
}

// decodedOutput is an agent.output event's payload and its decoding.
type decodedOutput struct {
	seq     int64
	payload []byte
	out     debate.AgentOutput
}

// decode returns the agent output of e, an agent.output event, reusing the
// decoding of a pending event with the same seq and payload, or an output
// spoken with the same payload.
func (t *transcript) decode(e debate.Event) (debate.AgentOutput, error) {
	for _, d := range t.decoded {
		if d.seq == e.Seq && bytes.Equal(d.payload, e.Payload) {
			return d.out, nil
		}
	}
	for i, d := range t.spoken {
		if bytes.Equal(d.payload, e.Payload) {
			t.spoken = slices.Delete(t.spoken, i, i+1) // decoded or published from now on
			return d.out, nil
		}
	}
	var o debate.AgentOutput
	if err := json.Unmarshal(e.Payload, &o); err != nil {
		return o, fmt.Errorf("idis: transcript seq %d: %w", e.Seq, err)
	}
	return o, nil
}

// add takes events that continue what t has seen: their agent outputs are
// appended and seen moves to the last one. On an error (an output that does
// not decode), t holds what came before that output.
func (t *transcript) add(events []debate.Event) error {
	for _, e := range events {
		if e.Type == EventAgentOutput {
			o, err := t.decode(e)
			if err != nil {
				return err
			}
			t.outputs = append(t.outputs, o)
			t.seqs = append(t.seqs, e.Seq)
		}
		t.seen = e.Seq
	}
	return nil
}

// get returns the debate's entry; create makes it when it is missing.
func (c *Transcripts) get(key string, create bool) *transcript {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.byID[key]
	if t == nil && create {
		if len(c.byID) >= cacheLimit {
			c.byID = map[string]*transcript{}
		}
		t = &transcript{}
		c.byID[key] = t
	}
	return t
}

// Publish feeds the cache with events the runner committed for a debate,
// in order. Events that do not continue what the cache has seen (a gap: the
// debate ran elsewhere, or the cache was emptied) are ignored; the next
// turn reads them from the store. Only IDIS debates get an entry (from
// their first commit), and a debate's entry goes when it ends.
func (c *Transcripts) Publish(tenantID, debateID string, events []debate.Event) {
	if len(events) == 0 {
		return
	}
	key := tenantID + "\x00" + debateID
	if slices.ContainsFunc(events, func(e debate.Event) bool { return slices.Contains(orchestrator.TerminalEventTypes(), e.Type) }) {
		c.mu.Lock()
		delete(c.byID, key)
		c.mu.Unlock()
		return
	}
	t := c.get(key, startsIDIS(events[0]))
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if events[0].Seq != t.seen+1 {
		return
	}
	n := len(t.outputs)
	if err := t.add(events); err != nil {
		t.outputs, t.seqs, t.seen = t.outputs[:n], t.seqs[:n], events[0].Seq-1 // left to the next turn's read, which reports it
	}
	t.decoded = slices.DeleteFunc(t.decoded, func(d decodedOutput) bool { return d.seq <= t.seen })
}

// pending returns the agent outputs of events, a step's NodeInput.Pending
// (the previous step's events, committing while the step runs). The debate's
// entry keeps their decoding until they are published: the parallel
// branches of a step and the Publish of the events decode them once.
func (c *Transcripts) pending(tenant, debateID string, events []debate.Event) ([]debate.AgentOutput, error) {
	if !slices.ContainsFunc(events, func(e debate.Event) bool { return e.Type == EventAgentOutput }) {
		return nil, nil
	}
	t := c.get(tenant+"\x00"+debateID, true)
	t.mu.Lock()
	defer t.mu.Unlock()
	var outs []debate.AgentOutput
	var decoded []decodedOutput
	for _, e := range events {
		if e.Type != EventAgentOutput {
			continue
		}
		o, err := t.decode(e)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
		decoded = append(decoded, decodedOutput{seq: e.Seq, payload: e.Payload, out: o})
	}
	t.decoded = decoded
	return outs, nil
}

// spoken keeps out, which a step of this replica emits as payload, its
// canonical encoding, for the decode of the payload once it is pending or
// committed: out with its JSON texts in canonical form, as the payload holds
// them, if decoding the payload gives that back (canon.RoundTrips).
func (c *Transcripts) spoken(tenant, debateID string, payload []byte, out *debate.AgentOutput) {
	o := *out
	o.ToolCalls = slices.Clone(o.ToolCalls)
	for i := range o.ToolCalls {
		o.ToolCalls[i].Args, _ = canon.Transform(o.ToolCalls[i].Args) // nil when not JSON: RoundTrips says no
	}
	if o.StructuredContent != nil {
		o.StructuredContent, _ = canon.Transform(o.StructuredContent)
	}
	if !canon.RoundTrips(o) {
		return
	}
	t := c.get(tenant+"\x00"+debateID, true)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.spoken) >= maxSpoken {
		t.spoken = slices.Delete(t.spoken, 0, 1)
	}
	t.spoken = append(t.spoken, decodedOutput{payload: payload, out: o})
}

// maxSpoken bounds a debate's spoken outputs: those of a step's branches,
// and of steps computed and dropped.
const maxSpoken = 16

// startsIDIS reports whether e is the debate.started event of an IDIS
// debate.
func startsIDIS(e debate.Event) bool {
	if e.Seq != 1 || e.Type != orchestrator.EventDebateStarted {
		return false
	}
	var p struct {
		Protocol string `json:"protocol"`
	}
	return json.Unmarshal(e.Payload, &p) == nil && p.Protocol == Name
}

// read returns the debate's accepted outputs through head (the step's
// HeadSeq: every event through it is committed; 0: none is), reading from
// the ledger only the events the cache has not seen. It never returns an
// output after head, although the ledger may hold some by now: the
// previous step's, committed while a step computed ahead (see
// Protocol.Pipelined) ran, which that step gets from NodeInput.Pending.
// The outputs are the cache's, which never change: the slice is clipped,
// so appending to it copies them.
func (c *Transcripts) read(ctx context.Context, ledger Ledger, tenant, debateID string, head int64) ([]debate.AgentOutput, error) {
	if head <= 0 {
		return nil, nil
	}
	t := c.get(tenant+"\x00"+debateID, true)
	t.mu.Lock()
	defer t.mu.Unlock()
	list := func() ([]debate.Event, error) { return ledger.EventList(ctx, debateID, t.seen, 5000) }
	if typed, ok := ledger.(payloadLedger); ok {
		list = func() ([]debate.Event, error) {
			return typed.EventPayloads(ctx, debateID, t.seen, EventAgentOutput, 5000)
		}
	}
	for t.seen < head {
		evs, err := list()
		if err != nil {
			return nil, fmt.Errorf("idis: read transcript: %w", err)
		}
		full := len(evs) == 5000
		if i := slices.IndexFunc(evs, func(e debate.Event) bool { return e.Seq > head }); i >= 0 {
			evs, full = evs[:i], false
		}
		if err := t.add(evs); err != nil {
			return nil, err
		}
		if !full {
			// Every event through the head has been looked at, whatever
			// its type.
			t.seen = max(t.seen, head)
		}
	}
	// The cache may be ahead of head (another worker's commits of the
	// debate, published here): its outputs after head are not this step's.
	n := len(t.outputs)
	for n > 0 && t.seqs[n-1] > head {
		n--
	}
	return t.outputs[:n:n], nil
}

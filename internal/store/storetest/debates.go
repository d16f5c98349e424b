package storetest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// DebateRowCounter is implemented by test adapters that can count a
// tenant's rows in the debate tables directly, below the store's API. When
// the store passed to Run implements it, the suite also checks that a
// refused or fenced-off commit left no row behind.
type DebateRowCounter interface {
	// CountDebateRows returns the number of rows tenantID has in each
	// debate table (debates, debate_events, debate_checkpoints,
	// human_gates), by table name.
	CountDebateRows(ctx context.Context, tenantID string) (map[string]int, error)
}

// debateCases are the cases of DebateStore, run by Run.
var debateCases = []struct {
	name string
	fn   func(t *testing.T, s Store)
}{
	{"DebateCreateGet", testDebateCreateGet},
	{"DebateCreateIdempotent", testDebateCreateIdempotent},
	{"DebateCreateConcurrent", testDebateCreateConcurrent},
	{"DebateCreateUnknownDeal", testDebateCreateUnknownDeal},
	{"DebateCreateInvalid", testDebateCreateInvalid},
	{"DebateListFiltersAndPages", testDebateListFiltersAndPages},
	{"DebatesTenantsIsolated", testDebatesTenantsIsolated},
	{"DebatesNoTenant", testDebatesNoTenant},
	{"StepCommitRoundTrip", testStepCommitRoundTrip},
	{"StepCommitFencing", testStepCommitFencing},
	{"StepCommitConcurrent", testStepCommitConcurrent},
	{"StepCommitRejectsInvalid", testStepCommitRejectsInvalid},
	{"HumanGates", testHumanGates},
	{"DebateEventListPages", testDebateEventListPages},
	{"CheckpointLatestHighestStep", testCheckpointLatestHighestStep},
}

// GenesisHash is the head hash the suite creates debates with (the
// ledger's hash before its first event).
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// debateCreatedAt is the creation time the suite's debates start from:
// nanoseconds in a zone other than UTC, which stores keep to the
// microsecond in UTC.
var debateCreatedAt = time.Date(2026, 2, 3, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))

// SampleDebate returns a debate of deal dealID, with a fresh id, created at
// at, as the API would ask DebateCreate to store it.
func SampleDebate(dealID string, at time.Time) debate.Debate {
	return debate.Debate{
		ID:          "debate-" + uuid.NewString(),
		DealID:      dealID,
		Protocol:    "idis_vc",
		Options:     json.RawMessage(`{"max_rounds":3,"arbiter":"rules"}`),
		RequestHash: "request-" + uuid.NewString()[:8],
		NextNode:    "advocate_opening",
		HeadHash:    GenesisHash,
		CreatedAt:   at,
	}
}

// NewDebate creates a tenant with a deal and a debate of it in s, and
// returns a context authenticated as the tenant, its id and the debate as
// stored.
func NewDebate(tb testing.TB, s Store) (context.Context, string, debate.Debate) {
	tb.Helper()
	ctx, tenant := NewTenant(tb, s)
	b := SampleBundle("deal-" + uuid.NewString())
	h, err := b.ContentHash()
	require.NoError(tb, err)
	_, err = s.DealImport(ctx, b, h, importedAt)
	require.NoError(tb, err)
	d, created, err := s.DebateCreate(ctx, SampleDebate(b.Deal.ID, debateCreatedAt))
	require.NoError(tb, err)
	require.True(tb, created)
	return ctx, tenant, d
}

// Ledger builds the steps of one debate's ledger as a ledger package would
// seal them: contiguous seqs, each event's PrevHash the Hash of the one
// before it. Hashes and signatures are stand-ins (a SHA-256 over the
// event's fields, not its canonical form): stores only keep them.
type Ledger struct {
	TenantID, DebateID string
	Seq                int64  // the head: the last committed seq
	Hash               string // and its hash
	Step               int    // the last committed step
	At                 time.Time
	// Payload returns the payload of the event with seq; nil gives the
	// suite's default.
	Payload func(seq int64) json.RawMessage
	// State is the checkpoint state of each step; nil gives a small one.
	State json.RawMessage
}

// NewLedger returns a Ledger at the head of d, stepping from at.
func NewLedger(tenant string, d debate.Debate, at time.Time) *Ledger {
	return &Ledger{TenantID: tenant, DebateID: d.ID, Seq: d.LastSeq, Hash: d.HeadHash, At: at}
}

// defaultPayload is canonical JSON (no insignificant whitespace) whose
// members are not in sorted order, with escapes and numbers a re-encoding
// would change: a store must return it byte for byte.
func defaultPayload(seq int64) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"z":%d,"a":[1.50,-0,1e+21,true,null],"m":{"y":"caf\u00e9 \"q\" \\ <&>","b":{}},"k":"é日本"}`, seq))
}

// Next returns the StepCommit of the next step: n events extending the
// head, a checkpoint of the step with the head after it, status running,
// at one millisecond after the previous step. It does not advance the
// ledger: call Commit once the store took the step.
func (l *Ledger) Next(n int) debate.StepCommit {
	at := l.At.Add(time.Millisecond)
	c := debate.StepCommit{
		DebateID: l.DebateID, ExpectSeq: l.Seq, ExpectHash: l.Hash,
		Status: debate.DebateRunning, Round: 1 + l.Step/7, NextNode: fmt.Sprintf("node-%d", l.Step+2), At: at,
	}
	prev := l.Hash
	for i := range n {
		seq := l.Seq + int64(i) + 1
		payload := defaultPayload(seq)
		if l.Payload != nil {
			payload = l.Payload(seq)
		}
		e := debate.Event{
			DebateID: l.DebateID, TenantID: l.TenantID, Seq: seq, Type: "agent.output", Actor: "advocate",
			Node: fmt.Sprintf("node-%d", l.Step+1), Round: c.Round, Payload: payload,
			// Sealed events' times are whole microseconds, in UTC.
			Time:     at.Add(time.Duration(i) * time.Microsecond).UTC().Truncate(time.Microsecond),
			PrevHash: prev, KeyID: "1:0123456789abcdef",
		}
		sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d\x00%s\x00%s", e.TenantID, e.DebateID, e.Seq, e.PrevHash, e.Payload))
		e.Hash = hex.EncodeToString(sum[:])
		e.Signature = base64.StdEncoding.EncodeToString(append(sum[:], sum[:]...))
		c.Events = append(c.Events, e)
		prev = e.Hash
	}
	state := l.State
	if state == nil {
		state = json.RawMessage(fmt.Sprintf(`{"step":%d,"claims":["C1","C4"],"open":{"b":1,"a":2}}`, l.Step+1))
	}
	c.Checkpoint = &debate.Checkpoint{
		DebateID: l.DebateID, Step: l.Step + 1, Seq: l.Seq + int64(n), Node: fmt.Sprintf("node-%d", l.Step+1),
		NextNode: c.NextNode, Round: c.Round, State: state, InputHash: "in-" + prev[:8], OutputHash: "out-" + prev[:8],
	}
	return c
}

// Commit advances the ledger past c, which the store committed.
func (l *Ledger) Commit(c debate.StepCommit) {
	if n := len(c.Events); n > 0 {
		l.Seq, l.Hash = c.Events[n-1].Seq, c.Events[n-1].Hash
	}
	if c.Checkpoint != nil {
		l.Step = max(l.Step, c.Checkpoint.Step)
	}
	l.At = c.At
}

// commitStep commits the next step of l, with n events, and advances l.
func commitStep(t *testing.T, ctx context.Context, s Store, l *Ledger, n int, edit func(c *debate.StepCommit)) debate.StepCommit {
	t.Helper()
	c := l.Next(n)
	if edit != nil {
		edit(&c)
	}
	require.NoError(t, s.StepCommit(ctx, c))
	l.Commit(c)
	return c
}

// debateState is everything the read methods return about a debate.
type debateState struct {
	debate     debate.Debate
	events     []debate.Event
	checkpoint *debate.Checkpoint // nil when CheckpointLatest said not found
	gates      []debate.HumanGate
	rows       map[string]int // nil without a DebateRowCounter
}

func readDebateState(t *testing.T, ctx context.Context, s Store, debateID string) debateState {
	t.Helper()
	var st debateState
	var err error
	st.debate, err = s.DebateGet(ctx, debateID)
	require.NoError(t, err)
	st.events, err = s.EventList(ctx, debateID, 0, 5000)
	require.NoError(t, err)
	cp, err := s.CheckpointLatest(ctx, debateID)
	if !errors.Is(err, debate.ErrNotFound) {
		require.NoError(t, err)
		st.checkpoint = &cp
	}
	st.gates, err = s.GateList(ctx, debateID)
	require.NoError(t, err)
	if rc, ok := s.(DebateRowCounter); ok {
		tenant, err := debate.TenantFrom(ctx)
		require.NoError(t, err)
		st.rows, err = rc.CountDebateRows(context.Background(), tenant)
		require.NoError(t, err)
	}
	return st
}

// wantEvents is how the read methods return committed events.
func wantEvents(commits ...debate.StepCommit) []debate.Event {
	var out []debate.Event
	for _, c := range commits {
		for _, e := range c.Events {
			e.Time = e.Time.UTC()
			if len(e.Payload) == 0 {
				e.Payload = json.RawMessage(`{}`)
			}
			out = append(out, e)
		}
	}
	return out
}

// wantCheckpoint is how CheckpointLatest returns c's checkpoint.
func wantCheckpoint(c debate.StepCommit) debate.Checkpoint {
	cp := *c.Checkpoint
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = c.At
	}
	cp.CreatedAt = usec(cp.CreatedAt)
	return cp
}

func requirePayloadsIdentical(t *testing.T, want, got []debate.Event) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, string(want[i].Payload), string(got[i].Payload), "event %d's payload comes back byte for byte", want[i].Seq)
	}
	require.Equal(t, want, got)
}

func testDebateCreateGet(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	b := importSample(t, ctx, s)
	in := SampleDebate(b.Deal.ID, debateCreatedAt)
	in.TenantID = "tenant-of-the-request-is-ignored"
	in.Status = debate.DebateCompleted // a new debate is queued
	in.LastSeq = 9                     // and has no events
	in.Options = json.RawMessage(`{"z":1, "a" : [2,1]}`)

	want := in
	want.TenantID, want.Status, want.LastSeq = tenant, debate.DebateQueued, 0
	want.CreatedAt = usec(in.CreatedAt)
	want.UpdatedAt = want.CreatedAt

	got, created, err := s.DebateCreate(ctx, in)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, want, got)
	require.Equal(t, `{"z":1, "a" : [2,1]}`, string(got.Options), "options come back byte for byte")

	read, err := s.DebateGet(ctx, in.ID)
	require.NoError(t, err)
	require.Equal(t, want, read)

	// No options, and a time zone of UTC already.
	bare := SampleDebate(b.Deal.ID, time.Date(2026, 2, 4, 0, 0, 0, 0, time.UTC))
	bare.Options, bare.NextNode, bare.HeadHash = nil, "", ""
	bare.UpdatedAt = time.Date(2026, 2, 5, 0, 0, 0, 999, time.UTC)
	got, created, err = s.DebateCreate(ctx, bare)
	require.NoError(t, err)
	require.True(t, created)
	require.Nil(t, got.Options)
	require.Equal(t, bare.UpdatedAt.Truncate(time.Microsecond), got.UpdatedAt)
	read, err = s.DebateGet(ctx, bare.ID)
	require.NoError(t, err)
	require.Equal(t, got, read)

	_, err = s.DebateGet(ctx, "debate-"+uuid.NewString())
	require.ErrorIs(t, err, debate.ErrNotFound)
	list, next, err := s.DebateList(ctx, debate.DebateFilter{}, debate.Page{})
	require.NoError(t, err)
	require.Empty(t, next)
	require.Equal(t, []debate.Debate{read, want}, list, "newest first")

	// The id is taken: another create with it fails and changes nothing.
	again := SampleDebate(b.Deal.ID, debateCreatedAt.Add(time.Hour))
	again.ID = in.ID
	_, _, err = s.DebateCreate(ctx, again)
	require.ErrorIs(t, err, debate.ErrAlreadyExists)
	read, err = s.DebateGet(ctx, in.ID)
	require.NoError(t, err)
	require.Equal(t, want, read)
}

func testDebateCreateIdempotent(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := importSample(t, ctx, s)
	first := SampleDebate(b.Deal.ID, debateCreatedAt)
	first.IdempotencyKey = "key-" + uuid.NewString()
	stored, created, err := s.DebateCreate(ctx, first)
	require.NoError(t, err)
	require.True(t, created)

	// The same request again, as a client retrying it: a new id, a later
	// time, the same key and request hash.
	retry := SampleDebate(b.Deal.ID, debateCreatedAt.Add(time.Minute))
	retry.IdempotencyKey, retry.RequestHash = first.IdempotencyKey, first.RequestHash
	got, created, err := s.DebateCreate(ctx, retry)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, stored, got, "the stored debate")
	_, err = s.DebateGet(ctx, retry.ID)
	require.ErrorIs(t, err, debate.ErrNotFound, "the retry's id was not used")

	// The same id and key again.
	got, created, err = s.DebateCreate(ctx, first)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, stored, got)

	// The key with another request.
	other := SampleDebate(b.Deal.ID, debateCreatedAt)
	other.IdempotencyKey = first.IdempotencyKey
	_, _, err = s.DebateCreate(ctx, other)
	require.ErrorIs(t, err, debate.ErrAlreadyExists)
	_, err = s.DebateGet(ctx, other.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)

	// Another key is another debate; so is no key.
	second := SampleDebate(b.Deal.ID, debateCreatedAt)
	second.IdempotencyKey, second.RequestHash = "key-"+uuid.NewString(), first.RequestHash
	_, created, err = s.DebateCreate(ctx, second)
	require.NoError(t, err)
	require.True(t, created)
	for range 2 {
		_, created, err = s.DebateCreate(ctx, SampleDebate(b.Deal.ID, debateCreatedAt))
		require.NoError(t, err)
		require.True(t, created)
	}

	// A key is the tenant's: another tenant uses it freely.
	ctxB, _ := NewTenant(t, s)
	bB := importSample(t, ctxB, s)
	theirs := SampleDebate(bB.Deal.ID, debateCreatedAt)
	theirs.IdempotencyKey = first.IdempotencyKey
	_, created, err = s.DebateCreate(ctxB, theirs)
	require.NoError(t, err)
	require.True(t, created)

	list, _, err := s.DebateList(ctx, debate.DebateFilter{}, debate.Page{})
	require.NoError(t, err)
	require.Len(t, list, 4)
}

func testDebateCreateConcurrent(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := importSample(t, ctx, s)
	key, hash := "key-"+uuid.NewString(), "request-"+uuid.NewString()
	const n = 8
	results := make([]debate.Debate, n)
	created := make([]bool, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		d := SampleDebate(b.Deal.ID, debateCreatedAt.Add(time.Duration(i)*time.Second))
		d.IdempotencyKey, d.RequestHash = key, hash
		wg.Go(func() {
			<-start
			results[i], created[i], errs[i] = s.DebateCreate(ctx, d)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i := range n {
		require.NoError(t, errs[i], "create %d", i)
		if created[i] {
			require.Equal(t, -1, winner, "two creates with one key created a debate")
			winner = i
		}
	}
	require.NotEqual(t, -1, winner, "one create creates the debate")
	for i := range n {
		require.Equal(t, results[winner], results[i], "create %d returns the created debate", i)
	}
	list, _, err := s.DebateList(ctx, debate.DebateFilter{}, debate.Page{})
	require.NoError(t, err)
	require.Equal(t, []debate.Debate{results[winner]}, list)
}

func testDebateCreateUnknownDeal(t *testing.T, s Store) {
	ctxA, _ := NewTenant(t, s)
	a := importSample(t, ctxA, s)
	ctxB, tenantB := NewTenant(t, s)

	_, _, err := s.DebateCreate(ctxA, SampleDebate("deal-"+uuid.NewString(), debateCreatedAt))
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, _, err = s.DebateCreate(ctxB, SampleDebate(a.Deal.ID, debateCreatedAt))
	require.ErrorIs(t, err, debate.ErrNotFound, "another tenant's deal is not found")
	keyed := SampleDebate(a.Deal.ID, debateCreatedAt)
	keyed.IdempotencyKey = "key-" + uuid.NewString()
	_, _, err = s.DebateCreate(ctxB, keyed)
	require.ErrorIs(t, err, debate.ErrNotFound)

	list, _, err := s.DebateList(ctxB, debate.DebateFilter{}, debate.Page{})
	require.NoError(t, err)
	require.Empty(t, list)
	if rc, ok := s.(DebateRowCounter); ok {
		n, err := rc.CountDebateRows(context.Background(), tenantB)
		require.NoError(t, err)
		require.Zero(t, n["debates"])
	}
	_, _, err = s.DebateCreate(TenantContext(context.Background(), "tenant-"+uuid.NewString()),
		SampleDebate(a.Deal.ID, debateCreatedAt))
	require.ErrorIs(t, err, debate.ErrNotFound, "an unknown tenant has no deal")
}

func testDebateCreateInvalid(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := importSample(t, ctx, s)
	cases := map[string]func(d *debate.Debate){
		"debate.debate_id":       func(d *debate.Debate) { d.ID = "" },
		"debate.deal_id":         func(d *debate.Debate) { d.DealID = "has space" },
		"debate.protocol":        func(d *debate.Debate) { d.Protocol = "" },
		"debate.options":         func(d *debate.Debate) { d.Options = json.RawMessage(`{"max_rounds":`) },
		"debate.idempotency_key": func(d *debate.Debate) { d.IdempotencyKey = "nul\x00" },
		"debate.created_at":      func(d *debate.Debate) { d.CreatedAt = time.Time{} },
		"debate.round":           func(d *debate.Debate) { d.Round = -1 },
		"debate.error":           func(d *debate.Debate) { d.Error = strings.Repeat("x", debate.MaxTextLen+1) },
	}
	for field, edit := range cases {
		d := SampleDebate(b.Deal.ID, debateCreatedAt)
		edit(&d)
		_, _, err := s.DebateCreate(ctx, d)
		requireInvalidField(t, err, field)
	}
	bad := SampleDebate(b.Deal.ID, debateCreatedAt)
	bad.Options = json.RawMessage("{\"k\":\"\xff\"}")
	_, _, err := s.DebateCreate(ctx, bad)
	requireInvalidField(t, err, "debate.options")

	list, _, err := s.DebateList(ctx, debate.DebateFilter{}, debate.Page{})
	require.NoError(t, err)
	require.Empty(t, list)
}

// debateOrder is DebateList's order: newest first, then id.
func debateOrder(a, b debate.Debate) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

func walkDebates(t *testing.T, ctx context.Context, s Store, filter debate.DebateFilter, limit int) []debate.Debate {
	t.Helper()
	var all []debate.Debate
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10000, "the list does not end")
		list, next, err := s.DebateList(ctx, filter, debate.Page{After: cursor, Limit: limit})
		require.NoError(t, err)
		require.LessOrEqual(t, len(list), limit)
		all = append(all, list...)
		if next == "" {
			return all
		}
		require.Len(t, list, limit, "a page before the last is full")
		cursor = next
	}
}

func testDebateListFiltersAndPages(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	deals := []*debate.DealBundle{importSample(t, ctx, s), importSample(t, ctx, s)}
	var all []debate.Debate
	for i := range 23 {
		// Groups of three share a creation time (to the microsecond, as
		// stored), so the id breaks ties, also across a page boundary.
		at := debateCreatedAt.Add(time.Duration(i/3) * time.Minute).Add(time.Duration(i%3) * time.Nanosecond)
		d, created, err := s.DebateCreate(ctx, SampleDebate(deals[i%2].Deal.ID, at))
		require.NoError(t, err)
		require.True(t, created)
		if i%4 != 0 {
			l := NewLedger(tenant, d, debateCreatedAt.Add(time.Hour))
			status := []debate.DebateStatus{debate.DebateRunning, debate.DebateCompleted, debate.DebateAwaitingReview}[i%4-1]
			c := commitStep(t, ctx, s, l, 1, func(c *debate.StepCommit) { c.Status = status })
			d.Status, d.LastSeq, d.HeadHash, d.Round, d.NextNode = status, 1, l.Hash, c.Round, c.NextNode
			d.UpdatedAt = usec(c.At)
		}
		all = append(all, d)
	}
	slices.SortFunc(all, debateOrder)
	for _, limit := range []int{1, 2, 3, 5, 22, 23, 50} {
		require.Equal(t, all, walkDebates(t, ctx, s, debate.DebateFilter{}, limit), "limit %d", limit)
	}
	filters := []debate.DebateFilter{
		{Status: debate.DebateQueued},
		{Status: debate.DebateCompleted},
		{DealID: deals[1].Deal.ID},
		{Status: debate.DebateRunning, DealID: deals[0].Deal.ID},
		{Status: debate.DebateFailed},
		{DealID: "deal-" + uuid.NewString()},
	}
	for _, f := range filters {
		var want []debate.Debate
		for _, d := range all {
			if (f.Status == "" || d.Status == f.Status) && (f.DealID == "" || d.DealID == f.DealID) {
				want = append(want, d)
			}
		}
		require.Equal(t, want, walkDebates(t, ctx, s, f, 2), "filter %+v", f)
	}

	_, cursor, err := s.DebateList(ctx, debate.DebateFilter{}, debate.Page{Limit: 2})
	require.NoError(t, err)
	require.NotEmpty(t, cursor)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, c := range []string{"!!!", enc("x"), enc(`["a"]`), enc(`["not a time","d"]`), enc(`["2026-01-01T00:00:00.000000Z",""]`), cursor + "%"} {
		_, _, err := s.DebateList(ctx, debate.DebateFilter{}, debate.Page{After: c})
		requireInvalidField(t, err, "page_token")
	}
}

func testDebatesTenantsIsolated(t *testing.T, s Store) {
	ctxA, tenantA, d := NewDebate(t, s)
	l := NewLedger(tenantA, d, debateCreatedAt)
	commitStep(t, ctxA, s, l, 3, func(c *debate.StepCommit) {
		c.OpenGate = &debate.HumanGate{ID: "gate-1", Node: "arbiter_close", Reason: "material claim graded D"}
	})
	before := readDebateState(t, ctxA, s, d.ID)

	// B has a deal and a debate of its own, with A's debate id: ids are
	// per tenant.
	ctxB, tenantB := NewTenant(t, s)
	bB := importSample(t, ctxB, s)
	same := SampleDebate(bB.Deal.ID, debateCreatedAt)
	same.ID = d.ID
	_, created, err := s.DebateCreate(ctxB, same)
	require.NoError(t, err)
	require.True(t, created)
	ctxC, tenantC := NewTenant(t, s)

	_, _, err = s.DebateCreate(ctxC, SampleDebate(d.DealID, debateCreatedAt))
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.DebateGet(ctxC, d.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	list, next, err := s.DebateList(ctxC, debate.DebateFilter{}, debate.Page{})
	require.NoError(t, err)
	require.Empty(t, list)
	require.Empty(t, next)
	list, _, err = s.DebateList(ctxC, debate.DebateFilter{DealID: d.DealID}, debate.Page{})
	require.NoError(t, err)
	require.Empty(t, list)

	// C commits on A's debate with A's exact head, events made for C.
	steal := NewLedger(tenantC, d, l.At)
	steal.Seq, steal.Hash = l.Seq, l.Hash
	require.ErrorIs(t, s.StepCommit(ctxC, steal.Next(1)), debate.ErrNotFound)
	resolve := steal.Next(0)
	resolve.ResolveGate = &debate.HumanGate{ID: "gate-1", Status: debate.GateApproved, ResolvedBy: "mallory"}
	require.ErrorIs(t, s.StepCommit(ctxC, resolve), debate.ErrNotFound)
	_, err = s.CheckpointLatest(ctxC, d.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.EventList(ctxC, d.ID, 0, 0)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.GateGet(ctxC, d.ID, "gate-1")
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.GateList(ctxC, d.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)

	// B's debate with A's id is B's: empty, and its head is B's.
	events, err := s.EventList(ctxB, d.ID, 0, 0)
	require.NoError(t, err)
	require.Empty(t, events)
	gates, err := s.GateList(ctxB, d.ID)
	require.NoError(t, err)
	require.Empty(t, gates)
	_, err = s.GateGet(ctxB, d.ID, "gate-1")
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.CheckpointLatest(ctxB, d.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	stealB := NewLedger(tenantB, d, l.At)
	stealB.Seq, stealB.Hash = l.Seq, l.Hash
	require.ErrorIs(t, s.StepCommit(ctxB, stealB.Next(1)), debate.ErrConflict, "B's debate has its own head")

	require.Equal(t, before, readDebateState(t, ctxA, s, d.ID), "nothing of A changed")
}

func testDebatesNoTenant(t *testing.T, s Store) {
	ctx := context.Background()
	d := SampleDebate("deal-"+uuid.NewString(), debateCreatedAt)
	_, _, err := s.DebateCreate(ctx, d)
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = s.DebateGet(ctx, d.ID)
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, _, err = s.DebateList(ctx, debate.DebateFilter{}, debate.Page{})
	require.ErrorIs(t, err, debate.ErrNoTenant)
	require.ErrorIs(t, s.StepCommit(ctx, NewLedger("", d, debateCreatedAt).Next(1)), debate.ErrNoTenant)
	_, err = s.CheckpointLatest(ctx, d.ID)
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = s.EventList(ctx, d.ID, 0, 0)
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = s.GateGet(ctx, d.ID, "g")
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = s.GateList(ctx, d.ID)
	require.ErrorIs(t, err, debate.ErrNoTenant)
}

func testStepCommitRoundTrip(t *testing.T, s Store) {
	ctx, tenant, d := NewDebate(t, s)
	events, err := s.EventList(ctx, d.ID, 0, 0)
	require.NoError(t, err)
	require.Empty(t, events)
	_, err = s.CheckpointLatest(ctx, d.ID)
	require.ErrorIs(t, err, debate.ErrNotFound, "no checkpoint before the first step")

	l := NewLedger(tenant, d, debateCreatedAt)
	first := l.Next(3)
	first.Events[1].Payload = json.RawMessage("{ \"spaced\" : [ 1 ,2 ],\n\t\"b\":\"\\u002F\" }") // even whitespace is kept
	first.Events[2].Payload = nil                                                                // the ledger's {}
	first.Checkpoint.CreatedAt = time.Date(2026, 2, 3, 12, 0, 0, 5000, time.FixedZone("X", -3600))
	first.Status, first.Round, first.NextNode, first.Attempt = debate.DebateRunning, 1, "sanad_breaker_challenge", 2
	first.StopReason, first.Error = "", "transient: model timed out"
	require.NoError(t, s.StepCommit(ctx, first))
	l.Commit(first)

	got, err := s.DebateGet(ctx, d.ID)
	require.NoError(t, err)
	want := d
	want.Status, want.Round, want.NextNode, want.Attempt, want.Error = debate.DebateRunning, 1, "sanad_breaker_challenge", 2, first.Error
	want.LastSeq, want.HeadHash, want.UpdatedAt = 3, first.Events[2].Hash, usec(first.At)
	require.Equal(t, want, got)
	events, err = s.EventList(ctx, d.ID, 0, 0)
	require.NoError(t, err)
	requirePayloadsIdentical(t, wantEvents(first), events)
	require.Equal(t, `{}`, string(events[2].Payload))
	cp, err := s.CheckpointLatest(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, wantCheckpoint(first), cp)
	require.Equal(t, string(first.Checkpoint.State), string(cp.State), "the state comes back byte for byte")

	// A second step, with an event payload of every JSON kind and a large
	// state.
	l.State = json.RawMessage(`{"transcript_seq":[` + strings.Repeat(`1,`, 2000) + `1],"z":"` + strings.Repeat("é", 500) + `"}`)
	second := l.Next(2)
	second.Events[0].Payload = json.RawMessage(`{"n":12345678901234567890,"f":0.1,"neg":-0.0,"e":1E-7,"u":"\ud83d\ude00😀"}`)
	second.Events[1].Type = debate.EventRoundCompleted // the debate's rounds_completed counts it
	require.NoError(t, s.StepCommit(ctx, second))
	l.Commit(second)

	// A step without events (a status change) keeps the head; without a
	// checkpoint it keeps the latest one.
	noEvents := l.Next(0)
	noEvents.Checkpoint = nil
	noEvents.Status, noEvents.StopReason, noEvents.NextNode, noEvents.Error = debate.DebateCompleted, "CONSENSUS", "", ""
	require.NoError(t, s.StepCommit(ctx, noEvents))
	l.Commit(noEvents)

	got, err = s.DebateGet(ctx, d.ID)
	require.NoError(t, err)
	want.Status, want.StopReason, want.NextNode, want.Error, want.Round, want.Attempt = debate.DebateCompleted, "CONSENSUS", "", "", noEvents.Round, 0
	want.RoundsCompleted = 1
	want.LastSeq, want.HeadHash, want.UpdatedAt = 5, second.Events[1].Hash, usec(noEvents.At)
	require.Equal(t, want, got)
	events, err = s.EventList(ctx, d.ID, 0, 0)
	require.NoError(t, err)
	requirePayloadsIdentical(t, wantEvents(first, second), events)
	cp, err = s.CheckpointLatest(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, wantCheckpoint(second), cp)
	require.Equal(t, string(l.State), string(cp.State))

	// A checkpoint without a state keeps it nil.
	noState := l.Next(1)
	noState.Checkpoint.State = nil
	require.NoError(t, s.StepCommit(ctx, noState))
	cp, err = s.CheckpointLatest(ctx, d.ID)
	require.NoError(t, err)
	require.Nil(t, cp.State)
	require.Equal(t, wantCheckpoint(noState), cp)
}

func testStepCommitFencing(t *testing.T, s Store) {
	ctx, tenant, d := NewDebate(t, s)
	l := NewLedger(tenant, d, debateCreatedAt)

	// Before the first step, the head is the one DebateCreate stored.
	wrongGenesis := l.Next(2)
	wrongGenesis.ExpectHash = "not-the-genesis"
	wrongGenesis.Events[0].PrevHash = "not-the-genesis"
	require.ErrorIs(t, s.StepCommit(ctx, wrongGenesis), debate.ErrConflict)
	commitStep(t, ctx, s, l, 2, nil)
	staleLedger := *l
	commitStep(t, ctx, s, l, 2, nil)
	before := readDebateState(t, ctx, s, d.ID)
	require.Len(t, before.events, 4)

	// A worker that missed the last step: its head is one step behind.
	stale := staleLedger.Next(2)
	require.ErrorIs(t, s.StepCommit(ctx, stale), debate.ErrConflict)
	// The right seq with the wrong hash.
	wrongHash := *l
	wrongHash.Hash = strings.Repeat("f", 64)
	require.ErrorIs(t, s.StepCommit(ctx, wrongHash.Next(1)), debate.ErrConflict)
	// A head ahead of the ledger.
	ahead := *l
	ahead.Seq += 5
	require.ErrorIs(t, s.StepCommit(ctx, ahead.Next(1)), debate.ErrConflict)
	// A fenced step writes nothing else either: no checkpoint, gate or
	// status.
	fenced := staleLedger.Next(0)
	fenced.Status = debate.DebateAborted
	fenced.OpenGate = &debate.HumanGate{ID: "gate-fenced", Reason: "x"}
	require.ErrorIs(t, s.StepCommit(ctx, fenced), debate.ErrConflict)
	fencedEnqueue := staleLedger.Next(1)
	fencedEnqueue.Enqueue = true
	require.ErrorIs(t, s.StepCommit(ctx, fencedEnqueue), debate.ErrConflict)

	require.Equal(t, before, readDebateState(t, ctx, s, d.ID), "a fenced commit wrote nothing")

	unknown := NewLedger(tenant, SampleDebate(d.DealID, debateCreatedAt), debateCreatedAt)
	require.ErrorIs(t, s.StepCommit(ctx, unknown.Next(1)), debate.ErrNotFound)

	// The worker that holds the head carries on.
	commitStep(t, ctx, s, l, 1, nil)
}

func testStepCommitConcurrent(t *testing.T, s Store) {
	ctx, tenant, d := NewDebate(t, s)
	l := NewLedger(tenant, d, debateCreatedAt)
	commitStep(t, ctx, s, l, 1, nil)

	const n = 8
	commits := make([]debate.StepCommit, n)
	for i := range commits {
		w := *l
		w.Payload = func(seq int64) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"worker":%d,"seq":%d}`, i, seq)) }
		commits[i] = w.Next(3)
	}
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range commits {
		wg.Go(func() {
			<-start
			errs[i] = s.StepCommit(ctx, commits[i])
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			require.Equal(t, -1, winner, "two commits with one expected head both won")
			winner = i
			continue
		}
		require.ErrorIs(t, err, debate.ErrConflict, "commit %d", i)
	}
	require.NotEqual(t, -1, winner, "one commit wins")

	st := readDebateState(t, ctx, s, d.ID)
	require.Len(t, st.events, 4)
	requirePayloadsIdentical(t, wantEvents(commits[winner]), st.events[1:])
	require.Equal(t, int64(4), st.debate.LastSeq)
	require.Equal(t, commits[winner].Events[2].Hash, st.debate.HeadHash)
	if st.rows != nil {
		require.Equal(t, map[string]int{"debates": 1, "debate_events": 4, "debate_checkpoints": 2, "human_gates": 0}, st.rows)
	}
}

func testStepCommitRejectsInvalid(t *testing.T, s Store) {
	ctx, tenant, d := NewDebate(t, s)
	l := NewLedger(tenant, d, debateCreatedAt)
	commitStep(t, ctx, s, l, 2, nil)
	before := readDebateState(t, ctx, s, d.ID)

	cases := map[string]func(c *debate.StepCommit){
		"events[1].seq":        func(c *debate.StepCommit) { c.Events[1].Seq++ },
		"events[0].seq":        func(c *debate.StepCommit) { c.Events[0].Seq = c.ExpectSeq },
		"events[2].seq":        func(c *debate.StepCommit) { c.Events[2].Seq = c.Events[1].Seq },
		"events[0].tenant_id":  func(c *debate.StepCommit) { c.Events[0].TenantID = "tenant-" + uuid.NewString() },
		"events[1].debate_id":  func(c *debate.StepCommit) { c.Events[1].DebateID = "" },
		"events[0].type":       func(c *debate.StepCommit) { c.Events[0].Type = "" },
		"events[0].payload":    func(c *debate.StepCommit) { c.Events[0].Payload = json.RawMessage(`{"a":`) },
		"events[2].payload":    func(c *debate.StepCommit) { c.Events[2].Payload = json.RawMessage("{\"a\":\"\xfe\"}") },
		"events[1].prev_hash":  func(c *debate.StepCommit) { c.Events[1].PrevHash = GenesisHash },
		"events[0].prev_hash":  func(c *debate.StepCommit) { c.Events[0].PrevHash = GenesisHash },
		"events[0].time":       func(c *debate.StepCommit) { c.Events[0].Time = c.Events[0].Time.Add(1) },
		"events[1].round":      func(c *debate.StepCommit) { c.Events[1].Round = -1 },
		"events[0].signature":  func(c *debate.StepCommit) { c.Events[0].Signature = "nul\x00" },
		"checkpoint.seq":       func(c *debate.StepCommit) { c.Checkpoint.Seq-- },
		"checkpoint.step":      func(c *debate.StepCommit) { c.Checkpoint.Step = 0 },
		"checkpoint.state":     func(c *debate.StepCommit) { c.Checkpoint.State = json.RawMessage(`[1,]`) },
		"checkpoint.debate_id": func(c *debate.StepCommit) { c.Checkpoint.DebateID = "debate-other" },
		"status":               func(c *debate.StepCommit) { c.Status = "done" },
		"at":                   func(c *debate.StepCommit) { c.At = time.Time{} },
		"debate_id":            func(c *debate.StepCommit) { c.DebateID = "" },
		"open_gate.gate_id":    func(c *debate.StepCommit) { c.OpenGate = &debate.HumanGate{ID: "bad id"} },
		"open_gate.status":     func(c *debate.StepCommit) { c.OpenGate = &debate.HumanGate{ID: "g", Status: debate.GateApproved} },
		"resolve_gate.status":  func(c *debate.StepCommit) { c.ResolveGate = &debate.HumanGate{ID: "g", Status: debate.GateOpen} },
		"resolve_gate.gate_id": func(c *debate.StepCommit) {
			c.OpenGate = &debate.HumanGate{ID: "g"}
			c.ResolveGate = &debate.HumanGate{ID: "g", Status: debate.GateApproved}
		},
		"checkpoint.created_at": func(c *debate.StepCommit) {
			c.Checkpoint.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		},
	}
	for field, edit := range cases {
		c := l.Next(3)
		edit(&c)
		requireInvalidField(t, s.StepCommit(ctx, c), field)
	}
	tooMany := l.Next(5001)
	requireInvalidField(t, s.StepCommit(ctx, tooMany), "events")
	require.Equal(t, before, readDebateState(t, ctx, s, d.ID), "a refused commit wrote nothing")
	commitStep(t, ctx, s, l, 3, nil)
}

func testHumanGates(t *testing.T, s Store) {
	ctx, tenant, d := NewDebate(t, s)
	l := NewLedger(tenant, d, debateCreatedAt)
	gateAt := time.Date(2026, 2, 3, 11, 0, 0, 7999, time.FixedZone("Y", 7200))
	open := commitStep(t, ctx, s, l, 2, func(c *debate.StepCommit) {
		c.Status, c.NextNode = debate.DebateAwaitingReview, "arbiter_close"
		c.OpenGate = &debate.HumanGate{
			ID: "gate-1", Node: "arbiter_close", Reason: "claim C4 is graded D and IC-bound",
			ClaimIDs: []string{"claim-4", "claim-7"}, CreatedAt: gateAt,
		}
	})
	want := debate.HumanGate{
		ID: "gate-1", DebateID: d.ID, Node: "arbiter_close", Reason: open.OpenGate.Reason,
		ClaimIDs: []string{"claim-4", "claim-7"}, Status: debate.GateOpen, CreatedAt: usec(gateAt),
	}
	g, err := s.GateGet(ctx, d.ID, "gate-1")
	require.NoError(t, err)
	require.Equal(t, want, g)
	_, err = s.GateGet(ctx, d.ID, "gate-2")
	require.ErrorIs(t, err, debate.ErrNotFound)

	// Opening it again fails and writes nothing.
	before := readDebateState(t, ctx, s, d.ID)
	dup := l.Next(1)
	dup.OpenGate = &debate.HumanGate{ID: "gate-1", Reason: "again"}
	require.ErrorIs(t, s.StepCommit(ctx, dup), debate.ErrAlreadyExists)
	require.Equal(t, before, readDebateState(t, ctx, s, d.ID))

	// Resolving an unknown gate fails and writes nothing.
	unknown := l.Next(1)
	unknown.ResolveGate = &debate.HumanGate{ID: "gate-9", Status: debate.GateApproved, ResolvedBy: "alice"}
	require.ErrorIs(t, s.StepCommit(ctx, unknown), debate.ErrNotFound)
	require.Equal(t, before, readDebateState(t, ctx, s, d.ID))

	// A person approves it; the resolution time defaults to the step's.
	resolved := commitStep(t, ctx, s, l, 1, func(c *debate.StepCommit) {
		c.Status, c.Enqueue = debate.DebateRunning, true
		c.ResolveGate = &debate.HumanGate{ID: "gate-1", Status: debate.GateApproved, Resolution: "the data room has the bank statement", ResolvedBy: "alice"}
	})
	want.Status, want.Resolution, want.ResolvedBy = debate.GateApproved, "the data room has the bank statement", "alice"
	at := usec(resolved.At)
	want.ResolvedAt = &at
	g, err = s.GateGet(ctx, d.ID, "gate-1")
	require.NoError(t, err)
	require.Equal(t, want, g)

	// Resolving it twice is refused, and writes nothing.
	before = readDebateState(t, ctx, s, d.ID)
	for _, status := range []debate.GateStatus{debate.GateRejected, debate.GateApproved} {
		again := l.Next(1)
		again.ResolveGate = &debate.HumanGate{ID: "gate-1", Status: status, ResolvedBy: "bob"}
		require.ErrorIs(t, s.StepCommit(ctx, again), debate.ErrFailedPrecondition)
	}
	require.Equal(t, before, readDebateState(t, ctx, s, d.ID))

	// A second gate, without claims, opened, then cancelled by an abort in
	// a later step; its explicit resolution time is kept. Only an abort
	// cancels a gate.
	second := commitStep(t, ctx, s, l, 1, func(c *debate.StepCommit) {
		c.OpenGate = &debate.HumanGate{ID: "gate-0", Node: "finalize_outputs", Reason: "sign-off", ClaimIDs: []string{}}
	})
	notAbort := l.Next(1)
	notAbort.Status = debate.DebateRunning
	notAbort.ResolveGate = &debate.HumanGate{ID: "gate-0", Status: debate.GateCancelled, ResolvedBy: "bob"}
	require.ErrorIs(t, s.StepCommit(ctx, notAbort), debate.ErrInvalid)
	rejectedAt := time.Date(2026, 3, 1, 0, 0, 0, 1500, time.UTC)
	commitStep(t, ctx, s, l, 0, func(c *debate.StepCommit) {
		c.Checkpoint = nil
		c.Status = debate.DebateAborted
		c.ResolveGate = &debate.HumanGate{ID: "gate-0", DebateID: d.ID, Status: debate.GateCancelled, ResolvedBy: "carol", ResolvedAt: &rejectedAt}
	})
	ra := rejectedAt.Truncate(time.Microsecond)
	wantSecond := debate.HumanGate{
		ID: "gate-0", DebateID: d.ID, Node: "finalize_outputs", Reason: "sign-off", Status: debate.GateCancelled,
		ResolvedBy: "carol", CreatedAt: usec(second.At), ResolvedAt: &ra,
	}
	gates, err := s.GateList(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, []debate.HumanGate{want, wantSecond}, gates, "ordered by creation, not id")
	got, err := s.DebateGet(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, debate.DebateAborted, got.Status)
	if st := readDebateState(t, ctx, s, d.ID); st.rows != nil {
		require.Equal(t, 2, st.rows["human_gates"])
	}
}

func testDebateEventListPages(t *testing.T, s Store) {
	ctx, tenant, d := NewDebate(t, s)
	l := NewLedger(tenant, d, debateCreatedAt)
	l.Payload = func(seq int64) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"seq":%d}`, seq)) }
	var commits []debate.StepCommit
	for _, n := range []int{2600, 2600, 5} {
		commits = append(commits, commitStep(t, ctx, s, l, n, nil))
	}
	all := wantEvents(commits...)
	require.Len(t, all, 5205)

	page := func(after int64, limit int) []debate.Event {
		t.Helper()
		list, err := s.EventList(ctx, d.ID, after, limit)
		require.NoError(t, err)
		return list
	}
	require.Equal(t, all[:500], page(0, 0), "the default page holds 500 events")
	require.Equal(t, all[:500], page(-7, -1))
	require.Equal(t, all[:5000], page(0, 1<<20), "a page holds at most 5000 events")
	require.Equal(t, all[5000:], page(5000, 0))
	require.Equal(t, all[2599:2602], page(2599, 3), "across two steps")
	require.Empty(t, page(5205, 10))
	require.Empty(t, page(1<<40, 10))

	var walked []debate.Event
	var after int64
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100, "the list does not end")
		list := page(after, 777)
		if len(list) == 0 {
			break
		}
		walked = append(walked, list...)
		after = list[len(list)-1].Seq
	}
	require.Equal(t, all, walked)
}

func testCheckpointLatestHighestStep(t *testing.T, s Store) {
	ctx, tenant, d := NewDebate(t, s)
	l := NewLedger(tenant, d, debateCreatedAt)
	commitStep(t, ctx, s, l, 1, nil) // step 1
	// Steps committed out of order: the highest step is the latest, not
	// the last written.
	three := commitStep(t, ctx, s, l, 1, func(c *debate.StepCommit) { c.Checkpoint.Step = 3 })
	commitStep(t, ctx, s, l, 1, func(c *debate.StepCommit) { c.Checkpoint.Step = 2 })
	cp, err := s.CheckpointLatest(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, wantCheckpoint(three), cp)

	_, err = s.CheckpointLatest(ctx, "debate-"+uuid.NewString())
	require.ErrorIs(t, err, debate.ErrNotFound)
	dup := l.Next(1)
	dup.Checkpoint.Step = 2
	require.ErrorIs(t, s.StepCommit(ctx, dup), debate.ErrAlreadyExists, "a step has one checkpoint")
}

package storetest

import (
	"context"
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

// GradingRowCounter is implemented by test adapters that can count a
// tenant's rows in the grading tables directly, below the store's API.
// When the store passed to Run implements it, the suite also checks that a
// failed grading left no row behind.
type GradingRowCounter interface {
	// CountGradingRows returns the number of rows tenantID has in each
	// grading table (deal_gradings, defects, deal_events), by table name.
	CountGradingRows(ctx context.Context, tenantID string) (map[string]int, error)
}

// gradingCases are the cases of GradingStore, run by Run.
var gradingCases = []struct {
	name string
	fn   func(t *testing.T, s Store)
}{
	{"GradeFirstThenAgain", testGradeFirstThenAgain},
	{"GradeErrorWritesNothing", testGradeErrorWritesNothing},
	{"GradeInvalidWritesNothing", testGradeInvalidWritesNothing},
	{"GradingTenantsIsolated", testGradingTenantsIsolated},
	{"GradingNoTenant", testGradingNoTenant},
	{"GradingUnknownDeal", testGradingUnknownDeal},
	{"ConcurrentGrades", testConcurrentGrades},
	{"DealEventListPages", testDealEventListPages},
}

// gradedAt is the grading time the suite passes: nanoseconds in a zone
// other than UTC. Stores keep it to the microsecond in UTC as graded_at and
// as a default event time, and whole inside defect records.
var gradedAt = time.Date(2026, 1, 7, 11, 0, 0, 987654321, time.FixedZone("CET", 3600))

// zone is the zone the sample gradings' times are written in; stores return
// them in UTC.
var zone = time.FixedZone("EST", -5*3600)

// defectID makes the id of the sample defect of a claim.
func defectID(claimID string, t debate.DefectType) string {
	return uuid.NewSHA1(idSpace, []byte(claimID+"/"+string(t))).String()
}

// sampleDefects returns two OPEN defect records of b's claims C4 and C7:
// the first with its times set (in loc, with nanoseconds), the second with
// none, for the store to stamp.
func sampleDefects(b *debate.DealBundle, loc *time.Location) []debate.Defect {
	claim := func(key string) debate.Claim {
		i := slices.IndexFunc(b.Claims, func(c debate.Claim) bool { return c.Key == key })
		return b.Claims[i]
	}
	c4, c7 := claim("C4"), claim("C7")
	flagged := time.Date(2026, 1, 6, 12, 0, 0, 111, time.UTC).In(loc)
	return []debate.Defect{
		{
			ID: defectID(c4.ID, debate.DefectTimeWindow), ClaimID: c4.ID, ClaimKey: "C4", Type: debate.DefectTimeWindow,
			Severity: debate.SeverityMajor, CureProtocol: debate.CureRequestSource, Status: debate.DefectOpen,
			Description: "runway is computed over a window the cash cell does not cover", EvidenceRefs: []string{c4.PrimarySpanID},
			Actor: "sanad", CreatedAt: flagged, UpdatedAt: flagged,
		},
		{
			ID: defectID(c7.ID, debate.DefectMissingLink), ClaimID: c7.ID, ClaimKey: "C7", Type: debate.DefectMissingLink,
			Severity: debate.SeverityMajor, CureProtocol: debate.CureRequestSource, Status: debate.DefectOpen,
			Description: "no independent source for the market size", EvidenceRefs: []string{},
			Actor: "sanad",
		},
	}
}

// sampleGrading returns a grading of SampleBundle b that uses every field:
// seven claim grades ordered by key, their steps and defects, a calc with
// its output, nil and empty lists, times in loc.
func sampleGrading(b *debate.DealBundle, loc *time.Location) *debate.DealGrading {
	defects := sampleDefects(b, loc)
	defects[1].CreatedAt = time.Date(2026, 1, 6, 13, 0, 0, 222, time.UTC).In(loc)
	defects[1].UpdatedAt = defects[1].CreatedAt
	g := &debate.DealGrading{
		DealID:           b.Deal.ID,
		Defects:          defects,
		GradeDCount:      1,
		SanadCoverage:    0.857,
		BlockedClaimKeys: []string{"C7"},
		Calcs: []debate.CalcResult{{
			CalcID: b.Calcs[0].ID, Type: debate.CalcGrossMargin, Grade: debate.GradeB,
			Output: map[string]float64{"gross_margin_percent": 68.5},
			Steps:  []debate.Step{{Rule: "recompute", Text: "(12500000 - 3937500) / 12500000 = 68.5%"}},
		}, {
			CalcID: "calc-without-inputs", Type: debate.CalcRunway, Grade: debate.GradeD, Output: map[string]float64{},
		}},
	}
	claims := slices.Clone(b.Claims)
	slices.SortFunc(claims, func(a, b debate.Claim) int { return strings.Compare(a.Key, b.Key) })
	for _, c := range claims {
		cg := debate.ClaimGrade{
			ClaimID: c.ID, ClaimKey: c.Key, BaseGrade: debate.GradeC, Grade: debate.GradeC,
			Verdict: debate.VerdictVerified, Action: debate.ActionNone, Corroboration: debate.CorroborationAhad1,
			IndependentCount: 1, Steps: []debate.Step{{Rule: "base_grade", Text: "primary source graded C"}},
		}
		switch c.Key {
		case "C1":
			cg.Metric, cg.Grade, cg.Corroboration, cg.IndependentCount = "ARR", debate.GradeB, debate.CorroborationAhad2, 2
			cg.Steps = append(cg.Steps, debate.Step{Rule: "upgrade", Text: "corroborated by the model's revenue cell"})
		case "C4":
			cg.Metric, cg.Grade, cg.Verdict, cg.Action = "RUNWAY", debate.GradeD, debate.VerdictInflated, debate.ActionRedFlag
			cg.Defects = []debate.Defect{defects[0]}
		case "C7":
			cg.BaseGrade, cg.Grade, cg.Verdict, cg.Action = debate.GradeD, debate.GradeD, debate.VerdictBlocked, debate.ActionRejectNoFreeFacts
			cg.Defects, cg.Blocked, cg.Corroboration, cg.IndependentCount = []debate.Defect{defects[1]}, true, debate.CorroborationNone, 0
			cg.Steps = nil
		}
		g.Claims = append(g.Claims, cg)
	}
	return g
}

// gradeCall records what a GradeFunc received.
type gradeCall struct {
	bundle  *debate.DealBundle
	records []debate.Defect
	prev    *debate.DealGrading
}

// recordingGrade returns a GradeFunc that appends what it receives to
// *calls and returns the given values.
func recordingGrade(calls *[]gradeCall, next *debate.DealGrading, upsert []debate.Defect, events []debate.DealEvent, err error) debate.GradeFunc {
	return func(b *debate.DealBundle, records []debate.Defect, prev *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
		*calls = append(*calls, gradeCall{b, records, prev})
		return next, upsert, events, err
	}
}

// gradingState is everything the read methods return about a deal.
type gradingState struct {
	grading  *debate.DealGrading
	gradedAt time.Time
	notFound bool // GradingGet said not found
	defects  []debate.Defect
	events   []debate.DealEvent
}

func readGradingState(t *testing.T, ctx context.Context, s Store, dealID string) gradingState {
	t.Helper()
	var st gradingState
	var err error
	st.grading, st.gradedAt, err = s.GradingGet(ctx, dealID)
	if errors.Is(err, debate.ErrNotFound) {
		st.notFound = true
	} else {
		require.NoError(t, err)
	}
	st.defects, err = s.DefectList(ctx, dealID)
	require.NoError(t, err)
	st.events, err = s.DealEventList(ctx, dealID, 0, 1000)
	require.NoError(t, err)
	return st
}

func countGradingRows(t *testing.T, s Store, tenantID string) map[string]int {
	t.Helper()
	rc, ok := s.(GradingRowCounter)
	if !ok {
		return nil
	}
	n, err := rc.CountGradingRows(context.Background(), tenantID)
	require.NoError(t, err)
	return n
}

// importSample imports a SampleBundle with a fresh deal id in ctx's tenant.
func importSample(t *testing.T, ctx context.Context, s Store) *debate.DealBundle {
	t.Helper()
	b := SampleBundle("deal-" + uuid.NewString())
	importBundle(t, ctx, s, b)
	return b
}

// usec is how a store keeps a time in a column.
func usec(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func testGradeFirstThenAgain(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	b := importSample(t, ctx, s)
	importSample(t, ctx, s) // another deal of the tenant, never graded

	// First grading: no records, no previous grading.
	next := sampleGrading(b, zone)
	next.DealID = "" // the store fills it in
	upsert := sampleDefects(b, zone)
	eventAt := time.Date(2026, 1, 7, 10, 59, 0, 123456789, zone)
	events := []debate.DealEvent{
		{Type: debate.EventClaimGradeChanged, Actor: debate.ActorGrader,
			Payload: map[string]any{"claim_key": "C1", "from": "C", "to": "B", "count": 2, "nested": map[string]any{"list": []any{1, "x", true, nil}}}},
		{Type: debate.EventDefectCreated, Actor: debate.ActorGrader, CreatedAt: eventAt, Payload: map[string]any{}},
		{Type: debate.EventDefectCreated, Actor: debate.ActorGrader, DealID: "ignored", Seq: 42},
	}
	var calls []gradeCall
	got, appended, err := s.DealGrade(ctx, b.Deal.ID, gradedAt, recordingGrade(&calls, next, upsert, events, nil))
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.Equal(t, Canonical(b), calls[0].bundle, "grade sees the registry as DealBundleGet returns it")
	require.Empty(t, calls[0].records)
	require.Nil(t, calls[0].prev)

	wantGrading := sampleGrading(b, time.UTC)
	require.Equal(t, wantGrading, got)
	wantEvents := []debate.DealEvent{
		{Seq: 1, DealID: b.Deal.ID, Type: debate.EventClaimGradeChanged, Actor: debate.ActorGrader, CreatedAt: usec(gradedAt),
			Payload: map[string]any{"claim_key": "C1", "from": "C", "to": "B", "count": float64(2), "nested": map[string]any{"list": []any{float64(1), "x", true, nil}}}},
		{Seq: 2, DealID: b.Deal.ID, Type: debate.EventDefectCreated, Actor: debate.ActorGrader, CreatedAt: usec(eventAt), Payload: map[string]any{}},
		{Seq: 3, DealID: b.Deal.ID, Type: debate.EventDefectCreated, Actor: debate.ActorGrader, CreatedAt: usec(gradedAt)},
	}
	require.Equal(t, wantEvents, appended)

	wantDefects := sampleDefects(b, time.UTC)
	wantDefects[0].UpdatedAt = gradedAt.UTC()
	wantDefects[1].CreatedAt, wantDefects[1].UpdatedAt = gradedAt.UTC(), gradedAt.UTC()
	slices.SortFunc(wantDefects, func(a, b debate.Defect) int { return strings.Compare(a.ID, b.ID) })
	st := readGradingState(t, ctx, s, b.Deal.ID)
	require.Equal(t, gradingState{grading: wantGrading, gradedAt: usec(gradedAt), defects: wantDefects, events: wantEvents}, st)
	if n := countGradingRows(t, s, tenant); n != nil {
		require.Equal(t, map[string]int{"deal_gradings": 1, "defects": 2, "deal_events": 3}, n)
	}

	// Second grading: it sees the records and the previous grading; it
	// cures one record, flags a new one, leaves the other alone, and
	// appends after the first grading's events.
	at2 := gradedAt.Add(time.Hour)
	cured := st.defects[0]
	cured.Status, cured.Actor, cured.Reason = debate.DefectCured, "analyst-1", "source provided"
	c2 := b.Claims[slices.IndexFunc(b.Claims, func(c debate.Claim) bool { return c.Key == "C2" })]
	flagged := debate.Defect{
		ID: defectID(c2.ID, debate.DefectUnitMismatch), ClaimID: c2.ID, ClaimKey: "C2", Type: debate.DefectUnitMismatch,
		Severity: debate.SeverityMajor, CureProtocol: debate.CureRequestSource, Status: debate.DefectOpen, Actor: "sanad",
	}
	next2 := sampleGrading(b, zone)
	next2.GradeDCount, next2.SanadCoverage, next2.Defects = 2, 0.5, nil
	events2 := []debate.DealEvent{
		{Type: debate.EventDefectCured, Actor: "analyst-1", Payload: map[string]any{"defect_id": cured.ID}},
		{Type: debate.EventDefectFlagged, Actor: debate.ActorGrader, Payload: map[string]any{"defect_id": flagged.ID}},
	}
	calls = nil
	curedIn := cured
	curedIn.CreatedAt = time.Time{} // the store keeps the stored record's
	got2, appended2, err := s.DealGrade(ctx, b.Deal.ID, at2, recordingGrade(&calls, next2, []debate.Defect{curedIn, flagged}, events2, nil))
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.Equal(t, Canonical(b), calls[0].bundle)
	require.Equal(t, st.defects, calls[0].records, "grade sees the stored records, ordered by id")
	require.Equal(t, wantGrading, calls[0].prev, "grade sees the previous grading")
	require.Equal(t, []int64{4, 5}, []int64{appended2[0].Seq, appended2[1].Seq})

	wantGrading2 := sampleGrading(b, time.UTC)
	wantGrading2.GradeDCount, wantGrading2.SanadCoverage, wantGrading2.Defects = 2, 0.5, nil
	require.Equal(t, wantGrading2, got2)
	cured.UpdatedAt = at2.UTC()
	flagged.CreatedAt, flagged.UpdatedAt = at2.UTC(), at2.UTC()
	wantDefects2 := []debate.Defect{cured, st.defects[1], flagged}
	slices.SortFunc(wantDefects2, func(a, b debate.Defect) int { return strings.Compare(a.ID, b.ID) })
	st2 := readGradingState(t, ctx, s, b.Deal.ID)
	require.Equal(t, gradingState{grading: wantGrading2, gradedAt: usec(at2), defects: wantDefects2, events: append(wantEvents, appended2...)}, st2)
	if n := countGradingRows(t, s, tenant); n != nil {
		require.Equal(t, map[string]int{"deal_gradings": 1, "defects": 3, "deal_events": 5}, n)
	}

	// A grading without records or events replaces the grading only.
	got3, appended3, err := s.DealGrade(ctx, b.Deal.ID, at2.Add(time.Hour), recordingGrade(&calls, &debate.DealGrading{}, nil, nil, nil))
	require.NoError(t, err)
	require.Equal(t, &debate.DealGrading{DealID: b.Deal.ID}, got3)
	require.Empty(t, appended3)
	st3 := readGradingState(t, ctx, s, b.Deal.ID)
	require.Equal(t, got3, st3.grading)
	require.Equal(t, st2.defects, st3.defects)
	require.Equal(t, st2.events, st3.events)
}

// gradeFailures are GradeFuncs that must write nothing, and what each
// error must match.
func gradeFailures(b *debate.DealBundle) map[string]struct {
	grade debate.GradeFunc
	is    error
} {
	boom := errors.New("boom")
	ok := sampleGrading(b, zone)
	many := make([]debate.DealEvent, 30)
	for i := range many {
		many[i] = debate.DealEvent{Type: debate.EventDefectCreated, Actor: debate.ActorGrader}
	}
	fixed := func(next *debate.DealGrading, upsert []debate.Defect, events []debate.DealEvent, err error) debate.GradeFunc {
		var calls []gradeCall
		return recordingGrade(&calls, next, upsert, events, err)
	}
	dup := sampleDefects(b, zone)
	dup = append(dup, dup[0])
	nul := sampleDefects(b, zone)
	nul[1].Description = "nul\x00"
	return map[string]struct {
		grade debate.GradeFunc
		is    error
	}{
		"grade error":         {fixed(ok, sampleDefects(b, zone), many, fmt.Errorf("grader: %w", boom)), boom},
		"no grading":          {fixed(nil, sampleDefects(b, zone), many, nil), debate.ErrInvalid},
		"grading of another":  {fixed(&debate.DealGrading{DealID: "other"}, nil, many, nil), debate.ErrInvalid},
		"duplicate record id": {fixed(ok, dup, many, nil), debate.ErrInvalid},
		"NUL in a record":     {fixed(ok, nul, many, nil), debate.ErrInvalid},
		"event without type":  {fixed(ok, sampleDefects(b, zone), append(slices.Clone(many), debate.DealEvent{}), nil), debate.ErrInvalid},
	}
}

func testGradeErrorWritesNothing(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	b := importSample(t, ctx, s)

	// Before any grading: the error comes back unchanged, nothing exists.
	boom := errors.New("boom")
	wrapped := fmt.Errorf("grader: %w", boom)
	var calls []gradeCall
	_, _, err := s.DealGrade(ctx, b.Deal.ID, gradedAt, recordingGrade(&calls, sampleGrading(b, zone), sampleDefects(b, zone),
		[]debate.DealEvent{{Type: debate.EventDefectCreated}}, wrapped))
	require.Same(t, wrapped, err, "grade's error is returned unchanged")
	require.ErrorIs(t, err, boom)
	require.Len(t, calls, 1)
	require.Equal(t, gradingState{notFound: true}, readGradingState(t, ctx, s, b.Deal.ID))
	if n := countGradingRows(t, s, tenant); n != nil {
		require.Equal(t, map[string]int{"deal_gradings": 0, "defects": 0, "deal_events": 0}, n)
	}

	// After a grading: a failing one changes nothing.
	_, _, err = s.DealGrade(ctx, b.Deal.ID, gradedAt, recordingGrade(&calls, sampleGrading(b, zone), sampleDefects(b, zone),
		[]debate.DealEvent{{Type: debate.EventDefectCreated}}, nil))
	require.NoError(t, err)
	before := readGradingState(t, ctx, s, b.Deal.ID)
	counts := countGradingRows(t, s, tenant)
	_, _, err = s.DealGrade(ctx, b.Deal.ID, gradedAt.Add(time.Hour), recordingGrade(&calls, &debate.DealGrading{GradeDCount: 7}, nil,
		[]debate.DealEvent{{Type: debate.EventDefectCured}}, wrapped))
	require.Same(t, wrapped, err)
	require.Equal(t, before, readGradingState(t, ctx, s, b.Deal.ID))
	require.Equal(t, counts, countGradingRows(t, s, tenant))

	// The store is usable after the failures: the next grading appends
	// right after the last stored event.
	_, appended, err := s.DealGrade(ctx, b.Deal.ID, gradedAt, recordingGrade(&calls, sampleGrading(b, zone), nil,
		[]debate.DealEvent{{Type: debate.EventDefectCured}}, nil))
	require.NoError(t, err)
	require.Equal(t, int64(2), appended[0].Seq)
}

func testGradeInvalidWritesNothing(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	b := importSample(t, ctx, s)
	var calls []gradeCall
	_, _, err := s.DealGrade(ctx, b.Deal.ID, gradedAt, recordingGrade(&calls, sampleGrading(b, zone), sampleDefects(b, zone),
		[]debate.DealEvent{{Type: debate.EventDefectCreated}}, nil))
	require.NoError(t, err)
	before := readGradingState(t, ctx, s, b.Deal.ID)
	counts := countGradingRows(t, s, tenant)
	for name, f := range gradeFailures(b) {
		_, _, err := s.DealGrade(ctx, b.Deal.ID, gradedAt.Add(time.Hour), f.grade)
		require.ErrorIs(t, err, f.is, name)
		require.Equal(t, before, readGradingState(t, ctx, s, b.Deal.ID), name)
		require.Equal(t, counts, countGradingRows(t, s, tenant), name)
	}
}

func testGradingTenantsIsolated(t *testing.T, s Store) {
	ctxA, _ := NewTenant(t, s)
	ctxB, tenantB := NewTenant(t, s)
	a := importSample(t, ctxA, s)
	var calls []gradeCall
	_, _, err := s.DealGrade(ctxA, a.Deal.ID, gradedAt, recordingGrade(&calls, sampleGrading(a, zone), sampleDefects(a, zone),
		[]debate.DealEvent{{Type: debate.EventDefectCreated}, {Type: debate.EventDefectCreated}}, nil))
	require.NoError(t, err)
	stateA := readGradingState(t, ctxA, s, a.Deal.ID)

	// B cannot grade or read A's deal, and learns nothing of it.
	calls = nil
	_, _, err = s.DealGrade(ctxB, a.Deal.ID, gradedAt, recordingGrade(&calls, &debate.DealGrading{}, nil,
		[]debate.DealEvent{{Type: debate.EventDefectCreated}}, nil))
	require.ErrorIs(t, err, debate.ErrNotFound)
	require.Empty(t, calls, "grade is not called for another tenant's deal")
	_, _, err = s.GradingGet(ctxB, a.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.DefectList(ctxB, a.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.DealEventList(ctxB, a.Deal.ID, 0, 0)
	require.ErrorIs(t, err, debate.ErrNotFound)
	require.Equal(t, stateA, readGradingState(t, ctxA, s, a.Deal.ID))

	// B's deal with the same id is another deal: its own grading, records
	// and event seqs from 1.
	importBundle(t, ctxB, s, SampleBundle(a.Deal.ID))
	calls = nil
	_, appended, err := s.DealGrade(ctxB, a.Deal.ID, gradedAt, recordingGrade(&calls, &debate.DealGrading{GradeDCount: 3}, nil,
		[]debate.DealEvent{{Type: debate.EventDefectCreated}}, nil))
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.Empty(t, calls[0].records, "B does not see A's records")
	require.Nil(t, calls[0].prev, "B does not see A's grading")
	require.Equal(t, int64(1), appended[0].Seq)
	stateB := readGradingState(t, ctxB, s, a.Deal.ID)
	require.Equal(t, 3, stateB.grading.GradeDCount)
	require.Empty(t, stateB.defects)
	require.Len(t, stateB.events, 1)
	require.Equal(t, stateA, readGradingState(t, ctxA, s, a.Deal.ID), "A is unchanged")
	if n := countGradingRows(t, s, tenantB); n != nil {
		require.Equal(t, map[string]int{"deal_gradings": 1, "defects": 0, "deal_events": 1}, n)
	}
}

func testGradingNoTenant(t *testing.T, s Store) {
	ctx := context.Background()
	var calls []gradeCall
	_, _, err := s.DealGrade(ctx, "deal-x", gradedAt, recordingGrade(&calls, &debate.DealGrading{}, nil, nil, nil))
	require.ErrorIs(t, err, debate.ErrNoTenant)
	require.Empty(t, calls)
	_, _, err = s.GradingGet(ctx, "deal-x")
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = s.DefectList(ctx, "deal-x")
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = s.DealEventList(ctx, "deal-x", 0, 0)
	require.ErrorIs(t, err, debate.ErrNoTenant)
}

func testGradingUnknownDeal(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	unknown := "deal-" + uuid.NewString()
	var calls []gradeCall
	_, _, err := s.DealGrade(ctx, unknown, gradedAt, recordingGrade(&calls, &debate.DealGrading{}, nil, nil, nil))
	require.ErrorIs(t, err, debate.ErrNotFound)
	require.Empty(t, calls, "grade is not called for an unknown deal")
	_, _, err = s.GradingGet(ctx, unknown)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.DefectList(ctx, unknown)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.DealEventList(ctx, unknown, 0, 0)
	require.ErrorIs(t, err, debate.ErrNotFound)

	// A known deal never graded: no grading, empty lists.
	b := importSample(t, ctx, s)
	_, _, err = s.GradingGet(ctx, b.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	defects, err := s.DefectList(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Empty(t, defects)
	events, err := s.DealEventList(ctx, b.Deal.ID, 0, 0)
	require.NoError(t, err)
	require.Empty(t, events)
}

// testConcurrentGrades: gradings of one deal released together run one
// after the other: each sees the previous one's grading, and the event log
// has no gap and no duplicate.
func testConcurrentGrades(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := importSample(t, ctx, s)
	other := importSample(t, ctx, s) // graded at the same time, independently

	const n = 8
	type result struct {
		saw      int // the GradeDCount of the previous grading grade saw
		appended []debate.DealEvent
		err      error
	}
	results := make([]result, 2*n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 2 * n {
		dealID := b.Deal.ID
		if i >= n {
			dealID = other.Deal.ID
		}
		wg.Go(func() {
			<-start
			r := &results[i]
			_, r.appended, r.err = s.DealGrade(ctx, dealID, gradedAt, func(_ *debate.DealBundle, _ []debate.Defect, prev *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
				r.saw = 0
				if prev != nil {
					r.saw = prev.GradeDCount
				}
				next := &debate.DealGrading{GradeDCount: r.saw + 1}
				return next, nil, []debate.DealEvent{{Type: debate.EventClaimGradeChanged, Actor: debate.ActorGrader, Payload: map[string]any{"n": r.saw + 1}}}, nil
			})
		})
	}
	close(start)
	wg.Wait()

	for _, deal := range []struct {
		id      string
		results []result
	}{{b.Deal.ID, results[:n]}, {other.Deal.ID, results[n:]}} {
		var saw, seqs []int
		for i, r := range deal.results {
			require.NoError(t, r.err, "grading %d", i)
			require.Len(t, r.appended, 1)
			saw = append(saw, r.saw)
			seqs = append(seqs, int(r.appended[0].Seq))
			require.Equal(t, float64(r.saw+1), r.appended[0].Payload["n"], "grading %d's event", i)
		}
		slices.Sort(saw)
		slices.Sort(seqs)
		require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, saw, "each grading saw the previous one's")
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8}, seqs, "seqs without gap or duplicate")

		events, err := s.DealEventList(ctx, deal.id, 0, 0)
		require.NoError(t, err)
		require.Len(t, events, n)
		for i, e := range events {
			require.Equal(t, int64(i+1), e.Seq)
			require.Equal(t, float64(i+1), e.Payload["n"], "the events are in grading order")
		}
		g, _, err := s.GradingGet(ctx, deal.id)
		require.NoError(t, err)
		require.Equal(t, n, g.GradeDCount)
	}
}

func testDealEventListPages(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := importSample(t, ctx, s)
	const total = 1005
	events := make([]debate.DealEvent, total)
	for i := range events {
		events[i] = debate.DealEvent{Type: debate.EventClaimGradeChanged, Actor: debate.ActorGrader, Payload: map[string]any{"i": i}}
	}
	var calls []gradeCall
	_, appended, err := s.DealGrade(ctx, b.Deal.ID, gradedAt, recordingGrade(&calls, &debate.DealGrading{}, nil, events[:total-5], nil))
	require.NoError(t, err)
	_, more, err := s.DealGrade(ctx, b.Deal.ID, gradedAt, recordingGrade(&calls, &debate.DealGrading{}, nil, events[total-5:], nil))
	require.NoError(t, err)
	all := append(appended, more...)
	require.Len(t, all, total)
	for i, e := range all {
		require.Equal(t, int64(i+1), e.Seq)
	}

	page := func(after int64, limit int) []debate.DealEvent {
		t.Helper()
		list, err := s.DealEventList(ctx, b.Deal.ID, after, limit)
		require.NoError(t, err)
		return list
	}
	require.Equal(t, all[:100], page(0, 0), "the default page holds 100 events")
	require.Equal(t, all[:100], page(-7, -1))
	require.Equal(t, all[:1000], page(0, 5000), "a page holds at most 1000 events")
	require.Equal(t, all[1000:], page(1000, 0))
	require.Equal(t, all[499:502], page(499, 3))
	require.Empty(t, page(total, 10))
	require.Empty(t, page(1<<40, 10))

	var walked []debate.DealEvent
	var after int64
	for pages := 0; ; pages++ {
		require.Less(t, pages, 1000, "the list does not end")
		list := page(after, 7)
		if len(list) == 0 {
			break
		}
		walked = append(walked, list...)
		after = list[len(list)-1].Seq
	}
	require.Equal(t, all, walked)
}

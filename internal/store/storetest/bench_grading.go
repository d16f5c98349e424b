package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/debated/debated/internal/debate"
)

// BenchDealGrade measures DealGrade of an imported SampleBundle (7 claims)
// with a grade func that returns a small grading (seven claim grades, two
// defects, one calc), upserts one defect record and appends 2 events. Every
// iteration grades the same deal again, as re-grading does: the record is
// updated, the grading replaced, and the event log grows by 2.
func BenchDealGrade(b *testing.B, s Store) {
	ctx, _ := NewTenant(b, s)
	bd := SampleBundle("bench-" + uuid.NewString())
	if _, err := s.DealImport(ctx, bd, contentHash(b, bd), importedAt); err != nil {
		b.Fatal(err)
	}
	next := sampleGrading(bd, time.UTC)
	upsert := sampleDefects(bd, time.UTC)[:1]
	events := []debate.DealEvent{
		{Type: debate.EventClaimGradeChanged, Actor: debate.ActorGrader, Payload: map[string]any{"claim_key": "C4", "from": "C", "to": "D"}},
		{Type: debate.EventDefectCreated, Actor: debate.ActorGrader, Payload: map[string]any{"defect_id": upsert[0].ID}},
	}
	grade := func(*debate.DealBundle, []debate.Defect, *debate.DealGrading) (*debate.DealGrading, []debate.Defect, []debate.DealEvent, error) {
		return next, upsert, events, nil
	}
	at := gradedAt
	for b.Loop() {
		at = at.Add(time.Second)
		if _, appended, err := s.DealGrade(ctx, bd.Deal.ID, at, grade); err != nil || len(appended) != 2 {
			b.Fatalf("grade: %d events, %v", len(appended), err)
		}
	}
}

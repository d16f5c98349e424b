package sanad

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/debated/debated/internal/debate"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func eventTypes(evs []debate.DealEvent) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func count(evs []debate.DealEvent, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func TestRegradeRecordsChangesOnce(t *testing.T) {
	t.Parallel()
	b := loadDeal(t, filepath.Join("testdata", "deals", "inconsistency"))
	first, upsert, evs := Regrade(b, nil, nil, t0)
	require.NotEmpty(t, first.Defects)
	require.Len(t, upsert, len(first.Defects), "every detection is recorded on the first grading")
	require.Equal(t, len(first.Defects), count(evs, debate.EventDefectCreated))
	require.Equal(t, len(first.Claims), count(evs, debate.EventClaimGradeChanged), "the first grading records every claim's grade")
	require.Equal(t, len(first.Claims), count(evs, debate.EventClaimVerdictChanged))
	for _, e := range evs {
		require.Equal(t, b.Deal.ID, e.DealID)
		require.Equal(t, debate.ActorGrader, e.Actor)
		require.Equal(t, t0, e.CreatedAt)
	}

	// The same inputs again: nothing new to record.
	second, upsert2, evs2 := Regrade(b, upsert, first, t0.Add(time.Hour))
	require.Empty(t, upsert2)
	require.Empty(t, evs2, "got %v", eventTypes(evs2))
	require.Equal(t, OutcomeOf(first), OutcomeOf(second))
}

func TestWaivingADefectRestoresTheClaim(t *testing.T) {
	t.Parallel()
	b := loadDeal(t, filepath.Join("testdata", "deals", "inconsistency"))
	first, records, _ := Regrade(b, nil, nil, t0)
	bad, ok := first.Claim("F3")
	require.True(t, ok)
	require.Equal(t, debate.GradeD, bad.Grade)
	require.Equal(t, debate.VerdictContradicted, bad.Verdict)
	require.Len(t, bad.Defects, 1)

	waived, ev, err := Close(records, bad.Defects[0].ID, debate.DefectWaived, "partner@fund", "the auditor confirmed the deck figure", t0)
	require.NoError(t, err)
	require.Equal(t, debate.EventDefectWaived, ev.Type)
	require.Equal(t, "partner@fund", ev.Actor)
	require.Equal(t, debate.DefectWaived, waived.Status)
	for i := range records {
		if records[i].ID == waived.ID {
			records[i] = waived
		}
	}
	next, upsert, evs := Regrade(b, records, first, t0)
	require.Empty(t, upsert)
	now, _ := next.Claim("F3")
	require.NotEqual(t, debate.GradeD, now.Grade)
	require.Equal(t, debate.VerdictVerified, now.Verdict)
	require.Empty(t, now.Defects, "a waived defect no longer counts")
	require.ElementsMatch(t, []string{debate.EventClaimGradeChanged, debate.EventClaimVerdictChanged}, eventTypes(evs))
	require.Equal(t, "D", evs[0].Payload["from_grade"])
	var sawLifecycle bool
	for _, s := range now.Steps {
		sawLifecycle = sawLifecycle || s.Rule == "lifecycle"
	}
	require.True(t, sawLifecycle, "the explanation says why the defect stopped counting")

	// Closing it again is refused; an unknown id is not found.
	_, _, err = Close(records, waived.ID, debate.DefectCured, "x", "y", t0)
	require.ErrorIs(t, err, debate.ErrFailedPrecondition)
	_, _, err = Close(records, "dfx_nope", debate.DefectCured, "x", "y", t0)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, fresh, _ := Regrade(b, nil, nil, t0)
	_, _, err = Close(fresh, bad.Defects[0].ID, debate.DefectCured, "", "", t0)
	require.ErrorIs(t, err, debate.ErrInvalid, "closing needs an actor and a reason")
}

func TestFlaggedDefectCountsWithItsSeverity(t *testing.T) {
	t.Parallel()
	b := loadDeal(t, filepath.Join("testdata", "deals", "clean_upgrade"))
	first, records, _ := Regrade(b, nil, nil, t0)
	target := first.Claims[0]
	require.Equal(t, debate.VerdictVerified, target.Verdict)

	d, ev, err := Flag(b, FlagParams{
		ID:           "flag-1",
		ClaimID:      target.ClaimID,
		Type:         debate.DefectConcealment,
		Description:  "the deck omits a churned anchor customer that the model still counts in revenue",
		EvidenceRefs: []string{b.Evidence[0].ID},
		Actor:        "sanad_breaker",
	}, t0)
	require.NoError(t, err)
	require.Equal(t, debate.SeverityFatal, d.Severity, "the type's usual severity")
	require.Equal(t, debate.OriginFlagged, d.Origin)
	require.Equal(t, debate.EventDefectFlagged, ev.Type)
	require.Equal(t, "sanad_breaker", ev.Actor)

	next, _, evs := Regrade(b, append(records, d), first, t0)
	got, _ := next.Claim(target.ClaimKey)
	require.Equal(t, debate.GradeD, got.Grade, "a FATAL flag makes the claim D")
	require.Equal(t, debate.ActionPartnerOverrideRequired, got.Action)
	require.Len(t, got.Defects, 1)
	require.Equal(t, "flag-1", got.Defects[0].ID)
	require.Contains(t, eventTypes(evs), debate.EventClaimGradeChanged)

	// A MINOR flag changes nothing but is listed.
	minor, _, err := Flag(b, FlagParams{ID: "flag-2", ClaimID: target.ClaimID, Type: debate.DefectScopeDrift,
		Description:  "the claim speaks of the whole group while the evidence covers one subsidiary only",
		EvidenceRefs: []string{b.Spans[0].ID}, Actor: "risk_officer"}, t0)
	require.NoError(t, err)
	next2, _, _ := Regrade(b, append(records, minor), first, t0)
	got2, _ := next2.Claim(target.ClaimKey)
	require.Equal(t, target.Grade, got2.Grade)
	require.Len(t, got2.Defects, 1)
}

func TestFlagRejectsFreeText(t *testing.T) {
	t.Parallel()
	b := loadDeal(t, filepath.Join("testdata", "deals", "clean_upgrade"))
	_, _, err := Flag(b, FlagParams{ID: "f", ClaimID: "no-such-claim", Type: debate.DefectImplausibility,
		Description: "short", EvidenceRefs: []string{"not-in-this-deal"}, Actor: "a"}, t0)
	var ve *debate.ValidationError
	require.True(t, errors.As(err, &ve))
	fields := map[string]bool{}
	for _, v := range ve.Violations {
		fields[v.Field] = true
	}
	require.True(t, fields["claim_id"])
	require.True(t, fields["evidence_refs[0]"])
	_, _, err = Flag(b, FlagParams{ID: "f", ClaimID: b.Claims[0].ID, Type: debate.DefectImplausibility,
		Description: "x", Actor: "a"}, t0)
	require.ErrorIs(t, err, debate.ErrInvalid)
}

package gate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

func TestNewFacts(t *testing.T) {
	t.Parallel()

	t.Run("from the registry and its grading", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		f := fx.facts
		require.Equal(t, dealID, f.DealID())

		c1, ok := f.Claim(claimID(1))
		require.True(t, ok)
		require.Equal(t, ClaimFact{ID: claimID(1), Key: "C1", Grade: debate.GradeA, BaseGrade: debate.GradeA, Material: true, Corroboration: debate.CorroborationMutawatir}, c1)
		require.False(t, c1.Weak())
		require.False(t, c1.Critical())

		c3, _ := f.Claim(claimID(3))
		require.True(t, c3.Weak(), "grade A but AHAD_1")
		c4, _ := f.Claim(claimID(4))
		require.True(t, c4.Critical(), "material, grade D")
		c6, _ := f.Claim(claimID(6))
		require.True(t, c6.FatalOpen)
		require.True(t, c6.Critical(), "material, open FATAL")
		c7, _ := f.Claim(claimID(7))
		require.True(t, c7.Blocked)
		require.False(t, c7.Critical(), "grade D but not material")

		k1, ok := f.Calc(calcID(1))
		require.True(t, ok)
		require.Equal(t, []string{claimID(1), claimID(2)}, k1.InputClaimIDs)
		require.Equal(t, debate.GradeB, f.CalcGrade(calcID(1)))
		require.Equal(t, debate.GradeA, f.CalcGrade(calcID(3)))
		require.Equal(t, debate.GradeD, f.CalcGrade("nope"))

		_, ok = f.Claim("nope")
		require.False(t, ok)
		_, ok = f.Calc(claimID(1))
		require.False(t, ok, "a claim is not a calc")
	})

	t.Run("fail-closed without data", func(t *testing.T) {
		t.Parallel()
		var nilFacts *Facts
		for _, f := range []*Facts{NewFacts(nil, nil), nilFacts} {
			_, ok := f.Claim(claimID(1))
			require.False(t, ok)
			require.Empty(t, f.DealID())
			require.False(t, f.isEvidence(evID(1)))
		}
		fx := setup(t)
		f := NewFacts(fx.bundle, nil)
		c1, ok := f.Claim(claimID(1))
		require.True(t, ok)
		require.Equal(t, debate.GradeD, c1.Grade, "ungraded claims are grade D")
		require.Equal(t, debate.CorroborationNone, c1.Corroboration)
		require.True(t, c1.Critical(), "an ungraded material claim is critical")
		require.Equal(t, debate.GradeD, f.CalcGrade(calcID(3)))

		// An unknown grade in the grading is never trusted.
		g := *fx.grading
		g.Claims = append([]debate.ClaimGrade(nil), fx.grading.Claims...)
		g.Claims[0].Grade = "A+"
		c1, _ = NewFacts(fx.bundle, &g).Claim(claimID(1))
		require.Equal(t, debate.GradeD, c1.Grade)
	})

	t.Run("closed defects do not count", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		g := *fx.grading
		g.Defects = []debate.Defect{{ID: "d-closed", ClaimID: claimID(1), Type: debate.DefectBrokenChain, Severity: debate.SeverityFatal, Status: debate.DefectCured}}
		c1, _ := NewFacts(fx.bundle, &g).Claim(claimID(1))
		require.False(t, c1.FatalOpen)
	})
}

func TestAddDefect(t *testing.T) {
	t.Parallel()
	flag := func(id string, claim int, typ debate.DefectType, sev debate.Severity) debate.Defect {
		return debate.Defect{ID: id, ClaimID: claimID(claim), Type: typ, Severity: sev, Status: debate.DefectOpen, Origin: debate.OriginFlagged}
	}
	cases := []struct {
		name      string
		defects   []debate.Defect
		claim     int
		grade     debate.Grade
		fatal     bool
		calcGrade debate.Grade // of K3 (inputs C1, C8)
	}{
		{"FATAL makes grade D", []debate.Defect{flag("d1", 1, debate.DefectChainGrafting, debate.SeverityFatal)}, 1, debate.GradeD, true, debate.GradeD},
		{"default severity of a FATAL type", []debate.Defect{flag("d1", 1, debate.DefectBrokenChain, "")}, 1, debate.GradeD, true, debate.GradeD},
		{"MAJOR lowers one step", []debate.Defect{flag("d1", 1, debate.DefectInconsistency, debate.SeverityMajor)}, 1, debate.GradeB, false, debate.GradeB},
		{"two MAJOR lower two steps", []debate.Defect{flag("d1", 1, debate.DefectInconsistency, debate.SeverityMajor), flag("d2", 1, debate.DefectStaleness, debate.SeverityMajor)}, 1, debate.GradeC, false, debate.GradeC},
		{"MAJOR floors at D", []debate.Defect{flag("d1", 5, debate.DefectInconsistency, debate.SeverityMajor), flag("d2", 5, debate.DefectStaleness, debate.SeverityMajor)}, 5, debate.GradeD, false, debate.GradeA},
		{"MINOR changes nothing", []debate.Defect{flag("d1", 1, debate.DefectScopeDrift, debate.SeverityMinor)}, 1, debate.GradeA, false, debate.GradeA},
		{"the same record twice counts once", []debate.Defect{flag("d1", 1, debate.DefectInconsistency, debate.SeverityMajor), flag("d1", 1, debate.DefectInconsistency, debate.SeverityMajor)}, 1, debate.GradeB, false, debate.GradeB},
		{"a record the grading holds counts once", []debate.Defect{flag(fatalDefectID, 2, debate.DefectInconsistency, debate.SeverityMajor)}, 2, debate.GradeB, false, debate.GradeA},
		{"closed defects are ignored", []debate.Defect{{ID: "d1", ClaimID: claimID(1), Type: debate.DefectBrokenChain, Severity: debate.SeverityFatal, Status: debate.DefectWaived}}, 1, debate.GradeA, false, debate.GradeA},
		{"unknown claims are ignored", []debate.Defect{{ID: "d1", ClaimID: "nope", Type: debate.DefectBrokenChain, Status: debate.DefectOpen}}, 1, debate.GradeA, false, debate.GradeA},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t).facts
			for _, d := range tc.defects {
				f.AddDefect(d)
			}
			c, _ := f.Claim(claimID(tc.claim))
			require.Equal(t, tc.grade, c.Grade)
			require.Equal(t, tc.fatal, c.FatalOpen)
			require.Equal(t, tc.calcGrade, f.CalcGrade(calcID(3)))
		})
		// WithDefects derives the same Facts and leaves its base as it was.
		t.Run(tc.name+"/WithDefects", func(t *testing.T) {
			t.Parallel()
			base := setup(t).facts
			before, _ := base.Claim(claimID(tc.claim))
			f := base.WithDefects(tc.defects)
			c, _ := f.Claim(claimID(tc.claim))
			require.Equal(t, tc.grade, c.Grade)
			require.Equal(t, tc.fatal, c.FatalOpen)
			require.Equal(t, tc.calcGrade, f.CalcGrade(calcID(3)))
			after, _ := base.Claim(claimID(tc.claim))
			require.Equal(t, before, after, "the base Facts changed")
			require.Equal(t, debate.GradeA, base.CalcGrade(calcID(3)))
		})
	}

	t.Run("an upgraded claim loses its upgrade first", func(t *testing.T) {
		t.Parallel()
		fx := setup(t)
		g := *fx.grading
		g.Claims = append([]debate.ClaimGrade(nil), fx.grading.Claims...)
		g.Claims[1].BaseGrade = debate.GradeC // C2 graded B by upgrade from C
		f := NewFacts(fx.bundle, &g)
		f.AddDefect(flag("d1", 2, debate.DefectInconsistency, debate.SeverityMajor))
		c2, _ := f.Claim(claimID(2))
		require.Equal(t, debate.GradeD, c2.Grade, "no upgrade with a MAJOR defect, then one step down from C")
	})

	t.Run("a flagged defect changes what the gate and the stop rule see", func(t *testing.T) {
		t.Parallel()
		f := setup(t).facts
		o := baseOutput()
		require.True(t, Validate(o, f, debate.IDISRoles).Valid)
		require.Empty(t, ReliedOnCritical([]debate.AgentOutput{*o}, f))
		f.AddDefect(flag("d1", 1, debate.DefectCircularity, debate.SeverityFatal))
		res := Validate(o, f, debate.IDISRoles)
		require.True(t, hasRule(res.Violations, RuleUncertaintiesMissing), "C1 is now weak: %v", res.Violations)
		require.Equal(t, []string{claimID(1)}, ReliedOnCritical([]debate.AgentOutput{*o}, f))
	})
}

// TestMention: every kind of id a text may mention is recognised, the
// defects a debate flags included, through the one-lookup index.
func TestMention(t *testing.T) {
	t.Parallel()
	fx := setup(t)
	flagged := "00000000-0000-4000-8000-000000000999"
	f := fx.facts.WithDefects([]debate.Defect{{ID: flagged, ClaimID: claimID(2), Type: debate.DefectBrokenChain, Status: debate.DefectOpen}})
	for _, c := range []struct {
		tok, ref string
		known    bool
	}{
		{claimID(1), claimID(1), true}, {"C1", claimID(1), true}, {calcID(1), calcID(1), true},
		{evID(1), "", true}, {spanID(1), "", true}, {docID(1), "", true}, {dealID, "", true}, {flagged, "", true},
		{fatalDefectID, "", true},
		{"runway", "", false}, {"C99", "", false}, {"00000000-0000-4000-8000-000000000998", "", false},
	} {
		ref, known := f.mention(c.tok)
		require.Equal(t, c.ref, ref, c.tok)
		require.Equal(t, c.known, known, c.tok)
	}
	_, known := fx.facts.mention(flagged)
	require.False(t, known, "the defect is the debate's, not the deal's")
	_, known = fx.facts.mention(fatalDefectID)
	require.True(t, known, "the grading's defect")
	g := NewFacts(fx.bundle, fx.grading)
	g.AddDefect(debate.Defect{ID: flagged, ClaimID: claimID(3), Type: debate.DefectBrokenChain, Status: debate.DefectOpen})
	_, known = g.mention(flagged)
	require.True(t, known, "a defect added to the Facts themselves")
}

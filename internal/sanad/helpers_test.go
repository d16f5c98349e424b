package sanad

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/testutil/gdbs"
)

// dealCase is a deal directory and its expected outcome file.
type dealCase struct {
	name     string
	dir      string
	expected string
}

// listDeals lists root/deals/* with root/expected/<name>.json.
func listDeals(t testing.TB, root string) []dealCase {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "deals"))
	if err != nil {
		return nil
	}
	var out []dealCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		out = append(out, dealCase{
			name:     e.Name(),
			dir:      filepath.Join(root, "deals", e.Name()),
			expected: filepath.Join(root, "expected", e.Name()+".json"),
		})
	}
	return out
}

func gdbsDeals(t testing.TB) []dealCase {
	t.Helper()
	root := gdbs.Dir(t)
	deals := listDeals(t, root)
	if len(deals) == 0 {
		t.Skipf("GDBS data not found at %s; skipping", root)
	}
	return deals
}

func authoredDeals(t testing.TB) []dealCase {
	t.Helper()
	deals := listDeals(t, "testdata")
	require.NotEmpty(t, deals, "no authored deals in testdata/deals")
	return deals
}

func loadDeal(t testing.TB, dir string) *debate.DealBundle {
	t.Helper()
	b, err := dealfile.Load(dir)
	require.NoError(t, err, dir)
	require.NoError(t, b.Validate(), dir)
	return b
}

func loadExpected(t testing.TB, path string) Outcome {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var o Outcome
	require.NoError(t, json.Unmarshal(data, &o), path)
	return o
}

// diffOutcome lists every difference between got and the expected outcome:
// each claim's grade, verdict, action and defect count, the deal's defects
// (type, severity, claim key, cure), grade D count, coverage, blocked keys
// and the calcs the expectation pins.
func diffOutcome(got, want Outcome) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	keys := make([]string, 0, len(want.Claims))
	for k := range want.Claims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w := want.Claims[k]
		g, ok := got.Claims[k]
		if !ok {
			add("claim %s missing", k)
			continue
		}
		if w.ClaimID != "" && g.ClaimID != w.ClaimID {
			add("claim %s: id %s, want %s", k, g.ClaimID, w.ClaimID)
		}
		if g.Grade != w.Grade || g.Verdict != w.Verdict || g.Action != w.Action || g.DefectCount != w.DefectCount {
			add("claim %s: got %s/%s/%s/%d, want %s/%s/%s/%d", k, g.Grade, g.Verdict, g.Action, g.DefectCount, w.Grade, w.Verdict, w.Action, w.DefectCount)
		}
	}
	if len(got.Claims) != len(want.Claims) {
		add("%d claims, want %d", len(got.Claims), len(want.Claims))
	}
	gd, wd := slices.Clone(got.Defects), slices.Clone(want.Defects)
	slices.SortFunc(gd, compareDefects)
	slices.SortFunc(wd, compareDefects)
	if !slices.Equal(gd, wd) {
		add("defects:\n  got  %v\n  want %v", gd, wd)
	}
	if got.GradeDCount != want.GradeDCount {
		add("grade_d_count %d, want %d", got.GradeDCount, want.GradeDCount)
	}
	if math.Abs(got.SanadCoverage-want.SanadCoverage) > 1e-9 {
		add("sanad_coverage %v, want %v", got.SanadCoverage, want.SanadCoverage)
	}
	gb, wb := slices.Clone(got.BlockedClaimKeys), slices.Clone(want.BlockedClaimKeys)
	slices.Sort(gb)
	slices.Sort(wb)
	if !slices.Equal(gb, wb) {
		add("blocked_claim_keys %v, want %v", gb, wb)
	}
	for _, wc := range want.Calcs {
		i := slices.IndexFunc(got.Calcs, func(c CalcOutcome) bool { return c.CalcID == wc.CalcID })
		if i < 0 {
			add("calc %s missing", wc.CalcID)
			continue
		}
		gc := got.Calcs[i]
		if gc.CalcType != wc.CalcType || gc.Grade != wc.Grade {
			add("calc %s: %s grade %s, want %s grade %s", wc.CalcID, gc.CalcType, gc.Grade, wc.CalcType, wc.Grade)
		}
		for k, v := range wc.Output {
			if gv, ok := gc.Output[k]; !ok || math.Abs(gv-v) > 1e-9 {
				add("calc %s output %s = %v, want %v", wc.CalcID, k, gc.Output[k], v)
			}
		}
	}
	return diffs
}

// explain renders a claim's steps for failure messages.
func explain(g *debate.DealGrading) string {
	var b strings.Builder
	for _, c := range g.Claims {
		fmt.Fprintf(&b, "%s %s %s %s\n", c.ClaimKey, c.Grade, c.Verdict, c.Action)
		for _, s := range c.Steps {
			fmt.Fprintf(&b, "    %s\n", s)
		}
	}
	for _, c := range g.Calcs {
		fmt.Fprintf(&b, "calc %s %s %v\n", c.CalcID, c.Grade, c.Output)
		for _, s := range c.Steps {
			fmt.Fprintf(&b, "    %s\n", s)
		}
	}
	return b.String()
}

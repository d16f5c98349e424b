package idis_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/gate"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/idis/model"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/roles"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/sanad"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/gdbs"
	"github.com/debated/debated/internal/testutil/openaitest"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite docs/examples from the debates of the repository's deals")

// testDeals are the repository's deals: the sanad test deals, the sample
// bundle the IDIS tests use, and the GDBS deals when ../shared has them.
func testDeals(t *testing.T, withGDBS bool) map[string]*debate.DealBundle {
	t.Helper()
	out := map[string]*debate.DealBundle{"sample": storetest.SampleBundle("deal-sample")}
	dirs, err := filepath.Glob(filepath.Join("..", "..", "sanad", "testdata", "deals", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	if d, ok := gdbs.Find(); ok && withGDBS {
		more, err := filepath.Glob(filepath.Join(d, "deals", "deal_*"))
		require.NoError(t, err)
		dirs = append(dirs, more...)
	}
	for _, dir := range dirs {
		b, err := dealfile.Load(dir)
		require.NoError(t, err, dir)
		out[filepath.Base(dir)] = b
	}
	return out
}

// debateRecord is what a debate left in the ledger.
type debateRecord struct {
	bundle  *debate.DealBundle
	outs    []debate.AgentOutput
	stops   []map[string]any
	flagged []debate.Defect
	reviews int
	del     idis.Deliverables
}

func record(t *testing.T, b *debate.DealBundle, evs []debate.Event) debateRecord {
	t.Helper()
	r := debateRecord{bundle: b}
	found := false
	for _, e := range evs {
		switch e.Type {
		case idis.EventAgentOutput:
			var o debate.AgentOutput
			require.NoError(t, json.Unmarshal(e.Payload, &o))
			r.outs = append(r.outs, o)
		case idis.EventStopDecision:
			var m map[string]any
			require.NoError(t, json.Unmarshal(e.Payload, &m))
			r.stops = append(r.stops, m)
		case idis.EventDefectFlagged:
			var d debate.Defect
			require.NoError(t, json.Unmarshal(e.Payload, &d))
			r.flagged = append(r.flagged, d)
		case idis.EventReviewRequested:
			r.reviews++
		case idis.EventDeliverables:
			require.NoError(t, json.Unmarshal(e.Payload, &r.del))
			found = true
		}
	}
	require.True(t, found, "deliverables")
	return r
}

var challengeIDRe = regexp.MustCompile(`\b[a-z_]+-r\d+-\d\d\b`)

var (
	testDefectRe = regexp.MustCompile(`([A-Z_]+) upheld in ([a-z_]+-r\d+-\d\d) on claim (\w+)`)
	cureRe       = regexp.MustCompile(`Cure the defect of claim (\w+)`)
	uuidRe       = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
)

// checkBrief asserts that every statement of the brief is backed by the
// ledger, that no two turns repeat text and that no position is blank.
func checkBrief(t *testing.T, name string, r debateRecord) {
	t.Helper()
	d := r.del
	g := sanad.Grade(r.bundle)
	md := d.Markdown()

	// Turns: no two carry the same text, no sentence repeats within one,
	// no position is blank.
	seen := map[string]string{}
	last := map[string]debate.AgentOutput{}
	lastPos := map[string]debate.AgentOutput{}
	for _, o := range r.outs {
		who := fmt.Sprintf("%s round %d", o.Role, o.RoundNumber)
		require.NotContains(t, seen, o.Content, "%s: %s repeats the text of %s", name, who, seen[o.Content])
		seen[o.Content] = who
		sentences := map[string]bool{}
		for _, s := range strings.SplitAfter(o.Content, ". ") {
			require.False(t, sentences[s], "%s: %s says %q twice", name, who, s)
			sentences[s] = true
		}
		if o.Position != nil {
			require.NotEmpty(t, o.Position.Recommendation, "%s: %s", name, who)
			require.Contains(t, []string{debate.RecommendInvest, debate.RecommendConditional, debate.RecommendPass}, o.Position.Recommendation, name)
			lastPos[o.Role] = o
		}
		last[o.Role] = o
		// Directions: a test of an independent figure fails on the side
		// that hurts the thesis.
		for _, ft := range o.Muhasabah.FalsifiabilityTests {
			for metric, side := range map[string]string{"CAC": "above", "burn": "above", "ARR": "below", "gross margin": "below", "net revenue retention": "below", "runway": "below"} {
				if strings.HasPrefix(ft.TestDescription, "Reconcile "+metric+" of claim") && o.Role != debate.RoleContradictionFinder {
					require.Contains(t, ft.PassFailRule, side, "%s: %s: %s", name, who, ft.PassFailRule)
				}
			}
		}
		if o.Role == debate.RoleAdvocate {
			for metric, way := range map[string]string{"(CAC)": "higher", "(burn)": "higher", "(ARR)": "lower", "(gross margin)": "lower", "(net revenue retention)": "lower", "(runway)": "lower"} {
				if strings.Contains(o.Muhasabah.CounterHypothesis, metric) && strings.Contains(o.Muhasabah.CounterHypothesis, "could place it") {
					require.Contains(t, o.Muhasabah.CounterHypothesis, "place it "+way, "%s: %s", name, who)
				}
			}
		}
	}
	require.NotEmpty(t, r.outs, name)

	// Positions match the last turns.
	require.Len(t, d.Roles, len(last), name)
	for _, rs := range d.Roles {
		o := last[rs.Role]
		require.NotEmpty(t, rs.Position, "%s: %s", name, rs.Role)
		require.NotEmpty(t, rs.Argument, "%s: %s", name, rs.Role)
		require.Equal(t, o.RoundNumber, rs.Round, "%s: %s", name, rs.Role)
		if o.Position == nil {
			require.Equal(t, idis.NoPosition, rs.Position, "%s: %s", name, rs.Role)
			require.Equal(t, o.Muhasabah.Confidence, rs.Confidence, "%s: %s", name, rs.Role)
		} else {
			require.Equal(t, o.Position.Recommendation, rs.Position, "%s: %s", name, rs.Role)
			require.Equal(t, o.Position.Confidence, rs.Confidence, "%s: %s", name, rs.Role)
		}
	}
	if a, ok := lastPos[debate.RoleArbiter]; ok {
		require.Equal(t, a.Position.Recommendation, d.Recommendation, name)
		require.Equal(t, a.Position.Confidence, d.Confidence, name)
	}
	require.NotEmpty(t, d.Why, name)

	// Dissent present ⇔ an evidence-backed dissent of the arbiter's last
	// turn, and each upheld challenge it cites was upheld for that role.
	upheld := map[string]string{} // challenge id → author
	author := map[string]string{}
	upheldPairs := map[string]bool{}
	for _, o := range r.outs {
		for _, c := range o.Challenges {
			author[c.ChallengeID] = o.Role
		}
	}
	for _, o := range r.outs {
		for _, ru := range o.Rulings {
			if ru.Upheld && !ru.Frivolous {
				upheld[ru.ChallengeID] = author[ru.ChallengeID]
			}
		}
	}
	for _, o := range r.outs {
		for _, c := range o.Challenges {
			if _, ok := upheld[c.ChallengeID]; ok {
				for _, id := range c.ClaimRefs {
					upheldPairs[id+"/"+c.DefectType] = true
				}
			}
		}
	}
	if arb, ok := last[debate.RoleArbiter]; ok && len(arb.StructuredContent) > 0 {
		var st struct {
			Dissent []struct {
				Role           string `json:"role"`
				Recommendation string `json:"recommendation"`
				EvidenceBacked bool   `json:"evidence_backed"`
			} `json:"dissent"`
		}
		require.NoError(t, json.Unmarshal(arb.StructuredContent, &st))
		var want, got []string
		for _, x := range st.Dissent {
			if x.EvidenceBacked {
				want = append(want, x.Role+" "+x.Recommendation)
			}
		}
		for _, x := range d.Dissent {
			got = append(got, x.Agent+" "+x.Recommendation)
		}
		require.Equal(t, want, got, "%s: the brief's dissent is the arbiter's evidence-backed dissent", name)
		if len(want) == 0 {
			require.Contains(t, md, "No evidence-backed dissent", name)
		} else {
			require.NotContains(t, md, "No evidence-backed dissent", name)
		}
	}
	for _, x := range d.Dissent {
		require.NotEmpty(t, x.Evidence, "%s: dissent of %s names its evidence", name, x.Agent)
		for _, id := range x.UpheldChallenges {
			require.Equal(t, x.Agent, upheld[id], "%s: %s was upheld for %s", name, id, x.Agent)
		}
	}

	// Every defect an action cures is on that claim: in the registry, an
	// upheld challenge or a flagged defect; and the claim table shows it.
	registry := map[string]bool{}
	for _, cg := range g.Claims {
		for _, df := range cg.Defects {
			if df.Open() {
				registry[cg.ClaimID+"/"+string(df.Type)] = true
			}
		}
	}
	for _, f := range r.flagged {
		registry[f.ClaimID+"/"+string(f.Type)] = true
	}
	rows := map[string]idis.ClaimRow{}
	for _, row := range d.ClaimTable {
		rows[row.ClaimID] = row
	}
	for _, a := range d.Actions {
		require.NotEmpty(t, a.Source, "%s: %v", name, a)
		if a.DefectType == "" {
			continue
		}
		require.NotEmpty(t, a.ClaimIDs, "%s: %v", name, a)
		for _, id := range a.ClaimIDs {
			p := id + "/" + a.DefectType
			require.True(t, registry[p] || upheldPairs[p], "%s: action %q cites a defect the ledger does not hold on %s", name, a.Detail, id)
			if row, ok := rows[id]; ok {
				require.Contains(t, row.DefectTypes, a.DefectType, "%s: the claim table shows %s on %s", name, a.DefectType, row.Key)
			}
		}
	}
	reviews, tests := 0, 0
	for _, a := range d.Actions {
		switch a.Type {
		case "HUMAN_REVIEW":
			reviews++
		case "TEST":
			tests++
		case "QUESTION":
			var role string
			var round int
			_, err := fmt.Sscanf(a.Source, "question of the %s round %d", &role, &round)
			require.NoError(t, err, "%s: %q", name, a.Source)
			role = strings.TrimSuffix(role, ",")
			asked := false
			for _, o := range r.outs {
				asked = asked || (o.Role == role && o.RoundNumber == round && len(o.OpenQuestions) > 0)
			}
			require.True(t, asked, "%s: %s asked no question in round %d", name, role, round)
		}
	}
	require.Equal(t, r.reviews, reviews, name)
	// A test that names a defect names one the claim table shows on that
	// claim.
	byKey := map[string]idis.ClaimRow{}
	for _, row := range d.ClaimTable {
		byKey[row.Key] = row
	}
	for _, a := range d.Actions {
		for _, m := range testDefectRe.FindAllStringSubmatch(a.Detail, -1) {
			if row, ok := byKey[m[3]]; ok {
				require.Contains(t, row.DefectTypes, m[1], "%s: %q", name, a.Detail)
			}
			require.Contains(t, upheld, m[2], "%s: %q", name, a.Detail)
		}
		for _, m := range cureRe.FindAllStringSubmatch(a.Detail, -1) {
			if row, ok := byKey[m[1]]; ok {
				require.NotEmpty(t, row.DefectTypes, "%s: %q names a defect %s does not have", name, a.Detail, m[1])
			}
		}
	}
	if arb, ok := last[debate.RoleArbiter]; ok {
		require.Len(t, arb.Muhasabah.FalsifiabilityTests, tests, name)
	}
	// Every challenge id the brief names is in the transcript.
	for _, id := range challengeIDRe.FindAllString(md, -1) {
		require.Contains(t, author, id, "%s: the brief names %s", name, id)
	}
	// Upheld challenges of the claim table are upheld in the ledger.
	for _, row := range d.ClaimTable {
		for _, x := range row.Debated {
			for _, id := range challengeIDRe.FindAllString(x, -1) {
				require.Contains(t, upheld, id, "%s: %s", name, x)
			}
		}
	}

	// The stop rule is the ledger's, and the brief says what would have
	// let the debate continue.
	require.NotEmpty(t, r.stops, name)
	for _, st := range r.stops {
		why, _ := st["why"].(string)
		require.NotContains(t, why, "  at ", "%s: a stop decision names a blank position: %s", name, why)
	}
	stop := r.stops[len(r.stops)-1]
	require.Equal(t, stop["stop_reason"], d.StopReason, name)
	require.NotEmpty(t, d.StopContinue, name)
	if crit, _ := stop["relied_on_critical"].([]any); len(crit) > 0 {
		require.Equal(t, gate.StopCriticalDefect, d.StopReason, "%s: CRITICAL_DEFECT is checked first", name)
	}

	// Evidence and documents by name, never by id; terms glossed.
	ids := map[string]bool{}
	for _, e := range r.bundle.Evidence {
		ids[e.ID] = true
	}
	for _, s := range r.bundle.Spans {
		ids[s.ID] = true
	}
	for _, doc := range r.bundle.Documents {
		ids[doc.ID] = true
	}
	for i, j := range gate.IDTokens(md) {
		require.False(t, ids[md[i:j]], "%s: the brief shows the raw id %s", name, md[i:j])
	}
	for _, tok := range uuidRe.FindAllString(md, -1) {
		require.Contains(t, []string{d.DealID, d.DebateID}, tok, "%s: the brief shows the raw id %s", name, tok)
	}
	for _, term := range []string{"compared at", "AHAD_1", "MUTAWATIR", "NO_POSITION"} {
		if strings.Contains(md, term) {
			require.Contains(t, md, "- **"+term+"**:", "%s: %q is glossed", name, term)
		}
	}
}

// TestBriefTrueToLedger runs a debate over every repository deal with the
// rules backend and checks each brief against its ledger.
func TestBriefTrueToLedger(t *testing.T) {
	t.Parallel()
	b := setup(t, rules.New())
	deals := testDeals(t, true)
	for _, name := range slices.Sorted(mapKeys(deals)) {
		bundle := deals[name]
		b.importDeal(t, bundle)
		_, evs := b.debate(t, bundle.Deal.ID, `{}`)
		checkBrief(t, name, record(t, bundle, evs))
	}
}

// TestExampleBriefs regenerates docs/examples/<deal>.md from the debates
// of the repository's own deals and fails on a difference (go test -run
// TestExampleBriefs -update rewrites them).
func TestExampleBriefs(t *testing.T) {
	t.Parallel()
	b := setup(t, rules.New())
	deals := testDeals(t, false)
	dir := filepath.Join("..", "..", "..", "docs", "examples")
	for _, name := range slices.Sorted(mapKeys(deals)) {
		bundle := deals[name]
		b.importDeal(t, bundle)
		_, evs := b.debate(t, bundle.Deal.ID, `{}`)
		r := record(t, bundle, evs)
		r.del.DebateID = "example"
		md := []byte(r.del.Markdown())
		path := filepath.Join(dir, name+".md")
		if *update {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, md, 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./internal/protocols/idis -run TestExampleBriefs -update")
		require.Equal(t, string(want), string(md), "%s is stale: rerun with -update", path)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// noTools answers every tool call the rules backend makes inside the
// model server: the model's output carries no tool calls.
type noTools struct{}

func (noTools) Call(context.Context, debate.ToolCall) (debate.ToolResult, error) {
	return debate.ToolResult{Status: "SUCCESS", Output: json.RawMessage(`{}`)}, nil
}

// transcriptTurn is a turn of the DATA block's transcript.
type transcriptTurn struct {
	Role          string             `json:"role"`
	Round         int                `json:"round"`
	Content       string             `json:"content"`
	ClaimRefs     []string           `json:"claim_refs"`
	CalcRefs      []string           `json:"calc_refs"`
	Confidence    float64            `json:"confidence"`
	Position      *debate.Position   `json:"position"`
	Challenges    []debate.Challenge `json:"challenges"`
	Rulings       []debate.Ruling    `json:"rulings"`
	OpenQuestions []string           `json:"open_questions"`
}

// reasoningServer is a model behind the OpenAI-compatible test server that
// reasons like the rules backend over what the prompt gives it: the task's
// role and round and the DATA block's transcript.
func reasoningServer(t *testing.T, deals map[string]*debate.DealBundle) *openaitest.Server {
	t.Helper()
	task := regexp.MustCompile(`Task: play (\w+) in round (\d+)`)
	set := rules.New()
	return openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		m := task.FindStringSubmatch(r.Task)
		var data struct {
			DealID     string           `json:"deal_id"`
			Transcript []transcriptTurn `json:"transcript"`
		}
		if m == nil || r.SchemaName == "" || json.Unmarshal(r.Data, &data) != nil {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: "bad request"}
		}
		b := deals[data.DealID]
		role, ok := set[m[1]]
		if b == nil || !ok {
			return openaitest.Answer{Status: http.StatusBadRequest, Content: "unknown deal or role"}
		}
		round, _ := strconv.Atoi(m[2])
		var tr []debate.AgentOutput
		for _, x := range data.Transcript {
			tr = append(tr, debate.AgentOutput{AgentID: x.Role, Role: x.Role, RoundNumber: x.Round, Content: x.Content, ClaimRefs: x.ClaimRefs,
				CalcRefs: x.CalcRefs, Position: x.Position, Challenges: x.Challenges, Rulings: x.Rulings, OpenQuestions: x.OpenQuestions,
				Muhasabah: debate.Muhasabah{Confidence: x.Confidence}})
		}
		out, err := role.Turn(context.Background(), &roles.Input{Round: round, MaxRounds: 5, Deal: b, Grading: sanad.Grade(b), Transcript: tr, Tools: noTools{}})
		if err != nil {
			return openaitest.Answer{Status: http.StatusInternalServerError, Content: err.Error()}
		}
		out.ToolCalls = nil
		content, _ := json.Marshal(out)
		return openaitest.Answer{Content: string(content)}
	})
}

// TestBriefTrueToLedgerModelBackend: the same invariants hold when the
// roles are argued by a model behind the in-process OpenAI-compatible
// server.
func TestBriefTrueToLedgerModelBackend(t *testing.T) {
	t.Parallel()
	deals := testDeals(t, false)
	byID := map[string]*debate.DealBundle{}
	for _, b := range deals {
		byID[b.Deal.ID] = b
	}
	srv := reasoningServer(t, byID)
	set, err := model.New(llm.Config{BaseURL: srv.URL, Model: "test-reasoner", MaxRepairs: -1})
	require.NoError(t, err)
	b := setup(t, set)
	for _, name := range slices.Sorted(mapKeys(deals)) {
		bundle := deals[name]
		b.importDeal(t, bundle)
		_, evs := b.debate(t, bundle.Deal.ID, `{}`)
		r := record(t, bundle, evs)
		require.Zero(t, count(evs, idis.EventMuhasabahRejected), name)
		checkBrief(t, name+" (model)", r)
	}
	require.Positive(t, srv.Calls())
}

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// browser starts a headless Chromium (Debian's chromium, installed by
// .ci/run) for the test. It skips when none is installed, and fails in CI.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium installed: .ci/run installs it with apt-get")
		}
		t.Skip("no chromium installed (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox, // CI runs as root
		chromedp.WindowSize(1280, 900),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(cancel3)
	// The page's console and exceptions go to the test log.
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			for _, a := range ev.Args {
				t.Logf("console.%s: %s", ev.Type, a.Value)
			}
		case *runtime.EventExceptionThrown:
			t.Logf("page exception: %s", ev.ExceptionDetails.Error())
		}
	})
	require.NoError(t, chromedp.Run(ctx))
	return ctx
}

// screenshots is where the test writes its pictures: DEBATED_SCREENSHOTS
// to keep them, else a temporary folder removed after the test.
func screenshots(t *testing.T) string {
	if dir := os.Getenv("DEBATED_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o750))
		return dir
	}
	return t.TempDir()
}

func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	var buf []byte
	require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&buf, 100)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o600))
}

// TestDashboardInChromium drives the dashboard in a real browser: sign in,
// a deal's truth dashboard, an IDIS debate started from the page and
// watched as its events stream in, a human gate of a synthetic.v1 debate
// resolved in the page, the deliverables, the seal green; then a ledger row
// tampered in the database turns the seal red, naming the first bad seq.
func TestDashboardInChromium(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	dir := screenshots(t)
	s := startStack(t, "postgres", nil)
	base := s.http(t, s.a).base
	key := s.http(t, s.a).key

	text := func(sel string) string {
		var out string
		require.NoError(t, chromedp.Run(ctx, chromedp.Text(sel, &out, chromedp.ByQuery)))
		return out
	}

	wait := func(actions ...chromedp.Action) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Run(sctx, actions...); err != nil {
			var page string
			_ = chromedp.Run(ctx, chromedp.Text("body", &page, chromedp.ByQuery))
			shot(t, ctx, dir, "failed")
			t.Fatalf("%v; the page says:\n%s", err, page)
		}
	}
	// Sign in: the key goes to session storage, never into the URL.
	wait(
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible("#key", chromedp.ByQuery),
	)
	shot(t, ctx, dir, "01-signin")
	var url, stored string
	wait(
		chromedp.SendKeys("#key", key, chromedp.ByQuery),
		chromedp.Click(`form.signin button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`a[href="#/deals/deal-a"]`, chromedp.ByQuery),
		chromedp.Location(&url),
		chromedp.Evaluate(`sessionStorage.getItem("debated.apiKey")`, &stored),
	)
	require.Equal(t, key, stored)
	require.NotContains(t, url, key)
	require.NotContains(t, text("#view"), "deal-b", "tenant B's deal must not show")

	// The truth dashboard: grade the deal from the page.
	wait(
		chromedp.Click(`a[href="#/deals/deal-a"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//button[text()="Grade now"]`),
		chromedp.Click(`//button[text()="Grade now"]`),
		chromedp.WaitVisible(`#sanad svg`, chromedp.ByQuery),
	)
	truth := text("#view")
	require.Contains(t, truth, "Truth dashboard")
	require.Regexp(t, `VERIFIED|CONTRADICTED|UNVERIFIED|INFLATED`, truth)
	require.Contains(t, truth, "Audit events")
	require.Contains(t, truth, "claim.grade.changed")
	require.Contains(t, truth, "$12,500,000", "figures are shown exactly, from their decimal strings")
	require.Contains(t, truth, "$650,000/month")
	require.NotContains(t, truth, "e+0")
	require.Contains(t, text("#sanad"), "primary:", "the sanad graph starts at the primary evidence")
	shot(t, ctx, dir, "02-truth-dashboard")

	// Start an IDIS debate from the protocols the server lists, and watch it.
	wait(
		chromedp.Navigate(base+"/#/debates"),
		chromedp.WaitVisible("#protocol", chromedp.ByQuery),
		chromedp.SetValue("#protocol", "idis.vc.v1", chromedp.ByQuery),
		chromedp.SetValue("#options", `{"max_rounds": 2}`, chromedp.ByQuery),
		chromedp.Click(`form.start button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.ev`, chromedp.ByQuery),
		chromedp.WaitVisible(`.dseal.ok`, chromedp.ByQuery),
		chromedp.WaitVisible(`#deliverables .brief`, chromedp.ByQuery),
	)
	require.NoError(t, chromedp.Run(ctx, chromedp.Location(&url)))
	idisID := url[strings.LastIndex(url, "/")+1:]
	require.Contains(t, text(".dseal"), "Ledger verified in this page")
	require.Contains(t, text(".dseal"), "the keys the deployment publishes for this tenant", "verified against the published keys, not the bundle's own")
	require.Contains(t, text(".dseal"), "In the tenant's transparency log", "the page checks the debate's inclusion in the signed checkpoint")
	// The list is virtualised: scroll through it to find a turn's card.
	var card string
	var cards, total int
	wait(
		chromedp.Evaluate(findCard, &card, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
		chromedp.Evaluate(`document.querySelectorAll(".vlist .ev").length`, &cards),
		chromedp.Evaluate(`document.querySelector(".vlist .spacer").offsetHeight / 104`, &total),
	)
	require.Contains(t, card, "agent.output")
	require.Contains(t, card, "confidence")
	require.Contains(t, card, "cites")
	require.Contains(t, card, "tool calls")
	require.Greater(t, total, cards, "only the rows in view are in the page")
	// Open that card's detail; the viewport is the picture in docs/.
	var detail string
	var view []byte
	wait(
		chromedp.Evaluate(`[...document.querySelectorAll(".vlist .ev")].find((e) => e.textContent.includes("agent.output")).click()`, nil),
		chromedp.Text(".detail", &detail, chromedp.ByQuery),
		chromedp.CaptureScreenshot(&view),
	)
	require.Contains(t, detail, "claim_refs")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dashboard.png"), view, 0o600))
	var okSeals, badSeals int
	wait(
		chromedp.Evaluate(`document.querySelectorAll(".ev .seal.ok").length`, &okSeals),
		chromedp.Evaluate(`document.querySelectorAll(".ev .seal.bad").length`, &badSeals),
	)
	require.Positive(t, okSeals)
	require.Zero(t, badSeals)
	require.Contains(t, text("#view"), "idis.vc.v1 · 2 rounds · deal", "an ended debate's header gives the rounds it completed, as its brief does")
	brief := text("#deliverables")
	require.Contains(t, brief, "Download Markdown")
	require.Contains(t, brief, "Download ledger bundle")
	shot(t, ctx, dir, "03-idis-live-and-deliverables")

	// A cited claim links to its row of the truth dashboard.
	var claimURL string
	wait(
		chromedp.Evaluate(`document.querySelector(".vlist .ev.sel .claims a").click()`, nil),
		chromedp.WaitVisible(`tr.sel`, chromedp.ByQuery),
		chromedp.Location(&claimURL),
	)
	require.Contains(t, claimURL, "?claim=")
	var selID string
	wait(chromedp.AttributeValue(`tr.sel`, "id", &selID, nil, chromedp.ByQuery))
	require.Equal(t, "claim-"+claimURL[strings.Index(claimURL, "?claim=")+len("?claim="):], selID)

	// The first view of a fresh load, for docs/benchmarks.md (not asserted).
	var firstView float64
	wait(
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(base+"/#/deals"),
		chromedp.WaitVisible(`a[href="#/deals/deal-a"]`, chromedp.ByQuery),
		chromedp.Evaluate(`performance.now()`, &firstView),
	)
	t.Logf("first view (deals list) %.0f ms after navigation", firstView)

	// A synthetic.v1 debate stops at a human gate; approve it in the page.
	wait(
		chromedp.Navigate(base+"/#/debates"),
		chromedp.WaitVisible("#protocol", chromedp.ByQuery),
		chromedp.SetValue("#protocol", "synthetic.v1", chromedp.ByQuery),
		chromedp.SetValue("#options", `{"max_rounds": 2, "gate_round": 1}`, chromedp.ByQuery),
		chromedp.Click(`form.start button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//button[text()="Approve"]`),
	)
	require.Contains(t, text("#view"), "awaiting review")
	var deliverablesShown bool
	wait(
		chromedp.WaitVisible(`//div[contains(@class,"card")]/p[contains(., "synthetic.v1 · 1 round · deal")]`),
		chromedp.Evaluate(`!document.querySelector("#deliverables").hidden`, &deliverablesShown),
	)
	require.False(t, deliverablesShown, "a debate that has not ended has no deliverables card")
	require.Regexp(t, `Checking each event as it arrives: \d+ of \d+ verified`, text(".dseal"), "the seal says what is checked while the debate runs")
	shot(t, ctx, dir, "04-human-gate")
	wait(
		chromedp.Click(`//button[text()="Approve"]`),
		chromedp.WaitVisible(`.dseal.ok`, chromedp.ByQuery),
	)
	require.Contains(t, text("#view"), "approved")
	require.Contains(t, text("#view"), "completed")

	// The list of debates gives the rounds each completed, as the header
	// does: 2 for the IDIS debate of 2 rounds, whose finaliser ran in a 3rd.
	var idisRow string
	wait(
		chromedp.Navigate(base+"/#/debates"),
		chromedp.WaitVisible(`a[href="#/debates/`+idisID+`"]`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelector("a[href='#/debates/`+idisID+`']").closest("tr").cells].map((c) => c.textContent.trim()).join("|")`, &idisRow),
	)
	require.Contains(t, text("thead"), "Rounds")
	require.Regexp(t, `^[0-9a-f]+\|idis\.vc\.v1\|completed\|2\|MAX_ROUNDS\|`, idisRow)

	// The narrow layout.
	wait(
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(base+"/#/debates/"+idisID),
		chromedp.WaitVisible(`.dseal.ok`, chromedp.ByQuery),
	)
	shot(t, ctx, dir, "05-mobile-debate")
	require.NoError(t, chromedp.Run(ctx, chromedp.EmulateViewport(1280, 900)))

	// Tamper with one stored event as the database superuser, behind the
	// service's back: the page must show the seal red at that seq.
	db, err := pgx.Connect(context.Background(), s.dbURL)
	require.NoError(t, err)
	defer func() { _ = db.Close(context.Background()) }()
	tx, err := db.Begin(context.Background())
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), `SET LOCAL session_replication_role = replica`)
	require.NoError(t, err)
	tag, err := tx.Exec(context.Background(), `UPDATE debate_events SET payload = jsonb_set(payload::jsonb, '{tampered}', 'true')::json WHERE debate_id = $1 AND seq = 5`, idisID)
	require.NoError(t, err)
	require.Equal(t, int64(1), tag.RowsAffected())
	require.NoError(t, tx.Commit(context.Background()))
	wait(
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(base+"/#/debates/"+idisID),
		chromedp.WaitVisible(`.dseal.bad`, chromedp.ByQuery),
		chromedp.WaitVisible(`#ev-5.tampered`, chromedp.ByQuery),
	)
	require.Contains(t, text(".dseal"), "failed at seq 5")
	require.Contains(t, text(".ev.tampered"), "#5")
	shot(t, ctx, dir, "06-tampered")
}

// findCard scrolls the live list from the top until a card of a turn
// (agent.output) is rendered and returns its text.
const findCard = `(async () => {
  const l = document.querySelector(".vlist");
  for (let y = 0; y <= l.scrollHeight; y += l.clientHeight / 2) {
    l.scrollTop = y;
    l.dispatchEvent(new Event("scroll"));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    for (const e of l.querySelectorAll(".ev")) if (e.textContent.includes("agent.output")) return e.textContent;
  }
  return "";
})()`

// TestDashboardLongDebate opens a debate of more than a thousand events:
// the page verifies all of them, keeps only the rows in view in the
// document, and reaches the last one from the keyboard.
func TestDashboardLongDebate(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	dir := screenshots(t)
	s := startStack(t, "sqlite", nil)
	d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 50})
	msgs := s.watch(t, s.a, d.GetDebateId(), 0, nil)
	last := msgs[len(msgs)-1].GetEvent().GetSeq()
	if last == 0 {
		last = msgs[len(msgs)-2].GetEvent().GetSeq()
	}
	require.Greater(t, last, int64(1000))
	c := s.http(t, s.a)
	var seal string
	var cards int
	var sealed float64
	sctx, cancel := context.WithTimeout(ctx, 4*time.Minute) // generous: CI runs it beside every other test on 2 cores
	defer cancel()
	err := chromedp.Run(sctx,
		chromedp.Navigate(c.base+"/"),
		chromedp.WaitVisible("#key", chromedp.ByQuery),
		chromedp.Evaluate(`sessionStorage.setItem("debated.apiKey", `+"`"+c.key+"`"+`)`, nil),
		chromedp.Navigate(c.base+"/#/debates/"+d.GetDebateId()),
		chromedp.WaitVisible(`.dseal.ok`, chromedp.ByQuery),
		chromedp.Evaluate(`performance.now()`, &sealed),
		chromedp.Text(".dseal", &seal, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll(".vlist .ev").length`, &cards),
		chromedp.Focus(".vlist", chromedp.ByQuery),
		chromedp.KeyEvent(kb.Home),
		chromedp.WaitVisible(`#ev-1[aria-selected="true"]`, chromedp.ByQuery),
		chromedp.KeyEvent(kb.End),
		chromedp.WaitVisible(fmt.Sprintf(`#ev-%d[aria-selected="true"]`, last), chromedp.ByQuery),
	)
	if err != nil {
		shot(t, ctx, dir, "failed-long")
		t.Fatal(err)
	}
	require.Contains(t, seal, fmt.Sprintf("%d events", last))
	require.Less(t, cards, 40, "a virtualised list keeps only the rows in view")
	t.Logf("%d events streamed and verified %.0f ms after navigation", last, sealed)
	shot(t, ctx, dir, "07-long-debate")
}

// TestDashboardResumesAfterRestart watches a debate waiting at a human gate,
// restarts the service under the page, resolves the gate on the new
// process, and checks that the page resumed from its last seq: every event
// once, none lost, the seal green.
func TestDashboardResumesAfterRestart(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	dir := screenshots(t)
	addr, data := freeAddr(t), t.TempDir()
	args := []string{"serve", "--listen", addr, "--data-dir", data}
	env := map[string]string{"DEBATED_ADMIN_TOKEN": "e2e-admin", "DEBATED_LOG_LEVEL": "warn", "DEBATED_SHUTDOWN_TIMEOUT": "5s"}
	conn, stop, _ := start(t, args, env)
	s := &stack{conn: conn, debate: debatedv1.NewDebateServiceClient(conn)}
	actx := s.login(t, "a")
	d := s.create(t, actx, "deal-a", map[string]any{"max_rounds": 3, "gate_round": 1})
	c := s.http(t, actx)

	run := func(actions ...chromedp.Action) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Run(sctx, actions...); err != nil {
			shot(t, ctx, dir, "failed-resume")
			t.Fatal(err)
		}
	}
	var before int
	run(
		chromedp.Navigate(c.base+"/"),
		chromedp.WaitVisible("#key", chromedp.ByQuery),
		chromedp.Evaluate(`sessionStorage.setItem("debated.apiKey", `+"`"+c.key+"`"+`)`, nil),
		chromedp.Navigate(c.base+"/#/debates/"+d.GetDebateId()),
		chromedp.WaitVisible(`//button[text()="Approve"]`),
		chromedp.WaitVisible(`//span[text()="● live"]`),
		chromedp.Evaluate(`document.querySelector(".vlist .spacer").offsetHeight / 104`, &before),
	)
	require.Positive(t, before)

	// The service goes away under the page, and comes back.
	require.NoError(t, stop())
	run(chromedp.WaitVisible(`//span[text()="reconnecting…"]`))
	conn2, _, _ := start(t, args, env)
	s2 := &stack{conn: conn2, debate: debatedv1.NewDebateServiceClient(conn2)}
	got, err := s2.debate.GetDebate(actx, &debatedv1.GetDebateRequest{DebateId: d.GetDebateId()})
	require.NoError(t, err)
	require.Len(t, got.GetGates(), 1)
	_, err = s2.debate.ResolveHumanGate(actx, &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(), GateId: got.GetGates()[0].GetGateId(), Approve: true, Reason: "approved during the restart test"})
	require.NoError(t, err)
	msgs := s2.watch(t, actx, d.GetDebateId(), 0, nil)
	var last int64
	for _, m := range msgs {
		last = max(last, m.GetEvent().GetSeq())
	}
	require.Greater(t, last, int64(before))

	var rows int
	var seqs []int
	run(
		chromedp.WaitVisible(`.dseal.ok`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector(".vlist .spacer").offsetHeight / 104`, &rows),
		chromedp.Evaluate(`[...document.querySelectorAll(".vlist .ev")].map((e) => Number(e.id.slice(3)))`, &seqs),
	)
	require.Equal(t, int(last), rows, "every event exactly once")
	require.Contains(t, seqs, int(last))
	shot(t, ctx, dir, "08-resumed-after-restart")
}

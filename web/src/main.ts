// The debated dashboard: deals and their truth dashboard, debates watched
// live, human gates, deliverables, and the ledger verified in the page.
import { Code, ConnectError } from "@connectrpc/connect";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { h, s, download, append } from "./dom";
import { apiKey, signIn, signOut, registry, debates } from "./api";
import { Grade, Verdict, Action, DefectType, DefectSeverity, CorroborationStatus, type ClaimGrading } from "./gen/debated/v1/grading_pb";
import { DebateStatus, type LedgerEvent, type Debate } from "./gen/debated/v1/debate_pb";
import { ChainNodeType, SourceGrade, type Sanad, type EvidenceItem, type ClaimValue } from "./gen/debated/v1/registry_pb";
import { verifyBundle, verifyEvent, verifyInclusion, trustedKeys, forgetPublishedKeys, type Bundle, type BundleEvent, type Seal, type TrustedKeys } from "./verify";

const view = document.getElementById("view") as HTMLElement;
const nav = document.getElementById("nav") as HTMLElement;
let stopCurrent: (() => void) | undefined;

function errorText(err: unknown): string {
  if (err instanceof ConnectError) return `${Code[err.code]}: ${err.rawMessage}`;
  return String(err);
}

function show(...children: (Node | string | null)[]): void {
  view.replaceChildren();
  append(view, children);
  const first = view.querySelector("h1");
  if (first) document.title = first.textContent + " · debated";
}

function fail(err: unknown): void {
  if (err instanceof ConnectError && err.code === Code.Unauthenticated) {
    signOut();
    location.hash = "#/signin";
    return;
  }
  show(h("h1", {}, "Error"), h("p", { class: "bad", role: "alert" }, errorText(err)));
}

const terminal = new Set([DebateStatus.COMPLETED, DebateStatus.FAILED, DebateStatus.ABORTED, DebateStatus.NEEDS_REVIEW]);
const statusName = (s: DebateStatus) => DebateStatus[s].toLowerCase().replace(/_/g, " ");
const when = (t?: Timestamp) => (t ? timestampDate(t).toISOString().replace("T", " ").slice(0, 19) : "");
const short = (id: string) => id.slice(0, 8);

// ---------- sign-in ----------
function signInView(): void {
  nav.hidden = true;
  const input = h("input", { id: "key", type: "password", autocomplete: "off", required: true, placeholder: "dbk_…", "aria-describedby": "key-help" });
  const msg = h("p", { class: "bad", role: "alert" });
  const form = h(
    "form",
    {
      class: "card signin",
      onsubmit: async (ev: Event) => {
        ev.preventDefault();
        signIn(input.value.trim());
        try {
          await registry.listDeals({ pageSize: 1 });
          location.hash = "#/deals";
        } catch (err) {
          signOut();
          msg.textContent = errorText(err);
        }
      },
    },
    h("h1", {}, "Sign in"),
    h("label", { for: "key" }, "Tenant API key"),
    input,
    h("p", { id: "key-help", class: "muted" }, "Made with debatectl key create. Kept in this tab's session storage only."),
    h("button", { type: "submit" }, "Sign in"),
    msg,
  );
  show(form);
  input.focus();
}

// ---------- deals ----------
async function dealsView(): Promise<void> {
  const res = await registry.listDeals({ pageSize: 1000 });
  show(
    h("h1", {}, "Deals"),
    h(
      "table",
      {},
      h("caption", { class: "sr" }, "Deals of this tenant"),
      h("thead", {}, h("tr", {}, ...["Company", "Stage", "Sector", "Claims", "Imported"].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        {},
        ...res.deals.map((d) =>
          h(
            "tr",
            {},
            h("td", {}, h("a", { href: `#/deals/${d.deal?.dealId}` }, d.deal?.companyName || d.deal?.dealId || "")),
            h("td", {}, d.deal?.stage ?? ""),
            h("td", {}, d.deal?.sector ?? ""),
            h("td", {}, d.claimCount),
            h("td", {}, when(d.importTime)),
          ),
        ),
      ),
    ),
    res.deals.length === 0 ? h("p", { class: "muted" }, "No deals yet: debatectl import-deal DIR") : null,
  );
}

const gradeClass = (g: Grade) => "grade grade-" + Grade[g];

// storedGrading reads the deal's last stored grading a page at a time
// (GetDealGrading): its summary and every claim's row.
async function storedGrading(dealId: string) {
  let page = await registry.getDealGrading({ dealId, pageSize: 1000 });
  const s = page.summary;
  const claims = [...page.claims];
  while (page.nextPageToken) {
    page = await registry.getDealGrading({ dealId, pageSize: 1000, pageToken: page.nextPageToken });
    claims.push(...page.claims);
  }
  return { gradeTime: s?.gradeTime, gradeDCount: s?.gradeDCount ?? 0, sanadCoverage: s?.sanadCoverage ?? 0, claims };
}

// exportBundleJson reads a debate's ledger bundle, which ExportDebate
// streams in chunks.
async function exportBundleJson(debateId: string): Promise<string> {
  const parts: Uint8Array[] = [];
  let n = 0;
  for await (const m of debates.exportDebate({ debateId })) {
    parts.push(m.chunk);
    n += m.chunk.length;
  }
  const all = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    all.set(p, off);
    off += p.length;
  }
  return new TextDecoder().decode(all);
}

async function dealView(dealId: string, focusClaim?: string): Promise<void> {
  const [deal, claims, events, sanads] = await Promise.all([
    registry.getDeal({ dealId }),
    registry.listClaims({ dealId, pageSize: 1000 }),
    registry.listDealEvents({ dealId, pageSize: 200 }),
    registry.listSanads({ dealId }),
  ]);
  const evidence = new Map(sanads.evidenceItems.map((e) => [e.evidenceId, e]));
  let grading;
  try {
    grading = await storedGrading(dealId);
  } catch (err) {
    // Never graded (FAILED_PRECONDITION): the page offers to grade it.
    if (!(err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.FailedPrecondition))) throw err;
  }
  const text = new Map(claims.claims.map((c) => [c.claimId, c]));
  const graph = h("div", { class: "card", id: "sanad" });
  const pick = (c: ClaimGrading) => {
    graph.replaceChildren(h("h2", {}, `Sanad graph of ${c.claimKey}`), ...sanadGraph(c, text.get(c.claimId)?.claimText ?? "", sanads.sanads.filter((x) => x.claimId === c.claimId), evidence));
    view.querySelectorAll("tr.sel").forEach((r) => r.classList.remove("sel"));
    document.getElementById("claim-" + c.claimId)?.classList.add("sel");
  };
  const regrade = h(
    "button",
    {
      onclick: async () => {
        await registry.gradeDeal({ dealId });
        route();
      },
    },
    grading ? "Grade again" : "Grade now",
  );
  show(
    h("h1", {}, deal.deal?.deal?.companyName || dealId),
    h("p", { class: "muted" }, `${deal.deal?.deal?.stage ?? ""} · ${deal.deal?.deal?.sector ?? ""} · ${deal.deal?.claimCount} claims · deal ${dealId}`),
    h(
      "section",
      { class: "card", "aria-labelledby": "truth-h" },
      h("h2", { id: "truth-h" }, "Truth dashboard"),
      grading
        ? h("p", { class: "muted" }, `Graded ${when(grading.gradeTime)} · ${grading.gradeDCount} grade D · sanad coverage ${(grading.sanadCoverage * 100).toFixed(1)}% `, regrade)
        : h("p", {}, "Not graded yet. ", regrade),
      grading
        ? h(
            "div",
            { class: "scroll" },
            h(
              "table",
              {},
              h("thead", {}, h("tr", {}, ...["Claim", "Metric", "Value", "Grade", "Verdict", "Action", "Defects", "Corroboration"].map((c) => h("th", { scope: "col" }, c)))),
              h(
                "tbody",
                {},
                ...grading.claims.map((c) =>
                  h(
                    "tr",
                    { id: "claim-" + c.claimId, class: c.blocked ? "blocked" : "" },
                    h("td", {}, h("button", { class: "link", onclick: () => pick(c), "aria-label": `Show the sanad graph of ${c.claimKey}` }, c.claimKey)),
                    h("td", {}, c.metric),
                    h("td", { class: "num" }, quantity(text.get(c.claimId)?.value)),
                    h("td", {}, h("span", { class: gradeClass(c.grade) }, Grade[c.grade])),
                    h("td", {}, Verdict[c.verdict]),
                    h("td", {}, Action[c.action]),
                    h("td", {}, c.defects.length ? c.defects.map((d) => `${DefectType[d.defectType]} (${DefectSeverity[d.severity]})`).join(", ") : "—"),
                    h("td", {}, `${CorroborationStatus[c.corroborationStatus]} · ${c.independentCount} independent`),
                  ),
                ),
              ),
            ),
          )
        : null,
    ),
    graph,
    h(
      "section",
      { class: "card", "aria-labelledby": "audit-h" },
      h("h2", { id: "audit-h" }, "Audit events"),
      h(
        "ol",
        { class: "events" },
        ...events.events.map((e) => h("li", {}, h("code", {}, `#${e.seq}`), ` ${e.eventType} `, h("span", { class: "muted" }, `${e.actor} · ${when(e.createTime)}`))),
      ),
      events.events.length === 0 ? h("p", { class: "muted" }, "No events yet.") : null,
    ),
  );
  if (grading && grading.claims.length) {
    const c = grading.claims.find((x) => x.claimId === focusClaim) ?? grading.claims[0];
    pick(c);
    if (focusClaim) document.getElementById("claim-" + focusClaim)?.scrollIntoView({ block: "center" });
  }
}

// sanadGraph draws a claim's sanads: the evidence items at the source
// (primary and corroborating, with their systems and grades), the chain of
// transmitters each sanad records, and the claim with its grade, verdict,
// corroboration and defects. The grading's steps are listed beneath.
function sanadGraph(c: ClaimGrading, claimText: string, sanads: Sanad[], evidence: Map<string, EvidenceItem>): Node[] {
  const wrap = (t: string, n: number) => (t.length > n ? t.slice(0, n - 1) + "…" : t);
  const boxW = 170, boxH = 44, gapX = 40, gapY = 14;
  const box = (x: number, y: number, cls: string, title: string, line: string, tip: string) => {
    const g = s("g", { class: "node " + cls });
    g.appendChild(s("rect", { x, y, width: boxW, height: boxH, rx: 6 }));
    g.appendChild(s("text", { x: x + 8, y: y + 17, class: "b" }, wrap(title, 24)));
    g.appendChild(s("text", { x: x + 8, y: y + 34 }, wrap(line, 26)));
    g.appendChild(s("title", {}, tip));
    return g;
  };
  const edge = (x1: number, y1: number, x2: number, y2: number) => s("line", { x1, y1, x2, y2, class: "edge" });
  const rows = sanads.length ? sanads : [undefined];
  const evCount = (sn?: Sanad) => (sn ? (sn.primaryEvidenceId ? 1 : 0) + sn.corroboratingEvidenceIds.length : 0);
  const rowH = (sn?: Sanad) => Math.max(evCount(sn), 1) * (boxH + gapY) + 10;
  const maxChain = Math.max(0, ...sanads.map((sn) => sn.transmissionChain.length));
  const claimX = boxW + gapX + maxChain * (boxW + gapX);
  const W = claimX + 2 * (boxW + gapX);
  const H = Math.max(rows.reduce((n, sn) => n + rowH(sn), 0), (c.defects.length + 2) * (boxH + gapY)) + 20;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Sanad graph of claim ${c.claimKey}: ${sanads.length} sanad(s), ${maxChain} transmitter(s), grade ${Grade[c.grade]}` });
  const claimY = H / 2 - boxH / 2;
  let y0 = 10;
  for (const sn of rows) {
    const ids = sn ? [sn.primaryEvidenceId, ...sn.corroboratingEvidenceIds].filter(Boolean) : [];
    const midY = y0 + (Math.max(ids.length, 1) * (boxH + gapY)) / 2 - gapY / 2;
    // Transmitters, in chain order, left to right into the claim.
    const chain = sn?.transmissionChain ?? [];
    let prevX = -1;
    chain.forEach((n, i) => {
      const x = boxW + gapX + i * (boxW + gapX);
      if (i > 0) svg.appendChild(edge(prevX + boxW, midY, x, midY));
      svg.appendChild(box(x, midY - boxH / 2, "step", ChainNodeType[n.nodeType] ?? "node", n.nodeId, `${n.nodeId}: ${ChainNodeType[n.nodeType]} ← ${n.inputRefs.join(", ")} → ${n.outputRef}`));
      prevX = x;
    });
    const entryX = chain.length ? boxW + gapX : claimX;
    if (chain.length) svg.appendChild(edge(prevX + boxW, midY, claimX, claimY + boxH / 2));
    ids.forEach((id, i) => {
      const y = y0 + i * (boxH + gapY);
      const ev = evidence.get(id);
      svg.appendChild(edge(boxW + 10, y + boxH / 2, entryX, chain.length ? midY : claimY + boxH / 2));
      svg.appendChild(box(10, y, i === 0 ? "source" : "corr", `${i === 0 ? "primary" : "corroborating"}: ${ev?.sourceSystem ?? "?"}`, `${ev ? SourceGrade[ev.sourceGrade] : "unknown"} · ${short(id)}`, `${id} (${ev?.sourceSystem ?? "not in the registry"}), origin ${ev?.upstreamOriginId ?? "?"}`));
    });
    y0 += rowH(sn);
  }
  svg.appendChild(box(claimX, claimY, "claim " + gradeClass(c.grade), `${c.claimKey} · grade ${Grade[c.grade]}`, `${Verdict[c.verdict]} · ${c.independentCount} independent`, claimText));
  const side = [`${CorroborationStatus[c.corroborationStatus]}`, ...c.defects.map((d) => `${DefectType[d.defectType]} ${DefectSeverity[d.severity]}`)];
  side.forEach((t, i) => {
    const y = 10 + i * (boxH + gapY);
    svg.appendChild(edge(claimX + boxW, claimY + boxH / 2, claimX + boxW + gapX, y + boxH / 2));
    svg.appendChild(box(claimX + boxW + gapX, y, i === 0 ? "corr" : "defect", i === 0 ? "corroboration" : "defect", t, t));
  });
  return [
    h("div", { class: "scroll" }, svg),
    h("details", {}, h("summary", {}, "How the grade was reached"), h("ol", {}, ...c.explanation.map((st) => h("li", {}, h("b", {}, st.rule), ": ", st.text)))),
  ];
}

// ---------- debates ----------
async function debatesView(): Promise<void> {
  const [list, protos, deals] = await Promise.all([debates.listDebates({ pageSize: 200 }), debates.listProtocols({}), registry.listDeals({ pageSize: 1000 })]);
  const protocol = h("select", { id: "protocol", required: true }, ...protos.protocols.map((p) => h("option", { value: p.name, title: p.description }, p.name)));
  const deal = h("select", { id: "deal", required: true }, ...deals.deals.map((d) => h("option", { value: d.deal?.dealId ?? "" }, d.deal?.companyName || d.deal?.dealId || "")));
  const options = h("textarea", { id: "options", rows: 3, spellcheck: false });
  options.value = '{"max_rounds": 2}';
  const describe = h("p", { class: "muted", id: "proto-desc" });
  const setDesc = () => {
    const p = protos.protocols.find((x) => x.name === protocol.value);
    describe.textContent = p ? `${p.description} Roles: ${p.roles.join(", ")}.` : "";
  };
  protocol.addEventListener("change", setDesc);
  if (protos.protocols.some((p) => p.name === "idis.vc.v1")) protocol.value = "idis.vc.v1";
  setDesc();
  const msg = h("p", { class: "bad", role: "alert" });
  const form = h(
    "form",
    {
      class: "card start",
      onsubmit: async (ev: Event) => {
        ev.preventDefault();
        try {
          const opts = JSON.parse(options.value || "{}");
          const res = await debates.createDebate({ dealId: deal.value, protocol: protocol.value, options: opts });
          location.hash = `#/debates/${res.debate?.debateId}`;
        } catch (err) {
          msg.textContent = err instanceof SyntaxError ? "Options must be a JSON object: " + err.message : errorText(err);
        }
      },
    },
    h("h2", {}, "Start a debate"),
    h("label", { for: "protocol" }, "Protocol"),
    protocol,
    describe,
    h("label", { for: "deal" }, "Deal"),
    deal,
    h("label", { for: "options" }, "Options (JSON)"),
    options,
    h("button", { type: "submit" }, "Start"),
    msg,
  );
  show(
    h("h1", {}, "Debates"),
    form,
    h(
      "div",
      { class: "scroll card" },
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, ...["Debate", "Protocol", "Status", "Rounds", "Stop reason", "Updated"].map((c) => h("th", { scope: "col" }, c)))),
        h(
          "tbody",
          {},
          ...list.debates.map((d) =>
            h(
              "tr",
              {},
              h("td", {}, h("a", { href: `#/debates/${d.debateId}` }, short(d.debateId))),
              h("td", {}, d.protocol),
              h("td", {}, h("span", { class: "status s-" + DebateStatus[d.status] }, statusName(d.status))),
              h("td", {}, d.roundsCompleted),
              h("td", {}, d.stopReason),
              h("td", {}, when(d.updateTime)),
            ),
          ),
        ),
      ),
    ),
  );
}

// toBundleEvent is a streamed event in the bundle's (hashed) form. The
// time is written as Go's RFC3339Nano: trailing zeros of the fraction cut.
function toBundleEvent(e: LedgerEvent, tenant: string): BundleEvent {
  const t = e.time!;
  const base = new Date(Number(t.seconds) * 1000).toISOString().slice(0, 19);
  const frac = t.nanos ? "." + String(t.nanos).padStart(9, "0").replace(/0+$/, "") : "";
  return {
    debate_id: e.debateId,
    tenant_id: tenant,
    seq: Number(e.seq),
    type: e.eventType,
    actor: e.actor,
    node: e.node,
    round: e.round,
    payload: JSON.parse(e.payloadJson || "{}"),
    time: base + frac + "Z",
    prev_hash: e.prevHash,
    hash: e.hash,
    key_id: e.keyId,
    signature: e.signature,
  };
}

interface Row {
  ev: BundleEvent;
  seal?: Seal;
}

const ROW = 104;

// summary is what one card says about an event, by type.
function summary(ev: BundleEvent, dealId: string): (Node | string)[] {
  const p = (ev.payload ?? {}) as Record<string, any>;
  const out: (Node | string)[] = [];
  const claims = (ids: unknown) =>
    Array.isArray(ids) && ids.length
      ? h("span", { class: "claims" }, "cites ", ...ids.slice(0, 6).flatMap((id: string, i: number) => [i ? ", " : "", h("a", { href: `#/deals/${dealId}?claim=${id}` }, short(id))]), ids.length > 6 ? ` +${ids.length - 6}` : "")
      : null;
  switch (ev.type) {
    case "agent.output": {
      const pos = p.position ?? {};
      out.push(h("b", {}, `${p.role ?? ev.actor}: ${pos.recommendation ?? pos.stance ?? ""}`), ` confidence ${pos.confidence ?? p.muhasabah_record?.confidence ?? "?"} `);
      const tc = Array.isArray(p.tool_calls) ? p.tool_calls : [];
      if (tc.length) out.push(h("span", { class: "muted" }, ` · ${tc.length} tool calls (${[...new Set(tc.map((x: any) => x.tool))].join(", ")}) `));
      const c = claims(p.claim_refs);
      if (c) out.push(h("br", {}), c);
      if (typeof p.content === "string") out.push(h("br", {}), h("span", { class: "muted" }, p.content.slice(0, 160)));
      break;
    }
    case "agent.tool_call":
      out.push(`${p.tool_name} → ${p.result_status}`);
      break;
    case "stop.decision":
      out.push(h("b", {}, `stop: ${p.stop_reason ?? "continue"}`), " ", String(p.why ?? "").slice(0, 160));
      break;
    case "human_review.requested":
    case "human_gate.created":
      out.push(h("b", {}, "human gate: "), String(p.reason ?? ""));
      break;
    case "human_gate.resolved":
      out.push(h("b", {}, `human gate ${p.approve ? "approved" : p.approve === false ? "rejected" : "resolved"}: `), String(p.reason ?? ""));
      break;
    case "muhasabah.validated":
      out.push(`Muhasabah: ${p.accepted} accepted, ${p.rejected} rejected (pass rate ${p.pass_rate})`);
      break;
    case "debate.stopped":
      out.push(h("b", {}, `${p.status}: ${p.reason}`));
      break;
    default:
      if (ev.type.includes("rejected") || ev.type.includes("gate")) out.push(h("b", {}, "gate verdict: "), JSON.stringify(p.violations ?? p).slice(0, 200));
      else out.push(h("span", { class: "muted" }, JSON.stringify(p).slice(0, 180)));
  }
  return out;
}

function sealBadge(seal?: Seal): HTMLElement {
  if (!seal) return h("span", { class: "seal pending", title: "verifying" }, "…");
  return seal.ok ? h("span", { class: "seal ok", title: "hash, chain and signature verified in this page" }, "✓") : h("span", { class: "seal bad", title: seal.why }, "✗");
}

async function debateView(id: string): Promise<void> {
  let stopped = false;
  const ctrl = new AbortController();
  stopCurrent = () => {
    stopped = true;
    ctrl.abort();
  };
  const got = await debates.getDebate({ debateId: id });
  let debate = got.debate as Debate;
  const rows: Row[] = [];
  let bundle: Bundle = JSON.parse((await exportBundleJson(id)));
  let keys: TrustedKeys = await trustedKeys(bundle);
  let selected = -1;
  let follow = true;

  const head = h("div", { class: "card" });
  const gates = h("section", { class: "card", "aria-labelledby": "gates-h" });
  const seal = h("div", { class: "dseal pending", role: "status", "aria-live": "polite" }, "Verifying…");
  const list = h("div", { class: "vlist", tabindex: 0, role: "listbox", "aria-label": "Ledger events, one card per event; arrow keys move" });
  const spacer = h("div", { class: "spacer" });
  list.appendChild(spacer);
  const detail = h("pre", { class: "detail card", "aria-live": "polite", tabindex: 0 }, "Select an event to see its payload.");
  const deliverables = h("section", { class: "card", id: "deliverables", "aria-labelledby": "deliv-h" });
  deliverables.hidden = true; // until the debate has ended
  const conn = h("span", { class: "muted", role: "status" });

  // A debate that has ended or waits for a human says how many rounds it
  // completed: its round can be one more, since what follows a round (a
  // finaliser, or the next round once the gate opens) runs in the next one.
  // A running debate says the round it is in. (The header is drawn from a
  // fresh GetDebate whenever a gate or the debate's status changes.)
  const roundText = () => {
    const done = debate.roundsCompleted;
    const paused = terminal.has(debate.status) || debate.status === DebateStatus.AWAITING_REVIEW;
    if (!paused || done === 0) return `round ${debate.round}`; // running, or a protocol without rounds
    return done === 1 ? "1 round" : `${done} rounds`;
  };
  const renderHead = () => {
    head.replaceChildren(
      h("h1", {}, `Debate ${short(id)}`),
      h(
        "p",
        {},
        h("span", { class: "status s-" + DebateStatus[debate.status] }, statusName(debate.status)),
        ` · ${debate.protocol} · ${roundText()} · deal `,
        h("a", { href: `#/deals/${debate.dealId}` }, short(debate.dealId)),
        debate.stopReason ? ` · stop reason ${debate.stopReason}` : "",
        " ",
        conn,
      ),
      seal,
    );
  };
  const renderGates = async () => {
    const g = await debates.getDebate({ debateId: id });
    debate = g.debate!;
    renderHead();
    gates.replaceChildren(h("h2", { id: "gates-h" }, "Human gates"));
    gates.hidden = g.gates.length === 0; // most debates have none
    for (const gate of g.gates) {
      const reason = h("input", { id: "reason-" + gate.gateId, value: "reviewed in the dashboard", required: true });
      const resolve = (approve: boolean) => async () => {
        try {
          await debates.resolveHumanGate({ debateId: id, gateId: gate.gateId, approve, reason: reason.value });
          await renderGates();
        } catch (err) {
          gates.appendChild(h("p", { class: "bad", role: "alert" }, errorText(err)));
        }
      };
      gates.appendChild(
        h(
          "div",
          { class: "gate" },
          h("p", {}, h("b", {}, `${gate.node}: ${gate.status}`), ` — ${gate.reason}`),
          gate.status === "open"
            ? h(
                "div",
                { class: "row" },
                h("label", { for: "reason-" + gate.gateId }, "Reason"),
                reason,
                h("button", { onclick: resolve(true) }, "Approve"),
                h("button", { class: "secondary", onclick: resolve(false) }, "Reject"),
              )
            : h("p", { class: "muted" }, `${gate.resolution} by ${gate.resolvedBy}`),
        ),
      );
    }
  };

  // The events checked as they arrived (the live seal's counts).
  const checked = { ok: 0, bad: 0 };
  // The virtualised list: only the rows in view (and a few beyond) exist.
  const render = () => {
    if (seal.classList.contains("pending")) {
      // Until the debate ends, each event is checked as it arrives; the
      // whole ledger and its log proof are checked at the end (debateSeal).
      seal.textContent =
        `Checking each event as it arrives: ${checked.ok} of ${rows.length} verified (hash chain and Ed25519 signature)` +
        (checked.bad ? `, ${checked.bad} failed` : "") +
        ". The whole ledger and its transparency-log proof are checked when the debate ends.";
    }
    spacer.style.height = rows.length * ROW + "px";
    const top = list.scrollTop;
    const from = Math.max(0, Math.floor(top / ROW) - 4);
    const to = Math.min(rows.length, Math.ceil((top + list.clientHeight) / ROW) + 4);
    for (const el of Array.from(list.querySelectorAll(".ev"))) el.remove();
    for (let i = from; i < to; i++) {
      const r = rows[i];
      const card = h(
        "div",
        {
          class: "ev" + (i === selected ? " sel" : "") + (r.seal && !r.seal.ok ? " tampered" : ""),
          role: "option",
          "aria-selected": i === selected ? "true" : "false",
          id: "ev-" + r.ev.seq,
          style: `top:${i * ROW}px;height:${ROW - 8}px`,
          onclick: () => select(i),
        },
        h("div", { class: "evh" }, sealBadge(r.seal), h("code", {}, `#${r.ev.seq}`), ` ${r.ev.type} `, h("span", { class: "muted" }, `${r.ev.actor}${r.ev.node ? " · " + r.ev.node : ""} · round ${r.ev.round}`)),
        h("div", { class: "evb" }, ...summary(r.ev, debate.dealId)),
      );
      list.appendChild(card);
    }
  };
  // Events arrive faster than frames: draw at most once per frame.
  let drawing = false;
  const scheduleRender = () => {
    if (drawing) return;
    drawing = true;
    requestAnimationFrame(() => {
      drawing = false;
      spacer.style.height = rows.length * ROW + "px";
      if (follow) list.scrollTop = list.scrollHeight;
      render();
    });
  };
  const select = (i: number) => {
    if (i < 0 || i >= rows.length) return;
    selected = i;
    const r = rows[i];
    detail.textContent = `#${r.ev.seq} ${r.ev.type}\n${r.seal && !r.seal.ok ? "SEAL BROKEN: " + r.seal.why + "\n" : ""}hash ${r.ev.hash}\nkey ${r.ev.key_id}\n\n${JSON.stringify(r.ev.payload, null, 2)}`;
    const y = i * ROW;
    if (y < list.scrollTop) list.scrollTop = y;
    else if (y + ROW > list.scrollTop + list.clientHeight) list.scrollTop = y + ROW - list.clientHeight;
    render();
  };
  list.addEventListener("scroll", () => {
    follow = list.scrollTop + list.clientHeight >= list.scrollHeight - ROW;
    render();
  });
  list.addEventListener("keydown", (ev: KeyboardEvent) => {
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: 8, PageUp: -8 };
    if (ev.key in moves) {
      ev.preventDefault();
      follow = false;
      select(Math.min(rows.length - 1, Math.max(0, (selected < 0 ? 0 : selected) + moves[ev.key])));
    } else if (ev.key === "Home") select(0);
    else if (ev.key === "End") select(rows.length - 1);
  });

  const debateSeal = async () => {
    bundle = JSON.parse((await exportBundleJson(id)));
    const rep = await verifyBundle(bundle);
    for (const r of rows) {
      const s2 = rep.seals.get(r.ev.seq);
      if (s2) r.seal = s2;
    }
    const inc = await verifyInclusion(bundle, await trustedKeys(bundle));
    seal.className = "dseal " + (rep.ok && (!inc || inc.ok) ? "ok" : "bad");
    seal.replaceChildren(
      rep.ok
        ? h("b", {}, `✓ Ledger verified in this page: ${bundle.events.length} events, hash chain and every Ed25519 signature.`)
        : h("b", {}, `✗ Ledger verification failed at seq ${rep.firstBadSeq}: ${rep.why}. `, h("button", { class: "secondary", onclick: () => select(rows.findIndex((r) => r.ev.seq === rep.firstBadSeq)) }, `Show seq ${rep.firstBadSeq}`)),
      h("br", {}),
      inc === undefined
        ? h("span", { class: "muted" }, "Transparency log: this debate's export carries no log proof (not checked). ")
        : inc.ok
          ? h("span", { class: "tlog-ok" }, `✓ In the tenant's transparency log: its last event is leaf ${inc.leafIndex} of the signed checkpoint of size ${inc.treeSize} (${inc.origin}). `)
          : h("b", { class: "tlog-bad" }, `✗ Transparency log: ${inc.why}. `),
      h("br", {}),
      h("span", { class: "muted" }, "Trusted keys: " + rep.keySource + "."),
    );
    if (!rep.ok) {
      follow = false;
      select(rows.findIndex((r) => r.ev.seq === rep.firstBadSeq));
    }
    render();
  };

  const showDeliverables = async () => {
    deliverables.replaceChildren(h("h2", { id: "deliv-h" }, "Deliverables"));
    deliverables.hidden = false;
    try {
      const d = await debates.getDeliverables({ debateId: id });
      deliverables.append(
        h(
          "div",
          { class: "row" },
          h("button", { onclick: () => download(`debate-${short(id)}.md`, "text/markdown", d.markdown) }, "Download Markdown"),
          h("button", { onclick: () => download(`debate-${short(id)}.json`, "application/json", d.deliverablesJson) }, "Download JSON"),
          h("button", { onclick: async () => download(`ledger-${short(id)}.json`, "application/json", (await exportBundleJson(id))) }, "Download ledger bundle"),
        ),
        h("article", { class: "brief" }, ...markdown(d.markdown)),
      );
    } catch (err) {
      const none = err instanceof ConnectError && err.code === Code.FailedPrecondition;
      deliverables.append(h("p", { class: "muted" }, none ? `${debate.protocol} hands over no deliverables; its ledger is above and downloadable:` : errorText(err)));
      if (none) deliverables.append(h("button", { onclick: async () => download(`ledger-${short(id)}.json`, "application/json", (await exportBundleJson(id))) }, "Download ledger bundle"));
    }
  };

  renderHead();
  show(
    head,
    gates,
    h("div", { class: "live" }, h("section", { "aria-label": "Live ledger" }, h("h2", {}, "Live ledger"), list), h("section", { "aria-label": "Event detail" }, h("h2", {}, "Event"), detail)),
    deliverables,
  );
  await renderGates();

  // Follow the ledger: resume from the last seq after any disconnect, so no
  // event is lost or repeated.
  let lastSeq = 0n;
  let tail: Promise<Seal> = Promise.resolve({ ok: true });
  const refreshedFor = new Set<string>();
  while (!stopped) {
    try {
      conn.textContent = "● live";
      for await (const msg of debates.watchDebate({ debateId: id, afterSeq: lastSeq }, { signal: ctrl.signal })) {
        // One event, or a batch of consecutive events for a watcher behind.
        const evs = msg.events.length ? msg.events : msg.event ? [msg.event] : [];
        for (const e of evs) {
          if (e.seq <= lastSeq) continue;
          lastSeq = e.seq;
          const be = toBundleEvent(e, bundle.tenant_id);
          const prev = rows.length ? rows[rows.length - 1].ev : undefined;
          const row: Row = { ev: be };
          rows.push(row);
          if (!keys.keys[be.key_id] && !refreshedFor.has(be.key_id)) {
            // A key this page has not seen: read the published keys (and the
            // bundle, their fallback) again, once per key id, not per event.
            refreshedFor.add(be.key_id);
            forgetPublishedKeys();
            bundle = JSON.parse(await exportBundleJson(id));
            keys = await trustedKeys(bundle);
          }
          tail = tail.then(() => verifyEvent(be, prev, bundle.tenant_id, keys)).then((sl) => {
            row.seal = sl;
            if (sl.ok) checked.ok++;
            else checked.bad++;
            scheduleRender();
            return sl;
          });
          if (e.eventType.startsWith("human_") || e.eventType.startsWith("debate.")) void renderGates();
          scheduleRender();
        }
      }
      break; // the debate ended
    } catch (err) {
      if (stopped) return;
      conn.textContent = "reconnecting…";
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  conn.textContent = "";
  await tail;
  await renderGates();
  await debateSeal();
  if (terminal.has(debate.status)) await showDeliverables();
}

// markdown renders the brief's Markdown as text elements: headings, tables,
// lists and paragraphs (no HTML is ever parsed from it).
function markdown(md: string): Node[] {
  const out: Node[] = [];
  const lines = md.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const m = /^(#{1,4})\s+(.*)$/.exec(l);
    if (m) {
      out.push(h(("h" + Math.min(6, m[1].length + 2)) as "h3", {}, m[2]));
    } else if (l.startsWith("|")) {
      const tbl = h("table", {});
      let first = true;
      for (; i < lines.length && lines[i].startsWith("|"); i++) {
        const cells = lines[i].split("|").slice(1, -1).map((c) => c.trim());
        if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
        tbl.appendChild(h("tr", {}, ...cells.map((c) => h(first ? "th" : "td", {}, c.replace(/\*\*|`/g, "")))));
        first = false;
      }
      i--;
      out.push(h("div", { class: "scroll" }, tbl));
    } else if (/^\s*[-*]\s+/.test(l)) {
      out.push(h("p", { class: "li" }, "• " + l.replace(/^\s*[-*]\s+/, "").replace(/\*\*|`/g, "")));
    } else if (l.trim()) {
      out.push(h("p", {}, l.replace(/\*\*|`/g, "")));
    }
  }
  return out;
}

// ---------- routing ----------
async function route(): Promise<void> {
  stopCurrent?.();
  stopCurrent = undefined;
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter(Boolean);
  if (!apiKey() || parts[0] === "signin") return signInView();
  nav.hidden = false;
  for (const a of Array.from(nav.querySelectorAll("a"))) a.toggleAttribute("aria-current", location.hash.startsWith(a.getAttribute("href") ?? "-"));
  try {
    if (parts[0] === "deals" && parts[1]) await dealView(decodeURIComponent(parts[1]), new URLSearchParams(query).get("claim") ?? undefined);
    else if (parts[0] === "debates" && parts[1]) await debateView(decodeURIComponent(parts[1]));
    else if (parts[0] === "debates") await debatesView();
    else await dealsView();
  } catch (err) {
    fail(err);
  }
}

document.getElementById("signout")?.addEventListener("click", () => {
  signOut();
  location.hash = "#/signin";
});
window.addEventListener("hashchange", () => void route());
void route();

const currencySymbols: Record<string, string> = { USD: "$", EUR: "€", GBP: "£", JPY: "¥" };

// quantity shows a claim's figure exactly as the API sends it, a decimal
// string, with its currency or unit, as debatectl prints it: "$3,150,000",
// "-$12.5", "$120,000/month", "68.5%", "18 months". It never goes through a
// JavaScript number, so no digit is lost and no exponent appears.
function quantity(v?: ClaimValue): string {
  if (!v) return "—";
  const n = groupDecimal(v.value);
  const cur = v.currency.trim().toUpperCase();
  if (cur) {
    const sym = currencySymbols[cur];
    const neg = n.startsWith("-");
    let out = sym ? (neg ? "-" : "") + sym + (neg ? n.slice(1) : n) : `${n} ${cur}`;
    if (v.unit.startsWith(cur) && v.unit.length > cur.length) out += v.unit.slice(cur.length);
    return out;
  }
  if (v.unit.toLowerCase() === "percent") return n + "%";
  return v.unit ? `${n} ${v.unit}` : n;
}

// groupDecimal groups a decimal string's integer part by thousands:
// "12345678901234567.89" → "12,345,678,901,234,567.89". Other text is shown
// as it is.
function groupDecimal(s: string): string {
  const m = /^(-?)(\d+)(\.\d+)?$/.exec(s);
  if (!m) return s;
  return m[1] + m[2].replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (m[3] ?? "");
}

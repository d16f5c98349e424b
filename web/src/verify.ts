// In-page verification of a debate's ledger: the browser recomputes every
// event's hash (SHA-256 over its RFC 8785 canonical JSON), checks the chain
// and every Ed25519 signature with WebCrypto against the tenant's public
// keys. Nothing here trusts the server's own verification.

import { keyService } from "./api";
import { KeyKind } from "./gen/debated/v1/keys_pb";

export interface BundleEvent {
  debate_id: string;
  tenant_id: string;
  seq: number;
  type: string;
  actor: string;
  node: string;
  round: number;
  payload: unknown;
  time: string;
  prev_hash: string;
  hash: string;
  key_id: string;
  signature: string;
}

export interface PublicKeyInfo {
  public_key: string; // base64
  tenant_id: string;
  actor: string;
}

export interface Bundle {
  format: string;
  debate_id: string;
  tenant_id: string;
  events: BundleEvent[];
  public_keys: Record<string, PublicKeyInfo>;
  log?: BundleLog;
}

// BundleLog is a bundle's proof that its last event is a head the
// tenant's transparency log recorded (docs/transparency.md).
export interface BundleLog {
  checkpoint: string; // a C2SP signed note
  leaf_index: number;
  inclusion_proof: string[] | null; // base64 hashes, from the leaf's sibling up
  debate_status: string;
}

export type Seal = { ok: true } | { ok: false; why: string };

export interface Report {
  ok: boolean;
  firstBadSeq: number; // 0 when ok
  why: string;
  seals: Map<number, Seal>;
  keySource: string;
}

export const GENESIS = "0".repeat(64);

// canonical writes v as RFC 8785 JSON: members sorted by UTF-16 code units,
// no whitespace, ECMAScript number and string forms (which RFC 8785 adopts).
export function canonical(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonical(o[k])).join(",") + "}";
}

function hex(b: ArrayBuffer): string {
  return Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
}

function fromBase64(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function fromHex(s: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

// hashedObject is the object an event's hash covers: every field but hash
// and signature (internal/ledger's package documentation).
export function hashedObject(e: BundleEvent): string {
  return canonical({
    actor: e.actor,
    debate_id: e.debate_id,
    key_id: e.key_id,
    node: e.node,
    payload: e.payload ?? {},
    prev_hash: e.prev_hash,
    round: e.round,
    seq: e.seq,
    tenant_id: e.tenant_id,
    time: e.time,
    type: e.type,
  });
}

// TrustedKeys are the keys the page checks signatures against, and where
// they came from (said in the UI).
export interface TrustedKeys {
  keys: Record<string, PublicKeyInfo>;
  source: string;
  // The C2SP verifier keys of the tenant's checkpoint keys (published).
  checkpointKeys: string[];
}

// trustedKeys is the one place that decides which public keys are trusted:
// the ledger keys the deployment publishes for the tenant
// (KeyService.GetSigningKeys), never the keys a bundle carries about
// itself, so a ledger re-signed with other keys shows red. Only a server
// without the key service falls back to the bundle's keys, and says so.
let published: { keys: Record<string, PublicKeyInfo>; checkpointKeys: string[] } | undefined;

// forgetPublishedKeys makes the next trustedKeys read the published keys
// again (a key this page has not seen: rotated, or a new protocol's role).
export function forgetPublishedKeys(): void {
  published = undefined;
}

export async function trustedKeys(b: Bundle): Promise<TrustedKeys> {
  if (!published) {
    // Only an answer is kept: a call that fails (the service restarting)
    // is asked again next time, never remembered as "no keys".
    try {
      const r = await keyService.getSigningKeys({});
      const keys: Record<string, PublicKeyInfo> = {};
      const checkpointKeys: string[] = [];
      for (const k of r.keys) {
        if (k.kind === KeyKind.CHECKPOINT && k.noteVerifierKey) checkpointKeys.push(k.noteVerifierKey);
        if (k.kind !== KeyKind.LEDGER) continue;
        keys[k.keyId] = { public_key: toBase64(k.publicKey), tenant_id: r.tenantId, actor: k.actor };
      }
      published = { keys, checkpointKeys };
    } catch {
      return { keys: b.public_keys, checkpointKeys: [], source: "keys from the debate's export bundle (the server publishes none): integrity, not origin" };
    }
  }
  return { ...published, source: "the keys the deployment publishes for this tenant (GetSigningKeys)" };
}

export interface Inclusion {
  ok: boolean;
  why: string;
  leafIndex: number;
  treeSize: number;
  origin: string;
}

// verifyInclusion checks, in the page, that the bundle's last event is a
// head the tenant's transparency log recorded: the checkpoint is signed by
// a published checkpoint key and names this tenant's log, and the leaf of
// the last event is in the tree whose root it signs (RFC 9162 inclusion
// proof). undefined: the bundle carries no log proof.
export async function verifyInclusion(b: Bundle, keys: TrustedKeys): Promise<Inclusion | undefined> {
  const log = b.log;
  if (!log || b.events.length === 0) return undefined;
  const fail = (why: string, size = 0, origin = ""): Inclusion => ({ ok: false, why, leafIndex: log.leaf_index, treeSize: size, origin });
  const cut = log.checkpoint.indexOf("\n\n");
  if (cut < 0) return fail("the checkpoint is not a signed note");
  const body = log.checkpoint.slice(0, cut + 1);
  const lines = body.split("\n");
  const [origin, sizeText, rootText] = lines;
  const size = Number(sizeText);
  if (!origin || !Number.isSafeInteger(size) || !rootText) return fail("the checkpoint body is malformed");
  if (!origin.endsWith("/tenants/" + b.tenant_id)) return fail(`the checkpoint is of another log (${origin})`, size, origin);
  if (!(await checkpointSigned(body, log.checkpoint.slice(cut + 2), keys.checkpointKeys)))
    return fail("the checkpoint is not signed by a published checkpoint key", size, origin);
  const last = b.events[b.events.length - 1];
  const leaf = new TextEncoder().encode(`debated/tlog/leaf/v1\nstep\n${b.debate_id}\n${last.seq}\n${last.hash}\n`);
  let r = await sha256(concat(Uint8Array.of(0), leaf));
  let fn = log.leaf_index;
  let sn = size - 1;
  if (fn >= size) return fail(`leaf ${fn} is beyond the tree of size ${size}`, size, origin);
  for (const p64 of log.inclusion_proof ?? []) {
    const p = fromBase64(p64);
    if (sn === 0) return fail("the inclusion proof is too long", size, origin);
    if (fn % 2 === 1 || fn === sn) {
      r = await sha256(concat(Uint8Array.of(1), p, r));
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = await sha256(concat(Uint8Array.of(1), r, p));
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0 || toBase64(r) !== rootText) return fail("the last event is not in the tree the checkpoint signs", size, origin);
  return { ok: true, why: "", leafIndex: log.leaf_index, treeSize: size, origin };
}

// checkpointSigned reports whether one of the note's signature lines is a
// valid Ed25519 signature of body by one of the verifier keys
// ("<name>+<hash hex>+<base64(0x01 || public key)>").
async function checkpointSigned(body: string, sigs: string, verifierKeys: string[]): Promise<boolean> {
  for (const line of sigs.split("\n")) {
    const m = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (!m) continue;
    const raw = fromBase64(m[2]);
    if (raw.length !== 68) continue;
    const hashHex = hex(raw.slice(0, 4).buffer);
    for (const vk of verifierKeys) {
      // The key data is base64, which may itself hold "+": split twice only.
      const i = vk.indexOf("+");
      const j = vk.indexOf("+", i + 1);
      if (i < 0 || j < 0) continue;
      const [name, h, k64] = [vk.slice(0, i), vk.slice(i + 1, j), vk.slice(j + 1)];
      if (name !== m[1] || h !== hashHex) continue;
      const key = fromBase64(k64);
      if (key.length !== 33 || key[0] !== 1) continue;
      try {
        const pub = await crypto.subtle.importKey("raw", key.slice(1), { name: "Ed25519" }, false, ["verify"]);
        if (await crypto.subtle.verify({ name: "Ed25519" }, pub, raw.slice(4), new TextEncoder().encode(body))) return true;
      } catch {
        // an unreadable key or signature verifies nothing
      }
    }
  }
  return false;
}

async function sha256(b: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", b as Uint8Array<ArrayBuffer>));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function toBase64(b: Uint8Array): string {
  let s = "";
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s);
}

const keyCache = new Map<string, Promise<CryptoKey>>();

function importKey(pub: string): Promise<CryptoKey> {
  let k = keyCache.get(pub);
  if (!k) {
    k = crypto.subtle.importKey("raw", fromBase64(pub), { name: "Ed25519" }, false, ["verify"]);
    keyCache.set(pub, k);
  }
  return k;
}

// verifyEvent checks one event after prev (undefined for seq 1).
export async function verifyEvent(e: BundleEvent, prev: BundleEvent | undefined, tenant: string, keys: TrustedKeys): Promise<Seal> {
  const wantSeq = prev ? prev.seq + 1 : 1;
  if (e.seq !== wantSeq) return { ok: false, why: `seq ${e.seq}, want ${wantSeq}` };
  if (e.tenant_id !== tenant) return { ok: false, why: "another tenant's event" };
  if (e.prev_hash !== (prev ? prev.hash : GENESIS)) return { ok: false, why: "prev_hash does not chain" };
  const sum = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(hashedObject(e)));
  if (hex(sum) !== e.hash) return { ok: false, why: "hash does not match the event's content" };
  const info = keys.keys[e.key_id];
  if (!info) return { ok: false, why: `unknown key ${e.key_id}` };
  if (info.tenant_id !== tenant || info.actor !== e.actor) return { ok: false, why: `key ${e.key_id} is not ${e.actor}'s` };
  let good = false;
  try {
    good = await crypto.subtle.verify({ name: "Ed25519" }, await importKey(info.public_key), fromBase64(e.signature), fromHex(e.hash));
  } catch (err) {
    return { ok: false, why: "signature unreadable: " + String(err) };
  }
  return good ? { ok: true } : { ok: false, why: "bad signature" };
}

// verifyBundle checks every event in order and names the first bad seq.
export async function verifyBundle(b: Bundle): Promise<Report> {
  const keys = await trustedKeys(b);
  const seals = new Map<number, Seal>();
  let first = 0;
  let why = "";
  let prev: BundleEvent | undefined;
  for (const e of b.events) {
    const s = await verifyEvent(e, prev, b.tenant_id, keys);
    seals.set(e.seq, s);
    if (!s.ok && first === 0) {
      first = e.seq;
      why = s.why;
    }
    prev = e;
  }
  if (b.events.length === 0) why = "no events";
  return { ok: first === 0 && b.events.length > 0, firstBadSeq: first, why, seals, keySource: keys.source };
}

// In-page verification of a debate's ledger: the browser recomputes every
// event's hash (SHA-256 over its RFC 8785 canonical JSON), checks the chain
// and every Ed25519 signature with WebCrypto against the tenant's public
// keys. Nothing here trusts the server's own verification.

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
}

// trustedKeys is the one place that decides which public keys are trusted.
// Until the deployment publishes its keys through KeyService.GetSigningKeys,
// they are the ones in the debate's own export bundle, which proves the
// ledger's consistency but not who signed it; switching to the published
// keys is this function alone.
export async function trustedKeys(b: Bundle): Promise<TrustedKeys> {
  return { keys: b.public_keys, source: "keys from the debate's export bundle (GetSigningKeys not yet available)" };
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

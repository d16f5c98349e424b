#!/usr/bin/env python3
"""An independent verifier of debated ledger and deal bundles.

Written from docs/ledger.md alone (not from the Go code), to show that the
document suffices. Python 3.9+ standard library plus the `cryptography`
package (for Ed25519).

    verify.py [--json] [--trusted-keys KEYS.json] BUNDLE.json

KEYS.json is what `debatectl --json keys` printed. Exit status 0 when the
bundle verifies, 1 when it does not, 2 on a usage or input error. With
--json it prints {"ok", "first_bad_seq", "rules", "problems", "checked"}.
"""

import argparse
import base64
import binascii
import datetime
import decimal
import hashlib
import json
import re
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

GENESIS = "0" * 64
MAX_INT = 2**53 - 1
MAX_PROBLEMS = 100
DEAL_PROTOCOL = "deal.audit.v1"
HEX64 = re.compile(r"^[0-9a-f]{64}$")


class Invalid(Exception):
    """Input that cannot be verified at all (not a bundle, bad keys file)."""


# ---------------------------------------------------------------- RFC 8785


class NotCanonicalisable(Exception):
    pass


def _reject_duplicates(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise NotCanonicalisable("duplicate member %r" % k)
        obj[k] = v
    return obj


def parse_json(text):
    """Parses JSON keeping what RFC 8785 needs: fractions and exponents as
    Decimal (integers as int), duplicate member names refused."""
    return json.loads(
        text,
        object_pairs_hook=_reject_duplicates,
        parse_float=decimal.Decimal,
        parse_constant=lambda c: (_ for _ in ()).throw(NotCanonicalisable(c)),
    )


def _es_number(d):
    """ECMAScript Number.prototype.toString of the double d denotes."""
    f = float(d)
    if f != f or f in (float("inf"), float("-inf")):
        raise NotCanonicalisable("non-finite number")
    if f == 0:
        return "0"
    sign = "-" if f < 0 else ""
    # repr gives the shortest digits that round-trip, as ECMAScript does.
    t = decimal.Decimal(repr(abs(f))).normalize().as_tuple()
    digits = "".join(str(x) for x in t.digits)
    k = len(digits)
    n = t.exponent + k  # the value is 0.digits × 10^n
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits[0] + ("." + digits[1:] if k > 1 else "")
        s = mant + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + s


def _es_string(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if 0xD800 <= o <= 0xDFFF:
            raise NotCanonicalisable("lone surrogate")
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical(v):
    """The RFC 8785 text of a value parsed by parse_json."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, decimal.Decimal):
        return _es_number(v)
    if isinstance(v, (int, float)):
        return _es_number(decimal.Decimal(repr(v)))
    if isinstance(v, str):
        return _es_string(v)
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v.keys(), key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(_es_string(k) + ":" + canonical(v[k]) for k in keys) + "}"
    raise NotCanonicalisable("unexpected value %r" % (v,))


# ---------------------------------------------------------------- basics

RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$"
)


def hashed_time(s):
    """The time member of the hashed object (docs/ledger.md §1), or None."""
    if not isinstance(s, str):
        return None
    m = RFC3339.match(s)
    if not m:
        return None
    y, mo, d, h, mi, se, frac, zone = m.groups()
    try:
        dt = datetime.datetime(int(y), int(mo), int(d), int(h), int(mi), int(se))
    except ValueError:
        return None
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        dt -= sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    if dt.year > 9999:
        return None
    frac = (frac or "").rstrip("0")
    return "%04d-%02d-%02dT%02d:%02d:%02d%sZ" % (
        dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, "." + frac if frac else "")


def fingerprint(pub):
    return hashlib.sha256(pub).hexdigest()[:16]


def usable_text(s, required=True):
    if not isinstance(s, str):
        return False
    if required and s == "":
        return False
    return "\x00" not in s and not any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def is_int(v, lo):
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= MAX_INT


def short(h):
    return h[:12] + "…" if isinstance(h, str) and HEX64.match(h) else repr(h)


def decode_sig(sig):
    if not isinstance(sig, str):
        return None
    try:
        raw = base64.b64decode(sig, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 64 or base64.b64encode(raw).decode() != sig:
        return None
    return raw


def ed25519_ok(pub, msg, sig):
    try:
        Ed25519PublicKey.from_public_bytes(pub).verify(sig, msg)
        return True
    except (InvalidSignature, ValueError):
        return False


class Report:
    def __init__(self):
        self.problems = []

    def add(self, seq, rule, detail):
        self.problems.append({"seq": seq, "rule": rule, "detail": detail})

    def result(self):
        ps = self.problems
        if len(ps) > MAX_PROBLEMS:
            ps = ps[:MAX_PROBLEMS] + [{"seq": ps[MAX_PROBLEMS]["seq"], "rule": "truncated",
                                      "detail": "more problems"}]
        seqs = [p["seq"] for p in ps if p["seq"] != 0]
        return {
            "ok": not ps,
            "first_bad_seq": min(seqs) if seqs else 0,
            "rules": sorted({p["rule"] for p in ps}),
            "problems": ps,
        }


# ---------------------------------------------------------------- keys


def bundle_keys(pk):
    """key id -> (raw public key or None, tenant, actor) from a bundle."""
    out = {}
    if not isinstance(pk, dict):
        raise Invalid("public_keys is not an object")
    for kid, k in pk.items():
        if not isinstance(k, dict) or set(k) - {"public_key", "tenant_id", "actor"}:
            raise Invalid("public key %s is not {public_key, tenant_id, actor}" % kid)
        try:
            raw = base64.b64decode(k.get("public_key", ""), validate=True)
        except (binascii.Error, ValueError):
            raw = None
        out[kid] = (raw, k.get("tenant_id", ""), k.get("actor", ""))
    return out


def key_problem(keys, kid, trusted):
    """(key, problem): the key named kid or why it cannot be used."""
    if not isinstance(kid, str) or kid not in keys:
        if trusted:
            return None, "key id %r is not among the trusted keys" % (kid,)
        return None, "unknown key id %r" % (kid,)
    raw, tenant, actor = keys[kid]
    if raw is None or len(raw) != 32:
        return None, "key %s is not 32 bytes" % kid
    fp = kid.split(":", 1)[1] if ":" in kid else ""
    if fp != fingerprint(raw):
        return None, "key %s does not match its id" % kid
    return keys[kid], None


def read_trust(path):
    with open(path, "rb") as f:
        doc = parse_json(f.read().decode("utf-8"))
    tenant = doc.get("tenant_id", "")
    if not tenant or not doc.get("keys"):
        raise Invalid("%s: no tenant or no keys" % path)
    keys = {}
    for k in doc.get("keys", []):
        if k.get("kind") != "KEY_KIND_LEDGER":
            continue
        raw = base64.b64decode(k.get("public_key", ""), validate=True)
        kid, version = k.get("key_id", ""), k.get("version", "")
        if len(raw) != 32:
            raise Invalid("trusted key %s is not 32 bytes" % kid)
        if kid != version + ":" + fingerprint(raw):
            raise Invalid("trusted key %s does not match its id" % kid)
        keys[kid] = (raw, tenant, k.get("actor", ""))
    policies = {}
    for p in doc.get("policies", []):
        policies[p.get("protocol", "")] = {
            "role_guard": {t: v.get("actors", []) for t, v in p.get("role_guard", {}).items()},
            "strict_roles": p.get("strict_roles", False),
            "bookkeeping": p.get("bookkeeping", []),
            "terminal": p.get("terminal", []),
            "min_claim_executions": int(p.get("min_claim_executions", 0)),
        }
    return {"tenant": tenant, "keys": keys, "policies": policies}


def normal_policy(p):
    p = p or {}
    return (
        bool(p.get("strict_roles", False)),
        int(p.get("min_claim_executions", 0) or 0),
        frozenset(p.get("bookkeeping", []) or []),
        frozenset(p.get("terminal", []) or []),
        frozenset((t, frozenset(a or [])) for t, a in (p.get("role_guard", {}) or {}).items()),
    )


def trust_checks(bundle, trust, deal, report):
    """Bundle-level problems against trusted keys (§5); returns the policy
    to check the events under: the published one of the bundle's protocol,
    or the bundle's when there is none."""
    if bundle.get("tenant_id") != trust["tenant"]:
        report.add(0, "untrusted_key", "the bundle is of tenant %r, the trusted keys of %r"
                   % (bundle.get("tenant_id"), trust["tenant"]))
    for kid, (raw, _, _) in sorted(bundle_keys(bundle.get("public_keys", {})).items()):
        if kid in trust["keys"] and trust["keys"][kid][0] != raw:
            report.add(0, "untrusted_key", "the bundle's public key of %s differs from the trusted key" % kid)
    protocol = bundle.get("protocol", "")
    name = DEAL_PROTOCOL if deal else protocol
    policy = trust["policies"].get(name) if name else None
    if deal and protocol != DEAL_PROTOCOL:
        report.add(0, "policy", "a deal bundle of protocol %r" % protocol)
    elif not protocol:
        report.add(0, "policy", "the bundle names no protocol")
    elif policy is None:
        report.add(0, "policy", "no trusted policy for protocol %r" % name)
    elif normal_policy(policy) != normal_policy(bundle.get("policy")):
        report.add(0, "policy", "the bundle's policy differs from the published policy of %r" % name)
    return policy if policy is not None else (bundle.get("policy") or {})


# ---------------------------------------------------------------- debates

EVENT_MEMBERS = {"debate_id", "tenant_id", "seq", "type", "actor", "node", "round", "payload",
                 "time", "prev_hash", "hash", "key_id", "signature"}


def payload_of(e):
    """The canonical text of an event's payload, or None if unusable."""
    if "payload" not in e:
        return "{}"
    p = e["payload"]
    if not isinstance(p, dict):
        return None
    try:
        return canonical(p)
    except NotCanonicalisable:
        return None


def verify_debate(bundle, keys, policy, trusted):
    report = Report()
    events = bundle.get("events", [])
    debate_id, tenant_id = bundle["debate_id"], bundle["tenant_id"]
    rg = {t: set(a or []) for t, a in (policy.get("role_guard") or {}).items()}
    strict = bool(policy.get("strict_roles"))
    bookkeeping = set(policy.get("bookkeeping") or [])
    terminal_types = set(policy.get("terminal") or [])
    min_claim = int(policy.get("min_claim_executions") or 0)

    prev_seq, prev_hash = 0, None
    terminal = None
    intents, started, finished, claims = {}, {}, set(), set()
    final_pos, last_role = 0, None

    for i, e in enumerate(events):
        pos = i + 1
        if not isinstance(e, dict) or set(e) - EVENT_MEMBERS:
            raise Invalid("event %d is not an event object" % pos)

        def add(rule, detail):
            report.add(pos, rule, detail)

        seq = e.get("seq")
        if seq != prev_seq + 1:
            add("seq", "seq %r follows seq %r" % (seq, prev_seq))
        if e.get("debate_id") != debate_id:
            add("scope", "event of debate %r" % e.get("debate_id"))
        if e.get("tenant_id") != tenant_id:
            add("scope", "event of tenant %r" % e.get("tenant_id"))
        want_prev = GENESIS if pos == 1 else prev_hash
        if e.get("prev_hash") != want_prev:
            add("prev_hash", "prev_hash %s is not %s" % (short(e.get("prev_hash")), short(want_prev)))

        digest = None
        t = hashed_time(e.get("time"))
        payload = payload_of(e)
        fields_ok = (
            all(usable_text(e.get(k)) for k in ("debate_id", "tenant_id", "type", "actor", "key_id"))
            and usable_text(e.get("node", ""), required=False)
            and is_int(seq, 1) and is_int(e.get("round"), 0)
            and t is not None
            and isinstance(e.get("prev_hash"), str) and HEX64.match(e["prev_hash"]) is not None
            and payload is not None
        )
        if not fields_ok:
            add("malformed", "a field no sealed event can carry")
        else:
            obj = ('{"actor":%s,"debate_id":%s,"key_id":%s,"node":%s,"payload":%s,"prev_hash":%s,'
                   '"round":%d,"seq":%d,"tenant_id":%s,"time":%s,"type":%s}') % (
                _es_string(e["actor"]), _es_string(e["debate_id"]), _es_string(e["key_id"]),
                _es_string(e.get("node", "")), payload, _es_string(e["prev_hash"]), e["round"], seq,
                _es_string(e["tenant_id"]), _es_string(t), _es_string(e["type"]))
            digest = hashlib.sha256(obj.encode("utf-8")).digest()
            if e.get("hash") != digest.hex():
                add("hash", "hash %s, the event hashes to %s" % (short(e.get("hash")), short(digest.hex())))
                h = e.get("hash")
                digest = bytes.fromhex(h) if isinstance(h, str) and HEX64.match(h) else None

        key, problem = key_problem(keys, e.get("key_id"), trusted)
        if problem:
            add("key_id", problem)
        else:
            raw, ktenant, kactor = key
            if ktenant != e.get("tenant_id") or kactor != e.get("actor"):
                add("signer", "key %s belongs to %r/%r" % (e.get("key_id"), ktenant, kactor))
            if digest is not None:
                sig = decode_sig(e.get("signature"))
                if sig is None:
                    add("signature", "signature is not the standard base64 of 64 bytes")
                elif not ed25519_ok(raw, digest, sig):
                    add("signature", "signature does not verify with the event's key")

        # §2.3, the policy.
        typ, actor = e.get("type"), e.get("actor")
        if typ in rg:
            if actor not in rg[typ]:
                add("role_guard", "actor %r may not emit %r" % (actor, typ))
        elif strict:
            add("role_guard", "event type %r is not in the role guard" % typ)
        is_bk = typ in bookkeeping
        if terminal is not None and not is_bk:
            add("terminal", "%r follows the terminal event %r" % (typ, terminal))
        if terminal is None and typ in terminal_types:
            terminal = typ

        pl = e.get("payload") if isinstance(e.get("payload"), dict) else {}

        def string_member(name):
            v = pl.get(name)
            if v is None:
                return "", None
            if not isinstance(v, str):
                return None, "payload member %r is not a string" % name
            return v, None

        if typ in ("tool_intent_signed", "tool_intent_blocked", "tool_execution_started",
                   "tool_execution_completed", "tool_execution_failed"):
            tool_rules(typ, string_member, intents, started, finished, pos, add)
        elif typ == "claim_issued":
            ids = pl.get("execution_ids")
            if ids is not None and not (isinstance(ids, list) and all(isinstance(x, str) for x in ids)):
                add("claim_evidence", "execution_ids is not a list of strings")
                ids = None
            ids = ids or []
            for x in ids:
                if x not in finished:
                    add("claim_evidence", "claim names execution %r, not finished before it" % x)
            if len(set(ids)) < min_claim:
                add("claim_evidence", "claim names %d executions, the policy requires %d" % (len(set(ids)), min_claim))
            cid, err = string_member("claim_id")
            if not err and cid:
                claims.add(cid)
        elif typ == "claim_challenged":
            cid, err = string_member("claim_id")
            if err:
                add("claim_challenge", err)
            elif cid == "":
                add("claim_challenge", "challenge without claim_id")
            elif cid not in claims:
                add("claim_challenge", "challenge of claim %r, which no earlier claim names" % cid)

        verification = typ in ("verification_run_started", "verification_run_completed")
        if typ == "final_statement_signed":
            if final_pos:
                add("final_statement", "a second final statement")
            else:
                final_pos = pos
        elif typ == "verification_run_completed":
            if last_role != "final_statement_signed":
                add("final_statement", "verification run completed without the final statement before it")
        elif is_bk or verification:
            pass
        elif last_role == "final_statement_signed":
            add("final_statement", "%r follows the final statement" % typ)
        if typ == "final_statement_signed" or (not is_bk and not verification):
            last_role = typ

        prev_seq, prev_hash = seq if isinstance(seq, int) else prev_seq, e.get("hash")
    return report


def tool_rules(typ, string_member, intents, started, finished, pos, add):
    intent, err = string_member("intent_id")
    if err:
        add("tool_intent", err)
        return
    if intent == "":
        add("tool_intent", "%s without intent_id" % typ)
        return
    st = intents.get(intent)
    if typ == "tool_intent_signed":
        if st is not None:
            add("tool_intent", "intent %r is signed twice" % intent)
            return
        intents[intent] = {"blocked": False, "finished": False}
        return
    if st is None:
        add("tool_intent", "%s names intent %r, which no earlier tool_intent_signed names" % (typ, intent))
    if typ == "tool_intent_blocked":
        if st is not None:
            st["blocked"] = True
        return
    if st is not None and st["blocked"]:
        add("tool_intent", "%s of blocked intent %r" % (typ, intent))
    if st is not None and st["finished"]:
        add("tool_intent", "%s of finished intent %r" % (typ, intent))
    ex, err = string_member("execution_id")
    if err:
        add("tool_intent", err)
        return
    if ex == "":
        add("tool_intent", "%s without execution_id" % typ)
        return
    if typ == "tool_execution_started":
        if ex in started:
            add("tool_intent", "execution %r is started twice" % ex)
            return
        started[ex] = intent
        return
    if ex in finished:
        add("tool_intent", "execution %r finishes twice" % ex)
    if ex in started and started[ex] != intent:
        add("tool_intent", "execution %r was started for another intent" % ex)
    finished.add(ex)
    if st is not None:
        st["finished"] = True


# ---------------------------------------------------------------- deals

DEAL_MEMBERS = {"deal_id", "tenant_id", "seq", "type", "actor", "payload", "time",
                "prev_hash", "hash", "key_id", "signature"}
CHAIN = ("prev_hash", "hash", "key_id", "signature")


def verify_deal(bundle, keys, policy, trusted, report):
    deal_id, tenant_id = bundle["deal_id"], bundle["tenant_id"]
    legacy = bundle.get("legacy_events", [])
    for i, e in enumerate(legacy):
        if not isinstance(e, dict) or set(e) - DEAL_MEMBERS:
            raise Invalid("legacy event %d is not an event object" % (i + 1))
        if e.get("seq") != i + 1:
            report.add(i + 1, "seq", "legacy event at position %d has seq %r" % (i + 1, e.get("seq")))
        elif any(e.get(k) for k in CHAIN):
            report.add(e["seq"], "malformed", "a legacy event carries chain members")
        elif e.get("deal_id") != deal_id or e.get("tenant_id") != tenant_id:
            report.add(e["seq"], "scope", "legacy event of another deal or tenant")
    rg = {t: set(a or []) for t, a in (policy.get("role_guard") or {}).items()}
    strict = bool(policy.get("strict_roles"))
    prev_hash = GENESIS
    for i, e in enumerate(bundle.get("events", [])):
        pos = len(legacy) + i + 1
        if not isinstance(e, dict) or set(e) - DEAL_MEMBERS:
            raise Invalid("event %d is not an event object" % pos)

        def add(rule, detail):
            report.add(pos, rule, detail)

        if e.get("seq") != pos:
            add("seq", "seq %r at position %d" % (e.get("seq"), pos))
        if e.get("deal_id") != deal_id:
            add("scope", "event of deal %r" % e.get("deal_id"))
        if e.get("tenant_id") != tenant_id:
            add("scope", "event of tenant %r" % e.get("tenant_id"))
        if e.get("prev_hash") != prev_hash:
            add("prev_hash", "prev_hash %s is not %s" % (short(e.get("prev_hash")), short(prev_hash)))
        digest = None
        t = hashed_time(e.get("time"))
        payload = payload_of(e)
        fields_ok = (
            all(usable_text(e.get(k)) for k in ("deal_id", "tenant_id", "type", "key_id"))
            and usable_text(e.get("actor", ""), required=False)
            and is_int(e.get("seq"), 1) and t is not None
            and isinstance(e.get("prev_hash"), str) and HEX64.match(e["prev_hash"]) is not None
            and payload is not None
        )
        if not fields_ok:
            add("malformed", "a field no sealed event can carry")
        else:
            obj = ('{"actor":%s,"deal_id":%s,"key_id":%s,"payload":%s,"prev_hash":%s,"seq":%d,'
                   '"tenant_id":%s,"time":%s,"type":%s}') % (
                _es_string(e.get("actor", "")), _es_string(e["deal_id"]), _es_string(e["key_id"]), payload,
                _es_string(e["prev_hash"]), e["seq"], _es_string(e["tenant_id"]), _es_string(t),
                _es_string(e["type"]))
            digest = hashlib.sha256(obj.encode("utf-8")).digest()
            if e.get("hash") != digest.hex():
                add("hash", "hash %s, the event hashes to %s" % (short(e.get("hash")), short(digest.hex())))
                h = e.get("hash")
                digest = bytes.fromhex(h) if isinstance(h, str) and HEX64.match(h) else None
        typ = e.get("type")
        if typ not in rg and strict:
            add("role_guard", "event type %r is not in the role guard" % typ)
        key, problem = key_problem(keys, e.get("key_id"), trusted)
        if problem:
            add("key_id", problem)
        else:
            raw, ktenant, kactor = key
            if ktenant != e.get("tenant_id"):
                add("signer", "key %s belongs to tenant %r" % (e.get("key_id"), ktenant))
            elif typ in rg and kactor not in rg[typ]:
                add("role_guard", "key %s of actor %r may not sign %r" % (e.get("key_id"), kactor, typ))
            if digest is not None:
                sig = decode_sig(e.get("signature"))
                if sig is None:
                    add("signature", "signature is not the standard base64 of 64 bytes")
                elif not ed25519_ok(raw, digest, sig):
                    add("signature", "signature does not verify with the event's key")
        prev_hash = e.get("hash")


# ---------------------------------------------------------------- main

BUNDLE_MEMBERS = {
    "debated.ledger.v1": ({"format", "debate_id", "tenant_id", "protocol", "events", "public_keys", "policy"},
                          "debate_id"),
    "debated.deal.v1": ({"format", "deal_id", "tenant_id", "protocol", "legacy_events", "events",
                         "public_keys", "policy"}, "deal_id"),
}


def verify(bundle, trust):
    if not isinstance(bundle, dict) or bundle.get("format") not in BUNDLE_MEMBERS:
        raise Invalid("not a debated bundle (format %r)" % (bundle.get("format") if isinstance(bundle, dict) else None))
    members, id_member = BUNDLE_MEMBERS[bundle["format"]]
    # Top-level members this verifier does not check (the transparency
    # log's, docs/transparency.md) are ignored, and said to be.
    ignored = sorted(set(bundle) - members)
    if not bundle.get(id_member) or not bundle.get("tenant_id"):
        raise Invalid("the bundle has no %s or tenant_id" % id_member)
    deal = bundle["format"] == "debated.deal.v1"
    report = Report()
    policy = bundle.get("policy") or {}
    keys = bundle_keys(bundle.get("public_keys", {}))
    if trust is not None:
        policy = trust_checks(bundle, trust, deal, report)
        keys = trust["keys"]
    if deal:
        verify_deal(bundle, keys, policy, trust is not None, report)
    else:
        report.problems.extend(verify_debate(bundle, keys, policy, trust is not None).problems)
    result = report.result()
    result["ignored_members"] = ignored
    return result


def verify_file(bundle_path, trusted_path):
    trust = read_trust(trusted_path) if trusted_path else None
    with open(bundle_path, "rb") as f:
        bundle = parse_json(f.read().decode("utf-8"))
    result = verify(bundle, trust)
    result["checked"] = "origin" if trust is not None else "integrity"
    return result


def batch():
    """Reads "BUNDLE<TAB>TRUSTED_KEYS_OR_EMPTY" lines from stdin and writes
    one JSON result per line (the test vectors, in one process)."""
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        bundle_path, _, trusted_path = line.partition("\t")
        try:
            result = verify_file(bundle_path, trusted_path or None)
        except (Invalid, NotCanonicalisable, ValueError, OSError) as err:
            result = {"error": str(err)}
        print(json.dumps(result, ensure_ascii=False), flush=True)
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description="verify a debated bundle offline")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--trusted-keys")
    ap.add_argument("--batch", action="store_true", help='read "BUNDLE<TAB>KEYS" lines from stdin')
    ap.add_argument("bundle", nargs="?")
    args = ap.parse_args(argv)
    if args.batch:
        return batch()
    if not args.bundle:
        ap.error("BUNDLE is required")
    try:
        result = verify_file(args.bundle, args.trusted_keys)
    except (Invalid, NotCanonicalisable, ValueError, OSError) as err:
        print("verify.py: %s" % err, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        for p in result["problems"]:
            print("  seq %d: %s: %s" % (p["seq"], p["rule"], p["detail"]))
        if result["ignored_members"]:
            print("not checked: %s" % ", ".join(result["ignored_members"]))
        if result["ok"]:
            print("bundle verifies (%s checked)" % result["checked"])
        else:
            print("bundle does not verify: first bad seq %d" % result["first_bad_seq"])
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

// Package ledger is the event ledger of a debate: an append-only,
// hash-chained list of events, each signed with an Ed25519 key derived per
// tenant and actor from a server secret, and a verifier that checks a whole
// ledger (or one event at a time, for watchers) offline, from public keys
// alone.
//
// The package is pure: it reads no clock, no environment and no database.
// Times, secrets and events are inputs; the same inputs give the same bytes.
//
// # The hashed object
//
// An event's Hash is the lowercase hex SHA-256 of the RFC 8785 (JSON
// Canonicalization Scheme) form of this object, built from the event's
// fields (every field but hash and signature):
//
//	{
//	  "actor":     Actor,      string
//	  "debate_id": DebateID,   string
//	  "key_id":    KeyID,      string
//	  "node":      Node,       string, "" when the event has no node
//	  "payload":   Payload,    a JSON object; a nil Payload is {}
//	  "prev_hash": PrevHash,   string, GenesisHash for seq 1
//	  "round":     Round,      integer
//	  "seq":       Seq,        integer
//	  "tenant_id": TenantID,   string
//	  "time":      Time,       string, Time in UTC formatted with time.RFC3339Nano
//	  "type":      Type        string
//	}
//
// Every member is always present. Strings are valid UTF-8 without NUL
// bytes; seq (from 1) and round (from 0) stay below 2^53, where RFC 8785
// numbers are exact; Seal truncates the time to microseconds (PostgreSQL's
// precision) so that a stored event re-hashes. RFC 8785 sorts the members (and those of
// the payload, at every depth), removes insignificant whitespace and fixes
// the spelling of strings and numbers, so a payload that a database returns
// with its keys reordered or re-spaced still hashes the same. The Signature
// is the standard base64 encoding of the Ed25519 signature over the 32 raw
// bytes of the hash (not over its hex text).
//
// # Keys
//
// The key of (tenant, actor) under secret version v is
// ed25519.NewKeyFromSeed(HKDF-SHA256(secret_v, salt "debated/ledger/v1",
// info tenant_id + "\x00" + actor)), and its key id is
// "<v>:<first 16 hex digits of SHA-256(public key)>". A Keyring holds every
// version: the current one signs, all of them verify, so the server secret
// can be rotated without re-signing history.
//
// # Verification
//
// Verify and Verifier check, for every event in order: contiguous seq from 1,
// one debate and tenant throughout, the hash chain, the hash, the key (known,
// matching its id, belonging to the event's tenant and actor), the signature
// and the Policy: the role guard, and the ordering rules of the agent
// protocol (seed 003), which apply to every protocol whenever their event
// types appear. See Policy for the payload fields those rules read.
//
// # Origin, not only integrity
//
// A bundle verified with the keys it carries proves only that it is
// consistent: whoever rewrote it could have re-signed it. VerifyBundleTrusted
// and VerifyDealBundleTrusted check a bundle against a Trust, the keys and
// policies the operator publishes (Keyring.Published, GetSigningKeys).
//
// # Deal audit logs
//
// A deal's audit log is chained and signed the same way (DealSealer,
// VerifyDeal, DealBundle), with its own hashed object; see deal.go.
// docs/ledger.md specifies all of it for verifiers in other languages.
package ledger

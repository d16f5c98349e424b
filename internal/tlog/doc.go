// Package tlog is the arithmetic of the tenants' transparency logs: the
// leaves (one per committed debate step, or per deal audit event), their
// RFC 6962 Merkle hashing, the perfect-subtree nodes a store keeps,
// inclusion and consistency proofs, and checkpoints in the C2SP
// tlog-checkpoint format signed as C2SP signed notes by a versioned
// checkpoint keyring.
//
// It is pure: no store, no server, no clock. Stores queue leaves and call
// Append to integrate them; the API layer asks stores for node hashes and
// turns them into proofs with Plan; verifiers (debatectl) use Verify*.
// docs/transparency.md specifies every byte, for verifiers written in
// other languages.
package tlog

package debate

// Kinds of PublicKey.
const (
	// KeyLedger signs debate ledger events (and deal audit events).
	KeyLedger = "ledger"
	// KeyCheckpoint signs the checkpoints of the tenants' transparency logs.
	KeyCheckpoint = "checkpoint"
)

// PublicKey is a public key the deployment publishes so that anyone can
// check what it signed without trusting what a bundle says about itself.
type PublicKey struct {
	// Kind is KeyLedger or KeyCheckpoint.
	Kind string
	// KeyID names the key as signed records name it: a ledger event's
	// key_id, or a checkpoint key's note name and key hash.
	KeyID string
	// Version is the version of the server secret the key derives from.
	Version string
	// Actor is the actor (role) a ledger key signs for; empty for a
	// checkpoint key.
	Actor string
	// Key is the raw Ed25519 public key (32 bytes).
	Key []byte
	// Current reports whether the key signs new records; older versions
	// still verify.
	Current bool
	// NoteVerifierKey is a checkpoint key's C2SP signed-note verifier key,
	// "<name>+<hash>+<keydata>"; empty for a ledger key.
	NoteVerifierKey string
}

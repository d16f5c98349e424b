package ledger

import (
	"sync"
)

// Sealer seals events with a keyring's current keys, deriving each
// (tenant, actor) signer once. It is safe for concurrent use and is what the
// engine's Sealer interface expects.
type Sealer struct {
	keys    *Keyring
	signers sync.Map // signerKey → Signer
}

type signerKey struct{ tenant, actor string }

// NewSealer returns a sealer over k.
func NewSealer(k *Keyring) *Sealer { return &Sealer{keys: k} }

// Seal seals e after prev (see the package function Seal) with the key of
// e's tenant and actor.
func (s *Sealer) Seal(prev *Event, e Event) (Event, error) {
	k := signerKey{e.TenantID, e.Actor}
	v, ok := s.signers.Load(k)
	if !ok {
		v, _ = s.signers.LoadOrStore(k, s.keys.Signer(e.TenantID, e.Actor))
	}
	return Seal(prev, e, v.(Signer))
}

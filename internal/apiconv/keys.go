package apiconv

import (
	"slices"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
)

// PublicKeyToProto converts a published key.
func PublicKeyToProto(k debate.PublicKey) *debatedv1.SigningKey {
	kind := debatedv1.KeyKind_KEY_KIND_UNSPECIFIED
	switch k.Kind {
	case debate.KeyLedger:
		kind = debatedv1.KeyKind_KEY_KIND_LEDGER
	case debate.KeyCheckpoint:
		kind = debatedv1.KeyKind_KEY_KIND_CHECKPOINT
	}
	return &debatedv1.SigningKey{
		Kind:            kind,
		KeyId:           k.KeyID,
		Version:         k.Version,
		Actor:           k.Actor,
		PublicKey:       slices.Clone(k.Key),
		Current:         k.Current,
		NoteVerifierKey: k.NoteVerifierKey,
	}
}

// PublicKeyFromProto converts a published key back; an unspecified kind
// maps to "".
func PublicKeyFromProto(k *debatedv1.SigningKey) debate.PublicKey {
	var kind string
	switch k.GetKind() {
	case debatedv1.KeyKind_KEY_KIND_LEDGER:
		kind = debate.KeyLedger
	case debatedv1.KeyKind_KEY_KIND_CHECKPOINT:
		kind = debate.KeyCheckpoint
	}
	return debate.PublicKey{
		Kind:            kind,
		KeyID:           k.GetKeyId(),
		Version:         k.GetVersion(),
		Actor:           k.GetActor(),
		Key:             slices.Clone(k.GetPublicKey()),
		Current:         k.GetCurrent(),
		NoteVerifierKey: k.GetNoteVerifierKey(),
	}
}

// PolicyToProto converts the ledger policy of a protocol.
func PolicyToProto(protocol string, p ledger.Policy) *debatedv1.LedgerPolicy {
	out := &debatedv1.LedgerPolicy{
		Protocol:           protocol,
		RoleGuard:          make(map[string]*debatedv1.RoleActors, len(p.RoleGuard)),
		StrictRoles:        p.StrictRoles,
		Bookkeeping:        slices.Sorted(slices.Values(p.Bookkeeping)),
		Terminal:           slices.Sorted(slices.Values(p.Terminal)),
		MinClaimExecutions: int32(min(p.MinClaimExecutions, 1<<31-1)), //nolint:gosec // clamped
	}
	for typ, actors := range p.RoleGuard {
		out.RoleGuard[typ] = &debatedv1.RoleActors{Actors: slices.Sorted(slices.Values(actors))}
	}
	return out
}

// PolicyFromProto converts a published policy back.
func PolicyFromProto(p *debatedv1.LedgerPolicy) ledger.Policy {
	out := ledger.Policy{
		StrictRoles:        p.GetStrictRoles(),
		Bookkeeping:        slices.Clone(p.GetBookkeeping()),
		Terminal:           slices.Clone(p.GetTerminal()),
		MinClaimExecutions: int(p.GetMinClaimExecutions()),
	}
	if len(p.GetRoleGuard()) > 0 {
		out.RoleGuard = make(map[string][]string, len(p.GetRoleGuard()))
		for typ, a := range p.GetRoleGuard() {
			out.RoleGuard[typ] = slices.Clone(a.GetActors())
		}
	}
	return out
}

// TrustFromProto builds the ledger.Trust that a GetSigningKeys answer (or
// the file `debatectl --json keys` printed) describes. It returns an error
// if a ledger key is damaged (see ledger.TrustFromPublished).
func TrustFromProto(r *debatedv1.GetSigningKeysResponse) (ledger.Trust, error) {
	keys := make([]debate.PublicKey, 0, len(r.GetKeys()))
	for _, k := range r.GetKeys() {
		keys = append(keys, PublicKeyFromProto(k))
	}
	policies := make(map[string]ledger.Policy, len(r.GetPolicies()))
	for _, p := range r.GetPolicies() {
		policies[p.GetProtocol()] = PolicyFromProto(p)
	}
	return ledger.TrustFromPublished(r.GetTenantId(), keys, policies)
}

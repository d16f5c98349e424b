package ledger

import (
	"errors"
	"fmt"
	"runtime"
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

func (s *Sealer) signer(tenant, actor string) Signer {
	k := signerKey{tenant, actor}
	v, ok := s.signers.Load(k)
	if !ok {
		v, _ = s.signers.LoadOrStore(k, s.keys.Signer(tenant, actor))
	}
	return v.(Signer)
}

// Seal seals e after prev (see the package function Seal) with the key of
// e's tenant and actor.
func (s *Sealer) Seal(prev *Event, e Event) (Event, error) {
	return Seal(prev, e, s.signer(e.TenantID, e.Actor))
}

// SealAll seals es as consecutive events after prev, each with the key of
// its tenant and actor: the same events, byte for byte, as sealing them one
// by one with Seal. The payloads are canonicalised concurrently (only the
// hash chain is sequential), then sealed as SealCanonical does.
func (s *Sealer) SealAll(prev *Event, es []Event) ([]Event, error) {
	canonical := make([]Event, len(es))
	errs := make([]error, len(es))
	parallel(len(es), func(i int) {
		canonical[i] = es[i]
		canonical[i].Payload, errs[i] = preparePayload(es[i].Payload)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s.SealCanonical(prev, canonical)
}

// SealCanonical is SealAll for events whose payloads are already in their
// RFC 8785 form (canon.Transform's output, as the engine makes them once
// per event): they are hashed and kept as given, not canonicalised again.
// A payload that is not canonical is sealed anyway and fails verification
// later; one that is not a JSON object is refused (ErrInvalidEvent). The
// events are signed in one batch that shares the costliest part of
// encoding the signatures (signBatch), or concurrently when a signer is
// not the keyring's.
func (s *Sealer) SealCanonical(prev *Event, es []Event) ([]Event, error) {
	out := make([]Event, len(es))
	sums := make([][32]byte, len(es))
	signers := make([]Signer, len(es))
	for i := range es {
		if !isObject(es[i].Payload) {
			return nil, fmt.Errorf("%w: payload: not a JSON object", ErrInvalidEvent)
		}
		signers[i] = s.signer(es[i].TenantID, es[i].Actor)
		var err error
		if out[i], sums[i], err = chain(prev, es[i], signers[i], es[i].Payload); err != nil {
			return nil, err
		}
		prev = &out[i]
	}
	if signBatched(out, sums, signers) {
		return out, nil
	}
	errs := make([]error, len(es))
	parallel(len(es), func(i int) {
		out[i], errs[i] = sign(out[i], sums[i], signers[i])
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// signBatched signs out[i]'s hash sums[i] with signers[i] in one batch
// (signBatch: the same signatures for about three quarters of the CPU) and
// reports true, when every signer is one of the keyring's; otherwise it
// signs nothing and reports false.
func signBatched(out []Event, sums [][32]byte, signers []Signer) bool {
	keys := make([]*expandedKey, len(out))
	msgs := make([][]byte, len(out))
	for i, s := range signers {
		ks, ok := s.(*keySigner)
		if !ok || ks.err != nil || ks.exp == nil {
			return false
		}
		keys[i], msgs[i] = ks.exp, sums[i][:]
	}
	for i, sig := range signBatch(keys, msgs) {
		out[i].Signature = encodeSig(sig)
	}
	return true
}

// parallel runs fn(0..n-1) on at most GOMAXPROCS goroutines, the caller's
// included, and returns when all have run.
func parallel(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		i := next
		next++
		return i
	}
	work := func() {
		for i := take(); i < n; i = take() {
			fn(i)
		}
	}
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

package orchestrator

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
)

// The ledger's Sealer is the engine's.
var _ Sealer = (*ledger.Sealer)(nil)

// testSealer is the real ledger's sealer and its keyring.
type testSealer struct {
	*ledger.Sealer
	kr *ledger.Keyring
}

func newLedgerSealer(t testing.TB) testSealer {
	kr, err := ledger.NewKeyring(map[string][]byte{"v1": bytes.Repeat([]byte{7}, 32)}, "v1")
	require.NoError(t, err)
	return testSealer{Sealer: ledger.NewSealer(kr), kr: kr}
}

// TestLedgerVerifies runs debates sealed by the real ledger and verifies
// them offline under the protocol's policy: the engine's role guard merged
// with the protocol's, strict roles, and the terminal rule.
func TestLedgerVerifies(t *testing.T) {
	t.Parallel()
	for _, opts := range []string{`{"rounds":2}`, `{"rounds":1,"mode":"gate"}`, `{"rounds":1,"mode":"fail"}`} {
		t.Run(opts, func(t *testing.T) {
			t.Parallel()
			sealer := newLedgerSealer(t)
			h := newHarness(t, opts, func(c *Config) { c.Sealer = sealer })
			h.run(t.Context(), nil)
			if h.d.Status == debate.DebateAwaitingReview {
				c, err := h.eng.ResolveGate(h.d, h.gate(), false, "needs another look", debate.Authority{ClaimedActor: "alice"})
				require.NoError(t, err)
				h.apply(c)
				h.run(t.Context(), nil)
			}
			require.True(t, h.d.Status.Terminal())

			events := h.events
			policy := ledger.Policy{
				RoleGuard:   h.proto.MergedRoleGuard(),
				StrictRoles: true,
				Bookkeeping: EngineEventTypes(),
				Terminal:    TerminalEventTypes(),
			}
			keys := sealer.kr.PublicKeys(h.d.TenantID, ledger.Actors(events))
			report := ledger.Verify(events, keys, policy)
			require.True(t, report.OK, "%+v", report.Problems)

			// A node event re-signed by another role breaks the guard.
			forged := append([]ledger.Event(nil), events...)
			for i, e := range forged {
				if e.Type == "argument" {
					e.Actor = "arbiter"
					var prev *ledger.Event
					if i > 0 {
						prev = &forged[i-1]
					}
					forged[i], _ = ledger.Seal(prev, e, sealer.kr.Signer(e.TenantID, "arbiter"))
					break
				}
			}
			keys = sealer.kr.PublicKeys(h.d.TenantID, ledger.Actors(forged))
			bad := ledger.Verify(forged, keys, policy)
			require.False(t, bad.OK)
			require.Equal(t, ledger.RuleRoleGuard, bad.Problems[0].Rule, "%+v", bad.Problems)
		})
	}
}

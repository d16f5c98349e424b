package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

func TestDealChain(t *testing.T) {
	storetest.RunDealChain(t, storetest.DealChainStores{
		NewDatabase: func(t *testing.T) func(debate.DealSealer) storetest.Store {
			path := filepath.Join(t.TempDir(), "debated.db")
			return func(sealer debate.DealSealer) storetest.Store {
				s, err := OpenConfig(context.Background(), Config{Path: path, DealSealer: sealer})
				require.NoError(t, err)
				t.Cleanup(s.Close)
				return s
			}
		},
		Rewrite: func(t *testing.T, s storetest.Store, tenantID, dealID string, seq int64, payload string) {
			ctx := context.Background()
			w := s.(*Store).write
			// Whoever holds the file can drop the append-only trigger.
			_, err := w.ExecContext(ctx, `DROP TRIGGER deal_events_no_update`)
			require.NoError(t, err)
			res, err := w.ExecContext(ctx, `UPDATE deal_events SET payload = ? WHERE tenant_id = ? AND deal_id = ? AND seq = ?`,
				payload, tenantID, dealID, seq)
			require.NoError(t, err)
			n, err := res.RowsAffected()
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
		},
	})
}

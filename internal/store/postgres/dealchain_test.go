package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/store/storetest"
)

func TestDealChain(t *testing.T) {
	storetest.RunDealChain(t, storetest.DealChainStores{
		NewDatabase: func(t *testing.T) func(debate.DealSealer) storetest.Store {
			setup(t)
			return func(sealer debate.DealSealer) storetest.Store {
				s, err := New(context.Background(), Config{URL: testDB.url, MaxConns: 2, DealSealer: sealer})
				require.NoError(t, err)
				t.Cleanup(s.Close)
				return s
			}
		},
		Rewrite: func(t *testing.T, _ storetest.Store, tenantID, dealID string, seq int64, payload string) {
			ctx := context.Background()
			// As the superuser the tests connect as: past row-level
			// security, and, in replica mode, past the append-only trigger.
			conn, err := pgx.Connect(ctx, testDB.url)
			require.NoError(t, err)
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, `SET session_replication_role = replica`)
			require.NoError(t, err)
			tag, err := conn.Exec(ctx, `UPDATE deal_events SET payload = $4::jsonb WHERE tenant_id = $1 AND deal_id = $2 AND seq = $3`,
				tenantID, dealID, seq, payload)
			require.NoError(t, err)
			require.Equal(t, int64(1), tag.RowsAffected())
		},
	})
}

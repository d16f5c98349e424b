package main

import (
	"bytes"
	"context"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestPublishedKeysAndDealAudit runs the real service: the keys it publishes
// are the keys its ledgers are signed with, deal gradings are chained and
// verify, a deal_events row rewritten by the database owner is caught, and
// another tenant gets NotFound.
func TestPublishedKeysAndDealAudit(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := startStack(t, kind, nil)
			keys := debatedv1.NewKeyServiceClient(s.conn)
			audit := debatedv1.NewDealAuditServiceClient(s.conn)

			d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 1})
			msgs := s.watch(t, s.a, d.GetDebateId(), 0, nil)
			pub, err := keys.GetSigningKeys(s.a, &debatedv1.GetSigningKeysRequest{})
			require.NoError(t, err)
			byID := map[string]*debatedv1.SigningKey{}
			checkpointKeys := 0
			for _, k := range pub.GetKeys() {
				if k.GetKind() == debatedv1.KeyKind_KEY_KIND_CHECKPOINT {
					// The log's checkpoint key is published beside the ledger's.
					require.NotEmpty(t, k.GetNoteVerifierKey())
					checkpointKeys++
					continue
				}
				require.Equal(t, debatedv1.KeyKind_KEY_KIND_LEDGER, k.GetKind())
				byID[k.GetKeyId()] = k
			}
			require.Equal(t, 1, checkpointKeys, "the transparency log's checkpoint key is published")
			for _, m := range msgs {
				e := m.GetEvent()
				if e == nil {
					continue
				}
				k, ok := byID[e.GetKeyId()]
				require.Truef(t, ok, "key %s of seq %d is not published", e.GetKeyId(), e.GetSeq())
				require.Equal(t, e.GetActor(), k.GetActor())
				require.True(t, k.GetCurrent())
			}
			var protocols []string
			for _, p := range pub.GetPolicies() {
				protocols = append(protocols, p.GetProtocol())
			}
			require.Contains(t, protocols, "synthetic.v1")
			require.Contains(t, protocols, "deal.audit.v1")
			other, err := keys.GetSigningKeys(s.b, &debatedv1.GetSigningKeysRequest{})
			require.NoError(t, err)
			require.NotEqual(t, pub.GetTenantId(), other.GetTenantId())
			require.False(t, bytes.Equal(pub.GetKeys()[0].GetPublicKey(), other.GetKeys()[0].GetPublicKey()), "keys are per tenant")

			reg := debatedv1.NewRegistryServiceClient(s.conn)
			_, err = reg.GradeDeal(s.a, &debatedv1.GradeDealRequest{DealId: "deal-a"})
			require.NoError(t, err)
			v, err := audit.VerifyDeal(s.a, &debatedv1.VerifyDealRequest{DealId: "deal-a"})
			require.NoError(t, err)
			require.Truef(t, v.GetOk(), "%v", v.GetProblems())
			require.Positive(t, v.GetEventCount())
			require.Zero(t, v.GetLegacyEventCount())
			_, err = audit.VerifyDeal(s.b, &debatedv1.VerifyDealRequest{DealId: "deal-a"})
			require.Equal(t, codes.NotFound, status.Code(err))
			_, err = audit.ExportDeal(s.b, &debatedv1.ExportDealRequest{DealId: "deal-a"})
			require.Equal(t, codes.NotFound, status.Code(err))
			_, err = audit.VerifyDeal(s.a, &debatedv1.VerifyDealRequest{})
			require.Equal(t, codes.InvalidArgument, status.Code(err))

			if kind != "postgres" {
				return
			}
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, s.dbURL)
			require.NoError(t, err)
			defer conn.Close(ctx)
			// A superuser cuts the audit log's last event: the shorter chain
			// is consistent in itself, but the tenant's transparency log
			// recorded the cut head.
			var lastSeq int64
			require.NoError(t, conn.QueryRow(ctx, `SELECT max(seq) FROM deal_events WHERE deal_id = 'deal-a' AND tenant_id = $1`,
				pub.GetTenantId()).Scan(&lastSeq))
			_, err = conn.Exec(ctx, `SET session_replication_role = replica`)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, `DELETE FROM deal_events WHERE deal_id = 'deal-a' AND tenant_id = $1 AND seq = $2`, pub.GetTenantId(), lastSeq)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, `SET session_replication_role = DEFAULT`)
			require.NoError(t, err)
			v, err = audit.VerifyDeal(s.a, &debatedv1.VerifyDealRequest{DealId: "deal-a"})
			require.NoError(t, err)
			require.False(t, v.GetOk(), "a cut audit log is caught by the transparency log")
			var rules []string
			for _, p := range v.GetProblems() {
				rules = append(rules, p.GetRule())
			}
			require.Contains(t, rules, "log")

			tx, err := conn.Begin(ctx)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `ALTER TABLE deal_events DISABLE TRIGGER USER`)
			require.NoError(t, err)
			tag, err := tx.Exec(ctx, `UPDATE deal_events SET actor = 'someone-else' WHERE deal_id = 'deal-a' AND tenant_id = $1 AND seq = 2`, pub.GetTenantId())
			require.NoError(t, err)
			require.Equal(t, int64(1), tag.RowsAffected())
			_, err = tx.Exec(ctx, `ALTER TABLE deal_events ENABLE TRIGGER USER`)
			require.NoError(t, err)
			require.NoError(t, tx.Commit(ctx))
			v, err = audit.VerifyDeal(s.a, &debatedv1.VerifyDealRequest{DealId: "deal-a"})
			require.NoError(t, err)
			require.False(t, v.GetOk())
			require.Equal(t, int64(2), v.GetFirstBadSeq())
		})
	}
}

package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// requireRevokedStreamEnds opens a WatchDebate through watchConn with a
// fresh key, waits for the debate's gate (the stream then stays open with
// nothing to send), revokes the key through adminConn and requires the
// stream to end with UNAUTHENTICATED within a few seconds.
func requireRevokedStreamEnds(t *testing.T, adminConn, watchConn *grpc.ClientConn) {
	t.Helper()
	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer e2e-admin")
	admin := debatedv1.NewAdminServiceClient(adminConn)
	tr, err := admin.CreateTenant(actx, &debatedv1.CreateTenantRequest{Name: "revoked"})
	require.NoError(t, err)
	kr, err := admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tr.GetTenant().GetTenantId()})
	require.NoError(t, err)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+kr.GetSecret())
	req, err := apiconv.BundleToProto(storetest.SampleBundle("deal-r"))
	require.NoError(t, err)
	_, err = debatedv1.NewRegistryServiceClient(adminConn).ImportDeal(ctx, req)
	require.NoError(t, err)
	d, err := debatedv1.NewDebateServiceClient(adminConn).CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: "deal-r",
		Protocol: "synthetic.v1", Options: mustStruct(t, map[string]any{"max_rounds": 2, "gate_round": 1})})
	require.NoError(t, err)

	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	st, err := debatedv1.NewDebateServiceClient(watchConn).WatchDebate(wctx, &debatedv1.WatchDebateRequest{DebateId: d.GetDebate().GetDebateId()})
	require.NoError(t, err)
	for {
		msg, err := st.Recv()
		require.NoError(t, err)
		if isGate(msg) {
			break
		}
	}
	_, err = admin.RevokeAPIKey(actx, &debatedv1.RevokeAPIKeyRequest{KeyId: kr.GetApiKey().GetKeyId()})
	require.NoError(t, err)
	revoked := time.Now()
	for {
		_, err = st.Recv()
		if err != nil {
			break
		}
	}
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
	require.Less(t, time.Since(revoked), 10*time.Second, "the stream ends within seconds of the revocation")
}

// TestRevokedKeyEndsStreams: an open WatchDebate of a key revoked meanwhile
// ends with UNAUTHENTICATED, on the embedded store and across two
// PostgreSQL replicas (revoked on one, watched on the other).
func TestRevokedKeyEndsStreams(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		s := startStack(t, "sqlite", map[string]string{"DEBATED_KEY_RECHECK": "300ms"})
		requireRevokedStreamEnds(t, s.conn, s.conn)
	})
	t.Run("replicas", func(t *testing.T) {
		t.Parallel()
		url := migratedDatabase(t)
		env := []string{"DEBATED_DATABASE_URL=" + url, "DEBATED_MIGRATE_ON_START=false", "DEBATED_SIGNING_KEYS=" + testSigningKeys,
			"DEBATED_CHECKPOINT_KEYS=" + testCheckpointKeys, "DEBATED_ADMIN_TOKEN=e2e-admin", "DEBATED_KEY_RECHECK=300ms"}
		addrA, addrB := freeAddr(t), freeAddr(t)
		startChild(t, addrA, env)
		startChild(t, addrB, env)
		connA, err := grpc.NewClient(addrA, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer connA.Close()
		connB, err := grpc.NewClient(addrB, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer connB.Close()
		waitServing(t, connA)
		waitServing(t, connB)
		requireRevokedStreamEnds(t, connA, connB)
	})
}

// TestGateResolutionRecordsItsAuthority: a gate resolved "as" a named actor
// with a key without the admin scope records, in the signed
// human_gate.resolved event, the authenticated key and its scopes beside the
// claimed name.
func TestGateResolutionRecordsItsAuthority(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer e2e-admin")
	admin := debatedv1.NewAdminServiceClient(s.conn)
	tr, err := admin.CreateTenant(actx, &debatedv1.CreateTenantRequest{Name: "gates"})
	require.NoError(t, err)
	kr, err := admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tr.GetTenant().GetTenantId(), Name: "intern"})
	require.NoError(t, err)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+kr.GetSecret())
	req, err := apiconv.BundleToProto(storetest.SampleBundle("deal-g"))
	require.NoError(t, err)
	_, err = debatedv1.NewRegistryServiceClient(s.conn).ImportDeal(ctx, req)
	require.NoError(t, err)
	authority := func(typ string, msgs []*debatedv1.WatchDebateResponse) map[string]any {
		for _, m := range msgs {
			if m.GetEvent().GetEventType() != typ {
				continue
			}
			var p map[string]any
			require.NoError(t, json.Unmarshal([]byte(m.GetEvent().GetPayloadJson()), &p))
			require.Equal(t, "managing-partner@fund", p["by"], "the claimed name is shown")
			a, ok := p["authority"].(map[string]any)
			require.True(t, ok, "%s has no authority: %v", typ, p)
			return a
		}
		require.FailNow(t, "no "+typ+" event")
		return nil
	}
	want := map[string]any{"key_id": kr.GetApiKey().GetKeyId(), "scopes": []any{}, "claimed_actor": "managing-partner@fund"}

	d := s.create(t, ctx, "deal-g", map[string]any{"max_rounds": 2, "gate_round": 1})
	s.watch(t, ctx, d.GetDebateId(), 0, isGate)
	got, err := s.debate.GetDebate(ctx, &debatedv1.GetDebateRequest{DebateId: d.GetDebateId()})
	require.NoError(t, err)
	_, err = s.debate.ResolveHumanGate(ctx, &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(),
		GateId: got.GetGates()[0].GetGateId(), Approve: true, Reason: "numbers checked", Actor: "managing-partner@fund"})
	require.NoError(t, err)
	msgs := s.watch(t, ctx, d.GetDebateId(), 0, nil)
	require.Equal(t, want, authority("human_gate.resolved", msgs))
	v, err := s.debate.VerifyDebate(ctx, &debatedv1.VerifyDebateRequest{DebateId: d.GetDebateId()})
	require.NoError(t, err)
	require.True(t, v.GetOk(), "%v", v.GetProblems())
}

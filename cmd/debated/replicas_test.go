package main

import (
	"context"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// TestTwoReplicas runs two debated processes on one PostgreSQL: debates
// spread over both; one is killed and the other finishes every debate; a
// watcher attached to the survivor receives every event once, in order.
func TestTwoReplicas(t *testing.T) {
	t.Parallel()
	url := migratedDatabase(t)
	env := []string{"DEBATED_DATABASE_URL=" + url, "DEBATED_MIGRATE_ON_START=false", "DEBATED_SIGNING_KEYS=" + testSigningKeys, "DEBATED_CHECKPOINT_KEYS=" + testCheckpointKeys,
		"DEBATED_ADMIN_TOKEN=crash-admin", "DEBATED_JOB_SLICE=300ms", "DEBATED_RESCUE_AFTER=700ms", "DEBATED_WORKERS=4"}

	addrA, addrB := freeAddr(t), freeAddr(t)
	a := startChild(t, addrA, env)
	startChild(t, addrB, env)
	connA, err := grpc.NewClient(addrA, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer connA.Close()
	connB, err := grpc.NewClient(addrB, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer connB.Close()
	waitServing(t, connA)
	waitServing(t, connB)

	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer crash-admin")
	tr, err := debatedv1.NewAdminServiceClient(connA).CreateTenant(actx, &debatedv1.CreateTenantRequest{Name: "replicas"})
	require.NoError(t, err)
	kr, err := debatedv1.NewAdminServiceClient(connA).CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tr.GetTenant().GetTenantId()})
	require.NoError(t, err)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+kr.GetSecret())
	req, err := apiconv.BundleToProto(storetest.SampleBundle("deal-r"))
	require.NoError(t, err)
	_, err = debatedv1.NewRegistryServiceClient(connA).ImportDeal(ctx, req)
	require.NoError(t, err)

	dcA, dcB := debatedv1.NewDebateServiceClient(connA), debatedv1.NewDebateServiceClient(connB)
	var ids []string
	create := func() {
		for range 12 {
			resp, err := dcA.CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: "deal-r", Protocol: "synthetic.v1",
				Options: mustStruct(t, map[string]any{"max_rounds": 5, "message_bytes": 300})})
			require.NoError(t, err)
			ids = append(ids, resp.GetDebate().GetDebateId())
		}
	}
	create()
	// A watcher on the survivor, attached before the kill.
	type result struct {
		msgs []*debatedv1.WatchDebateResponse
	}
	watched := make(chan result, 1)
	last := ids[len(ids)-1]
	go func() {
		s := &stack{debate: dcB}
		watched <- result{s.watch(t, ctx, last, 0, nil)}
	}()
	// Kill A once both replicas have taken debates (River records which
	// client attempted each job).
	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	spread := func() int {
		var n int
		require.NoError(t, conn.QueryRow(context.Background(),
			`SELECT count(DISTINCT c) FROM river_job, unnest(attempted_by) AS c WHERE kind = 'debated.debate'`).Scan(&n))
		return n
	}
	// A replica's workers start beside its gRPC server, not before it is
	// healthy: on a loaded machine A can finish the first dozen before B
	// fetches a job, so another dozen goes in each second until B has one.
	deadline := time.Now().Add(20 * time.Second)
	for next := time.Now().Add(time.Second); spread() < 2; {
		require.True(t, time.Now().Before(deadline), "debates did not spread over both replicas")
		if time.Now().After(next) {
			create()
			next = time.Now().Add(time.Second)
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.kill()

	sB := &stack{debate: dcB}
	for _, id := range ids {
		msgs := sB.watch(t, ctx, id, 0, nil)
		requireChain(t, msgs, 1)
		require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus(), "debate %s", id)
		v, err := dcB.VerifyDebate(ctx, &debatedv1.VerifyDebateRequest{DebateId: id})
		require.NoError(t, err)
		require.True(t, v.GetOk(), "%v", v.GetProblems())
	}
	w := <-watched
	requireChain(t, w.msgs, 1)
	require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, w.msgs[len(w.msgs)-1].GetStatus())

	clients := spread()
	require.GreaterOrEqual(t, clients, 2, "debates should spread over both replicas")
	t.Logf("%d debates finished after a replica was killed; %d River clients worked them", len(ids), clients)
}

package server_test

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/synthetic"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/postgres"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/stream"
	"github.com/debated/debated/internal/testutil/pgtest"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

type debateStore interface {
	store
	debate.DebateStore
}

// setupKeys starts a server with DebateService (and so KeyService and
// DealAuditService) over a store of kind whose deal events are sealed, and
// with the given checkpoint keys.
func setupKeys(t *testing.T, kind string, checkpoint func() []debate.PublicKey) (*bundle, *ledger.Keyring) {
	t.Helper()
	ctx := context.Background()
	keys, err := ledger.NewKeyring(map[string][]byte{
		"v1": []byte("server-keys-test-secret-v1-0123456789"),
		"v2": []byte("server-keys-test-secret-v2-0123456789"),
	}, "v2")
	require.NoError(t, err)
	var st debateStore
	switch kind {
	case "sqlite":
		s, err := sqlite.OpenConfig(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "d.db"), DealSealer: ledger.NewDealSealer(keys)})
		require.NoError(t, err)
		st = s
	case "postgres":
		url := pgtest.NewDatabase(t)
		require.NoError(t, postgres.Migrate(ctx, url))
		s, err := postgres.New(ctx, postgres.Config{URL: url, DealSealer: ledger.NewDealSealer(keys)})
		require.NoError(t, err)
		st = s
	}
	t.Cleanup(st.Close)
	reg, err := orchestrator.NewRegistry(synthetic.Protocol())
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)
	hub := stream.New(st, stream.Config{Logger: slog.New(slog.DiscardHandler)})
	srv, err := server.New(server.Stores{Tenants: st, Registry: st, Grading: st,
		Debates: &server.Debates{Store: st, Engine: eng, Protocols: reg, Keys: keys, Hub: hub}},
		server.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler), CheckpointKeys: checkpoint})
	require.NoError(t, err)
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return &bundle{conn: conn, admin: debatedv1.NewAdminServiceClient(conn), registry: debatedv1.NewRegistryServiceClient(conn)}, keys
}

func TestGetSigningKeysAndDealAudit(t *testing.T) {
	t.Parallel()
	checkpoint := debate.PublicKey{Kind: debate.KeyCheckpoint, KeyID: "debated.example/log", Version: "c1",
		Key: make([]byte, 32), Current: true, NoteVerifierKey: "debated.example/log+01234567+AAAA"}
	forEachStore(t, func(t *testing.T, kind string) {
		b, kr := setupKeys(t, kind, func() []debate.PublicKey { return []debate.PublicKey{checkpoint} })
		tenantA, a := b.tenant(t, "a")
		_, other := b.tenant(t, "b")
		keys := debatedv1.NewKeyServiceClient(b.conn)
		audit := debatedv1.NewDealAuditServiceClient(b.conn)

		pub, err := keys.GetSigningKeys(a, &debatedv1.GetSigningKeysRequest{})
		require.NoError(t, err)
		require.Equal(t, tenantA, pub.GetTenantId())
		// Every actor of the protocol and of the deal log, under both
		// versions, v2 current; then the checkpoint key.
		want := map[string]bool{debate.ActorGrader: true, ledger.DealActorOperator: true}
		for _, actors := range synthetic.Protocol().MergedRoleGuard() {
			for _, a := range actors {
				want[a] = true
			}
		}
		var actors []string
		for _, k := range pub.GetKeys()[:len(pub.GetKeys())-1] {
			require.Equal(t, debatedv1.KeyKind_KEY_KIND_LEDGER, k.GetKind())
			id, info, err := kr.PublicKey(tenantA, k.GetActor(), k.GetVersion())
			require.NoError(t, err)
			require.Equal(t, id, k.GetKeyId())
			require.Equal(t, []byte(info.Key), k.GetPublicKey())
			require.Equal(t, k.GetVersion() == "v2", k.GetCurrent())
			actors = append(actors, k.GetActor())
		}
		require.Len(t, actors, 2*len(want))
		for a := range want {
			require.Contains(t, actors, a)
		}
		last := pub.GetKeys()[len(pub.GetKeys())-1]
		require.Equal(t, debatedv1.KeyKind_KEY_KIND_CHECKPOINT, last.GetKind())
		require.Equal(t, checkpoint.NoteVerifierKey, last.GetNoteVerifierKey())
		var protocols []string
		for _, p := range pub.GetPolicies() {
			protocols = append(protocols, p.GetProtocol())
		}
		require.Equal(t, []string{ledger.DealProtocol, "synthetic.v1"}, protocols, "sorted by protocol")

		// The deal audit log: chained on grading, verified online and, from
		// its export, against the published keys.
		_, err = b.registry.ImportDeal(a, importRequest(t, "deal-k"))
		require.NoError(t, err)
		_, err = b.registry.GradeDeal(a, &debatedv1.GradeDealRequest{DealId: "deal-k"})
		require.NoError(t, err)
		v, err := audit.VerifyDeal(a, &debatedv1.VerifyDealRequest{DealId: "deal-k"})
		require.NoError(t, err)
		require.Truef(t, v.GetOk(), "%v", v.GetProblems())
		require.Positive(t, v.GetEventCount())
		require.Len(t, v.GetHeadHash(), 64)
		exp, err := audit.ExportDeal(a, &debatedv1.ExportDealRequest{DealId: "deal-k"})
		require.NoError(t, err)
		db, err := ledger.ParseDealBundle([]byte(exp.GetBundleJson()))
		require.NoError(t, err)
		require.Equal(t, v.GetHeadHash(), db.Events[len(db.Events)-1].Hash)
		trust, err := apiconv.TrustFromProto(pub)
		require.NoError(t, err)
		r := ledger.VerifyDealBundleTrusted(db, trust)
		require.Truef(t, r.OK, "%+v", r.Problems)

		// Another tenant's keys do not vouch for it, and it cannot read it.
		otherPub, err := keys.GetSigningKeys(other, &debatedv1.GetSigningKeysRequest{})
		require.NoError(t, err)
		otherTrust, err := apiconv.TrustFromProto(otherPub)
		require.NoError(t, err)
		require.False(t, ledger.VerifyDealBundleTrusted(db, otherTrust).OK)
		_, err = audit.VerifyDeal(other, &debatedv1.VerifyDealRequest{DealId: "deal-k"})
		requireCode(t, err, codes.NotFound)
		_, err = audit.ExportDeal(other, &debatedv1.ExportDealRequest{DealId: "deal-k"})
		requireCode(t, err, codes.NotFound)
		_, err = keys.GetSigningKeys(context.Background(), &debatedv1.GetSigningKeysRequest{})
		requireCode(t, err, codes.Unauthenticated)
	})
}

// TestValidateOutputWithoutAChecker: a server whose protocols check no
// agent outputs says so (Unimplemented), whatever the request.
func TestValidateOutputWithoutAChecker(t *testing.T) {
	t.Parallel()
	b, _ := setupKeys(t, "sqlite", nil)
	_, ctx := b.tenant(t, "a")
	_, err := debatedv1.NewDebateServiceClient(b.conn).ValidateOutput(ctx, &debatedv1.ValidateOutputRequest{DealId: "deal-1", OutputJson: "{}"})
	require.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
}

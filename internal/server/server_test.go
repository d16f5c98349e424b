package server_test

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/postgres"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/testutil/pgtest"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
)

const adminToken = "test-admin-token"

type store interface {
	debate.TenantStore
	debate.RegistryStore
	debate.GradingStore
	Close()
}

// openStore returns a fresh store of the given kind.
func openStore(t testing.TB, kind string) store {
	t.Helper()
	ctx := context.Background()
	switch kind {
	case "sqlite":
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "debated.db"))
		require.NoError(t, err)
		t.Cleanup(st.Close)
		return st
	case "postgres":
		url := pgtest.NewDatabase(t)
		require.NoError(t, postgres.Migrate(ctx, url))
		st, err := postgres.New(ctx, postgres.Config{URL: url})
		require.NoError(t, err)
		t.Cleanup(st.Close)
		return st
	}
	t.Fatalf("unknown store %q", kind)
	return nil
}

var storeKinds = []string{"sqlite", "postgres"}

// bundle is the running server of one test and its clients.
type bundle struct {
	conn     *grpc.ClientConn
	admin    debatedv1.AdminServiceClient
	registry debatedv1.RegistryServiceClient
}

func setup(t testing.TB, kind string, token string, opts ...func(*server.Config)) *bundle {
	t.Helper()
	st := openStore(t, kind)
	cfg := server.Config{AdminToken: token, MaxRecvMsgSize: 8 << 20, Logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.New(server.Stores{Tenants: st, Registry: st, Grading: st}, cfg)
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
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return &bundle{conn: conn, admin: debatedv1.NewAdminServiceClient(conn), registry: debatedv1.NewRegistryServiceClient(conn)}
}

func bearer(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// tenant creates a tenant and an API key and returns the tenant id and a
// context carrying the key.
func (b *bundle) tenant(t testing.TB, name string) (string, context.Context) {
	t.Helper()
	ctx := bearer(context.Background(), adminToken)
	tr, err := b.admin.CreateTenant(ctx, &debatedv1.CreateTenantRequest{Name: name})
	require.NoError(t, err)
	kr, err := b.admin.CreateAPIKey(ctx, &debatedv1.CreateAPIKeyRequest{TenantId: tr.GetTenant().GetTenantId(), Name: "k"})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(kr.GetSecret(), "dbk_"))
	require.True(t, strings.HasPrefix(kr.GetSecret(), kr.GetApiKey().GetPrefix()))
	return tr.GetTenant().GetTenantId(), bearer(context.Background(), kr.GetSecret())
}

func importRequest(t testing.TB, dealID string) *debatedv1.ImportDealRequest {
	t.Helper()
	req, err := apiconv.BundleToProto(storetest.SampleBundle(dealID))
	require.NoError(t, err)
	return req
}

func requireCode(t testing.TB, err error, want codes.Code) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want, status.Code(err), "error: %v", err)
}

// fieldViolations returns the field paths of an InvalidArgument error.
func fieldViolations(t testing.TB, err error) []string {
	t.Helper()
	requireCode(t, err, codes.InvalidArgument)
	var fields []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				require.NotEmpty(t, v.GetDescription())
				fields = append(fields, v.GetField())
			}
		}
	}
	require.NotEmpty(t, fields, "InvalidArgument without field violations: %v", err)
	return fields
}

func forEachStore(t *testing.T, f func(t *testing.T, kind string)) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f(t, kind)
		})
	}
}

func TestHealthAndReflectionNeedNoCredential(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		resp, err := healthpb.NewHealthClient(b.conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
		require.NoError(t, err)
		require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())
		resp, err = healthpb.NewHealthClient(b.conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "debated.v1.RegistryService"})
		require.NoError(t, err)
		require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())
	})
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		tenantID, tctx := b.tenant(t, "acme")
		bg := context.Background()

		_, err := b.registry.ListDeals(bg, &debatedv1.ListDealsRequest{})
		requireCode(t, err, codes.Unauthenticated)
		_, err = b.registry.ListDeals(bearer(bg, "dbk_not-a-key"), &debatedv1.ListDealsRequest{})
		requireCode(t, err, codes.Unauthenticated)
		_, err = b.registry.ListDeals(bearer(bg, adminToken), &debatedv1.ListDealsRequest{})
		requireCode(t, err, codes.Unauthenticated)
		_, err = b.admin.ListTenants(tctx, &debatedv1.ListTenantsRequest{})
		requireCode(t, err, codes.Unauthenticated)
		_, err = b.admin.ListTenants(bg, &debatedv1.ListTenantsRequest{})
		requireCode(t, err, codes.Unauthenticated)

		_, err = b.registry.ListDeals(tctx, &debatedv1.ListDealsRequest{})
		require.NoError(t, err)

		// A revoked key stops working at once.
		actx := bearer(bg, adminToken)
		kr, err := b.admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tenantID, Scopes: []debatedv1.Scope{debatedv1.Scope_SCOPE_ADMIN}})
		require.NoError(t, err)
		require.Equal(t, []debatedv1.Scope{debatedv1.Scope_SCOPE_ADMIN}, kr.GetApiKey().GetScopes())
		kctx := bearer(bg, kr.GetSecret())
		_, err = b.registry.ListDeals(kctx, &debatedv1.ListDealsRequest{})
		require.NoError(t, err)
		rr, err := b.admin.RevokeAPIKey(actx, &debatedv1.RevokeAPIKeyRequest{KeyId: kr.GetApiKey().GetKeyId()})
		require.NoError(t, err)
		require.NotNil(t, rr.GetApiKey().GetRevokeTime())
		_, err = b.registry.ListDeals(kctx, &debatedv1.ListDealsRequest{})
		requireCode(t, err, codes.Unauthenticated)

		_, err = b.admin.RevokeAPIKey(actx, &debatedv1.RevokeAPIKeyRequest{KeyId: "6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30"})
		requireCode(t, err, codes.NotFound)
		_, err = b.admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: "6f1c2a4e-0b7d-4c3e-9a52-1d8e7f6a9b30"})
		requireCode(t, err, codes.NotFound)
		// Tenant and key ids are UUIDs the server made: a malformed one is a
		// bad argument naming the field, not a missing object.
		_, err = b.admin.RevokeAPIKey(actx, &debatedv1.RevokeAPIKeyRequest{KeyId: "no-such-key"})
		requireCode(t, err, codes.InvalidArgument)
		require.Equal(t, []string{"key_id"}, fieldViolations(t, err))
		_, err = b.admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: "no-such-tenant"})
		requireCode(t, err, codes.InvalidArgument)
		require.Equal(t, []string{"tenant_id"}, fieldViolations(t, err))
		_, err = b.admin.CreateAPIKey(actx, &debatedv1.CreateAPIKeyRequest{TenantId: tenantID, Scopes: []debatedv1.Scope{99}})
		require.Contains(t, fieldViolations(t, err), "scopes[0]")
	})
}

func TestAdminAPIDisabledWithoutToken(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", "")
	_, err := b.admin.CreateTenant(bearer(context.Background(), ""), &debatedv1.CreateTenantRequest{Name: "x"})
	requireCode(t, err, codes.Unauthenticated)
	_, err = b.admin.CreateTenant(bearer(context.Background(), "anything"), &debatedv1.CreateTenantRequest{Name: "x"})
	requireCode(t, err, codes.Unauthenticated)
	require.Contains(t, status.Convert(err).Message(), "DEBATED_ADMIN_TOKEN")
}

func TestListTenantsPaginates(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		ctx := bearer(context.Background(), adminToken)
		want := map[string]bool{}
		for i := range 5 {
			id, _ := b.tenant(t, "t"+string(rune('a'+i)))
			want[id] = true
		}
		got := map[string]bool{}
		token := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10)
			resp, err := b.admin.ListTenants(ctx, &debatedv1.ListTenantsRequest{PageSize: 2, PageToken: token})
			require.NoError(t, err)
			require.LessOrEqual(t, len(resp.GetTenants()), 2)
			for _, tn := range resp.GetTenants() {
				require.False(t, got[tn.GetTenantId()], "tenant listed twice")
				got[tn.GetTenantId()] = true
			}
			if token = resp.GetNextPageToken(); token == "" {
				break
			}
		}
		require.Equal(t, want, got)
		_, err := b.admin.ListTenants(ctx, &debatedv1.ListTenantsRequest{PageToken: "%%%not-a-cursor"})
		requireCode(t, err, codes.InvalidArgument)
	})
}

func TestImportAndRead(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		_, ctx := b.tenant(t, "acme")
		req := importRequest(t, "deal-1")

		resp, err := b.registry.ImportDeal(ctx, req)
		require.NoError(t, err)
		require.True(t, resp.GetCreated())
		sum := resp.GetDeal()
		require.Equal(t, "deal-1", sum.GetDeal().GetDealId())
		require.EqualValues(t, len(req.GetClaims()), sum.GetClaimCount())
		require.EqualValues(t, len(req.GetEvidenceItems()), sum.GetEvidenceItemCount())
		require.EqualValues(t, len(req.GetSpans()), sum.GetSpanCount())
		require.EqualValues(t, len(req.GetSanads()), sum.GetSanadCount())
		require.EqualValues(t, len(req.GetDocuments()), sum.GetDocumentCount())
		require.EqualValues(t, len(req.GetCalcs()), sum.GetCalcCount())
		require.Len(t, sum.GetContentHash(), 64)

		// Re-import, even with the arrays in another order, is a no-op.
		again := proto.Clone(req).(*debatedv1.ImportDealRequest)
		for i, j := 0, len(again.Claims)-1; i < j; i, j = i+1, j-1 {
			again.Claims[i], again.Claims[j] = again.Claims[j], again.Claims[i]
		}
		resp2, err := b.registry.ImportDeal(ctx, again)
		require.NoError(t, err)
		require.False(t, resp2.GetCreated())
		require.Equal(t, sum.GetContentHash(), resp2.GetDeal().GetContentHash())

		got, err := b.registry.GetDeal(ctx, &debatedv1.GetDealRequest{DealId: "deal-1"})
		require.NoError(t, err)
		require.True(t, proto.Equal(sum, got.GetDeal()), "GetDeal differs from the import's summary")

		list, err := b.registry.ListDeals(ctx, &debatedv1.ListDealsRequest{})
		require.NoError(t, err)
		require.Len(t, list.GetDeals(), 1)

		// Every claim reads back as imported.
		for _, c := range req.GetClaims() {
			gc, err := b.registry.GetClaim(ctx, &debatedv1.GetClaimRequest{ClaimId: c.GetClaimId()})
			require.NoError(t, err)
			want := proto.Clone(c).(*debatedv1.Claim)
			want.DealId = "deal-1"
			require.True(t, proto.Equal(want, gc.GetClaim()), "claim %s: got %v want %v", c.GetClaimId(), gc.GetClaim(), want)
		}

		// Listing walks all pages in key order; filters narrow.
		var keys []string
		token := ""
		for {
			lc, err := b.registry.ListClaims(ctx, &debatedv1.ListClaimsRequest{DealId: "deal-1", PageSize: 3, PageToken: token})
			require.NoError(t, err)
			for _, c := range lc.GetClaims() {
				keys = append(keys, c.GetClaimKey())
			}
			if token = lc.GetNextPageToken(); token == "" {
				break
			}
		}
		require.Len(t, keys, len(req.GetClaims()))
		require.IsNonDecreasing(t, keys)
		var critical int
		for _, c := range req.GetClaims() {
			if c.GetMateriality() == debatedv1.Materiality_MATERIALITY_CRITICAL {
				critical++
			}
		}
		lc, err := b.registry.ListClaims(ctx, &debatedv1.ListClaimsRequest{DealId: "deal-1", Materiality: debatedv1.Materiality_MATERIALITY_CRITICAL})
		require.NoError(t, err)
		require.Len(t, lc.GetClaims(), critical)
		require.NotZero(t, critical)
		for _, c := range lc.GetClaims() {
			require.Equal(t, debatedv1.Materiality_MATERIALITY_CRITICAL, c.GetMateriality())
		}
		lc, err = b.registry.ListClaims(ctx, &debatedv1.ListClaimsRequest{DealId: "deal-1", ClaimClass: debatedv1.ClaimClass_CLAIM_CLASS_MARKET_SIZE})
		require.NoError(t, err)
		for _, c := range lc.GetClaims() {
			require.Equal(t, debatedv1.ClaimClass_CLAIM_CLASS_MARKET_SIZE, c.GetClaimClass())
		}

		_, err = b.registry.ListClaims(ctx, &debatedv1.ListClaimsRequest{DealId: "no-such-deal"})
		requireCode(t, err, codes.NotFound)
		_, err = b.registry.GetDeal(ctx, &debatedv1.GetDealRequest{DealId: "no-such-deal"})
		requireCode(t, err, codes.NotFound)
		_, err = b.registry.GetClaim(ctx, &debatedv1.GetClaimRequest{ClaimId: "no-such-claim"})
		requireCode(t, err, codes.NotFound)
	})
}

// TestEvidenceRead reads a deal's evidence items back, a page at a time
// and one by one; an id two deals use needs the deal named.
func TestEvidenceRead(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		_, ctx := b.tenant(t, "acme")
		req := importRequest(t, "deal-1")
		_, err := b.registry.ImportDeal(ctx, req)
		require.NoError(t, err)
		want := req.GetEvidenceItems()
		require.Greater(t, len(want), 1)

		var got []*debatedv1.EvidenceItem
		for token := ""; ; {
			page, err := b.registry.ListEvidence(ctx, &debatedv1.ListEvidenceRequest{DealId: "deal-1", PageSize: 1, PageToken: token})
			require.NoError(t, err)
			require.Len(t, page.GetEvidenceItems(), 1)
			got = append(got, page.GetEvidenceItems()...)
			if token = page.GetNextPageToken(); token == "" {
				break
			}
		}
		require.Len(t, got, len(want))
		for i := 1; i < len(got); i++ {
			require.Less(t, got[i-1].GetEvidenceId(), got[i].GetEvidenceId(), "ordered by id")
		}
		for _, w := range want {
			e, err := b.registry.GetEvidence(ctx, &debatedv1.GetEvidenceRequest{EvidenceId: w.GetEvidenceId()})
			require.NoError(t, err)
			require.Equal(t, "deal-1", e.GetDealId())
			require.True(t, proto.Equal(w, e.GetEvidenceItem()), "evidence %s: got %v want %v", w.GetEvidenceId(), e.GetEvidenceItem(), w)
		}
		_, err = b.registry.ListEvidence(ctx, &debatedv1.ListEvidenceRequest{DealId: "no-such-deal"})
		requireCode(t, err, codes.NotFound)
		_, err = b.registry.GetEvidence(ctx, &debatedv1.GetEvidenceRequest{EvidenceId: "no-such-evidence"})
		requireCode(t, err, codes.NotFound)

		// A second deal with an evidence id the first one uses: the id
		// alone is ambiguous, the deal settles it.
		id := want[0].GetEvidenceId()
		req2 := importRequest(t, "deal-2")
		req2.GetEvidenceItems()[0].EvidenceId = id
		_, err = b.registry.ImportDeal(ctx, req2)
		require.NoError(t, err)
		_, err = b.registry.GetEvidence(ctx, &debatedv1.GetEvidenceRequest{EvidenceId: id})
		requireCode(t, err, codes.InvalidArgument)
		e, err := b.registry.GetEvidence(ctx, &debatedv1.GetEvidenceRequest{EvidenceId: id, DealId: "deal-2"})
		require.NoError(t, err)
		require.Equal(t, "deal-2", e.GetDealId())
		require.True(t, proto.Equal(req2.GetEvidenceItems()[0], e.GetEvidenceItem()))
	})
}

func TestReimportWithOtherContentIsRefused(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		_, ctx := b.tenant(t, "acme")
		req := importRequest(t, "deal-1")
		_, err := b.registry.ImportDeal(ctx, req)
		require.NoError(t, err)

		changed := proto.Clone(req).(*debatedv1.ImportDealRequest)
		changed.Claims[0].ClaimText = "something else entirely"
		_, err = b.registry.ImportDeal(ctx, changed)
		requireCode(t, err, codes.AlreadyExists)

		gc, err := b.registry.GetClaim(ctx, &debatedv1.GetClaimRequest{ClaimId: req.Claims[0].GetClaimId()})
		require.NoError(t, err)
		require.Equal(t, req.Claims[0].GetClaimText(), gc.GetClaim().GetClaimText())
	})
}

// TestTenantIsolation calls every tenant-scoped RPC with tenant B's key on
// tenant A's resources: each answers NotFound (or an empty list), and A's
// data is unchanged afterwards.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, kind string) {
		b := setup(t, kind, adminToken)
		_, actx := b.tenant(t, "a")
		_, bctx := b.tenant(t, "b")
		req := importRequest(t, "deal-a")
		imported, err := b.registry.ImportDeal(actx, req)
		require.NoError(t, err)
		claimID := req.GetClaims()[0].GetClaimId()

		calls := []struct {
			name string
			call func(ctx context.Context) error
		}{
			{"GetDeal", func(ctx context.Context) error {
				_, err := b.registry.GetDeal(ctx, &debatedv1.GetDealRequest{DealId: "deal-a"})
				return err
			}},
			{"GetClaim", func(ctx context.Context) error {
				_, err := b.registry.GetClaim(ctx, &debatedv1.GetClaimRequest{ClaimId: claimID})
				return err
			}},
			{"ListClaims", func(ctx context.Context) error {
				_, err := b.registry.ListClaims(ctx, &debatedv1.ListClaimsRequest{DealId: "deal-a"})
				return err
			}},
			{"GradeDeal", func(ctx context.Context) error {
				_, err := b.registry.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: "deal-a"})
				return err
			}},
			{"ListDefects", func(ctx context.Context) error {
				_, err := b.registry.ListDefects(ctx, &debatedv1.ListDefectsRequest{DealId: "deal-a"})
				return err
			}},
			{"ListDealEvents", func(ctx context.Context) error {
				_, err := b.registry.ListDealEvents(ctx, &debatedv1.ListDealEventsRequest{DealId: "deal-a"})
				return err
			}},
			{"ListEvidence", func(ctx context.Context) error {
				_, err := b.registry.ListEvidence(ctx, &debatedv1.ListEvidenceRequest{DealId: "deal-a"})
				return err
			}},
			{"GetEvidence", func(ctx context.Context) error {
				_, err := b.registry.GetEvidence(ctx, &debatedv1.GetEvidenceRequest{EvidenceId: req.GetEvidenceItems()[0].GetEvidenceId()})
				return err
			}},
		}
		for _, c := range calls {
			t.Run(c.name, func(t *testing.T) {
				requireCode(t, c.call(bctx), codes.NotFound)
				require.NoError(t, c.call(actx))
			})
		}
		// Writes with B's key on A's deal: NotFound, and nothing recorded.
		_, err = b.registry.FlagDefect(bctx, &debatedv1.FlagDefectRequest{DealId: "deal-a", ClaimId: claimID,
			DefectType: debatedv1.DefectType_DEFECT_TYPE_IMPLAUSIBILITY, Description: strings.Repeat("x", 60),
			EvidenceRefs: []string{req.GetEvidenceItems()[0].GetEvidenceId()}})
		requireCode(t, err, codes.NotFound)
		_, err = b.registry.CureDefect(bctx, &debatedv1.CureDefectRequest{DealId: "deal-a", DefectId: "any", Actor: "b", Reason: "r"})
		requireCode(t, err, codes.NotFound)
		evs, err := b.registry.ListDealEvents(actx, &debatedv1.ListDealEventsRequest{DealId: "deal-a"})
		require.NoError(t, err)
		for _, e := range evs.GetEvents() {
			require.NotEqual(t, "defect.flagged", e.GetEventType(), "B's flag reached A's deal")
		}
		ld, err := b.registry.ListDeals(bctx, &debatedv1.ListDealsRequest{})
		require.NoError(t, err)
		require.Empty(t, ld.GetDeals())

		// B imports the same file with the same ids: its own deal, created.
		resp, err := b.registry.ImportDeal(bctx, req)
		require.NoError(t, err)
		require.True(t, resp.GetCreated())
		// A's deal is exactly as it was.
		got, err := b.registry.GetDeal(actx, &debatedv1.GetDealRequest{DealId: "deal-a"})
		require.NoError(t, err)
		require.True(t, proto.Equal(imported.GetDeal(), got.GetDeal()))
		la, err := b.registry.ListDeals(actx, &debatedv1.ListDealsRequest{})
		require.NoError(t, err)
		require.Len(t, la.GetDeals(), 1)
	})
}

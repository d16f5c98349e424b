// Package storetest is the conformance suite every store of debated passes:
// the PostgreSQL and the SQLite stores run the same Run, so a behaviour that
// passes on one and fails on the other is a bug in one of them (DESIGN
// §3.4). It also authors the sample deals other tests reuse (SampleBundle,
// LargeBundle) and the benchmark bodies both stores measure.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/debated/debated/internal/debate"
)

// Store is what the suite tests: the store contracts of the domain.
type Store interface {
	debate.TenantStore
	debate.RegistryStore
	debate.GradingStore
	debate.DebateStore
}

// RowCounter is implemented by test adapters that can count a tenant's rows
// in the registry tables directly, below the store's API. When the store
// passed to Run implements it, the suite also checks that a failed import
// left no row behind and that a repeated import wrote none.
type RowCounter interface {
	// CountRows returns the number of rows tenantID has in each registry
	// table (deals, claims, evidence_items, spans, sanads, documents,
	// calcs), by table name.
	CountRows(ctx context.Context, tenantID string) (map[string]int, error)
}

// Run runs the conformance suite, each case in parallel as a subtest of t,
// on a store newStore returns. newStore may return the same store to every
// case: each case works in tenants of its own, with random ids.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"TenantCreateGet", testTenantCreateGet},
		{"TenantInvalid", testTenantInvalid},
		{"TenantListPages", testTenantListPages},
		{"APIKeyLifecycle", testAPIKeyLifecycle},
		{"APIKeyConflicts", testAPIKeyConflicts},
		{"ImportRoundTrip", testImportRoundTrip},
		{"ImportKeepsEmptyAndNil", testImportKeepsEmptyAndNil},
		{"ImportKeepsEveryDigit", testImportKeepsEveryDigit},
		{"ReimportSameIsNoop", testReimportSameIsNoop},
		{"ReimportChangedConflicts", testReimportChangedConflicts},
		{"TenantsAreIsolated", testTenantsAreIsolated},
		{"ClaimListFiltersAndPages", testClaimListFiltersAndPages},
		{"DealListPages", testDealListPages},
		{"BadCursor", testBadCursor},
		{"NoTenant", testNoTenant},
		{"ImportRejectsInvalid", testImportRejectsInvalid},
		{"ImportUnknownTenant", testImportUnknownTenant},
		{"FailedImportLeavesNothing", testFailedImportLeavesNothing},
		{"ConcurrentImports", testConcurrentImports},
		{"ConcurrentConflictingImports", testConcurrentConflictingImports},
		{"LargeImport", testLargeImport},
	}
	cases = append(cases, gradingCases...)
	cases = append(cases, debateCases...)
	cases = append(cases, enrichmentCases...)
	cases = append(cases, responseCases...)
	cases = append(cases, tenantModelCases...)
	cases = append(cases, tlogCases...)
	cases = append(cases, protocolCases...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, newStore(t))
		})
	}
}

// importedAt is the import time the suite passes: nanoseconds that the
// stores keep to the microsecond.
var importedAt = time.Date(2026, 1, 6, 9, 30, 0, 123456789, time.FixedZone("CET", 3600))

// TenantContext returns ctx carrying a principal of tenantID, as the
// authentication interceptor makes it.
func TenantContext(ctx context.Context, tenantID string) context.Context {
	return debate.WithPrincipal(ctx, debate.Principal{TenantID: tenantID, KeyID: "key-" + tenantID})
}

// NewTenant creates a tenant with a random id in s and returns a context
// authenticated as it, and its id.
func NewTenant(tb testing.TB, s debate.TenantStore) (context.Context, string) {
	tb.Helper()
	id := "tenant-" + uuid.NewString()
	require.NoError(tb, s.TenantCreate(context.Background(), debate.Tenant{ID: id, Name: "Fund " + id[7:15], CreatedAt: time.Now()}))
	return TenantContext(context.Background(), id), id
}

func contentHash(tb testing.TB, b *debate.DealBundle) string {
	tb.Helper()
	h, err := b.ContentHash()
	require.NoError(tb, err)
	return h
}

func importBundle(t *testing.T, ctx context.Context, s Store, b *debate.DealBundle) debate.DealImportResult {
	t.Helper()
	res, err := s.DealImport(ctx, b, contentHash(t, b), importedAt)
	require.NoError(t, err)
	return res
}

func wantSummary(t *testing.T, b *debate.DealBundle) debate.DealSummary {
	t.Helper()
	return debate.DealSummary{
		Deal:          Canonical(b).Deal,
		ContentHash:   contentHash(t, b),
		ImportedAt:    importedAt.UTC().Truncate(time.Microsecond),
		ClaimCount:    len(b.Claims),
		EvidenceCount: len(b.Evidence),
		SpanCount:     len(b.Spans),
		SanadCount:    len(b.Sanads),
		DocumentCount: len(b.Documents),
		CalcCount:     len(b.Calcs),
	}
}

func countRows(t *testing.T, s Store, tenantID string) map[string]int {
	t.Helper()
	rc, ok := s.(RowCounter)
	if !ok {
		return nil
	}
	n, err := rc.CountRows(context.Background(), tenantID)
	require.NoError(t, err)
	return n
}

func rowsOf(b *debate.DealBundle) map[string]int {
	return map[string]int{
		"deals": 1, "claims": len(b.Claims), "evidence_items": len(b.Evidence), "spans": len(b.Spans),
		"sanads": len(b.Sanads), "documents": len(b.Documents), "calcs": len(b.Calcs),
	}
}

func requireInvalidField(t *testing.T, err error, field string) {
	t.Helper()
	require.ErrorIs(t, err, debate.ErrInvalid)
	var ve *debate.ValidationError
	require.ErrorAs(t, err, &ve)
	var fields []string
	for _, v := range ve.Violations {
		fields = append(fields, v.Field)
	}
	require.Contains(t, fields, field)
}

func testTenantCreateGet(t *testing.T, s Store) {
	ctx := context.Background()
	created := time.Date(2026, 3, 1, 12, 0, 0, 999999999, time.FixedZone("EST", -5*3600))
	tn := debate.Tenant{ID: "tenant-" + uuid.NewString(), Name: "Acme Ventures", CreatedAt: created}
	require.NoError(t, s.TenantCreate(ctx, tn))

	got, err := s.TenantGet(ctx, tn.ID)
	require.NoError(t, err)
	want := tn
	want.CreatedAt = created.UTC().Truncate(time.Microsecond)
	require.Equal(t, want, got)

	err = s.TenantCreate(ctx, debate.Tenant{ID: tn.ID, Name: "Other", CreatedAt: created})
	require.ErrorIs(t, err, debate.ErrAlreadyExists)
	got, err = s.TenantGet(ctx, tn.ID)
	require.NoError(t, err)
	require.Equal(t, "Acme Ventures", got.Name, "a failed create changed the tenant")

	_, err = s.TenantGet(ctx, "tenant-"+uuid.NewString())
	require.ErrorIs(t, err, debate.ErrNotFound)
}

func testTenantInvalid(t *testing.T, s Store) {
	ctx := context.Background()
	requireInvalidField(t, s.TenantCreate(ctx, debate.Tenant{ID: "", Name: "x"}), "tenant.id")
	requireInvalidField(t, s.TenantCreate(ctx, debate.Tenant{ID: "has space", Name: "x"}), "tenant.id")
	requireInvalidField(t, s.TenantCreate(ctx, debate.Tenant{ID: "t-" + uuid.NewString(), Name: "nul\x00"}), "tenant.name")
}

func testTenantListPages(t *testing.T, s Store) {
	ctx := context.Background()
	// Other cases create tenants concurrently in the same store: walk the
	// whole list and look for ours, which share a random prefix.
	prefix := "tlist-" + uuid.NewString()[:8] + "-"
	var mine []string
	for i := range 5 {
		id := fmt.Sprintf("%s%d", prefix, i)
		mine = append(mine, id)
		require.NoError(t, s.TenantCreate(ctx, debate.Tenant{ID: id, Name: id, CreatedAt: importedAt}))
	}
	var seen []string
	var found []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10000, "the list does not end")
		list, next, err := s.TenantList(ctx, debate.Page{After: cursor, Limit: 2})
		require.NoError(t, err)
		require.LessOrEqual(t, len(list), 2)
		for _, tn := range list {
			seen = append(seen, tn.ID)
			if len(tn.ID) > len(prefix) && tn.ID[:len(prefix)] == prefix {
				found = append(found, tn.ID)
			}
		}
		if next == "" {
			break
		}
		require.Len(t, list, 2, "a page before the last is full")
		cursor = next
	}
	require.True(t, slices.IsSorted(seen), "tenants are ordered by id")
	require.Len(t, slices.Compact(slices.Clone(seen)), len(seen), "no tenant is listed twice")
	require.Equal(t, mine, found)

	// No limit means the default page size.
	list, _, err := s.TenantList(ctx, debate.Page{})
	require.NoError(t, err)
	require.NotEmpty(t, list)
	require.LessOrEqual(t, len(list), 50)
}

func newKey(tenantID string) (debate.APIKey, string) {
	secret := "dbt_" + rand.Text()
	sum := sha256.Sum256([]byte(secret))
	return debate.APIKey{
		ID: "key-" + uuid.NewString(), TenantID: tenantID, Name: "ci", Prefix: secret[:8], Hash: sum[:],
		Scopes: []debate.Scope{debate.ScopeAdmin}, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC),
	}, secret
}

func testAPIKeyLifecycle(t *testing.T, s Store) {
	ctx := context.Background()
	_, tenant := NewTenant(t, s)
	k, _ := newKey(tenant)
	require.NoError(t, s.APIKeyCreate(ctx, k))

	want := k
	want.CreatedAt = k.CreatedAt.Truncate(time.Microsecond)
	got, err := s.APIKeyLookup(ctx, k.Hash)
	require.NoError(t, err)
	require.Equal(t, want, got)

	plain, _ := newKey(tenant) // a key without scopes reads back with nil Scopes
	plain.Scopes = nil
	require.NoError(t, s.APIKeyCreate(ctx, plain))
	got, err = s.APIKeyLookup(ctx, plain.Hash)
	require.NoError(t, err)
	require.Nil(t, got.Scopes)

	revokedAt := time.Date(2026, 4, 1, 8, 0, 0, 1500, time.FixedZone("X", 7200))
	revoked, err := s.APIKeyRevoke(ctx, k.ID, revokedAt)
	require.NoError(t, err)
	wantRevoked := revokedAt.UTC().Truncate(time.Microsecond)
	want.RevokedAt = &wantRevoked
	require.Equal(t, want, revoked)

	_, err = s.APIKeyLookup(ctx, k.Hash)
	require.ErrorIs(t, err, debate.ErrNotFound, "a revoked key is not found")

	again, err := s.APIKeyRevoke(ctx, k.ID, revokedAt.Add(time.Hour))
	require.NoError(t, err, "revoking a revoked key is a no-op")
	require.Equal(t, want, again, "the first revocation time stays")

	_, err = s.APIKeyRevoke(ctx, "key-"+uuid.NewString(), revokedAt)
	require.ErrorIs(t, err, debate.ErrNotFound)
	unknown := sha256.Sum256([]byte("no such key"))
	_, err = s.APIKeyLookup(ctx, unknown[:])
	require.ErrorIs(t, err, debate.ErrNotFound)
}

func testAPIKeyConflicts(t *testing.T, s Store) {
	ctx := context.Background()
	_, tenant := NewTenant(t, s)

	orphan, _ := newKey("tenant-" + uuid.NewString())
	require.ErrorIs(t, s.APIKeyCreate(ctx, orphan), debate.ErrNotFound, "a key of an unknown tenant")

	k, _ := newKey(tenant)
	require.NoError(t, s.APIKeyCreate(ctx, k))
	sameID, _ := newKey(tenant)
	sameID.ID = k.ID
	require.ErrorIs(t, s.APIKeyCreate(ctx, sameID), debate.ErrAlreadyExists)
	sameHash, _ := newKey(tenant)
	sameHash.Hash = k.Hash
	require.ErrorIs(t, s.APIKeyCreate(ctx, sameHash), debate.ErrAlreadyExists)

	noHash, _ := newKey(tenant)
	noHash.Hash = nil
	requireInvalidField(t, s.APIKeyCreate(ctx, noHash), "api_key.hash")
	badScope, _ := newKey(tenant)
	badScope.Scopes = []debate.Scope{"root"}
	requireInvalidField(t, s.APIKeyCreate(ctx, badScope), "api_key.scopes[0]")
}

func testImportRoundTrip(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	b := SampleBundle("deal-" + uuid.NewString())
	slices.Reverse(b.Claims) // order carries no meaning
	want := wantSummary(t, b)

	res := importBundle(t, ctx, s, b)
	require.True(t, res.Created)
	require.Equal(t, want, res.Summary)
	if n := countRows(t, s, tenant); n != nil {
		require.Equal(t, rowsOf(b), n)
	}

	sum, err := s.DealGet(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, want, sum)

	got, err := s.DealBundleGet(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, Canonical(b), got)
	require.Equal(t, want.ContentHash, contentHash(t, got), "the stored bundle hashes as the imported one")

	for _, c := range b.Claims {
		got, err := s.ClaimGet(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
	}

	deals, next, err := s.DealList(ctx, debate.Page{})
	require.NoError(t, err)
	require.Empty(t, next)
	require.Equal(t, []debate.DealSummary{want}, deals)

	claims, next, err := s.ClaimList(ctx, debate.ClaimFilter{DealID: b.Deal.ID}, debate.Page{})
	require.NoError(t, err)
	require.Empty(t, next)
	var keys []string
	for _, c := range claims {
		keys = append(keys, c.Key)
	}
	require.Equal(t, []string{"C1", "C2", "C3", "C4", "C5", "C6", "C7"}, keys)
}

func testImportKeepsEmptyAndNil(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := SampleBundle("deal-" + uuid.NewString())
	// Empty and absent lists and maps, a claim without a deal id, a value
	// without a time window, zero times, a time zone, extreme numbers.
	b.Sanads[0].CorroboratingEvidenceIDs = []string{}
	b.Sanads[0].Chain[0].InputRefs = []string{}
	b.Sanads[1].Chain = nil
	b.Sanads[2].Chain = []debate.ChainNode{}
	b.Spans[0].Locator.BBox = []float64{}
	b.Spans[1].Locator.BBox = nil
	b.Calcs[0].Inputs = map[string]debate.Decimal{}
	b.Calcs[0].InputSpanIDs = nil
	b.Calcs[0].InputClaimIDs = []string{}
	b.Claims[0].DealID = ""
	b.Claims[1].Value.TimeWindow = nil
	b.Claims[2].CreatedAt = time.Time{}
	b.Claims[3].UpdatedAt = time.Date(2026, 1, 5, 15, 0, 0, 1, time.FixedZone("IST", 19800))
	b.Claims[4].Value.Value = mustFloat(t, 1e-300)
	b.Claims[5].Value.Value = mustFloat(t, -1.7976931348623157e308)
	b.Spans[2].TextExcerpt = "Umsatz: 12,5 Mio. € — \"quoted\" \\ <tag> & 日本語"

	importBundle(t, ctx, s, b)
	got, err := s.DealBundleGet(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, Canonical(b), got)

	c, err := s.ClaimGet(ctx, b.Claims[0].ID)
	require.NoError(t, err)
	require.Equal(t, b.Deal.ID, c.DealID, "ClaimGet fills in the claim's deal")
}

// AwkwardValues are figures a float64 does not hold as written (or writes
// with an exponent); every store keeps them digit for digit.
var AwkwardValues = []string{"0.1", "1000000000000000000000", "12345678901234567.89", "-0.5", "9007199254740993", "0.035"}

// AwkwardBundle is SampleBundle with AwkwardValues as the figures of its
// first claims (a claim without a value gets one), an awkward materiality
// threshold and awkward calc inputs.
func AwkwardBundle(dealID string) *debate.DealBundle {
	b := SampleBundle(dealID)
	for i, v := range AwkwardValues {
		if b.Claims[i].Value == nil {
			b.Claims[i].Value = &debate.ClaimValue{Unit: "USD", Currency: "USD"}
		}
		b.Claims[i].Value.Value = debate.MustDecimal(v)
	}
	b.Deal.MaterialityThreshold = debate.MustDecimal("0.10000000000000000001")
	b.Calcs[0].Inputs = map[string]debate.Decimal{"revenue": debate.MustDecimal("12345678901234567.89"), "cogs": debate.MustDecimal("1e21")}
	return b
}

func testImportKeepsEveryDigit(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := AwkwardBundle("deal-" + uuid.NewString())
	importBundle(t, ctx, s, b)

	got, err := s.DealBundleGet(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, Canonical(b), got)
	require.Equal(t, "0.10000000000000000001", got.Deal.MaterialityThreshold.String())
	require.Equal(t, "12345678901234567.89", got.Calcs[0].Inputs["revenue"].String())
	require.Equal(t, "1000000000000000000000", got.Calcs[0].Inputs["cogs"].String())
	sum, err := s.DealGet(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, "0.10000000000000000001", sum.Deal.MaterialityThreshold.String())

	claims, _, err := s.ClaimList(ctx, debate.ClaimFilter{DealID: b.Deal.ID}, debate.Page{})
	require.NoError(t, err)
	listed := map[string]string{}
	for _, c := range claims {
		if c.Value != nil {
			listed[c.ID] = c.Value.Value.String()
		}
	}
	for i, v := range AwkwardValues {
		c, err := s.ClaimGet(ctx, b.Claims[i].ID)
		require.NoError(t, err)
		require.Equal(t, v, c.Value.Value.String(), "ClaimGet of %s", c.Key)
		require.Equal(t, v, listed[c.ID], "ClaimList of %s", c.Key)
	}
	// The same figures again are the same content.
	res, err := s.DealImport(ctx, AwkwardBundle(b.Deal.ID), contentHash(t, b), importedAt.Add(time.Hour))
	require.NoError(t, err)
	require.False(t, res.Created)

	// Beyond the float64 range: kept all the same.
	huge := AwkwardBundle("deal-" + uuid.NewString())
	long := "-" + strings.Repeat("9", debate.MaxDecimalLen-3) + ".5"
	huge.Deal.MaterialityThreshold = debate.MustDecimal(long[1:])
	huge.Claims[0].Value.Value = debate.MustDecimal(long)
	importBundle(t, ctx, s, huge)
	got, err = s.DealBundleGet(ctx, huge.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, Canonical(huge), got)
	require.Equal(t, long[1:], got.Deal.MaterialityThreshold.String())
}

func testReimportSameIsNoop(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	b := SampleBundle("deal-" + uuid.NewString())
	first := importBundle(t, ctx, s, b)
	require.True(t, first.Created)

	// The same content in another order, later: nothing happens.
	again := SampleBundle(b.Deal.ID)
	slices.Reverse(again.Spans)
	res, err := s.DealImport(ctx, again, contentHash(t, again), importedAt.Add(time.Hour))
	require.NoError(t, err)
	require.False(t, res.Created)
	require.Equal(t, first.Summary, res.Summary, "the stored summary, with the first import time")
	if n := countRows(t, s, tenant); n != nil {
		require.Equal(t, rowsOf(b), n, "nothing was duplicated")
	}
	deals, _, err := s.DealList(ctx, debate.Page{})
	require.NoError(t, err)
	require.Len(t, deals, 1)
}

func testReimportChangedConflicts(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	b := SampleBundle("deal-" + uuid.NewString())
	importBundle(t, ctx, s, b)

	changed := SampleBundle(b.Deal.ID)
	changed.Claims[0].Text = "ARR is $13,000,000 as of December 2025"
	changed.Claims = append(changed.Claims, debate.Claim{
		ID: "extra-" + uuid.NewString(), DealID: b.Deal.ID, Key: "C8", Class: debate.ClaimClassTeam,
		Text: "The CTO scaled a marketplace before", Materiality: debate.MaterialityLow,
	})
	_, err := s.DealImport(ctx, changed, contentHash(t, changed), importedAt)
	require.ErrorIs(t, err, debate.ErrAlreadyExists)

	got, err := s.DealBundleGet(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, Canonical(b), got, "the stored bundle is unchanged")
	_, err = s.ClaimGet(ctx, changed.Claims[7].ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	if n := countRows(t, s, tenant); n != nil {
		require.Equal(t, rowsOf(b), n)
	}
}

func testTenantsAreIsolated(t *testing.T, s Store) {
	ctxA, _ := NewTenant(t, s)
	ctxB, _ := NewTenant(t, s)
	ctxC, _ := NewTenant(t, s)

	// A and B import the same deal file, same ids, different content: no
	// conflict between tenants, and each keeps its own.
	a := SampleBundle("deal-" + uuid.NewString())
	b := SampleBundle(a.Deal.ID)
	b.Claims[0].Text = "ARR is $11,900,000 as of December 2025"
	require.True(t, importBundle(t, ctxA, s, a).Created)
	require.True(t, importBundle(t, ctxB, s, b).Created)

	gotA, err := s.DealBundleGet(ctxA, a.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, Canonical(a), gotA)
	gotB, err := s.DealBundleGet(ctxB, a.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, Canonical(b), gotB)
	claimB, err := s.ClaimGet(ctxB, a.Claims[0].ID)
	require.NoError(t, err)
	require.Equal(t, b.Claims[0].Text, claimB.Text)

	// C has nothing: every read of A's ids is not found.
	_, err = s.DealGet(ctxC, a.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.DealBundleGet(ctxC, a.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	for _, c := range a.Claims {
		_, err = s.ClaimGet(ctxC, c.ID)
		require.ErrorIs(t, err, debate.ErrNotFound)
	}
	_, _, err = s.ClaimList(ctxC, debate.ClaimFilter{DealID: a.Deal.ID}, debate.Page{})
	require.ErrorIs(t, err, debate.ErrNotFound)
	deals, next, err := s.DealList(ctxC, debate.Page{})
	require.NoError(t, err)
	require.Empty(t, deals)
	require.Empty(t, next)

	// A deal only B has is not found for A.
	onlyB := SampleBundle("deal-" + uuid.NewString())
	importBundle(t, ctxB, s, onlyB)
	_, err = s.DealGet(ctxA, onlyB.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.ClaimGet(ctxA, onlyB.Claims[0].ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, _, err = s.ClaimList(ctxA, debate.ClaimFilter{DealID: onlyB.Deal.ID}, debate.Page{})
	require.ErrorIs(t, err, debate.ErrNotFound)
	dealsA, _, err := s.DealList(ctxA, debate.Page{})
	require.NoError(t, err)
	require.Len(t, dealsA, 1)
}

// walkClaims lists every page of filter with page size limit and returns
// the claims in order.
func walkClaims(t *testing.T, ctx context.Context, s Store, filter debate.ClaimFilter, limit int) []debate.Claim {
	t.Helper()
	var all []debate.Claim
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100000, "the list does not end")
		list, next, err := s.ClaimList(ctx, filter, debate.Page{After: cursor, Limit: limit})
		require.NoError(t, err)
		require.LessOrEqual(t, len(list), limit)
		all = append(all, list...)
		if next == "" {
			return all
		}
		require.Len(t, list, limit, "a page before the last is full")
		cursor = next
	}
}

func claimOrder(a, b debate.Claim) int {
	if a.Key != b.Key {
		if a.Key < b.Key {
			return -1
		}
		return 1
	}
	switch {
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

func testClaimListFiltersAndPages(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := LargeBundle("deal-"+uuid.NewString(), 37)
	// Duplicate-free keys whose order differs from the ids' order, and two
	// claims sharing an empty key, so the id breaks the tie.
	for i := range b.Claims {
		b.Claims[i].Key = fmt.Sprintf("K%02d", (i*7)%37)
	}
	b.Claims[3].Key, b.Claims[4].Key = "", ""
	importBundle(t, ctx, s, b)
	other := SampleBundle("deal-" + uuid.NewString()) // claims of another deal never show
	importBundle(t, ctx, s, other)

	want := Canonical(b).Claims
	slices.SortFunc(want, claimOrder)
	for _, limit := range []int{1, 4, 36, 37, 100} {
		require.Equal(t, want, walkClaims(t, ctx, s, debate.ClaimFilter{DealID: b.Deal.ID}, limit), "limit %d", limit)
	}

	filters := []debate.ClaimFilter{
		{Class: debate.ClaimClassFinancial},
		{Materiality: debate.MaterialityCritical},
		{Class: debate.ClaimClassTraction, Materiality: debate.MaterialityMedium},
		{Class: debate.ClaimClassLegal, Materiality: debate.MaterialityLow},
	}
	for _, f := range filters {
		f.DealID = b.Deal.ID
		var wantF []debate.Claim
		for _, c := range want {
			if (f.Class == "" || c.Class == f.Class) && (f.Materiality == "" || c.Materiality == f.Materiality) {
				wantF = append(wantF, c)
			}
		}
		require.Equal(t, wantF, walkClaims(t, ctx, s, f, 2), "filter %+v", f)
	}

	_, _, err := s.ClaimList(ctx, debate.ClaimFilter{DealID: "deal-" + uuid.NewString()}, debate.Page{})
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, _, err = s.ClaimList(ctx, debate.ClaimFilter{}, debate.Page{})
	requireInvalidField(t, err, "deal_id")
}

func testDealListPages(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	var want []debate.DealSummary
	for i := range 5 {
		b := SampleBundle(fmt.Sprintf("deal-%d-%s", 4-i, uuid.NewString()))
		importBundle(t, ctx, s, b)
		want = append(want, wantSummary(t, b))
	}
	slices.SortFunc(want, func(a, b debate.DealSummary) int {
		switch {
		case a.Deal.ID < b.Deal.ID:
			return -1
		case a.Deal.ID > b.Deal.ID:
			return 1
		}
		return 0
	})
	var got []debate.DealSummary
	cursor := ""
	for {
		list, next, err := s.DealList(ctx, debate.Page{After: cursor, Limit: 2})
		require.NoError(t, err)
		require.LessOrEqual(t, len(list), 2)
		got = append(got, list...)
		if next == "" {
			break
		}
		cursor = next
	}
	require.Equal(t, want, got)
}

func testBadCursor(t *testing.T, s Store) {
	ctx, _ := NewTenant(t, s)
	b := SampleBundle("deal-" + uuid.NewString())
	importBundle(t, ctx, s, b)
	_, cursor, err := s.ClaimList(ctx, debate.ClaimFilter{DealID: b.Deal.ID}, debate.Page{Limit: 2})
	require.NoError(t, err)
	require.NotEmpty(t, cursor)

	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	bad := []string{"!!!not base64!!!", enc("not json"), enc(`[]`), enc(`["a","b","c"]`), enc(`{"a":1}`), cursor + "%"}
	for _, c := range bad {
		_, _, err = s.DealList(ctx, debate.Page{After: c})
		requireInvalidField(t, err, "page_token")
		_, _, err = s.TenantList(ctx, debate.Page{After: c})
		requireInvalidField(t, err, "page_token")
	}
	// A claim list's cursor holds two keys.
	for _, c := range append(bad, enc(`["a"]`)) {
		_, _, err := s.ClaimList(ctx, debate.ClaimFilter{DealID: b.Deal.ID}, debate.Page{After: c})
		requireInvalidField(t, err, "page_token")
	}
}

func testNoTenant(t *testing.T, s Store) {
	ctx := context.Background()
	b := SampleBundle("deal-" + uuid.NewString())
	_, err := s.DealImport(ctx, b, contentHash(t, b), importedAt)
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = s.DealGet(ctx, b.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, _, err = s.DealList(ctx, debate.Page{})
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = s.DealBundleGet(ctx, b.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, err = s.ClaimGet(ctx, b.Claims[0].ID)
	require.ErrorIs(t, err, debate.ErrNoTenant)
	_, _, err = s.ClaimList(ctx, debate.ClaimFilter{DealID: b.Deal.ID}, debate.Page{})
	require.ErrorIs(t, err, debate.ErrNoTenant)
}

func testImportRejectsInvalid(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	_, err := s.DealImport(ctx, nil, "hash", importedAt)
	require.ErrorIs(t, err, debate.ErrInvalid)

	b := SampleBundle("deal-" + uuid.NewString())
	_, err = s.DealImport(ctx, b, "", importedAt)
	requireInvalidField(t, err, "content_hash")

	bad := SampleBundle(b.Deal.ID)
	bad.Claims[1].Class = "FINANCE"
	_, err = s.DealImport(ctx, bad, contentHash(t, bad), importedAt)
	requireInvalidField(t, err, "claims[1].claim_class")

	nul := SampleBundle(b.Deal.ID)
	nul.Spans[0].TextExcerpt = "before\x00after"
	_, err = s.DealImport(ctx, nul, contentHash(t, nul), importedAt)
	requireInvalidField(t, err, "spans[0].text_excerpt")

	_, err = s.DealGet(ctx, b.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	if n := countRows(t, s, tenant); n != nil {
		for table, count := range n {
			require.Zero(t, count, table)
		}
	}
}

func testImportUnknownTenant(t *testing.T, s Store) {
	ctx := TenantContext(context.Background(), "tenant-"+uuid.NewString())
	b := SampleBundle("deal-" + uuid.NewString())
	_, err := s.DealImport(ctx, b, contentHash(t, b), importedAt)
	require.ErrorIs(t, err, debate.ErrNotFound)
}

func testFailedImportLeavesNothing(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	first := SampleBundle("deal-" + uuid.NewString())
	importBundle(t, ctx, s, first)

	// The second deal's last claim reuses a claim id of the first: the
	// failure comes after the deal row and most claims were written.
	second := LargeBundle("deal-"+uuid.NewString(), 12)
	taken := first.Claims[4].ID
	second.Claims[11].ID = taken
	second.Sanads[11].ClaimID = taken
	_, err := s.DealImport(ctx, second, contentHash(t, second), importedAt)
	require.ErrorIs(t, err, debate.ErrAlreadyExists)
	require.ErrorContains(t, err, taken, "the error names the claim id")

	_, err = s.DealGet(ctx, second.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	_, err = s.DealBundleGet(ctx, second.Deal.ID)
	require.ErrorIs(t, err, debate.ErrNotFound)
	for _, c := range second.Claims[:11] {
		_, err := s.ClaimGet(ctx, c.ID)
		require.ErrorIs(t, err, debate.ErrNotFound)
	}
	claim, err := s.ClaimGet(ctx, taken)
	require.NoError(t, err)
	require.Equal(t, first.Claims[4], claim, "the first deal's claim is untouched")
	deals, _, err := s.DealList(ctx, debate.Page{})
	require.NoError(t, err)
	require.Len(t, deals, 1)
	if n := countRows(t, s, tenant); n != nil {
		require.Equal(t, rowsOf(first), n, "the failed import left no row")
	}

	// The failure left the store usable: the deal imports once fixed.
	second.Claims[11].ID = "fixed-" + uuid.NewString()
	second.Sanads[11].ClaimID = second.Claims[11].ID
	require.True(t, importBundle(t, ctx, s, second).Created)
}

// importConcurrently imports bundles[i] from goroutine i, all released at
// once, and returns each result and error.
func importConcurrently(t *testing.T, ctx context.Context, s Store, bundles []*debate.DealBundle) ([]debate.DealImportResult, []error) {
	t.Helper()
	results := make([]debate.DealImportResult, len(bundles))
	errs := make([]error, len(bundles))
	hashes := make([]string, len(bundles))
	for i, b := range bundles {
		hashes[i] = contentHash(t, b)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, b := range bundles {
		wg.Go(func() {
			<-start
			results[i], errs[i] = s.DealImport(ctx, b, hashes[i], importedAt)
		})
	}
	close(start)
	wg.Wait()
	return results, errs
}

func testConcurrentImports(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	dealID := "deal-" + uuid.NewString()
	bundles := make([]*debate.DealBundle, 8)
	for i := range bundles {
		bundles[i] = SampleBundle(dealID)
	}
	results, errs := importConcurrently(t, ctx, s, bundles)
	created := 0
	for i := range bundles {
		require.NoError(t, errs[i], "import %d", i)
		if results[i].Created {
			created++
		}
		require.Equal(t, wantSummary(t, bundles[0]), results[i].Summary)
	}
	require.Equal(t, 1, created, "exactly one import creates the deal")
	if n := countRows(t, s, tenant); n != nil {
		require.Equal(t, rowsOf(bundles[0]), n)
	}
}

func testConcurrentConflictingImports(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	dealID := "deal-" + uuid.NewString()
	bundles := make([]*debate.DealBundle, 8)
	for i := range bundles {
		bundles[i] = SampleBundle(dealID)
		if i%2 == 1 {
			bundles[i].Deal.Status = "CLOSED"
		}
	}
	results, errs := importConcurrently(t, ctx, s, bundles)
	winner := -1
	for i := range bundles {
		if errs[i] == nil && results[i].Created {
			require.Equal(t, -1, winner, "two imports created the deal")
			winner = i
		}
	}
	require.NotEqual(t, -1, winner, "one import creates the deal")
	for i := range bundles {
		if i%2 == winner%2 {
			require.NoError(t, errs[i], "import %d has the winner's content", i)
		} else {
			require.ErrorIs(t, errs[i], debate.ErrAlreadyExists, "import %d has other content", i)
		}
	}
	got, err := s.DealBundleGet(ctx, dealID)
	require.NoError(t, err)
	require.Equal(t, Canonical(bundles[winner]), got)
	if n := countRows(t, s, tenant); n != nil {
		require.Equal(t, rowsOf(bundles[0]), n)
	}
}

func testLargeImport(t *testing.T, s Store) {
	ctx, tenant := NewTenant(t, s)
	b := LargeBundle("deal-"+uuid.NewString(), 2345)
	res := importBundle(t, ctx, s, b)
	require.True(t, res.Created)
	require.Equal(t, 2345, res.Summary.ClaimCount)
	if n := countRows(t, s, tenant); n != nil {
		require.Equal(t, rowsOf(b), n)
	}

	got, err := s.DealBundleGet(ctx, b.Deal.ID)
	require.NoError(t, err)
	require.Equal(t, Canonical(b), got)

	list, next, err := s.ClaimList(ctx, debate.ClaimFilter{DealID: b.Deal.ID}, debate.Page{Limit: 5000})
	require.NoError(t, err)
	require.Len(t, list, 1000, "a page holds at most 1000 claims")
	require.NotEmpty(t, next)
	list, _, err = s.ClaimList(ctx, debate.ClaimFilter{DealID: b.Deal.ID}, debate.Page{})
	require.NoError(t, err)
	require.Len(t, list, 50, "the default page holds 50 claims")
	require.Len(t, walkClaims(t, ctx, s, debate.ClaimFilter{DealID: b.Deal.ID}, 1000), 2345)

	last, err := s.ClaimGet(ctx, b.Claims[2344].ID)
	require.NoError(t, err)
	require.Equal(t, b.Claims[2344], last)

	// Re-importing the large deal is a no-op too.
	again, err := s.DealImport(ctx, LargeBundle(b.Deal.ID, 2345), res.Summary.ContentHash, importedAt)
	require.NoError(t, err)
	require.False(t, again.Created)
}

// mustFloat is debate.DecimalFromFloat for a finite f.
func mustFloat(t *testing.T, f float64) debate.Decimal {
	t.Helper()
	d, err := debate.DecimalFromFloat(f)
	require.NoError(t, err)
	return d
}

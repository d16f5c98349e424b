package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/custom"
	"github.com/debated/debated/internal/protocols/idis"
	"github.com/debated/debated/internal/protocols/idis/rules"
	"github.com/debated/debated/internal/protocols/synthetic"
	"github.com/debated/debated/internal/roles/llm"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/postgres"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/stream"
	"github.com/debated/debated/internal/testutil/gdbs"
	"github.com/debated/debated/internal/testutil/pgtest"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

const adminToken = "ctl-admin"

type stores interface {
	debate.TenantStore
	debate.RegistryStore
	debate.GradingStore
	debate.DebateStore
	Close()
}

// serve starts a server over a fresh store of kind on a loopback port and
// returns its address.
func serve(t *testing.T, kind string) string {
	t.Helper()
	addr, _ := serveAt(t, kind)
	return addr
}

// testKeys is the keyring the test servers sign with.
func testKeys(t *testing.T) *ledger.Keyring {
	t.Helper()
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("debatectl-test-signing-secret-32b!")}, "v1")
	require.NoError(t, err)
	return keys
}

// serveAt is serve that also returns where the store is: the SQLite file
// or the PostgreSQL database URL.
func serveAt(t *testing.T, kind string) (addr, where string) {
	t.Helper()
	ctx := context.Background()
	keys := testKeys(t)
	var st stores
	switch kind {
	case "sqlite":
		where = filepath.Join(t.TempDir(), "d.db")
		s, err := sqlite.OpenConfig(ctx, sqlite.Config{Path: where, DealSealer: ledger.NewDealSealer(keys)})
		require.NoError(t, err)
		st = s
	case "postgres":
		where = pgtest.NewDatabase(t)
		require.NoError(t, postgres.Migrate(ctx, where))
		s, err := postgres.New(ctx, postgres.Config{URL: where, DealSealer: ledger.NewDealSealer(keys)})
		require.NoError(t, err)
		st = s
	}
	t.Cleanup(st.Close)
	stores := server.Stores{Tenants: st, Registry: st, Grading: st}
	if s, ok := st.(*sqlite.Store); ok {
		stores.Debates = debates(t, s, keys)
	}
	return startServer(t, stores), where
}

// debates assembles the debate engine over an embedded store, as debated
// does.
func debates(t *testing.T, st *sqlite.Store, keys *ledger.Keyring) *server.Debates {
	t.Helper()
	// Registered protocols: no model is configured here, so they register
	// and list but do not run.
	builtin := []*orchestrator.Protocol{synthetic.Protocol(), idis.Protocol(idis.Config{Registry: st, Ledger: st, Roles: rules.New()})}
	cat, err := custom.NewCatalog(st, orchestrator.Named(builtin), custom.Config{Registry: st,
		ModelFor: func(context.Context) (llm.Caller, error) { return nil, nil }})
	require.NoError(t, err)
	reg, err := orchestrator.NewResolvingRegistry(cat.Resolver(), builtin...)
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)
	hub := stream.New(st, stream.Config{Logger: slog.New(slog.DiscardHandler)})
	run, err := runner.New(runner.Config{Store: st, Engine: eng, Publisher: hub, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	local := runner.NewLocal(st, run, runner.LocalConfig{MaxWorkers: 4, Logger: slog.New(slog.DiscardHandler)})
	lctx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- local.Run(lctx) }()
	t.Cleanup(func() { stop(); require.NoError(t, <-stopped) })
	return &server.Debates{Store: runner.Scheduled(st, local), Engine: eng, Protocols: reg, Custom: cat, Keys: keys, Hub: hub, Outputs: idis.Name}
}

// ctl runs debatectl with args against addr and returns its output and error.
func ctl(t *testing.T, addr string, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	all := append([]string{"--addr", addr}, args...)
	err := run(context.Background(), all, func(k string) string { return env[k] }, &out, &errOut)
	if err != nil {
		return out.String() + errOut.String() + describe(err), err
	}
	return out.String(), nil
}

// login creates a tenant and a key and returns the environment that uses it.
func login(t *testing.T, addr string) map[string]string {
	t.Helper()
	env := map[string]string{"DEBATECTL_ADMIN_TOKEN": adminToken}
	out, err := ctl(t, addr, env, "--json", "tenant", "create", "--name", "acme")
	require.NoError(t, err, out)
	var tr struct {
		Tenant struct {
			TenantID string `json:"tenant_id"`
		} `json:"tenant"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &tr))
	out, err = ctl(t, addr, env, "--json", "key", "create", "--tenant", tr.Tenant.TenantID)
	require.NoError(t, err, out)
	var kr struct {
		Secret string `json:"secret"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &kr))
	require.NotEmpty(t, kr.Secret)
	return map[string]string{"DEBATECTL_API_KEY": kr.Secret}
}

func TestSession(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			addr := serve(t, kind)
			env := login(t, addr)
			dir := t.TempDir()
			b := storetest.SampleBundle("sample-deal")
			require.NoError(t, dealfile.Write(dir, b))

			out, err := ctl(t, addr, env, "import-deal", dir)
			require.NoError(t, err, out)
			require.Contains(t, out, "deal sample-deal imported")
			out, err = ctl(t, addr, env, "import-deal", dir)
			require.NoError(t, err, out)
			require.Contains(t, out, "already imported, unchanged")

			out, err = ctl(t, addr, env, "deal", "list")
			require.NoError(t, err, out)
			require.Contains(t, out, "sample-deal")
			out, err = ctl(t, addr, env, "deal", "get", "sample-deal")
			require.NoError(t, err, out)
			require.Contains(t, out, b.Deal.CompanyName)

			out, err = ctl(t, addr, env, "--json", "claims", "list", "sample-deal")
			require.NoError(t, err, out)
			var cl struct {
				Claims []struct {
					ClaimID string `json:"claim_id"`
				} `json:"claims"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &cl))
			require.Len(t, cl.Claims, len(b.Claims))
			out, err = ctl(t, addr, env, "claims", "list", "sample-deal")
			require.NoError(t, err, out)
			require.Contains(t, out, "$12,500,000", "money is printed exactly, never as 1.25e+07")
			require.Contains(t, out, "$650,000/month")
			require.Contains(t, out, "68.5%")
			require.NotContains(t, out, "e+0")
			out, err = ctl(t, addr, env, "claim", "get", cl.Claims[0].ClaimID)
			require.NoError(t, err, out)
			require.Contains(t, out, cl.Claims[0].ClaimID)

			_, err = ctl(t, addr, env, "deal", "get", "no-such-deal")
			require.Error(t, err)
			require.Equal(t, codes.NotFound, status.Code(err))
			// What a person reads: the server's words, no gRPC wrapping.
			require.Equal(t, `deal "no-such-deal": not found`, describe(err))
			out, err = ctl(t, addr, map[string]string{"DEBATECTL_API_KEY": "dbk_wrong"}, "deal", "list")
			require.Error(t, err)
			require.Equal(t, codes.Unauthenticated, status.Code(err), out)
			_, err = ctl(t, addr, nil, "deal", "list")
			require.ErrorContains(t, err, "--api-key")
		})
	}
}

// TestImportDealReportsBadFields: a deal directory with a wrong enumeration
// value and a missing id fails with the field paths named.
func TestImportDealReportsBadFields(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	b := storetest.SampleBundle("bad-deal")
	b.Claims[1].Class = "FINANCE"
	require.NoError(t, dealfile.Write(dir, b))
	out, err := ctl(t, addr, env, "import-deal", dir)
	require.Error(t, err)
	require.Contains(t, out, "the deal files are invalid")
	require.Contains(t, out, "claims[1].claim_class")

	b = storetest.SampleBundle("bad-deal")
	b.Claims[0].ID = ""
	require.NoError(t, dealfile.Write(dir, b))
	out, err = ctl(t, addr, env, "import-deal", dir)
	require.Error(t, err)
	require.Contains(t, out, "claims[0].claim_id")

	out, err = ctl(t, addr, env, "deal", "list")
	require.NoError(t, err)
	require.NotContains(t, out, "bad-deal")
}

// TestImportGDBSDeals imports every benchmark deal with debatectl, on both
// stores, and checks that a second import is a no-op.
func TestImportGDBSDeals(t *testing.T) {
	t.Parallel()
	root := gdbs.Dir(t)
	dirs, err := filepath.Glob(filepath.Join(root, "deals", "deal_*"))
	require.NoError(t, err)
	require.Len(t, dirs, 10)
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			addr := serve(t, kind)
			env := login(t, addr)
			for _, dir := range dirs {
				out, err := ctl(t, addr, env, "import-deal", dir)
				require.NoError(t, err, "%s: %s", dir, out)
				require.Contains(t, out, " imported: 7 claims", dir)
				out, err = ctl(t, addr, env, "import-deal", dir)
				require.NoError(t, err, out)
				require.Contains(t, out, "already imported, unchanged")
			}
			out, err := ctl(t, addr, env, "deal", "list")
			require.NoError(t, err)
			require.Equal(t, 11, len(strings.Split(strings.TrimSpace(out), "\n")), out)
		})
	}
}

// expectedClaims reads the claims of an expected file.
func expectedClaims(t *testing.T, path string) map[string]struct {
	Grade       string `json:"grade"`
	Verdict     string `json:"verdict"`
	Action      string `json:"action"`
	DefectCount int    `json:"defect_count"`
} {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var exp struct {
		Claims map[string]struct {
			Grade       string `json:"grade"`
			Verdict     string `json:"verdict"`
			Action      string `json:"action"`
			DefectCount int    `json:"defect_count"`
		} `json:"claims"`
	}
	require.NoError(t, json.Unmarshal(data, &exp))
	return exp.Claims
}

// gradeJSON runs `debatectl --json grade` and decodes the answer.
func gradeJSON(t *testing.T, addr string, env map[string]string, dealID string) *debatedv1.GradeDealResponse {
	t.Helper()
	out, err := ctl(t, addr, env, "--json", "grade", dealID)
	require.NoError(t, err, out)
	var resp debatedv1.GradeDealResponse
	require.NoError(t, protojson.Unmarshal([]byte(out), &resp))
	return &resp
}

func TestGradeGDBSDealsFromTheCommandLine(t *testing.T) {
	t.Parallel()
	root := gdbs.Dir(t)
	dirs, err := filepath.Glob(filepath.Join(root, "deals", "deal_*"))
	require.NoError(t, err)
	addr := serve(t, "sqlite")
	env := login(t, addr)
	for _, dir := range dirs {
		out, err := ctl(t, addr, env, "import-deal", dir)
		require.NoError(t, err, out)
		b, err := dealfile.Load(dir)
		require.NoError(t, err)
		resp := gradeJSON(t, addr, env, b.Deal.ID)
		want := expectedClaims(t, filepath.Join(root, "expected", filepath.Base(dir)+".json"))
		require.Len(t, resp.GetClaims(), len(want))
		for _, c := range resp.GetClaims() {
			w := want[c.GetClaimKey()]
			require.Equal(t, w.Grade, strings.TrimPrefix(c.GetGrade().String(), "GRADE_"), "%s %s", dir, c.GetClaimKey())
			require.Equal(t, w.Verdict, strings.TrimPrefix(c.GetVerdict().String(), "VERDICT_"), "%s %s", dir, c.GetClaimKey())
			require.Equal(t, w.Action, strings.TrimPrefix(c.GetAction().String(), "ACTION_"), "%s %s", dir, c.GetClaimKey())
			require.Len(t, c.GetDefects(), w.DefectCount, "%s %s", dir, c.GetClaimKey())
		}
		table, err := ctl(t, addr, env, "grade", b.Deal.ID)
		require.NoError(t, err, table)
		require.Contains(t, table, "KEY")
		require.Contains(t, table, "sanad coverage")
		require.NotRegexp(t, `\de[+-]\d`, table, "no figure is printed in exponent form")
	}
}

func TestDefectCommands(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := filepath.Join("..", "..", "internal", "sanad", "testdata", "deals", "inconsistency")
	out, err := ctl(t, addr, env, "import-deal", dir)
	require.NoError(t, err, out)
	b, err := dealfile.Load(dir)
	require.NoError(t, err)

	resp := gradeJSON(t, addr, env, b.Deal.ID)
	var defect *debatedv1.Defect
	for _, c := range resp.GetClaims() {
		if len(c.GetDefects()) > 0 && defect == nil {
			defect = c.GetDefects()[0]
		}
	}
	require.NotNil(t, defect)
	events, err := ctl(t, addr, env, "--json", "deal", "events", b.Deal.ID)
	require.NoError(t, err)
	var ev struct {
		Events []json.RawMessage `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(events), &ev))
	require.NotEmpty(t, ev.Events)
	require.Equal(t, int32(len(ev.Events)), resp.GetEventCount(), "the first grading wrote every event of the log")
	table, err := ctl(t, addr, env, "grade", b.Deal.ID)
	require.NoError(t, err)
	require.Contains(t, table, "CONTRADICTED")

	// The evidence ids defect flag --ref needs come from evidence list.
	out, err = ctl(t, addr, env, "evidence", "list", b.Deal.ID)
	require.NoError(t, err, out)
	for _, e := range b.Evidence {
		require.Contains(t, out, e.ID)
	}
	ref := strings.Fields(strings.Split(out, "\n")[1])[0]
	out, err = ctl(t, addr, env, "evidence", "get", ref)
	require.NoError(t, err, out)
	require.Contains(t, out, ref)
	out, err = ctl(t, addr, env, "defect", "flag", b.Deal.ID, "--claim", b.Claims[0].ID, "--type", "implausibility",
		"--description", "growth of this size in one quarter is not plausible for a company at this stage",
		"--ref", ref, "--actor", "analyst")
	require.NoError(t, err, out)
	require.Contains(t, out, "flagged")
	require.NotContains(t, out, "0 new event(s)", "a defect call writes events; it does not claim none")
	out, err = ctl(t, addr, env, "defect", "flag", b.Deal.ID, "--claim", b.Claims[0].ID, "--type", "implausibility",
		"--description", "short", "--ref", "nothing")
	require.Error(t, err)
	require.Contains(t, out, "description")

	out, err = ctl(t, addr, env, "defect", "cure", b.Deal.ID, defect.GetDefectId(), "--actor", "analyst", "--reason", "source reconciled")
	require.NoError(t, err, out)
	require.Contains(t, out, "is now CURED")
	out, err = ctl(t, addr, env, "defect", "waive", b.Deal.ID, defect.GetDefectId(), "--actor", "a", "--reason", "r")
	require.Error(t, err)
	require.Equal(t, codes.PermissionDenied, status.Code(err), out)

	out, err = ctl(t, addr, env, "defects", "list", b.Deal.ID, "--all")
	require.NoError(t, err, out)
	require.Contains(t, out, "CURED")
	require.Contains(t, out, "FLAGGED")
	out, err = ctl(t, addr, env, "deal", "events", b.Deal.ID)
	require.NoError(t, err, out)
	for _, typ := range []string{"claim.grade.changed", "defect.created", "defect.flagged", "defect.cured"} {
		require.Contains(t, out, typ)
	}
	require.Regexp(t, `defect\.flagged\s+analyst \(claimed; key \S+\)`, out, "the claimed actor is shown as a claim, beside the key")
}

// TestImportDealWarnsOfUnknownFields: fields the layout does not define are
// printed as warnings with their path (the import goes on), and refused
// with --strict (nothing is imported).
func TestImportDealWarnsOfUnknownFields(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	dir := t.TempDir()
	require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("extra-fields")))
	claims, err := os.ReadFile(filepath.Join(dir, dealfile.ClaimsFile))
	require.NoError(t, err)
	claims = bytes.Replace(claims, []byte(`"claim_id"`), []byte(`"exported_by":"crm","claim_id"`), 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, dealfile.ClaimsFile), claims, 0o600))

	out, err := ctl(t, addr, env, "import-deal", "--strict", dir)
	require.Error(t, err)
	require.Contains(t, out, "claims[0].exported_by")
	out, err = ctl(t, addr, env, "deal", "list")
	require.NoError(t, err)
	require.NotContains(t, out, "extra-fields")

	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"--addr", addr, "import-deal", dir},
		func(k string) string { return env[k] }, &stdout, &stderr)
	require.NoError(t, err, stderr.String())
	require.Contains(t, stdout.String(), "deal extra-fields imported")
	require.Contains(t, stderr.String(), "warning: claims[0].exported_by: unknown field, ignored")
}

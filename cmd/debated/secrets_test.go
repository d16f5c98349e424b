package main

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/testutil/openaitest"
	"github.com/debated/debated/internal/testutil/pgtest"
	_ "modernc.org/sqlite" // the embedded store's driver, to dump its tables
)

// TestNoSecretLoggedOrSealed (issue 13 §4): a hostile model endpoint that
// echoes every bearer key it has seen in its 401 and 500 bodies, JSON and
// raw, serves the deployment's roles (DEBATED_LLM_API_KEY) and a tenant's
// own model (its sealed key). Both debates fail with node.retry events and
// an error; neither key appears in the logs, in any row of any table of the
// store, in WatchDebate's output, GetDebate or the export bundle.
func TestNoSecretLoggedOrSealed(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testNoSecretLoggedOrSealed(t, kind)
		})
	}
}

func testNoSecretLoggedOrSealed(t *testing.T, kind string) {
	const deploymentKey = "sk-deployment-Q7fZ19xLmP"
	const tenantKey = "tenant-key-plain-4242" // shaped like nothing: only its configuration masks it
	var mu sync.Mutex
	seen := map[string]bool{}
	calls := 0
	srv := openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		mu.Lock()
		defer mu.Unlock()
		calls++
		seen[r.Authorization] = true
		var keys []string
		for k := range seen {
			keys = append(keys, k, strings.TrimPrefix(k, "Bearer "))
		}
		slices.Sort(keys)
		body := "Incorrect API key provided: " + strings.Join(keys, " ; ")
		if calls%2 == 0 {
			return openaitest.Answer{Status: http.StatusInternalServerError, RawBody: "upstream exploded, request had " + body}
		}
		return openaitest.Answer{Status: http.StatusUnauthorized, Content: body}
	})

	env := map[string]string{"DEBATED_ADMIN_TOKEN": "e2e-admin", "DEBATED_LOG_LEVEL": "debug",
		"DEBATED_LLM_ALLOW_PRIVATE": "true", // the model double listens on loopback
		"DEBATED_LLM_BASE_URL":      srv.URL, "DEBATED_LLM_API_KEY": deploymentKey, "DEBATED_LLM_MODEL": "m"}
	args := []string{"serve", "--listen", "127.0.0.1:0"}
	dataDir := t.TempDir()
	switch kind {
	case "sqlite":
		args = append(args, "--data-dir", dataDir)
	case "postgres":
		env["DEBATED_DATABASE_URL"] = pgtest.NewDatabase(t)
		env["DEBATED_SIGNING_KEYS"] = testSigningKeys
		env["DEBATED_CHECKPOINT_KEYS"] = testCheckpointKeys
		env["DEBATED_ENCRYPTION_KEY"] = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	}
	conn, stop, logs := start(t, args, env)
	s := &stack{conn: conn, stop: stop, debate: debatedv1.NewDebateServiceClient(conn), dbURL: env["DEBATED_DATABASE_URL"]}
	s.a = s.login(t, "a")
	s.b = s.login(t, "b")

	admin := debatedv1.NewAdminServiceClient(conn)
	tenants, err := admin.ListTenants(metadataAdmin(), &debatedv1.ListTenantsRequest{})
	require.NoError(t, err)
	for _, tn := range tenants.GetTenants() {
		if tn.GetName() == "a" {
			_, err := admin.SetTenantModel(metadataAdmin(), &debatedv1.SetTenantModelRequest{
				TenantId: tn.GetTenantId(), BaseUrl: srv.URL, Model: "byo", ApiKey: tenantKey})
			require.NoError(t, err)
		}
	}

	var visible []string // what a client of the API can read
	for _, c := range []struct {
		ctx  context.Context
		deal string
	}{{s.b, "deal-b"}, {s.a, "deal-a"}} { // b first: the endpoint has seen the deployment key when a's calls arrive
		resp, err := s.debate.CreateDebate(c.ctx, &debatedv1.CreateDebateRequest{DealId: c.deal, Protocol: "idis.vc.v1",
			Options: mustStruct(t, map[string]any{"max_rounds": 1})})
		require.NoError(t, err)
		id := resp.GetDebate().GetDebateId()
		msgs := s.watch(t, c.ctx, id, 0, nil)
		require.Contains(t, types(msgs), "node.retry", "the failed calls were recorded")
		require.Equal(t, debatedv1.DebateStatus_DEBATE_STATUS_NEEDS_REVIEW, msgs[len(msgs)-1].GetStatus())
		for _, m := range msgs {
			visible = append(visible, protojson.Format(m))
		}
		got, err := s.debate.GetDebate(c.ctx, &debatedv1.GetDebateRequest{DebateId: id})
		require.NoError(t, err)
		require.NotEmpty(t, got.GetDebate().GetError())
		require.Contains(t, got.GetDebate().GetError(), "unauthorized", "the error keeps its class")
		visible = append(visible, protojson.Format(got))
		exp := string(exportBundle(t, c.ctx, s.debate, id))
		require.Contains(t, exp, "node.retry")
		visible = append(visible, exp)
	}
	mu.Lock()
	require.True(t, seen["Bearer "+tenantKey] && seen["Bearer "+deploymentKey], "the endpoint saw both keys: %v", seen)
	mu.Unlock()

	secrets := []string{deploymentKey, tenantKey, "Q7fZ19xLmP"}
	for _, sec := range secrets {
		for _, v := range visible {
			require.NotContains(t, v, sec, "an API answer carries a secret")
		}
	}
	var stored string
	switch kind {
	case "postgres":
		stored = postgresRows(t, s.dbURL)
		require.NoError(t, stop())
	case "sqlite":
		require.NoError(t, stop())
		stored = sqliteRows(t, filepath.Join(dataDir, "debated.db"))
		require.Contains(t, stored, "node.retry", "the dump holds the ledger")
		stored += filesUnder(t, dataDir) // and whatever the files hold beyond the rows (WAL, freed pages)
	}
	require.Contains(t, stored, "node.retry", "the dump holds the ledger")
	out := logs.String()
	require.Contains(t, out, "llm call failed", "the failures were logged")
	for _, sec := range secrets {
		require.NotContains(t, out, sec, "a log line carries a secret")
		require.NotContains(t, stored, sec, "the store holds a secret")
		require.NotContains(t, stored, hex.EncodeToString([]byte(sec)), "the store holds a secret (bytea)")
	}
}

// postgresRows returns every row of every table of the database (all
// schemas but the system's) as text, read as the superuser (no RLS).
func postgresRows(t *testing.T, url string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_schema, table_name FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var schema, name string
		require.NoError(t, rows.Scan(&schema, &name))
		tables = append(tables, pgx.Identifier{schema, name}.Sanitize())
	}
	require.NoError(t, rows.Err())
	require.Contains(t, tables, `"public"."debate_events"`)
	var sb strings.Builder
	for _, tbl := range tables {
		rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT t::text FROM %s t`, tbl))
		require.NoError(t, err)
		for rows.Next() {
			var row string
			require.NoError(t, rows.Scan(&row))
			sb.WriteString(tbl + " " + row + "\n")
		}
		require.NoError(t, rows.Err())
	}
	return sb.String()
}

// sqliteRows returns every column of every row of every table of the
// embedded store, as text.
func sqliteRows(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	require.Contains(t, tables, "debate_events")
	var sb strings.Builder
	for _, tbl := range tables {
		rows, err := db.Query(`SELECT * FROM "` + strings.ReplaceAll(tbl, `"`, `""`) + `"`)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			require.NoError(t, rows.Scan(ptrs...))
			sb.WriteString(tbl)
			for _, v := range vals {
				fmt.Fprintf(&sb, " %s", v)
			}
			sb.WriteString("\n")
		}
		require.NoError(t, rows.Err())
	}
	return sb.String()
}

// filesUnder returns the bytes of every file under dir (the embedded
// store's database, its WAL and keys) as one string.
func filesUnder(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		sb.Write(b)
		return err
	}))
	return sb.String()
}

// TestTenantKeysMaskedBeforeUse: a tenant's model key is masked from the
// start, before any debate of that tenant has run on this process. An
// endpoint that knows tenant A's key (another replica sent it there) and
// serves the deployment's roles echoes it into tenant B's failed debate
// on a freshly started server: the key appears nowhere B can read, nor in
// the logs.
func TestTenantKeysMaskedBeforeUse(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testTenantKeysMaskedBeforeUse(t, kind)
		})
	}
}

func testTenantKeysMaskedBeforeUse(t *testing.T, kind string) {
	const tenantKey = "tenant-a-key-plain-7f3k"
	srv := openaitest.New(t, func(r openaitest.Request) openaitest.Answer {
		return openaitest.Answer{Status: http.StatusUnauthorized, Content: "key revoked; the last good key was " + tenantKey}
	})
	dir := t.TempDir()
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir}
	env := map[string]string{"DEBATED_ADMIN_TOKEN": "e2e-admin", "DEBATED_LOG_LEVEL": "debug",
		"DEBATED_LLM_ALLOW_PRIVATE": "true"} // the model double listens on loopback
	if kind == "postgres" {
		env["DEBATED_DATABASE_URL"] = pgtest.NewDatabase(t)
		env["DEBATED_SIGNING_KEYS"] = testSigningKeys
		env["DEBATED_CHECKPOINT_KEYS"] = testCheckpointKeys
		env["DEBATED_ENCRYPTION_KEY"] = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	}

	// First run: tenants a and b, a with its own model and key.
	conn, stop, _ := start(t, args, env)
	s := &stack{conn: conn, stop: stop, debate: debatedv1.NewDebateServiceClient(conn)}
	s.a = s.login(t, "a")
	s.b = s.login(t, "b")
	admin := debatedv1.NewAdminServiceClient(conn)
	tenants, err := admin.ListTenants(metadataAdmin(), &debatedv1.ListTenantsRequest{})
	require.NoError(t, err)
	for _, tn := range tenants.GetTenants() {
		if tn.GetName() == "a" {
			_, err := admin.SetTenantModel(metadataAdmin(), &debatedv1.SetTenantModelRequest{
				TenantId: tn.GetTenantId(), BaseUrl: srv.URL, Model: "byo", ApiKey: tenantKey})
			require.NoError(t, err)
		}
	}
	require.NoError(t, stop())

	// Second run, with the deployment's roles on the same endpoint: only b
	// debates.
	env["DEBATED_LLM_BASE_URL"], env["DEBATED_LLM_API_KEY"], env["DEBATED_LLM_MODEL"] = srv.URL, "sk-deployment-ZZ81bq", "m"
	conn, stop, logs := start(t, args, env)
	client := debatedv1.NewDebateServiceClient(conn)
	s2 := &stack{conn: conn, stop: stop, debate: client}
	resp, err := client.CreateDebate(s.b, &debatedv1.CreateDebateRequest{DealId: "deal-b", Protocol: "idis.vc.v1",
		Options: mustStruct(t, map[string]any{"max_rounds": 1})})
	require.NoError(t, err)
	id := resp.GetDebate().GetDebateId()
	msgs := s2.watch(t, s.b, id, 0, nil)
	require.Contains(t, types(msgs), "node.retry")
	got, err := client.GetDebate(s.b, &debatedv1.GetDebateRequest{DebateId: id})
	require.NoError(t, err)
	require.Contains(t, got.GetDebate().GetError(), "key revoked")
	visible := []string{protojson.Format(got), string(exportBundle(t, s.b, client, id))}
	for _, m := range msgs {
		visible = append(visible, protojson.Format(m))
	}
	var stored string
	if kind == "postgres" {
		stored = postgresRows(t, env["DEBATED_DATABASE_URL"])
	}
	require.NoError(t, stop())
	if kind == "sqlite" {
		stored = sqliteRows(t, filepath.Join(dir, "debated.db"))
	}
	require.Contains(t, stored, "node.retry")
	for _, v := range append(visible, logs.String(), stored) {
		require.NotContains(t, v, tenantKey)
	}
}

// TestUsageNeverPrintsSecrets: the secrets configured in the environment
// (the admin token, the ledger and checkpoint keys, the database URL with
// its password) are in effect but never in the usage that help prints,
// nor in the one a mistyped flag prints to the logs.
func TestUsageNeverPrintsSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"DEBATED_ADMIN_TOKEN":     "admin-token-Zq81",
		"DEBATED_SIGNING_KEYS":    "v1:" + base64.StdEncoding.EncodeToString([]byte("signing-secret-of-32-bytes-Zq81!")),
		"DEBATED_CHECKPOINT_KEYS": "v1:" + base64.StdEncoding.EncodeToString([]byte("checkpoint-secret-32-bytes-Zq81!")),
		"DEBATED_DATABASE_URL":    "postgres://debated:db-password-Zq81@db.internal:5432/debated",
		"DEBATED_LISTEN":          "0.0.0.0:50051",
	}
	getenv := func(k string) string { return env[k] }
	for _, args := range [][]string{{"serve", "--help"}, {"serve", "--lisen", ":1"}, {"migrate", "-h"}, {"migrate", "--typo"}} {
		var out strings.Builder
		_ = run(t.Context(), args, getenv, &out, &out, nil)
		require.Contains(t, out.String(), "-database-url", "%v printed the usage", args)
		require.NotContains(t, out.String(), "Zq81", "%v", args)
		for k, v := range env {
			if k != "DEBATED_LISTEN" {
				require.NotContains(t, out.String(), v, "%v shows %s", args, k)
			}
		}
		if args[0] == "serve" {
			require.Contains(t, out.String(), `"0.0.0.0:50051"`, "%v: the listen address is no secret and shows", args)
		}
	}
	cfg, err := parseConfig("serve", nil, getenv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, env["DEBATED_ADMIN_TOKEN"], cfg.server.AdminToken, "the variables still configure the server")
	require.Equal(t, env["DEBATED_SIGNING_KEYS"], cfg.signingKeys)
	require.Equal(t, env["DEBATED_CHECKPOINT_KEYS"], cfg.tlog.keys)
	require.Equal(t, env["DEBATED_DATABASE_URL"], cfg.databaseURL)
	cfg, err = parseConfig("serve", []string{"--admin-token", "from-the-flag"}, getenv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "from-the-flag", cfg.server.AdminToken, "a flag still wins")
}

// TestConfiguredSecretsAreMasked: every secret the process is configured
// with is masked in what it logs: the checkpoint keys as well as the
// signing keys, and the database password in a key=value connection string
// as well as in a URL.
func TestConfiguredSecretsAreMasked(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"host=db.internal user=debated password=dsn-password-Zq81 dbname=debated",
		"postgres://debated:url-password-Zq81@db.internal:5432/debated",
	} {
		var cfg config
		cfg.databaseURL = dsn
		cfg.signingKeys = "v1:c2lnbmluZy1zZWNyZXQtb2YtMzItYnl0ZXMtWnE4MSE="
		cfg.tlog.keys = "v1:Y2hlY2twb2ludC1zZWNyZXQtMzItYnl0ZXMtWnE4MSE=,v2:Y2hlY2twb2ludC1zZWNyZXQtMzItYnl0ZXMtdjIhIQ=="
		r := configuredSecrets(cfg)
		msg := "connect " + dsn + " with " + cfg.signingKeys + " and " + cfg.tlog.keys
		got := r.Secrets(msg)
		require.NotContains(t, got, "password-Zq81", dsn)
		require.NotContains(t, got, "c2lnbmluZy1zZWNyZXQtb2YtMzItYnl0ZXMtWnE4MSE=")
		require.NotContains(t, got, "Y2hlY2twb2ludC1zZWNyZXQtMzItYnl0ZXMtWnE4MSE=")
		require.NotContains(t, got, "Y2hlY2twb2ludC1zZWNyZXQtMzItYnl0ZXMtdjIhIQ==")
		require.Contains(t, got, "db.internal", "what is no secret stays")
	}
}

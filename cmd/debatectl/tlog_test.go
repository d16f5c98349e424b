package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	_ "modernc.org/sqlite" // the tamperer's own connection to the embedded store's file

	"github.com/debated/debated/internal/dealfile"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/protocols/synthetic"
	"github.com/debated/debated/internal/runner"
	"github.com/debated/debated/internal/server"
	"github.com/debated/debated/internal/store/postgres"
	"github.com/debated/debated/internal/store/sqlite"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/debated/debated/internal/stream"
	"github.com/debated/debated/internal/testutil/pgtest"
	"github.com/debated/debated/internal/tlog"
)

// tamperer runs SQL on the store behind the service's back, as its owner
// (PostgreSQL: a superuser with triggers off; SQLite: the file's owner,
// append-only triggers dropped), each call one transaction.
type tamperer func(t *testing.T, stmts ...string)

// serveLogged starts a server of kind with a debate engine and the
// transparency log, as debated wires them.
func serveLogged(t *testing.T, kind string) (string, tamperer) {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	keys, err := ledger.NewKeyring(map[string][]byte{"v1": []byte("debatectl-test-signing-secret-32b!")}, "v1")
	require.NoError(t, err)
	cpKeys, err := tlog.NewKeyring("debated.test", map[string][]byte{"v1": []byte("debatectl-test-checkpoint-secret-32")}, "v1")
	require.NoError(t, err)
	reg, err := orchestrator.NewRegistry(synthetic.Protocol())
	require.NoError(t, err)
	eng, err := orchestrator.New(orchestrator.Config{Protocols: reg, Sealer: ledger.NewSealer(keys)})
	require.NoError(t, err)

	var (
		st     stores
		logst  server.LogStore
		tamper tamperer
		stop   func()
	)
	switch kind {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "d.db")
		s, err := sqlite.Open(ctx, path)
		require.NoError(t, err)
		t.Cleanup(s.Close)
		st, logst = s, s
		hub := stream.New(s, stream.Config{Logger: quiet})
		run, err := runner.New(runner.Config{Store: s, Engine: eng, Publisher: hub, Logger: quiet})
		require.NoError(t, err)
		local := runner.NewLocal(s, run, runner.LocalConfig{MaxWorkers: 4, Logger: quiet})
		lctx, cancel := context.WithCancel(ctx)
		stopped := make(chan error, 1)
		go func() { stopped <- local.Run(lctx) }()
		stop = sync.OnceFunc(func() { cancel(); require.NoError(t, <-stopped) })
		t.Cleanup(stop)
		tamper = func(t *testing.T, stmts ...string) {
			t.Helper()
			db, err := sql.Open("sqlite", path)
			require.NoError(t, err)
			defer db.Close()
			tx, err := db.Begin()
			require.NoError(t, err)
			defer func() { _ = tx.Rollback() }()
			var triggers []string
			rs, err := tx.Query(`SELECT sql FROM sqlite_master WHERE type = 'trigger'`)
			require.NoError(t, err)
			for rs.Next() {
				var q string
				require.NoError(t, rs.Scan(&q))
				triggers = append(triggers, q)
			}
			require.NoError(t, rs.Close())
			rs, err = tx.Query(`SELECT name FROM sqlite_master WHERE type = 'trigger'`)
			require.NoError(t, err)
			var names []string
			for rs.Next() {
				var n string
				require.NoError(t, rs.Scan(&n))
				names = append(names, n)
			}
			require.NoError(t, rs.Close())
			for _, n := range names {
				_, err := tx.Exec(`DROP TRIGGER ` + n)
				require.NoError(t, err)
			}
			for _, q := range stmts {
				_, err := tx.Exec(q)
				require.NoError(t, err, q)
			}
			for _, q := range triggers {
				_, err := tx.Exec(q)
				require.NoError(t, err)
			}
			require.NoError(t, tx.Commit())
		}
		stores := server.Stores{Tenants: st, Registry: st, Grading: st,
			Debates: &server.Debates{Store: runner.Scheduled(s, local), Engine: eng, Protocols: reg, Keys: keys, Hub: hub},
			Log:     &server.Log{Store: logst, Keys: cpKeys, Origin: "debated.test"}}
		return startServer(t, stores), tamper
	case "postgres":
		url := pgtest.NewDatabase(t)
		require.NoError(t, postgres.Migrate(ctx, url))
		require.NoError(t, runner.MigrateRiver(ctx, url, postgres.AppRole))
		s, err := postgres.New(ctx, postgres.Config{URL: url})
		require.NoError(t, err)
		t.Cleanup(s.Close)
		hub := stream.New(s, stream.Config{Logger: quiet})
		run, err := runner.New(runner.Config{Store: s, Engine: eng, Publisher: hub, Logger: quiet})
		require.NoError(t, err)
		rv, err := runner.NewRiver(s, run, runner.RiverConfig{MaxWorkers: 4, Logger: quiet})
		require.NoError(t, err)
		rctx, stopRiver := context.WithCancel(ctx)
		stopped := make(chan error, 1)
		go func() { stopped <- rv.Run(rctx) }()
		t.Cleanup(func() { stopRiver(); require.NoError(t, <-stopped) })
		lctx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		go func() { _ = s.Listen(lctx, hub.Poke) }()
		tamper = func(t *testing.T, stmts ...string) {
			t.Helper()
			conn, err := pgx.Connect(ctx, url)
			require.NoError(t, err)
			defer conn.Close(ctx)
			tx, err := conn.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			// A superuser's way past the append-only triggers.
			_, err = tx.Exec(ctx, `SET LOCAL session_replication_role = replica`)
			require.NoError(t, err)
			for _, q := range stmts {
				_, err := tx.Exec(ctx, q)
				require.NoError(t, err, q)
			}
			require.NoError(t, tx.Commit(ctx))
		}
		stores := server.Stores{Tenants: s, Registry: s, Grading: s,
			Debates: &server.Debates{Store: runner.Scheduled(s, rv), Engine: eng, Protocols: reg, Keys: keys, Hub: hub},
			Log:     &server.Log{Store: s, Keys: cpKeys, Origin: "debated.test"}}
		return startServer(t, stores), tamper
	}
	t.Fatalf("unknown store %q", kind)
	return "", nil
}

func startServer(t *testing.T, stores server.Stores) string {
	t.Helper()
	srv, err := server.New(stores, server.Config{AdminToken: adminToken, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return lis.Addr().String()
}

// runDebate creates a synthetic debate and watches it to its end.
func runDebate(t *testing.T, addr string, env map[string]string) string {
	t.Helper()
	out, err := ctl(t, addr, env, "--json", "debate", "create", "--deal", "deal-log", "--protocol", "synthetic.v1", "--option", "max_rounds=2")
	require.NoError(t, err, out)
	var created struct {
		Debate struct {
			DebateID string `json:"debate_id"`
		} `json:"debate"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	out, err = ctl(t, addr, env, "debate", "watch", created.Debate.DebateID)
	require.NoError(t, err, out)
	require.Contains(t, out, "outcome: completed")
	return created.Debate.DebateID
}

// TestTruncationIsCaught is issue 13 §1: a database owner deletes a
// completed debate's last steps and rewrites its head to match, then
// rebuilds the log without them. VerifyDebate, the witness and `verify
// --checkpoint` of a bundle exported before all catch it; a bundle cut
// short says it ends before the terminal event.
func TestTruncationIsCaught(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			addr, tamper := serveLogged(t, kind)
			env := login(t, addr)
			dir := t.TempDir()
			require.NoError(t, dealfile.Write(dir, storetest.SampleBundle("deal-log")))
			out, err := ctl(t, addr, env, "import-deal", dir)
			require.NoError(t, err, out)

			id := runDebate(t, addr, env)
			wdir := filepath.Join(t.TempDir(), "witness")
			out, err = ctl(t, addr, env, "witness", "--dir", wdir)
			require.NoError(t, err, out)
			require.Contains(t, out, "first; key debated.test+")

			// GetDebate carries the checkpoint that covers it.
			out, err = ctl(t, addr, env, "--json", "debate", "get", id)
			require.NoError(t, err, out)
			require.Contains(t, out, "debated.test/tenants/")

			bundlePath := filepath.Join(t.TempDir(), "before.json")
			bundle, err := ctl(t, addr, env, "debate", "export", id)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(bundlePath, []byte(bundle), 0o600))
			out, err = ctl(t, addr, env, "verify", bundlePath, "--checkpoint", wdir)
			require.NoError(t, err, out)
			require.Contains(t, out, "log: the last event")
			// Offline, the published keys check the checkpoint's signer too.
			published, err := ctl(t, addr, env, "--json", "keys")
			require.NoError(t, err, published)
			keysPath := filepath.Join(t.TempDir(), "keys.json")
			require.NoError(t, os.WriteFile(keysPath, []byte(published), 0o600))
			out, err = ctl(t, "unused:1", nil, "verify", bundlePath, "--trusted-keys", keysPath)
			require.NoError(t, err, out)
			require.Contains(t, out, "(signed by debated.test")
			require.NotContains(t, out, "signature not checked")

			// The log grows; the witness follows, and the old bundle is
			// proved in the newer checkpoint.
			runDebate(t, addr, env)
			out, err = ctl(t, addr, env, "witness", "--dir", wdir)
			require.NoError(t, err, out)
			require.Contains(t, out, "is consistent with")
			out, err = ctl(t, addr, env, "verify", bundlePath, "--checkpoint", wdir)
			require.NoError(t, err, out)
			require.Contains(t, out, "is consistent with the given one")
			out, err = ctl(t, addr, env, "debate", "verify", id)
			require.NoError(t, err, out)

			b, err := ledger.ParseBundle([]byte(bundle))
			require.NoError(t, err)
			require.NotNil(t, b.Log)

			// Bundles cut short, offline.
			cut := *b
			cut.Events = b.Events[:20]
			requireVerifyFails(t, &cut, "is not the head its log proof proves")
			cut.Log = nil
			requireVerifyFails(t, &cut, "ends before the debate's terminal event")
			cut.Events = []ledger.Event{}
			requireVerifyFails(t, &cut, "it has no events")

			// The truncation: the debate's events after an earlier step's
			// head are deleted and its head columns rewritten to match.
			var keep *ledger.Event
			for i := len(b.Events) - 2; i > 0 && keep == nil; i-- {
				if b.Events[i].Type != b.Events[len(b.Events)-1].Type && b.Events[i+1].Node != b.Events[i].Node {
					keep = &b.Events[i]
				}
			}
			require.NotNil(t, keep)
			tamper(t, fmt.Sprintf(`DELETE FROM debate_events WHERE debate_id = '%s' AND seq > %d`, id, keep.Seq))
			// A watch of the cut tail ends with DATA_LOSS instead of waiting.
			out, err = ctl(t, addr, env, "debate", "watch", id)
			require.Error(t, err, out)
			require.Contains(t, out, fmt.Sprintf("its events stop at seq %d", keep.Seq))
			require.Equal(t, codes.DataLoss, status.Code(err), "%v", err)
			out, err = ctl(t, addr, env, "debate", "verify", id)
			require.Error(t, err, out)
			tamper(t, fmt.Sprintf(`UPDATE debates SET last_seq = %d, head_hash = '%s' WHERE debate_id = '%s'`, keep.Seq, keep.Hash, id))
			out, err = ctl(t, addr, env, "debate", "verify", id)
			require.Error(t, err, out)
			require.Contains(t, out, "log: the transparency log records seq")
			require.Contains(t, out, "terminal: the debate is completed but its ledger has no terminal event")

			// The log rewritten without the deleted steps (a consistent
			// new tree): the witness and the old bundle catch it.
			tamper(t,
				`CREATE TABLE kept AS SELECT * FROM tlog_leaves`,
				`DELETE FROM tlog_leaves`, `DELETE FROM tlog_nodes`, `DELETE FROM tlog_heads`,
				fmt.Sprintf(`INSERT INTO tlog_queue (tenant_id, kind, subject, seq, hash)
					SELECT tenant_id, kind, subject, seq, hash FROM kept
					WHERE NOT (subject = '%s' AND seq > %d) ORDER BY leaf_index`, id, keep.Seq),
				`DROP TABLE kept`)
			out, err = ctl(t, addr, env, "debate", "verify", id)
			require.Error(t, err, out)
			require.NotContains(t, out, "log: the transparency log records seq", "the rewritten log agrees with the ledger")
			require.Contains(t, out, "no terminal event")
			out, err = ctl(t, addr, env, "witness", "--dir", wdir)
			require.Error(t, err, out)
			require.Contains(t, out, "the transparency log is inconsistent")
			out, err = ctl(t, addr, env, "verify", bundlePath, "--checkpoint", wdir)
			require.Error(t, err, out)
			require.Contains(t, out, "the transparency log is inconsistent")
			// A checkpoint of the rewritten log, taken now, does not
			// extend the bundle's either.
			later := filepath.Join(t.TempDir(), "later")
			_, err = ctl(t, addr, env, "witness", "--dir", later)
			require.NoError(t, err)
			out, err = ctl(t, addr, env, "verify", bundlePath, "--checkpoint", later)
			require.Error(t, err, out)
			require.Contains(t, out, "the transparency log is inconsistent")
		})
	}
}

func requireVerifyFails(t *testing.T, b *ledger.Bundle, want string) {
	t.Helper()
	data, err := ledger.MarshalBundle(b)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "cut.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	out, err := ctl(t, "unused:1", nil, "verify", path)
	require.Error(t, err, out)
	require.True(t, strings.Contains(out, want), "%q does not say %q", out, want)
}

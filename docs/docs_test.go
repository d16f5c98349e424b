// Package docs_test runs the shell examples of README.md and docs/**/*.md
// against real servers, so that the documentation cannot drift from what
// the commands do.
//
// Every fenced block tagged sh, bash, shell or console is run, command by
// command, in the order of the files (README.md first, then docs/ by path),
// in one shell state: exported variables carry over from one command to the
// next and from one file to the next, as they do for a reader following the
// README in one terminal. Placeholders such as <DEAL_ID>, <DEBATE_ID> and
// dbk_… take the value earlier output gave them (see placeholders). The
// server the README's `make run` would start is started by the test on a
// free port with the development admin token; localhost:50051 in a command
// is that server. A command that runs `debated serve` runs in the
// background until the test ends.
//
// An HTML comment on the line before a block tells the test what to do:
//
//	<!-- docs-test: skip (why) -->   the block is not run; the reason is required
//	<!-- docs-test: postgres -->     the block needs PostgreSQL: its database
//	                                 "debated" becomes a scratch database made
//	                                 for the test and dropped after it
//	<!-- docs-test: python -->       the block needs python3 with the
//	                                 cryptography package; skipped (and
//	                                 logged) without it, as the Go test of the
//	                                 Python verifier is
//
// When a command needs a placeholder that the read-only command before it
// (a get or list) has not printed yet, that command is repeated for up to
// 30 s, as a reader would ask again.
//
// DOCS_TEST_VERBOSE=1 logs every command's output (to refresh the README's
// sample output).
// Each command runs under `set -e -u -o pipefail`: a failing command, or one
// that reads a variable no earlier example set, fails the test with the file
// and line of the command.
package docs_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the scratch database
	"github.com/stretchr/testify/require"
)

// adminToken is the token `make run` gives the service, which the README
// uses as written.
const adminToken = "dev-admin-token"

// commandTimeout bounds one command: a debate of the repository's deals
// runs in well under a second on the embedded store. A make target that
// builds or installs from the module proxy (grpcurl, on a cold cache) gets
// buildTimeout instead: on a busy machine that alone can take minutes.
const (
	commandTimeout = 90 * time.Second
	buildTimeout   = 8 * time.Minute
)

// placeholders says where the value of each placeholder comes from: the
// last match of its pattern in the output of the commands run before. The
// value is the first group that matched (a pattern may have alternatives).
var placeholders = []struct {
	name string // as written in the docs
	re   *regexp.Regexp
}{
	{"<TENANT_ID>", regexp.MustCompile(`tenant ([0-9a-f-]{36}) created`)},
	{"dbk_…", regexp.MustCompile(`(dbk_[A-Za-z0-9_-]+)`)},
	{"<DEAL_ID>", regexp.MustCompile(`deal (\S+) (?:imported|already imported)`)},
	{"<CLAIM_ID>", regexp.MustCompile(`(?m)^F\d+\s+([0-9a-f-]{36})\s`)},
	{"<EVIDENCE_ID>", regexp.MustCompile(`(?m)(?:corroborator|uncited|evidence) ([0-9a-f-]{36})|^([0-9a-f-]{36})\s+[A-G]\s`)},
	{"<DEFECT_ID>", regexp.MustCompile(`defect (df[a-z]_[0-9a-f-]+) (?:flagged|[A-Z_]+ on)`)},
	{"<DEBATE_ID>", regexp.MustCompile(`debate ([0-9a-f-]{36}) created`)},
	{"<GATE_ID>", regexp.MustCompile(`([0-9a-f-]{36}-gate-\d+)`)},
}

var unresolved = regexp.MustCompile(`<[A-Z][A-Z_]*_ID>|dbk_…`)

type block struct {
	file      string // relative to the repository
	line      int    // of the opening fence
	directive string // "", "skip", "postgres"
	commands  []command
}

type command struct {
	line int
	text string
}

func TestDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs every documented command")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	blocks := collect(t, root)
	require.NotEmpty(t, blocks)

	tmp := t.TempDir()
	work := filepath.Join(tmp, "work")
	bin := filepath.Join(work, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	build := exec.Command("go", "build", "-o", bin+string(os.PathSeparator), "./cmd/debated", "./cmd/debatectl")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	// The reader's checkout, without its build outputs and data: files the
	// examples write (ledger.json, ./out, ./witness) land in the scratch copy.
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		if slices.Contains([]string{"bin", ".data", ".git"}, e.Name()) {
			continue
		}
		require.NoError(t, os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())))
	}
	// A grpcurl already installed by `make grpcurl` is reused (with its
	// stamp, so make does not install it again).
	if stamps, _ := filepath.Glob(filepath.Join(root, "bin", "grpcurl*")); len(stamps) > 0 {
		for _, p := range stamps {
			require.NoError(t, os.Symlink(p, filepath.Join(bin, filepath.Base(p))))
		}
	}

	r := &runner{t: t, work: work, state: filepath.Join(tmp, "state.sh"), values: map[string]string{}}
	require.NoError(t, os.WriteFile(r.state, nil, 0o600))
	r.addr = freeAddr(t)
	r.pgAddr = freeAddr(t)
	// debatectl's default address is make run's; here it is the test's server.
	r.env = append(environment(bin), "DEBATECTL_ADDR="+r.addr)
	r.serve(t, []string{"DEBATED_ADMIN_TOKEN=" + adminToken, "DEBATED_LISTEN=" + r.addr,
		"DEBATED_DATA_DIR=" + filepath.Join(tmp, "data"), "DEBATED_LOG_LEVEL=warn"}, filepath.Join(bin, "debated")+" serve", r.addr)

	ran := 0
	for _, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		switch b.directive {
		case "skip":
			t.Logf("%s: skipped by its docs-test marker", where)
			continue
		case "postgres":
			r.scratchDB = scratchDatabase(t)
		case "python":
			if err := exec.Command("python3", "-c", "import cryptography").Run(); err != nil {
				t.Logf("%s: skipped: python3 with the cryptography package is not installed (%v)", where, err)
				continue
			}
			r.scratchDB = ""
		default:
			r.scratchDB = ""
		}
		for _, c := range b.commands {
			r.run(fmt.Sprintf("%s:%d", b.file, c.line), c.text)
			ran++
		}
	}
	t.Logf("ran %d documented commands", ran)
}

// runner runs the documented commands in one shell state.
type runner struct {
	t         *testing.T
	work      string
	state     string // exports carried from one command to the next
	env       []string
	addr      string // the server `make run` would start
	pgAddr    string // the README's PostgreSQL server (localhost:50052)
	scratchDB string // the database of a postgres block, as a URL
	values    map[string]string
	prev      string // the last command run, and where it is
	prevWhere string
}

// readOnly matches the commands the test may repeat while it waits for a
// placeholder's value to appear in their output.
var readOnly = regexp.MustCompile(`debatectl (?:--json )?(?:debate|deal|claims?|defect) (?:get|list)\b`)

func (r *runner) substitute(where, text string) string {
	text = strings.ReplaceAll(text, "localhost:50051", r.addr)
	text = strings.ReplaceAll(text, "localhost:50052", r.pgAddr)
	if r.scratchDB != "" {
		u, err := url.Parse(r.scratchDB)
		require.NoError(r.t, err)
		name := strings.TrimPrefix(u.Path, "/")
		text = regexp.MustCompile(`(createdb .*)\bdebated\b`).ReplaceAllString(text, "${1}"+name)
		text = strings.ReplaceAll(text, "@127.0.0.1:5432/debated?", "@"+u.Host+"/"+name+"?")
	}
	for _, p := range placeholders {
		if !strings.Contains(text, p.name) {
			continue
		}
		v, ok := r.values[p.name]
		if !ok && r.prev != "" && readOnly.MatchString(r.prev) {
			// A reader waits a moment and asks again (a human gate opens a
			// step after the debate starts): so does the test.
			for deadline := time.Now().Add(30 * time.Second); !ok && time.Now().Before(deadline); {
				time.Sleep(200 * time.Millisecond)
				r.exec(r.prevWhere, r.prev, r.prev)
				v, ok = r.values[p.name]
			}
		}
		if !ok {
			r.t.Fatalf("%s: no earlier output gave a value for %s:\n%s", where, p.name, text)
		}
		text = strings.ReplaceAll(text, p.name, v)
	}
	if m := unresolved.FindString(text); m != "" {
		r.t.Fatalf("%s: the docs test knows no value for %s (add it to placeholders):\n%s", where, m, text)
	}
	return text
}

func (r *runner) run(where, text string) {
	t := r.t
	cmdText := r.substitute(where, text)
	if strings.Contains(cmdText, "debated serve") {
		addr := regexp.MustCompile(`--listen (\S+)`).FindStringSubmatch(cmdText)
		require.NotNil(t, addr, "%s: a documented `debated serve` names its --listen address", where)
		r.serve(t, nil, "source "+r.state+"; "+cmdText, addr[1])
		t.Logf("%s: started in the background: %s", where, text)
		return
	}
	r.exec(where, text, cmdText)
	r.prev, r.prevWhere = cmdText, where
}

// exec runs one command and takes the placeholders' values from its
// output.
func (r *runner) exec(where, text, cmdText string) {
	t := r.t
	timeout := commandTimeout
	if strings.HasPrefix(strings.TrimSpace(cmdText), "make ") {
		timeout = buildTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	script := "set -e -u -o pipefail\nsource " + r.state + "\n" + cmdText + "\nexport -p > " + r.state + "\n"
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = r.work
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: the documented command failed (%v):\n$ %s\n%s", where, err, text, out)
	}
	if os.Getenv("DOCS_TEST_VERBOSE") != "" {
		t.Logf("%s: $ %s\n%s", where, cmdText, out)
	}
	for _, p := range placeholders {
		ms := p.re.FindAllStringSubmatch(string(out), -1)
		if len(ms) == 0 {
			continue
		}
		for _, g := range ms[len(ms)-1][1:] { // the alternative that matched
			if g != "" {
				r.values[p.name] = g
				break
			}
		}
	}
}

// serve starts a server in the background, waits until addr accepts
// connections, and stops it when the test ends.
func (r *runner) serve(t *testing.T, extraEnv []string, script, addr string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "exec "+script)
	if strings.HasPrefix(script, "source ") {
		cmd = exec.Command("bash", "-c", strings.Replace(script, "; ", "; exec ", 1))
	}
	cmd.Dir = r.work
	cmd.Env = append(slices.Clone(r.env), extraEnv...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("the server exited before listening on %s:\n%s", addr, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server does not listen on %s:\n%s", addr, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// environment is the test's environment without the variables the docs
// set themselves, with the built binaries first on PATH (some guides call
// `debatectl` without ./bin/).
func environment(bin string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DEBATED_") || strings.HasPrefix(kv, "DEBATECTL_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// scratchDatabase makes an empty database the test drops at its end and
// returns its URL. Without PostgreSQL the test skips (and fails in CI).
func scratchDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	db, err := sql.Open("pgx", base)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL at TEST_DATABASE_URL: %v", err)
		}
		t.Skipf("PostgreSQL at TEST_DATABASE_URL is not reachable (%v): the PostgreSQL examples need it", err)
	}
	// The documented createdb makes it; the test drops it at the end.
	name := "docs_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

var (
	fence     = regexp.MustCompile("^```\\s*(\\S*)")
	directive = regexp.MustCompile(`^<!--\s*docs-test:\s*(\w+)\s*(.*?)\s*-->\s*$`)
	shellTags = []string{"sh", "bash", "shell", "console"}
)

// collect returns the shell blocks of README.md and docs/**/*.md in the
// order a reader meets them.
func collect(t *testing.T, root string) []block {
	t.Helper()
	files := []string{"README.md"}
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	}))
	slices.Sort(files[1:])
	var out []block
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		out = append(out, parse(t, f, string(data))...)
	}
	return out
}

// parse finds the shell blocks of one Markdown file.
func parse(t *testing.T, file, text string) []block {
	lines := strings.Split(text, "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		start := i
		end := start + 1
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "```") {
			end++
		}
		i = end
		if !slices.Contains(shellTags, m[1]) {
			continue
		}
		b := block{file: file, line: start + 1}
		prev := start - 1
		for prev >= 0 && strings.TrimSpace(lines[prev]) == "" {
			prev--
		}
		if prev >= 0 {
			if d := directive.FindStringSubmatch(strings.TrimSpace(lines[prev])); d != nil {
				b.directive = d[1]
				switch d[1] {
				case "skip":
					if strings.Trim(d[2], "() ") == "" {
						t.Fatalf("%s:%d: a docs-test skip says why: <!-- docs-test: skip (reason) -->", file, prev+1)
					}
				case "postgres", "python":
				default:
					t.Fatalf("%s:%d: unknown docs-test directive %q", file, prev+1, d[1])
				}
			}
		}
		b.commands = split(lines[start+1:end], start+2)
		out = append(out, b)
	}
	return out
}

// split cuts a block's lines into commands: a command goes on over a
// trailing backslash, an open quote or a here-document. Comment lines and
// blank lines are not commands.
func split(lines []string, first int) []command {
	var out []command
	var cur []string
	curLine := 0
	var quote rune
	heredoc := ""
	for i, l := range lines {
		if len(cur) == 0 {
			trimmed := strings.TrimSpace(l)
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			curLine = first + i
		}
		cur = append(cur, l)
		if heredoc != "" {
			if strings.TrimSpace(l) == heredoc {
				heredoc = ""
				out = append(out, command{line: curLine, text: strings.Join(cur, "\n")})
				cur = nil
			}
			continue
		}
		quote = scanQuotes(l, quote)
		if quote != 0 || strings.HasSuffix(strings.TrimRight(l, " "), "\\") {
			continue
		}
		if m := regexp.MustCompile(`<<-?\s*'?"?(\w+)'?"?`).FindStringSubmatch(stripComment(l)); m != nil {
			heredoc = m[1]
			continue
		}
		out = append(out, command{line: curLine, text: strings.Join(cur, "\n")})
		cur = nil
	}
	if len(cur) > 0 {
		out = append(out, command{line: curLine, text: strings.Join(cur, "\n")})
	}
	return out
}

// scanQuotes returns the quote still open at the end of l, given the one
// open at its start.
func scanQuotes(l string, open rune) rune {
	escaped := false
	for i, c := range l {
		switch {
		case escaped:
			escaped = false
		case open != '\'' && c == '\\':
			escaped = true
		case open == 0 && c == '#' && (i == 0 || l[i-1] == ' '):
			return 0
		case open == 0 && (c == '\'' || c == '"'):
			open = c
		case c == open:
			open = 0
		}
	}
	return open
}

// stripComment drops a trailing shell comment outside quotes.
func stripComment(l string) string {
	var open rune
	for i, c := range l {
		switch {
		case open == 0 && c == '#' && (i == 0 || l[i-1] == ' '):
			return l[:i]
		case open == 0 && (c == '\'' || c == '"'):
			open = c
		case c == open:
			open = 0
		}
	}
	return l
}

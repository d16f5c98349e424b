// Command debatectl is the command-line client of debated.
//
//	debatectl [--addr HOST:PORT] [--api-key KEY] [--admin-token T] [--json] <command> ...
//
// Run "debatectl help" for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

const usage = `usage: debatectl [global flags] <command> [args]

global flags (each also read from the environment):
  --addr HOST:PORT     server address (DEBATECTL_ADDR, default localhost:50051)
  --api-key KEY        tenant API key (DEBATECTL_API_KEY)
  --admin-token TOKEN  admin token for tenant and key commands (DEBATECTL_ADMIN_TOKEN)
  --json               print machine-readable JSON
  --timeout D          deadline of each call (default 30s)

commands:
  tenant create --name NAME            create a tenant (admin)
  tenant list                          list tenants (admin)
  tenant model TENANT_ID [--base-url U --model M --api-key-env VAR | --clear]
                                       show or set the tenant's own model endpoint (admin)
  key create --tenant ID [--name N] [--scope admin]
                                       create an API key; prints its secret once (admin)
  key revoke KEY_ID                    revoke an API key (admin)
  import-deal DIR [--strict]           import a deal directory (deal.json, claims.json, ...); unknown fields warn, or fail with --strict
  deal get DEAL_ID                     show a deal
  deal list                            list deals
  claims list DEAL_ID [--class C] [--materiality M]
                                       list a deal's claims
  claim get CLAIM_ID                   show one claim
  grade DEAL_ID                        grade the deal and print its truth dashboard
  deal events DEAL_ID [--after SEQ]    the deal's audit log (grade, verdict and defect events)
  defects list DEAL_ID [--all]         the deal's open (or all) defects
  defect flag DEAL_ID --claim ID --type T --description D --ref ID [--ref ID] [--severity S] [--cure C] [--actor A]
                                       flag a defect with evidence references
  defect cure DEAL_ID DEFECT_ID --actor A --reason R
  defect waive DEAL_ID DEFECT_ID --actor A --reason R
                                       close a defect (waiving needs an admin-scoped key)
  protocols                            list the debate protocols: roles, graph, tools
  protocol register FILE.yaml          register a protocol document (YAML or JSON) for the tenant
  protocol get NAME[@VERSION]          show a registered protocol document (latest version by default)
  protocol list                        the same list as protocols (built-in and registered)
  debate create --deal ID --protocol NAME [--option max_rounds=3] [--options-file F.json]
                [--option-text constitution=policy.yaml] [--idempotency-key K]
  debate get|cancel|export|verify DEBATE_ID
  debate list [--status S] [--deal ID]
  debate watch DEBATE_ID [--after SEQ] stream the ledger live (checks the hash chain as it reads)
  debate resolve DEBATE_ID GATE_ID --approve|--reject --reason R
  debate deliverables DEBATE_ID [--markdown] [--artifacts DIR]
                                       the committee deliverables and per-round artifacts
  validate-output --deal ID FILE.json  check an agent output against the gates (nothing stored)
  keys                                 the public keys and policies the operator publishes for
                                       the tenant (--json: the file verify --trusted-keys reads)
  deal verify DEAL_ID                  server-side verification of the deal's audit log
  deal export DEAL_ID                  the deal's audit log as a bundle for verify
  verify BUNDLE.json [--trusted-keys KEYS.json] [--checkpoint FILE|DIR] [--checkpoint-key VKEY] [--partial]
                                       verify an exported debate ledger or deal audit log offline
                                       (no server); without --trusted-keys it checks integrity,
                                       with them also who signed it and under which policy; with
                                       --checkpoint, prove its head in a later (witnessed)
                                       checkpoint (asks the server)
  witness --dir DIR [--checkpoint-key VKEY]
                                       keep the tenant's checkpoints; fail on a rewritten log
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "debatectl:", describe(err))
		os.Exit(1)
	}
}

// cli is one invocation's global settings and connection.
type cli struct {
	addr       string
	apiKey     string
	adminToken string
	json       bool
	timeout    time.Duration
	out        io.Writer
	errOut     io.Writer // warnings, whatever the output format
	conn       *grpc.ClientConn
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("debatectl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	c := &cli{out: stdout, errOut: stderr}
	addr := getenv("DEBATECTL_ADDR")
	if addr == "" {
		addr = "localhost:50051"
	}
	fs.StringVar(&c.addr, "addr", addr, "server address")
	fs.StringVar(&c.apiKey, "api-key", getenv("DEBATECTL_API_KEY"), "tenant API key")
	fs.StringVar(&c.adminToken, "admin-token", getenv("DEBATECTL_ADMIN_TOKEN"), "admin token")
	fs.BoolVar(&c.json, "json", false, "print JSON")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "deadline of each call")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 || rest[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	if rest[0] == "verify" {
		defer func() {
			if c.conn != nil {
				_ = c.conn.Close()
			}
		}()
		return c.verifyCmd(ctx, stdout, rest[1:])
	}
	conn, err := grpc.NewClient(c.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	c.conn = conn
	return c.dispatch(ctx, rest)
}

func (c *cli) dispatch(ctx context.Context, args []string) error {
	cmd := args[0]
	if len(args) > 1 {
		cmd += " " + args[1]
	}
	switch cmd {
	case "tenant create":
		return c.tenantCreate(ctx, args[2:])
	case "tenant list":
		return c.tenantList(ctx, args[2:])
	case "tenant model":
		return c.tenantModel(ctx, args[2:])
	case "key create":
		return c.keyCreate(ctx, args[2:])
	case "key revoke":
		return c.keyRevoke(ctx, args[2:])
	case "deal get":
		return c.dealGet(ctx, args[2:])
	case "deal list":
		return c.dealList(ctx, args[2:])
	case "claims list":
		return c.claimsList(ctx, args[2:])
	case "claim get":
		return c.claimGet(ctx, args[2:])
	case "deal verify":
		return c.dealVerify(ctx, args[2:])
	case "deal export":
		return c.dealExport(ctx, args[2:])
	case "deal events":
		return c.dealEvents(ctx, args[2:])
	case "defect flag":
		return c.defectFlag(ctx, args[2:])
	case "defect cure":
		return c.defectClose(ctx, args[2:], false)
	case "defect waive":
		return c.defectClose(ctx, args[2:], true)
	case "defects list":
		return c.defectsList(ctx, args[2:])
	case "debate create":
		return c.debateCreate(ctx, args[2:])
	case "debate get":
		return c.debateGet(ctx, args[2:])
	case "debate list":
		return c.debateList(ctx, args[2:])
	case "debate watch":
		return c.debateWatch(ctx, args[2:])
	case "debate cancel":
		return c.debateCancel(ctx, args[2:])
	case "debate resolve":
		return c.debateResolve(ctx, args[2:])
	case "debate export":
		return c.debateExport(ctx, args[2:])
	case "debate verify":
		return c.debateVerify(ctx, args[2:])
	case "debate deliverables":
		return c.debateDeliverables(ctx, args[2:])
	}
	if args[0] == "witness" {
		return c.witness(ctx, args[1:])
	}
	if args[0] == "validate-output" {
		return c.validateOutput(ctx, args[1:])
	}
	if args[0] == "keys" {
		return c.keysList(ctx, args[1:])
	}
	if args[0] == "protocol" {
		return c.protocolCmd(ctx, args[1:])
	}
	if args[0] == "protocols" {
		return c.protocolsList(ctx, args[1:])
	}
	if args[0] == "grade" {
		return c.grade(ctx, args[1:])
	}
	if args[0] == "import-deal" {
		return c.importDeal(ctx, args[1:])
	}
	return fmt.Errorf("unknown command %q (see debatectl help)", cmd)
}

// adminCtx returns a call context authorised by the admin token.
func (c *cli) adminCtx(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if c.adminToken == "" {
		return nil, nil, errors.New("this command needs --admin-token or DEBATECTL_ADMIN_TOKEN")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.adminToken), cancel, nil
}

// withBearer adds the credential to a streaming call's context.
func withBearer(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// tenantCtx returns a call context authorised by the tenant API key.
func (c *cli) tenantCtx(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if c.apiKey == "" {
		return nil, nil, errors.New("this command needs --api-key or DEBATECTL_API_KEY")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.apiKey), cancel, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// command is one debatectl command: where it sits in the tree, its help,
// and the function that does it. The function parses its own flags with
// the standard flag package; the cobra tree learns them by calling it once
// with -h (see cli.probing) and hands it the flags the user set.
type command struct {
	path    string // "debate create"
	args    string // "DEBATE_ID GATE_ID"
	short   string
	long    string
	example string
	// complete names what the positional arguments are, for shell
	// completion: "deal", "debate" or "".
	complete string
	run      func(c *cli, ctx context.Context, args []string) error
	// offline commands do not need a connection to debated.
	offline bool
}

// groups are the parents of two-word commands.
var groups = map[string]string{
	"tenant":   "Manage tenants (admin)",
	"key":      "Manage API keys (admin)",
	"deal":     "Show, list, verify and export deals",
	"claims":   "List a deal's claims",
	"claim":    "Show one claim",
	"defect":   "Flag, cure or waive a defect",
	"defects":  "List a deal's defects",
	"debate":   "Create, follow and inspect debates",
	"evidence": "List and show a deal's evidence items",
	"protocol": "Register and show the tenant's own protocols (documents)",
}

func commands() []command {
	return []command{
		{path: "tenant create", short: "Create a tenant (admin)",
			example: "debatectl --admin-token $DEBATED_ADMIN_TOKEN tenant create --name acme",
			run:     (*cli).tenantCreate},
		{path: "tenant list", short: "List tenants (admin)",
			example: "debatectl --admin-token $DEBATED_ADMIN_TOKEN tenant list",
			run:     (*cli).tenantList},
		{path: "tenant model", args: "TENANT_ID", short: "Show or set the tenant's own model endpoint (admin)",
			example: "debatectl tenant model TENANT_ID --base-url https://api.openai.com/v1 --model gpt-4o-mini --api-key-env OPENAI_API_KEY\ndebatectl tenant model TENANT_ID --clear",
			run:     (*cli).tenantModel},
		{path: "key create", short: "Create an API key; prints its secret once (admin)",
			example: "debatectl key create --tenant TENANT_ID --name ci\ndebatectl key create --tenant TENANT_ID --scope admin",
			run:     (*cli).keyCreate},
		{path: "key revoke", args: "KEY_ID", short: "Revoke an API key (admin)",
			example: "debatectl key revoke KEY_ID",
			run:     (*cli).keyRevoke},
		{path: "import-deal", args: "DIR...", short: "Import deal directories (deal.json, claims.json, ...)",
			long:    "Import one or more deal directories. Fields the deal layout does not define are reported as warnings, or refused with --strict. With several directories, a summary lists what was imported, what was unchanged and what failed.",
			example: "debatectl import-deal ../shared/deals/acme\ndebatectl import-deal --continue-on-error deals/*",
			run:     (*cli).importDeal},
		{path: "deal get", args: "DEAL_ID", complete: "deal", short: "Show a deal",
			example: "debatectl deal get acme-series-b", run: (*cli).dealGet},
		{path: "deal list", short: "List deals", example: "debatectl deal list\ndebatectl deal list --json", run: (*cli).dealList},
		{path: "deal events", args: "DEAL_ID", complete: "deal", short: "The deal's audit log (grade, verdict and defect events)",
			example: "debatectl deal events acme-series-b --after 10", run: (*cli).dealEvents},
		{path: "deal verify", args: "DEAL_ID", complete: "deal", short: "Server-side verification of the deal's audit log",
			example: "debatectl deal verify acme-series-b", run: (*cli).dealVerify},
		{path: "deal export", args: "DEAL_ID", complete: "deal", short: "The deal's audit log as a bundle for verify",
			example: "debatectl deal export acme-series-b > audit.json && debatectl verify audit.json", run: (*cli).dealExport},
		{path: "claims list", args: "DEAL_ID", complete: "deal", short: "List a deal's claims",
			example: "debatectl claims list acme-series-b --class financial --materiality high", run: (*cli).claimsList},
		{path: "claim get", args: "CLAIM_ID", short: "Show one claim",
			example: "debatectl claim get CLAIM_ID", run: (*cli).claimGet},
		{path: "evidence list", args: "DEAL_ID", complete: "deal", short: "List a deal's evidence items (their ids are what defect flag --ref takes)",
			example: "debatectl evidence list acme-series-b", run: (*cli).evidenceList},
		{path: "evidence get", args: "EVIDENCE_ID", short: "Show one evidence item",
			example: "debatectl evidence get EVIDENCE_ID\ndebatectl evidence get EVIDENCE_ID --deal acme-series-b", run: (*cli).evidenceGet},
		{path: "grade", args: "DEAL_ID", complete: "deal", short: "Grade the deal and print its truth dashboard",
			example: "debatectl grade acme-series-b", run: (*cli).grade},
		{path: "defects list", args: "DEAL_ID", complete: "deal", short: "The deal's open (or all) defects",
			example: "debatectl defects list acme-series-b --all", run: (*cli).defectsList},
		{path: "defect flag", args: "DEAL_ID", complete: "deal", short: "Flag a defect with evidence references",
			example: "debatectl defect flag acme-series-b --claim CLAIM_ID --type inconsistency --description 'ARR differs from the audited accounts' --ref EVIDENCE_ID",
			run:     (*cli).defectFlag},
		{path: "defect cure", args: "DEAL_ID DEFECT_ID", complete: "deal", short: "Close a defect as cured",
			example: "debatectl defect cure acme-series-b DEFECT_ID --actor analyst --reason 'restated figures received'",
			run:     func(c *cli, ctx context.Context, args []string) error { return c.defectClose(ctx, args, false) }},
		{path: "defect waive", args: "DEAL_ID DEFECT_ID", complete: "deal", short: "Close a defect as waived (needs an admin-scoped key)",
			example: "debatectl defect waive acme-series-b DEFECT_ID --actor partner --reason 'immaterial'",
			run:     func(c *cli, ctx context.Context, args []string) error { return c.defectClose(ctx, args, true) }},
		{path: "protocols", short: "List the debate protocols: roles, graph, tools",
			example: "debatectl protocols\ndebatectl protocols --json", run: (*cli).protocolsList},
		{path: "protocol register", args: "FILE.yaml", short: "Register a protocol document (YAML or JSON) for the tenant",
			example: "debatectl protocol register proscons.yaml", run: (*cli).protocolRegister},
		{path: "protocol get", args: "NAME[@VERSION]", short: "Show a registered protocol document (latest version by default)",
			example: "debatectl protocol get proscons.debate\ndebatectl protocol get proscons.debate@2", run: (*cli).protocolGet},
		{path: "protocol list", short: "The same list as protocols (built-in and registered)",
			example: "debatectl protocol list", run: (*cli).protocolsList},
		{path: "debate create", short: "Start a debate on a deal",
			example: "debatectl debate create --deal acme-series-b --protocol idis.vc.v1 --option max_rounds=3\ndebatectl debate create --deal acme-series-b --protocol stratmaster.v1 --option-text constitution=policy.yaml",
			run:     (*cli).debateCreate},
		{path: "debate get", args: "DEBATE_ID", complete: "debate", short: "Show a debate and its human gates",
			example: "debatectl debate get DEBATE_ID", run: (*cli).debateGet},
		{path: "debate list", short: "List debates",
			example: "debatectl debate list --status running --deal acme-series-b", run: (*cli).debateList},
		{path: "debate watch", args: "DEBATE_ID", complete: "debate", short: "Follow a debate live (checks the hash chain as it reads)",
			example: "debatectl debate watch DEBATE_ID\ndebatectl debate watch DEBATE_ID --after 40", run: (*cli).debateWatch},
		{path: "debate cancel", args: "DEBATE_ID", complete: "debate", short: "Cancel a debate",
			example: "debatectl debate cancel DEBATE_ID --reason 'wrong deal'", run: (*cli).debateCancel},
		{path: "debate resolve", args: "DEBATE_ID GATE_ID", complete: "debate", short: "Approve or reject an open human gate",
			example: "debatectl debate resolve DEBATE_ID GATE_ID --approve --reason 'figures checked'", run: (*cli).debateResolve},
		{path: "debate export", args: "DEBATE_ID", complete: "debate", short: "The debate's signed ledger as a bundle",
			example: "debatectl debate export DEBATE_ID > ledger.json && debatectl verify ledger.json", run: (*cli).debateExport},
		{path: "debate verify", args: "DEBATE_ID", complete: "debate", short: "Server-side verification of the debate's ledger",
			example: "debatectl debate verify DEBATE_ID", run: (*cli).debateVerify},
		{path: "debate deliverables", args: "DEBATE_ID", complete: "debate", short: "The committee deliverables and per-round artifacts",
			long:    "Print the debate's brief rendered for the terminal; --markdown prints the Markdown, --json the JSON, and --artifacts DIR writes the per-round artifacts into DIR.",
			example: "debatectl debate deliverables DEBATE_ID\ndebatectl debate deliverables DEBATE_ID --markdown > brief.md\ndebatectl debate deliverables DEBATE_ID --artifacts out/",
			run:     (*cli).debateDeliverables},
		{path: "validate-output", args: "FILE.json", short: "Check an agent output against the gates (nothing stored)",
			example: "debatectl validate-output --deal acme-series-b output.json", run: (*cli).validateOutput},
		{path: "keys", short: "The public keys and policies the operator publishes for the tenant",
			long:    "With --json it prints the file verify --trusted-keys reads.",
			example: "debatectl --json keys > trusted-keys.json", run: (*cli).keysList},
		{path: "verify", args: "BUNDLE.json", offline: true, short: "Verify an exported debate ledger or deal audit log offline",
			long:    "Verify a bundle without the server: without --trusted-keys it checks integrity, with them also who signed it and under which policy; with --checkpoint it proves the bundle's head in a later (witnessed) checkpoint (that asks the server).",
			example: "debatectl verify ledger.json --trusted-keys trusted-keys.json\ndebatectl verify ledger.json --checkpoint witness/",
			run:     func(c *cli, ctx context.Context, args []string) error { return c.verifyCmd(ctx, c.out, args) }},
		{path: "witness", short: "Keep the tenant's checkpoints; fail on a rewritten log",
			example: "debatectl witness --dir witness/", run: (*cli).witness},
	}
}

// run is debatectl: it parses args and runs the command. Tests call it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := &cli{out: stdout, errOut: stderr}
	defer func() {
		if c.conn != nil {
			_ = c.conn.Close()
		}
	}()
	root := c.rootCommand(ctx, getenv)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetContext(ctx)
	err := root.ExecuteContext(ctx)
	return c.explain(err)
}

func (c *cli) rootCommand(ctx context.Context, getenv func(string) string) *cobra.Command {
	root := &cobra.Command{
		Use:   "debatectl",
		Short: "The command-line client of debated",
		Long: "debatectl talks to debated: import deals, grade them, run and follow debates, verify ledgers.\n" +
			"Global flags go anywhere on the line and are also read from the environment\n" +
			"(DEBATECTL_ADDR, DEBATECTL_API_KEY, DEBATECTL_ADMIN_TOKEN).",
		Example:       indent("debatectl --api-key $KEY deal list\ndebatectl debate watch DEBATE_ID --json"),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	addr := getenv("DEBATECTL_ADDR")
	if addr == "" {
		addr = "localhost:50051"
	}
	pf := root.PersistentFlags()
	pf.StringVar(&c.addr, "addr", addr, "server address HOST:PORT (DEBATECTL_ADDR)")
	// The secrets' defaults come from the environment but are set after
	// the flags are defined, so that help never prints them.
	pf.StringVar(&c.apiKey, "api-key", "", "tenant API key (DEBATECTL_API_KEY)")
	pf.StringVar(&c.adminToken, "admin-token", "", "admin token for tenant and key commands (DEBATECTL_ADMIN_TOKEN)")
	c.apiKey, c.adminToken = getenv("DEBATECTL_API_KEY"), getenv("DEBATECTL_ADMIN_TOKEN")
	pf.BoolVar(&c.json, "json", false, "print machine-readable JSON")
	pf.DurationVar(&c.timeout, "timeout", 30*time.Second, "deadline of each call")

	parents := map[string]*cobra.Command{"": root}
	specs := commands()
	for _, spec := range specs {
		parentName, name := "", spec.path
		if i := strings.LastIndex(spec.path, " "); i >= 0 {
			parentName, name = spec.path[:i], spec.path[i+1:]
		}
		parent, ok := parents[parentName]
		if !ok {
			parent = &cobra.Command{Use: parentName, Short: groups[parentName], Example: groupExample(specs, parentName), Args: cobra.NoArgs,
				RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
			root.AddCommand(parent)
			parents[parentName] = parent
		}
		parent.AddCommand(c.leaf(ctx, spec, name))
	}
	return root
}

// leaf builds the cobra command of spec: its flags are those spec.run
// defines, found by running it with -h before anything is parsed.
func (c *cli) leaf(ctx context.Context, spec command, name string) *cobra.Command {
	use := name
	if spec.args != "" {
		use += " " + spec.args
	}
	var set []string // the flags the user gave, in order, as --name=value
	cmd := &cobra.Command{
		Use:     use + " [flags]",
		Short:   spec.short,
		Long:    spec.long,
		Example: indent(spec.example),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !spec.offline {
				if err := c.connect(); err != nil {
					return err
				}
			}
			return spec.run(c, cmd.Context(), append(append([]string(nil), set...), args...))
		},
	}
	if cmd.Long == "" {
		cmd.Long = spec.short
	}
	probe := &cli{probing: true, out: io.Discard, errOut: io.Discard}
	if err := spec.run(probe, ctx, []string{"-h"}); !errors.Is(err, flag.ErrHelp) || probe.probed == nil {
		// A command that reads no flags set of its own.
		return cmd
	}
	probe.probed.VisitAll(func(f *flag.Flag) {
		v := &recorded{name: f.Name, value: f.Value, set: &set}
		pfl := cmd.Flags().VarPF(v, f.Name, "", f.Usage)
		pfl.DefValue = f.DefValue
		if v.Type() == "bool" {
			pfl.NoOptDefVal = "true"
		}
	})
	switch spec.complete {
	case "deal":
		cmd.ValidArgsFunction = c.completeOnce(c.dealIDs)
	case "debate":
		cmd.ValidArgsFunction = c.completeOnce(c.debateIDs)
	default:
		cmd.ValidArgsFunction = cobra.NoFileCompletions
	}
	for flagName, complete := range map[string]func(context.Context) ([]string, error){
		"deal": c.dealIDs, "protocol": c.protocolNames,
	} {
		if cmd.Flags().Lookup(flagName) != nil {
			_ = cmd.RegisterFlagCompletionFunc(flagName, c.completeAny(complete))
		}
	}
	return cmd
}

// groupExample is the first example of each of group's commands.
func groupExample(specs []command, group string) string {
	var lines []string
	for _, s := range specs {
		if strings.HasPrefix(s.path, group+" ") {
			first, _, _ := strings.Cut(s.example, "\n")
			lines = append(lines, first)
		}
	}
	return indent(strings.Join(lines, "\n"))
}

// indent puts the two spaces cobra's help expects before each example line.
func indent(s string) string {
	if s == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// recorded is a flag as cobra sees it: each value the user sets is kept,
// to be handed to the command's own flag set as --name=value.
type recorded struct {
	name  string
	value flag.Value
	set   *[]string
}

func (r *recorded) String() string { return r.value.String() }

func (r *recorded) Set(v string) error {
	if err := r.value.Set(v); err != nil {
		return err
	}
	*r.set = append(*r.set, "--"+r.name+"="+v)
	return nil
}

func (r *recorded) Type() string {
	if b, ok := r.value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "bool"
	}
	if _, ok := r.value.(*multi); ok {
		return "stringArray"
	}
	// The type help shows beside the flag: what the standard library's
	// flag holds (--after int, not --after string).
	if g, ok := r.value.(flag.Getter); ok {
		switch g.Get().(type) {
		case int, int64, uint, uint64:
			return "int"
		case float64:
			return "float"
		case time.Duration:
			return "duration"
		}
	}
	return "string"
}

var _ pflag.Value = (*recorded)(nil)

// completeOnce completes the first positional argument with list's words.
func (c *cli) completeOnce(list func(context.Context) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return c.completeAny(list)(cmd, args, "")
	}
}

func (c *cli) completeAny(list func(context.Context) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		if c.connect() != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		words, err := list(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return words, cobra.ShellCompDirectiveNoFileComp
	}
}

// completionLimit bounds what completion asks the server for: one page.
const completionLimit = 200

func (c *cli) dealIDs(ctx context.Context) ([]string, error) {
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	resp, err := debatedv1.NewRegistryServiceClient(c.conn).ListDeals(ctx, &debatedv1.ListDealsRequest{PageSize: completionLimit})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range resp.GetDeals() {
		out = append(out, d.GetDeal().GetDealId()+"\t"+d.GetDeal().GetCompanyName())
	}
	return out, nil
}

func (c *cli) debateIDs(ctx context.Context) ([]string, error) {
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	resp, err := c.debateClient().ListDebates(ctx, &debatedv1.ListDebatesRequest{PageSize: completionLimit})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range resp.GetDebates() {
		out = append(out, fmt.Sprintf("%s\t%s on %s, %s", d.GetDebateId(), d.GetProtocol(), d.GetDealId(), trim(d.GetStatus(), "DEBATE_STATUS_")))
	}
	return out, nil
}

func (c *cli) protocolNames(ctx context.Context) ([]string, error) {
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	resp, err := c.debateClient().ListProtocols(ctx, &debatedv1.ListProtocolsRequest{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range resp.GetProtocols() {
		out = append(out, p.GetName()+"\t"+p.GetDescription())
	}
	return out, nil
}

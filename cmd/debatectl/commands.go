package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/dealfile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// subflags is the flag set of one command; it is also how the cobra tree
// learns the command's flags (see probe).
func (c *cli) subflags(name string) *flag.FlagSet {
	fs := subflags(name)
	if c.probing {
		c.probed = fs
	}
	return fs
}

func subflags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseAll parses flags that may come before, between or after the
// positional arguments ("defect flag DEAL --claim C"), which the flag
// package alone stops at, and returns the positional arguments.
func parseAll(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// oneArg parses fs and requires exactly one positional argument.
func oneArg(fs *flag.FlagSet, args []string, what string) (string, error) {
	pos, err := parseAll(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", fmt.Errorf("%s: want exactly one %s", fs.Name(), what)
	}
	return pos[0], nil
}

// printJSON prints m as protojson (proto field names) re-indented by
// encoding/json with two spaces: protojson's own spacing varies from build
// to build on purpose ("claim":  {), which would make the output of a
// command, and the samples of the docs, unstable.
func (c *cli) printJSON(m proto.Message) error {
	b, err := stableJSON(m)
	if err != nil {
		return err
	}
	_, err = c.out.Write(b)
	return err
}

// printNone reports a list with nothing in it: with --json, m with its
// empty lists as [] (protojson leaves them out, and a script reads a list
// more easily than a missing field); otherwise one line saying so and what
// to do, instead of a table of only its header.
func (c *cli) printNone(m proto.Message, line string) error {
	if !c.json {
		_, err := fmt.Fprintln(c.out, line)
		return err
	}
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return err
	}
	var lists []string
	fields := m.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		if fd := fields.Get(i); fd.IsList() && m.ProtoReflect().Get(fd).List().Len() == 0 {
			lists = append(lists, strconv.Quote(string(fd.Name()))+":[]")
		}
	}
	if len(lists) > 0 {
		rest := strings.TrimSpace(string(raw))[1:]
		if rest != "}" {
			rest = "," + rest
		}
		raw = []byte("{" + strings.Join(lists, ",") + rest)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = c.out.Write(out.Bytes())
	return err
}

// stableJSON is m's protojson encoding with a two-space indent and a final
// newline, the same bytes for the same message on every build.
func stableJSON(m proto.Message) ([]byte, error) {
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func (c *cli) table(header string, rows [][]string) error {
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

func (c *cli) tenantCreate(ctx context.Context, args []string) error {
	fs := c.subflags("tenant create")
	name := fs.String("name", "", "tenant name")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	if err := required("tenant create", "name", *name); err != nil {
		return err
	}
	ctx, cancel, err := c.adminCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewAdminServiceClient(c.conn).CreateTenant(ctx, &debatedv1.CreateTenantRequest{Name: *name})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	_, err = fmt.Fprintf(c.out, "tenant %s created (name %q)\n", resp.GetTenant().GetTenantId(), resp.GetTenant().GetName())
	return err
}

func (c *cli) tenantList(ctx context.Context, args []string) error {
	if err := c.subflags("tenant list").Parse(args); err != nil {
		return err
	}
	ctx, cancel, err := c.adminCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	client := debatedv1.NewAdminServiceClient(c.conn)
	tenants, err := allPages(func(token string) ([]*debatedv1.Tenant, string, error) {
		resp, err := client.ListTenants(ctx, &debatedv1.ListTenantsRequest{PageSize: 1000, PageToken: token})
		return resp.GetTenants(), resp.GetNextPageToken(), err
	})
	if err != nil {
		return err
	}
	all := &debatedv1.ListTenantsResponse{Tenants: tenants}
	if len(tenants) == 0 {
		return c.printNone(all, "no tenants yet (create one with: debatectl tenant create --name NAME)")
	}
	if c.json {
		return c.printJSON(all)
	}
	rows := make([][]string, 0, len(all.Tenants))
	for _, t := range all.Tenants {
		rows = append(rows, []string{t.GetTenantId(), t.GetName(), t.GetCreateTime().AsTime().Format("2006-01-02T15:04:05Z")})
	}
	return c.table("TENANT_ID\tNAME\tCREATED", rows)
}

func (c *cli) keyCreate(ctx context.Context, args []string) error {
	fs := c.subflags("key create")
	tenant := fs.String("tenant", "", "tenant id")
	name := fs.String("name", "", "key name")
	scope := fs.String("scope", "", "extra scope: admin")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	if err := required("key create", "tenant", *tenant); err != nil {
		return err
	}
	req := &debatedv1.CreateAPIKeyRequest{TenantId: *tenant, Name: *name}
	switch *scope {
	case "":
	case "admin":
		req.Scopes = []debatedv1.Scope{debatedv1.Scope_SCOPE_ADMIN}
	default:
		return fmt.Errorf("key create: unknown scope %q (want admin)", *scope)
	}
	ctx, cancel, err := c.adminCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewAdminServiceClient(c.conn).CreateAPIKey(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	_, err = fmt.Fprintf(c.out, "key %s created for tenant %s\nsecret (shown once): %s\n",
		resp.GetApiKey().GetKeyId(), resp.GetApiKey().GetTenantId(), resp.GetSecret())
	return err
}

func (c *cli) keyRevoke(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("key revoke"), args, "KEY_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.adminCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewAdminServiceClient(c.conn).RevokeAPIKey(ctx, &debatedv1.RevokeAPIKeyRequest{KeyId: id})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	_, err = fmt.Fprintf(c.out, "key %s revoked\n", resp.GetApiKey().GetKeyId())
	return err
}

func (c *cli) importDeal(ctx context.Context, args []string) error {
	fs := c.subflags("import-deal")
	strict := fs.Bool("strict", false, "refuse fields the deal layout does not define instead of warning")
	keepGoing := fs.Bool("continue-on-error", false, "import the other directories when one fails (the summary lists the failures)")
	dirs, err := parseAll(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return errors.New("import-deal: want at least one DIR")
	}
	if len(dirs) == 1 {
		_, err := c.importDir(ctx, dirs[0], *strict)
		return err
	}
	// Several directories: a progress line on a terminal, then a summary.
	var imported, unchanged []string
	var failed []string
	progress := newProgress(c.errOut, len(dirs))
	// Each import's own line is left out (the summary says it), except
	// with --json, which prints each answer.
	quiet := &cli{addr: c.addr, apiKey: c.apiKey, adminToken: c.adminToken, timeout: c.timeout, conn: c.conn,
		out: io.Discard, errOut: c.errOut, json: c.json}
	summary := c.out
	if c.json {
		quiet.out, summary = c.out, c.errOut
	}
	for i, dir := range dirs {
		progress.step(i, dir)
		created, err := quiet.importDir(ctx, dir, *strict)
		switch {
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s: %s", dir, describe(err)))
		case created:
			imported = append(imported, dir)
		default:
			unchanged = append(unchanged, dir)
		}
		if err != nil && !*keepGoing {
			break
		}
	}
	progress.done()
	fmt.Fprintf(summary, "%d imported, %d unchanged, %d failed\n", len(imported), len(unchanged), len(failed))
	for _, f := range failed {
		fmt.Fprintf(summary, "  failed %s\n", strings.ReplaceAll(f, "\n", "\n    "))
	}
	if len(failed) > 0 {
		if !*keepGoing {
			return fmt.Errorf("import-deal: stopped at the first failure (--continue-on-error imports the rest)")
		}
		return fmt.Errorf("import-deal: %d of %d directories failed", len(failed), len(dirs))
	}
	return nil
}

// importDir imports one deal directory and reports whether it was new.
func (c *cli) importDir(ctx context.Context, dir string, strict bool) (bool, error) {
	// A mistyped path is named as such, not as a deal missing every file.
	if fi, err := os.Stat(dir); err != nil {
		return false, fmt.Errorf("%s: no such directory", dir)
	} else if !fi.IsDir() {
		return false, fmt.Errorf("%s: not a directory (import-deal takes the folder of deal.json, claims.json, …)", dir)
	}
	b, warnings, err := dealfile.LoadOptions(dir, dealfile.Options{Strict: strict})
	if err != nil {
		return false, err
	}
	for _, w := range warnings {
		fmt.Fprintf(c.errOut, "warning: %s (use --strict to refuse)\n", w)
	}
	req, err := apiconv.BundleToProto(b)
	if err != nil {
		return false, err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return false, err
	}
	defer cancel()
	resp, err := debatedv1.NewRegistryServiceClient(c.conn).ImportDeal(ctx, req)
	if err != nil {
		return false, err
	}
	if c.json {
		return resp.GetCreated(), c.printJSON(resp)
	}
	d := resp.GetDeal()
	verb := "imported"
	if !resp.GetCreated() {
		verb = "already imported, unchanged"
	}
	_, err = fmt.Fprintf(c.out, "deal %s %s: %d claims, %d evidence items, %d spans, %d sanads, %d documents, %d calcs\n",
		d.GetDeal().GetDealId(), verb, d.GetClaimCount(), d.GetEvidenceItemCount(), d.GetSpanCount(),
		d.GetSanadCount(), d.GetDocumentCount(), d.GetCalcCount())
	return resp.GetCreated(), err
}

func (c *cli) dealGet(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("deal get"), args, "DEAL_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewRegistryServiceClient(c.conn).GetDeal(ctx, &debatedv1.GetDealRequest{DealId: id})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	return c.dealTable([]*debatedv1.DealSummary{resp.GetDeal()})
}

func (c *cli) dealList(ctx context.Context, args []string) error {
	if err := c.subflags("deal list").Parse(args); err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	client := debatedv1.NewRegistryServiceClient(c.conn)
	deals, err := allPages(func(token string) ([]*debatedv1.DealSummary, string, error) {
		resp, err := client.ListDeals(ctx, &debatedv1.ListDealsRequest{PageSize: 1000, PageToken: token})
		return resp.GetDeals(), resp.GetNextPageToken(), err
	})
	if err != nil {
		return err
	}
	all := &debatedv1.ListDealsResponse{Deals: deals}
	if len(deals) == 0 {
		return c.printNone(all, "no deals yet (import one with: debatectl import-deal DIR)")
	}
	if c.json {
		return c.printJSON(all)
	}
	return c.dealTable(all.Deals)
}

func (c *cli) dealTable(ds []*debatedv1.DealSummary) error {
	rows := make([][]string, 0, len(ds))
	for _, d := range ds {
		rows = append(rows, []string{d.GetDeal().GetDealId(), d.GetDeal().GetCompanyName(), d.GetDeal().GetStage(),
			fmt.Sprint(d.GetClaimCount()), fmt.Sprint(d.GetEvidenceItemCount()), fmt.Sprint(d.GetCalcCount())})
	}
	return c.table("DEAL_ID\tCOMPANY\tSTAGE\tCLAIMS\tEVIDENCE\tCALCS", rows)
}

func (c *cli) claimsList(ctx context.Context, args []string) error {
	fs := c.subflags("claims list")
	class := fs.String("class", "", "only this claim class, e.g. FINANCIAL")
	mat := fs.String("materiality", "", "only this materiality, e.g. HIGH")
	id, err := oneArg(fs, args, "DEAL_ID")
	if err != nil {
		return err
	}
	req := &debatedv1.ListClaimsRequest{DealId: id, PageSize: 1000}
	cl, cerr := enumFlag(debatedv1.ClaimClass_name, "CLAIM_CLASS_", "class", *class)
	m, merr := enumFlag(debatedv1.Materiality_name, "MATERIALITY_", "materiality", *mat)
	if err := errors.Join(cerr, merr); err != nil {
		return err
	}
	req.ClaimClass, req.Materiality = debatedv1.ClaimClass(cl), debatedv1.Materiality(m)
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	client := debatedv1.NewRegistryServiceClient(c.conn)
	claims, err := allPages(func(token string) ([]*debatedv1.Claim, string, error) {
		req.PageToken = token
		resp, err := client.ListClaims(ctx, req)
		return resp.GetClaims(), resp.GetNextPageToken(), err
	})
	if err != nil {
		return err
	}
	all := &debatedv1.ListClaimsResponse{Claims: claims}
	if len(claims) == 0 {
		if *class != "" || *mat != "" {
			return c.printNone(all, fmt.Sprintf("no claims of deal %s match %s", id, strings.Join(filterFlags("class", *class, "materiality", *mat), " ")))
		}
		return c.printNone(all, fmt.Sprintf("deal %s has no claims", id))
	}
	if c.json {
		return c.printJSON(all)
	}
	return c.claimTable(all.Claims)
}

func (c *cli) claimGet(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("claim get"), args, "CLAIM_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewRegistryServiceClient(c.conn).GetClaim(ctx, &debatedv1.GetClaimRequest{ClaimId: id})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	return c.claimTable([]*debatedv1.Claim{resp.GetClaim()})
}

func (c *cli) claimTable(cs []*debatedv1.Claim) error {
	rows := make([][]string, 0, len(cs))
	for _, cl := range cs {
		rows = append(rows, []string{cl.GetClaimKey(), cl.GetClaimId(),
			strings.TrimPrefix(cl.GetClaimClass().String(), "CLAIM_CLASS_"),
			strings.TrimPrefix(cl.GetMateriality().String(), "MATERIALITY_"),
			claimValue(cl.GetValue()), fmt.Sprint(cl.GetIcBound()), cl.GetClaimText()})
	}
	return c.table("KEY\tCLAIM_ID\tCLASS\tMATERIALITY\tVALUE\tIC_BOUND\tTEXT", rows)
}

// allPages calls list with each page token in turn, from "", until a page
// comes back without a next token, and returns every page's items.
func allPages[T any](list func(token string) ([]T, string, error)) ([]T, error) {
	var all []T
	for token := ""; ; {
		items, next, err := list(token)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		token = next
	}
}

// claimValue is a claim's figure as the deal states it ("$3,150,000"), or
// "-" when it states none.
func claimValue(v *debatedv1.ClaimValue) string {
	if v == nil {
		return "-"
	}
	return quantity(v.GetValue(), v.GetUnit(), v.GetCurrency())
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func trim(s fmt.Stringer, prefix string) string { return strings.TrimPrefix(s.String(), prefix) }

func (c *cli) grade(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("grade"), args, "DEAL_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	client := debatedv1.NewRegistryServiceClient(c.conn)
	resp, err := client.GradeDeal(ctx, &debatedv1.GradeDealRequest{DealId: id, PageSize: gradingPageSize})
	if err != nil {
		return err
	}
	// The dashboard comes a page at a time: read the rest of this grading.
	for token := resp.GetNextPageToken(); token != ""; {
		page, err := client.GetDealGrading(ctx, &debatedv1.GetDealGradingRequest{DealId: id, PageSize: gradingPageSize, PageToken: token})
		if err != nil {
			return err
		}
		resp.Claims = append(resp.Claims, page.GetClaims()...)
		resp.Calcs = append(resp.Calcs, page.GetCalcs()...)
		token = page.GetNextPageToken()
	}
	resp.NextPageToken = ""
	if c.json {
		return c.printJSON(resp)
	}
	if err := c.gradeTable(resp.GetClaims()); err != nil {
		return err
	}
	c.summaryLine(resp.GetSummary(), int(resp.GetEventCount()))
	for _, cl := range resp.GetClaims() {
		for _, d := range cl.GetDefects() {
			c.defectLine(d)
		}
	}
	for _, k := range resp.GetCalcs() {
		fmt.Fprintf(c.out, "  calc %s %s: grade %s, output %s\n", k.GetCalcId(), trim(k.GetCalcType(), "CALC_TYPE_"), trim(k.GetGrade(), "GRADE_"), figures(k.GetOutput()))
	}
	return nil
}

// gradingPageSize is how many dashboard rows debatectl asks for at once.
const gradingPageSize = 500

// gradeTable prints the truth dashboard's rows: one per claim.
func (c *cli) gradeTable(claims []*debatedv1.ClaimGrading) error {
	rows := make([][]string, 0, len(claims))
	for _, cl := range claims {
		var defects []string
		for _, d := range cl.GetDefects() {
			defects = append(defects, trim(d.GetDefectType(), "DEFECT_TYPE_"))
		}
		rows = append(rows, []string{cl.GetClaimKey(), cl.GetMetric(), trim(cl.GetGrade(), "GRADE_"),
			trim(cl.GetVerdict(), "VERDICT_"), trim(cl.GetAction(), "ACTION_"),
			trim(cl.GetCorroborationStatus(), "CORROBORATION_STATUS_"), fmt.Sprint(cl.GetIndependentCount()),
			strings.Join(defects, ",")})
	}
	return c.table("KEY\tMETRIC\tGRADE\tVERDICT\tACTION\tCORROBORATION\tINDEPENDENT\tDEFECTS", rows)
}

// summaryLine prints the deal's figures, and with newEvents >= 0 how many
// events the call recorded (a defect call's answer does not say: -1).
func (c *cli) summaryLine(g *debatedv1.DealGradingSummary, newEvents int) {
	fmt.Fprintf(c.out, "\ndeal %s: %d claim(s), %d grade-D, %d blocked, %d open defect(s), sanad coverage %.3f",
		g.GetDealId(), g.GetClaimCount(), g.GetGradeDCount(), g.GetBlockedClaimCount(), g.GetOpenDefectCount(), g.GetSanadCoverage())
	if newEvents >= 0 {
		fmt.Fprintf(c.out, ", %d new event(s)", newEvents)
	}
	fmt.Fprintln(c.out)
}

func (c *cli) defectLine(d *debatedv1.Defect) {
	fmt.Fprintf(c.out, "  defect %s %s on %s (%s, cure %s): %s\n", d.GetDefectId(), trim(d.GetDefectType(), "DEFECT_TYPE_"),
		d.GetClaimKey(), trim(d.GetSeverity(), "DEFECT_SEVERITY_"), trim(d.GetCureProtocol(), "CURE_PROTOCOL_"), d.GetDescription())
}

// afterDefect prints what a defect call changed: the claim's row and the
// deal's figures.
func (c *cli) afterDefect(claim *debatedv1.ClaimGrading, summary *debatedv1.DealGradingSummary) error {
	if claim != nil {
		if err := c.gradeTable([]*debatedv1.ClaimGrading{claim}); err != nil {
			return err
		}
	}
	c.summaryLine(summary, -1)
	return nil
}

// enumFlag is the value of the enumeration (names by number, as protoc
// generates them) that flag's value v names, with or without prefix and in
// any case; 0 when v is empty. Returns an error naming the flag and the
// values it takes otherwise.
func enumFlag(names map[int32]string, prefix, flag, v string) (int32, error) {
	if v == "" {
		return 0, nil
	}
	want := prefix + strings.TrimPrefix(strings.ToUpper(v), prefix)
	nums := make([]int32, 0, len(names))
	for n, name := range names {
		if name == want && n != 0 {
			return n, nil
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	choices := make([]string, 0, len(nums))
	for _, n := range nums {
		if n != 0 {
			choices = append(choices, strings.TrimPrefix(names[n], prefix))
		}
	}
	return 0, fmt.Errorf("--%s %q is not one of %s", flag, v, strings.Join(choices, ", "))
}

func (c *cli) defectFlag(ctx context.Context, args []string) error {
	fs := c.subflags("defect flag")
	claim := fs.String("claim", "", "claim id")
	typ := fs.String("type", "", "defect type, e.g. INCONSISTENCY")
	sev := fs.String("severity", "", "FATAL, MAJOR or MINOR (default: the type's)")
	cure := fs.String("cure", "", "cure protocol (default: the type's)")
	desc := fs.String("description", "", "what is wrong (at least 50 characters)")
	actor := fs.String("actor", "", "who flags it (default: the API key)")
	var refs multi
	fs.Var(&refs, "ref", "evidence reference (repeatable)")
	id, err := oneArg(fs, args, "DEAL_ID")
	if err != nil {
		return err
	}
	req := &debatedv1.FlagDefectRequest{DealId: id, ClaimId: *claim, Description: *desc, EvidenceRefs: refs, Actor: *actor}
	// Every bad flag is reported, not only the first.
	rerr := required("defect flag", "claim", *claim, "type", *typ, "description", *desc)
	t, terr := enumFlag(debatedv1.DefectType_name, "DEFECT_TYPE_", "type", *typ)
	s, serr := enumFlag(debatedv1.DefectSeverity_name, "DEFECT_SEVERITY_", "severity", *sev)
	cp, cerr := enumFlag(debatedv1.CureProtocol_name, "CURE_PROTOCOL_", "cure", *cure)
	if err := errors.Join(rerr, terr, serr, cerr); err != nil {
		return err
	}
	req.DefectType, req.Severity, req.CureProtocol = debatedv1.DefectType(t), debatedv1.DefectSeverity(s), debatedv1.CureProtocol(cp)
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewRegistryServiceClient(c.conn).FlagDefect(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	fmt.Fprintf(c.out, "defect %s flagged\n\n", resp.GetDefect().GetDefectId())
	return c.afterDefect(resp.GetClaim(), resp.GetSummary())
}

func (c *cli) defectClose(ctx context.Context, args []string, waive bool) error {
	name := "defect cure"
	if waive {
		name = "defect waive"
	}
	fs := c.subflags(name)
	actor := fs.String("actor", "", "who closes it")
	reason := fs.String("reason", "", "why")
	pos, err := parseAll(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%s: want DEAL_ID DEFECT_ID", name)
	}
	if err := required(name, "actor", *actor, "reason", *reason); err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	client := debatedv1.NewRegistryServiceClient(c.conn)
	var d *debatedv1.Defect
	var claim *debatedv1.ClaimGrading
	var summary *debatedv1.DealGradingSummary
	if waive {
		resp, err := client.WaiveDefect(ctx, &debatedv1.WaiveDefectRequest{DealId: pos[0], DefectId: pos[1], Actor: *actor, Reason: *reason})
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(resp)
		}
		d, claim, summary = resp.GetDefect(), resp.GetClaim(), resp.GetSummary()
	} else {
		resp, err := client.CureDefect(ctx, &debatedv1.CureDefectRequest{DealId: pos[0], DefectId: pos[1], Actor: *actor, Reason: *reason})
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(resp)
		}
		d, claim, summary = resp.GetDefect(), resp.GetClaim(), resp.GetSummary()
	}
	fmt.Fprintf(c.out, "defect %s is now %s\n\n", d.GetDefectId(), trim(d.GetStatus(), "DEFECT_STATUS_"))
	return c.afterDefect(claim, summary)
}

func (c *cli) defectsList(ctx context.Context, args []string) error {
	fs := c.subflags("defects list")
	all := fs.Bool("all", false, "include CURED and WAIVED defects")
	id, err := oneArg(fs, args, "DEAL_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewRegistryServiceClient(c.conn).ListDefects(ctx, &debatedv1.ListDefectsRequest{DealId: id, IncludeClosed: *all})
	if err != nil {
		return err
	}
	if len(resp.GetDefects()) == 0 {
		if *all {
			return c.printNone(resp, fmt.Sprintf("deal %s has no defects", id))
		}
		return c.printNone(resp, fmt.Sprintf("deal %s has no open defects (--all shows cured and waived ones too)", id))
	}
	if c.json {
		return c.printJSON(resp)
	}
	rows := make([][]string, 0, len(resp.GetDefects()))
	for _, d := range resp.GetDefects() {
		rows = append(rows, []string{d.GetDefectId(), d.GetClaimKey(), trim(d.GetDefectType(), "DEFECT_TYPE_"),
			trim(d.GetSeverity(), "DEFECT_SEVERITY_"), trim(d.GetStatus(), "DEFECT_STATUS_"), trim(d.GetOrigin(), "DEFECT_ORIGIN_"), d.GetActor()})
	}
	return c.table("DEFECT_ID\tCLAIM\tTYPE\tSEVERITY\tSTATUS\tORIGIN\tACTOR", rows)
}

func (c *cli) dealEvents(ctx context.Context, args []string) error {
	fs := c.subflags("deal events")
	after := fs.Int64("after", 0, "only events after this seq")
	id, err := oneArg(fs, args, "DEAL_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	client := debatedv1.NewRegistryServiceClient(c.conn)
	all := &debatedv1.ListDealEventsResponse{}
	for {
		resp, err := client.ListDealEvents(ctx, &debatedv1.ListDealEventsRequest{DealId: id, AfterSeq: *after, PageSize: 1000})
		if err != nil {
			return err
		}
		all.Events = append(all.Events, resp.GetEvents()...)
		if len(resp.GetEvents()) < 1000 {
			break
		}
		*after = resp.GetEvents()[len(resp.GetEvents())-1].GetSeq()
	}
	if len(all.GetEvents()) == 0 {
		if *after > 0 {
			return c.printNone(all, fmt.Sprintf("deal %s has no events after seq %d", id, *after))
		}
		return c.printNone(all, fmt.Sprintf("deal %s has no events yet (debatectl grade %s records the first)", id, id))
	}
	if c.json {
		return c.printJSON(all)
	}
	rows := make([][]string, 0, len(all.GetEvents()))
	for _, e := range all.GetEvents() {
		f := e.GetPayload().GetFields()
		detail := f["claim_key"].GetStringValue()
		switch e.GetEventType() {
		case "claim.grade.changed":
			detail += fmt.Sprintf(" %s → %s", orDash(f["from_grade"].GetStringValue()), f["to_grade"].GetStringValue())
		case "claim.verdict.changed":
			detail += fmt.Sprintf(" %s → %s", orDash(f["from_verdict"].GetStringValue()), f["to_verdict"].GetStringValue())
		default:
			detail += " " + f["defect_type"].GetStringValue() + " " + f["defect_id"].GetStringValue()
		}
		rows = append(rows, []string{fmt.Sprint(e.GetSeq()), e.GetEventType(), actorShown(e.GetActor(), f["authority"].GetStructValue().GetFields()), detail})
	}
	return c.table("SEQ\tTYPE\tACTOR\tDETAIL", rows)
}

// actorShown is the actor column of a human act: the name the caller
// claimed, marked as a claim, and the key that was authenticated.
func actorShown(actor string, authority map[string]*structpb.Value) string {
	key := authority["key_id"].GetStringValue()
	if key == "" {
		return actor
	}
	if claimed := authority["claimed_actor"].GetStringValue(); claimed != "" {
		return fmt.Sprintf("%s (claimed; key %s)", claimed, key)
	}
	return "key " + key
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// tenantModel sets (with --base-url) or shows a tenant's own model. The key
// is read from an environment variable, never from the command line.
func (c *cli) tenantModel(ctx context.Context, args []string) error {
	fs := c.subflags("tenant model")
	base := fs.String("base-url", "", "OpenAI-compatible base URL; with --clear, removes the override")
	model := fs.String("model", "", "model name")
	keyEnv := fs.String("api-key-env", "", "name of the environment variable holding the API key")
	clear := fs.Bool("clear", false, "remove the tenant's override")
	id, err := oneArg(fs, args, "TENANT_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.adminCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	client := debatedv1.NewAdminServiceClient(c.conn)
	var m *debatedv1.TenantModel
	if *base != "" || *clear {
		req := &debatedv1.SetTenantModelRequest{TenantId: id, BaseUrl: *base, Model: *model}
		if *clear {
			req.BaseUrl, req.Model = "", ""
		}
		if *keyEnv != "" {
			req.ApiKey = os.Getenv(*keyEnv)
		}
		resp, err := client.SetTenantModel(ctx, req)
		if err != nil {
			return err
		}
		m = resp.GetModel()
	} else {
		resp, err := client.GetTenantModel(ctx, &debatedv1.GetTenantModelRequest{TenantId: id})
		if err != nil {
			return err
		}
		m = resp.GetModel()
	}
	if c.json {
		return c.printJSON(m)
	}
	if m.GetBaseUrl() == "" {
		fmt.Fprintf(c.out, "tenant %s uses the deployment's roles\n", id)
		return nil
	}
	fmt.Fprintf(c.out, "tenant %s uses %s at %s (API key stored: %v)\n", id, m.GetModel(), m.GetBaseUrl(), m.GetHasApiKey())
	return nil
}

// figures prints a calc's named outputs exactly, in name order:
// "arr=3,150,000 runway_months=18.5".
func figures(m map[string]string) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, n+"="+groupDecimal(m[n]))
	}
	return strings.Join(parts, " ")
}

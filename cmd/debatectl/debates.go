package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

func (c *cli) debateClient() debatedv1.DebateServiceClient {
	return debatedv1.NewDebateServiceClient(c.conn)
}

func (c *cli) debateCreate(ctx context.Context, args []string) error {
	fs := c.subflags("debate create")
	deal := fs.String("deal", "", "deal id")
	protocol := fs.String("protocol", "", "protocol name (see debatectl protocols)")
	key := fs.String("idempotency-key", "", "makes the call idempotent")
	var opts, texts multi
	fs.Var(&opts, "option", "protocol option NAME=VALUE (repeatable), e.g. max_rounds=3; a JSON VALUE is sent as JSON")
	optionsFile := fs.String("options-file", "", "a JSON object of protocol options (- for standard input); --option and --option-text override its members")
	fs.Var(&texts, "option-text", "protocol option NAME=FILE (repeatable) whose value is FILE's text, e.g. constitution=policy.yaml")
	if pos, err := parseAll(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("debate create: unexpected %q", pos)
	}
	if err := required("debate create", "deal", *deal, "protocol", *protocol); err != nil {
		return err
	}
	options := map[string]any{}
	if *optionsFile != "" {
		data, err := c.readInput(*optionsFile)
		if err != nil {
			return fmt.Errorf("debate create: --options-file: %w", err)
		}
		if err := json.Unmarshal(data, &options); err != nil {
			return fmt.Errorf("debate create: --options-file %s: not a JSON object: %s", *optionsFile, jsonProblem(err))
		}
		if options == nil {
			return fmt.Errorf("debate create: --options-file %s: not a JSON object", *optionsFile)
		}
	}
	for _, o := range texts {
		name, path, ok := strings.Cut(o, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("debate create: --option-text %q: want NAME=FILE", o)
		}
		data, err := c.readInput(path)
		if err != nil {
			return fmt.Errorf("debate create: --option-text %s: %w", name, err)
		}
		options[name] = string(data)
	}
	for _, o := range opts {
		name, value, ok := strings.Cut(o, "=")
		if !ok || name == "" {
			return fmt.Errorf("debate create: --option %q: want NAME=VALUE", o)
		}
		if looksLikeFile(value) {
			return fmt.Errorf("debate create: --option %s=%s names a file; to send its text, use --option-text %s=%s", name, value, name, value)
		}
		var v any
		if json.Unmarshal([]byte(value), &v) != nil {
			v = value
		}
		options[name] = v
	}
	st, err := structpb.NewStruct(options)
	if err != nil {
		return fmt.Errorf("debate create: options: %w", err)
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.debateClient().CreateDebate(ctx, &debatedv1.CreateDebateRequest{DealId: *deal, Protocol: *protocol, Options: st, IdempotencyKey: *key})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	verb := "created"
	if !resp.GetCreated() {
		verb = "already exists (same idempotency key)"
	}
	fmt.Fprintf(c.out, "debate %s %s: %s on deal %s, %s\n", resp.GetDebate().GetDebateId(), verb, resp.GetDebate().GetProtocol(),
		resp.GetDebate().GetDealId(), trim(resp.GetDebate().GetStatus(), "DEBATE_STATUS_"))
	return nil
}

func (c *cli) debateGet(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("debate get"), args, "DEBATE_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.debateClient().GetDebate(ctx, &debatedv1.GetDebateRequest{DebateId: id})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	if err := c.debateTable([]*debatedv1.Debate{resp.GetDebate()}); err != nil {
		return err
	}
	for _, g := range resp.GetGates() {
		fmt.Fprintf(c.out, "  gate %s at %s: %s (%s)\n", g.GetGateId(), g.GetNode(), g.GetReason(), g.GetStatus())
	}
	return nil
}

func (c *cli) debateList(ctx context.Context, args []string) error {
	fs := c.subflags("debate list")
	st := fs.String("status", "", "only this status, e.g. running")
	deal := fs.String("deal", "", "only this deal")
	if _, err := parseAll(fs, args); err != nil {
		return err
	}
	s, err := enumFlag(debatedv1.DebateStatus_name, "DEBATE_STATUS_", "status", *st)
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	debates, err := allPages(func(token string) ([]*debatedv1.Debate, string, error) {
		resp, err := c.debateClient().ListDebates(ctx, &debatedv1.ListDebatesRequest{
			Status: debatedv1.DebateStatus(s), DealId: *deal, PageSize: 1000, PageToken: token})
		return resp.GetDebates(), resp.GetNextPageToken(), err
	})
	if err != nil {
		return err
	}
	all := &debatedv1.ListDebatesResponse{Debates: debates}
	if len(debates) == 0 {
		if *st != "" || *deal != "" {
			return c.printNone(all, "no debates match "+strings.Join(filterFlags("status", *st, "deal", *deal), " "))
		}
		return c.printNone(all, "no debates yet (start one with: debatectl debate create --deal DEAL_ID --protocol NAME)")
	}
	if c.json {
		return c.printJSON(all)
	}
	return c.debateTable(all.GetDebates())
}

// filterFlags spells the filters given ("status", "running", "deal", "")
// as the command line does: ["--status running"].
func filterFlags(pairs ...string) []string {
	var out []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			out = append(out, "--"+pairs[i]+" "+pairs[i+1])
		}
	}
	return out
}

func (c *cli) debateTable(ds []*debatedv1.Debate) error {
	rows := make([][]string, 0, len(ds))
	for _, d := range ds {
		rows = append(rows, []string{d.GetDebateId(), d.GetProtocol(), d.GetDealId(), trim(d.GetStatus(), "DEBATE_STATUS_"),
			d.GetStopReason(), fmt.Sprint(d.GetRoundsCompleted()), fmt.Sprint(d.GetLastSeq())})
	}
	// ROUNDS are the rounds completed: an ended debate's round can be one
	// more (what follows its last round runs in the next).
	return c.table("DEBATE_ID\tPROTOCOL\tDEAL\tSTATUS\tSTOP_REASON\tROUNDS\tEVENTS", rows)
}

// debateWatch streams the ledger and checks the hash chain as it reads:
// every event must name the previous one's hash and hash to its own.
func (c *cli) debateWatch(ctx context.Context, args []string) error {
	fs := c.subflags("debate watch")
	after := fs.Int64("after", 0, "start after this seq")
	id, err := oneArg(fs, args, "DEBATE_ID")
	if err != nil {
		return err
	}
	if c.apiKey == "" {
		return errors.New("this command needs --api-key or DEBATECTL_API_KEY")
	}
	base := ctx // for the outcome's own call, which adds its credential
	ctx = withBearer(ctx, c.apiKey)
	st, err := c.debateClient().WatchDebate(ctx, &debatedv1.WatchDebateRequest{DebateId: id, AfterSeq: *after})
	if err != nil {
		return err
	}
	prevHash := ""
	seen := false // whether any event came: only then is --after worth suggesting
	var last debatedv1.DebateStatus
	for {
		msg, err := st.Recv()
		if errors.Is(err, io.EOF) {
			if !c.json {
				if !seen {
					// An ended debate watched from its head, or past it.
					fmt.Fprintf(c.out, "no events after seq %d\n", *after)
				}
				fmt.Fprintf(c.out, "outcome: %s\n", c.outcome(base, id, last))
			}
			return nil
		}
		if err != nil {
			if base.Err() != nil && seen { // interrupted (Ctrl-C), not cut
				return fmt.Errorf("watch stopped after seq %d (resume with --after %d)", *after, *after)
			}
			if seen && resumable(err) {
				return fmt.Errorf("%w (resume with --after %d)", err, *after)
			}
			return err
		}
		seen = true
		// A message carries one event, or a batch of them when the watcher
		// is behind; the status is the debate's as of its last event.
		evs := apiconv.WatchEvents(msg)
		for i, pe := range evs {
			e := apiconv.EventFromProto(pe, "")
			if prevHash != "" && e.PrevHash != prevHash {
				return fmt.Errorf("event %d does not chain to the previous event: the stream is not trustworthy", e.Seq)
			}
			prevHash = e.Hash
			*after = e.Seq
			status := debatedv1.DebateStatus_DEBATE_STATUS_UNSPECIFIED
			if i == len(evs)-1 {
				status = msg.GetStatus()
			}
			if c.json {
				// One line per event, as before batches.
				if err := c.printJSON(&debatedv1.WatchDebateResponse{Event: pe, Status: status}); err != nil {
					return err
				}
				continue
			}
			if line := watchLine(id, e); line != "" {
				fmt.Fprintln(c.out, line)
			}
		}
		last = msg.GetStatus()
	}
}

func (c *cli) debateCancel(ctx context.Context, args []string) error {
	fs := c.subflags("debate cancel")
	reason := fs.String("reason", "cancelled by operator", "why")
	id, err := oneArg(fs, args, "DEBATE_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.debateClient().CancelDebate(ctx, &debatedv1.CancelDebateRequest{DebateId: id, Reason: *reason})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	fmt.Fprintf(c.out, "debate %s %s\n", id, trim(resp.GetDebate().GetStatus(), "DEBATE_STATUS_"))
	return nil
}

func (c *cli) debateResolve(ctx context.Context, args []string) error {
	fs := c.subflags("debate resolve")
	approve := fs.Bool("approve", false, "approve the gate")
	reject := fs.Bool("reject", false, "reject the gate")
	reason := fs.String("reason", "", "why")
	actor := fs.String("actor", "", "who resolves it")
	pos, err := parseAll(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || *approve == *reject {
		return errors.New("debate resolve: want DEBATE_ID GATE_ID and exactly one of --approve or --reject")
	}
	if err := required("debate resolve", "reason", *reason); err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.debateClient().ResolveHumanGate(ctx, &debatedv1.ResolveHumanGateRequest{DebateId: pos[0], GateId: pos[1], Approve: *approve, Reason: *reason, Actor: *actor})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	fmt.Fprintf(c.out, "gate %s resolved; debate %s is %s\n", pos[1], pos[0], trim(resp.GetDebate().GetStatus(), "DEBATE_STATUS_"))
	return nil
}

func (c *cli) debateExport(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("debate export"), args, "DEBATE_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	st, err := c.debateClient().ExportDebate(ctx, &debatedv1.ExportDebateRequest{DebateId: id})
	if err != nil {
		return err
	}
	data, err := readBundle(st)
	if err != nil {
		return err
	}
	if _, err := c.out.Write(data); err != nil {
		return err
	}
	_, err = fmt.Fprintln(c.out)
	return err
}

// readBundle reassembles the pieces ExportDebate streams and checks that
// it has all the bytes the first piece announced.
func readBundle(st grpc.ServerStreamingClient[debatedv1.ExportDebateResponse]) ([]byte, error) {
	var data []byte
	total := int64(-1)
	for {
		msg, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if total < 0 {
			if total = msg.GetTotalBytes(); total < 0 {
				return nil, fmt.Errorf("export announced %d bytes", total)
			}
			data = make([]byte, 0, min(total, 1<<30))
		}
		data = append(data, msg.GetChunk()...)
	}
	if int64(len(data)) != total {
		return nil, fmt.Errorf("export ended after %d of %d bytes: try again", len(data), max(total, 0))
	}
	return data, nil
}

func (c *cli) debateVerify(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("debate verify"), args, "DEBATE_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.debateClient().VerifyDebate(ctx, &debatedv1.VerifyDebateRequest{DebateId: id})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	if resp.GetOk() {
		fmt.Fprintf(c.out, "debate %s verifies: %d events, head %s\n", id, resp.GetEventCount(), resp.GetHeadHash())
		return nil
	}
	for _, p := range resp.GetProblems() {
		fmt.Fprintf(c.out, "  seq %d: %s: %s\n", p.GetSeq(), p.GetRule(), p.GetDetail())
	}
	return fmt.Errorf("debate %s does not verify: first bad event is seq %d", id, resp.GetFirstBadSeq())
}

func (c *cli) protocolsList(ctx context.Context, args []string) error {
	if _, err := parseAll(c.subflags("protocols"), args); err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.debateClient().ListProtocols(ctx, &debatedv1.ListProtocolsRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	for _, p := range resp.GetProtocols() {
		fmt.Fprintf(c.out, "%s: %s\n  roles: %s\n  graph:", p.GetName(), p.GetDescription(), strings.Join(p.GetRoles(), ", "))
		for _, n := range p.GetNodes() {
			name := n.GetName()
			if len(n.GetBranches()) > 0 {
				var bs []string
				for _, b := range n.GetBranches() {
					bs = append(bs, b.GetName())
				}
				name += "(" + strings.Join(bs, " ‖ ") + ")"
			}
			fmt.Fprintf(c.out, " %s→[%s]", name, strings.Join(n.GetNext(), ","))
		}
		fmt.Fprintln(c.out)
		c.protocolTools(p)
	}
	return nil
}

func (c *cli) validateOutput(ctx context.Context, args []string) error {
	fs := c.subflags("validate-output")
	deal := fs.String("deal", "", "deal id the output speaks of")
	path, err := oneArg(fs, args, "FILE.json")
	if err != nil {
		return err
	}
	if err := required("validate-output", "deal", *deal); err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.debateClient().ValidateOutput(ctx, &debatedv1.ValidateOutputRequest{DealId: *deal, OutputJson: string(data)})
	if err != nil {
		return err
	}
	if c.json {
		if err := c.printJSON(resp); err != nil {
			return err
		}
	} else if resp.GetValid() {
		fmt.Fprintln(c.out, "output passes every gate")
	} else {
		for _, v := range resp.GetViolations() {
			fmt.Fprintf(c.out, "  %s %s: %s\n", v.GetRule(), v.GetField(), v.GetDetail())
		}
	}
	if !resp.GetValid() {
		return fmt.Errorf("output rejected: %d violation(s)", len(resp.GetViolations()))
	}
	return nil
}

func (c *cli) debateDeliverables(ctx context.Context, args []string) error {
	fs := c.subflags("debate deliverables")
	md := fs.Bool("markdown", false, "print the brief's Markdown as it is")
	dir := fs.String("artifacts", "", "write the per-round artifacts into this folder (and print only how many)")
	id, err := oneArg(fs, args, "DEBATE_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.debateClient().GetDeliverables(ctx, &debatedv1.GetDeliverablesRequest{DebateId: id})
	if err != nil {
		return err
	}
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o750); err != nil {
			return err
		}
		for _, a := range resp.GetArtifacts() {
			if err := os.WriteFile(filepath.Join(*dir, filepath.Base(a.GetName())), []byte(a.GetContentJson()), 0o600); err != nil {
				return err
			}
		}
		if !c.json && !*md {
			_, err = fmt.Fprintf(c.out, "wrote %d files to %s\n", len(resp.GetArtifacts()), *dir)
			return err
		}
	}
	switch {
	case c.json:
		return c.printJSON(resp)
	case *md:
		_, err = fmt.Fprintln(c.out, resp.GetMarkdown())
	case resp.GetMarkdown() == "":
		// A protocol without a brief: its deliverables as they are.
		_, err = fmt.Fprintln(c.out, resp.GetDeliverablesJson())
	default:
		_, err = fmt.Fprint(c.out, renderMarkdown(resp.GetMarkdown(), isTerminal(c.out)))
	}
	return err
}

// readInput reads a file, or standard input for "-".
func (c *cli) readInput(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

// protocolTools prints which tools each role of p may call, roles in the
// protocol's order.
func (c *cli) protocolTools(p *debatedv1.Protocol) {
	tools := p.GetTools()
	if len(tools) == 0 {
		fmt.Fprintln(c.out, "  tools: none")
		return
	}
	fmt.Fprintln(c.out, "  tools:")
	roles := append([]string(nil), p.GetRoles()...)
	for r := range tools {
		if !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	for _, r := range roles {
		if t, ok := tools[r]; ok {
			fmt.Fprintf(c.out, "    %s: %s\n", r, cmp.Or(strings.Join(t.GetTools(), ", "), "none"))
		}
	}
}

// resumable reports whether a watch that broke with err may be resumed:
// the stream was cut, not refused.
func resumable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Aborted, codes.ResourceExhausted, codes.Internal, codes.Unknown:
		return true
	}
	return false
}

// outcome is the last line of a watch: the final status, why it stopped,
// how many rounds it completed (for a protocol without rounds, the round it
// ended in), and any human gate still open.
func (c *cli) outcome(ctx context.Context, id string, last debatedv1.DebateStatus) string {
	out := strings.ToLower(trim(last, "DEBATE_STATUS_"))
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return out
	}
	defer cancel()
	resp, err := c.debateClient().GetDebate(ctx, &debatedv1.GetDebateRequest{DebateId: id})
	if err != nil {
		return out
	}
	d := resp.GetDebate()
	out = strings.ToLower(trim(d.GetStatus(), "DEBATE_STATUS_"))
	if r := d.GetStopReason(); r != "" {
		out += " (" + r + ")"
	}
	if rounds := d.GetRoundsCompleted(); rounds > 0 {
		out += fmt.Sprintf(" after %d round(s), %d events", rounds, d.GetLastSeq())
	} else {
		out += fmt.Sprintf(" in round %d, %d events", d.GetRound(), d.GetLastSeq())
	}
	for _, g := range resp.GetGates() {
		if g.GetStatus() == string(debate.GateOpen) {
			out += fmt.Sprintf("\nhuman gate %s is open: debatectl debate resolve %s %s --approve --reason '…'   (or --reject)", g.GetGateId(), id, g.GetGateId())
		}
	}
	return out
}

// looksLikeFile reports whether an --option value is a file name (a YAML
// or JSON file, or any file that exists), which --option-text reads and
// --option would send as the name itself.
func looksLikeFile(v string) bool {
	switch strings.ToLower(filepath.Ext(v)) {
	case ".yaml", ".yml":
		return true
	}
	if !strings.ContainsAny(v, "/.") {
		return false
	}
	fi, err := os.Stat(v)
	return err == nil && fi.Mode().IsRegular()
}

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/ledger"
	"google.golang.org/protobuf/encoding/protojson"
)

// keysList prints what the operator publishes for the caller's tenant: the
// ledger and checkpoint public keys and the protocols' policies. With
// --json it prints the file `verify --trusted-keys` reads.
func (c *cli) keysList(ctx context.Context, args []string) error {
	if _, err := parseAll(c.subflags("keys"), args); err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewKeyServiceClient(c.conn).GetSigningKeys(ctx, &debatedv1.GetSigningKeysRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	fmt.Fprintf(c.out, "tenant %s\n", resp.GetTenantId())
	rows := make([][]string, 0, len(resp.GetKeys()))
	for _, k := range resp.GetKeys() {
		rows = append(rows, []string{trim(k.GetKind(), "KEY_KIND_"), k.GetKeyId(), k.GetVersion(), orDash(k.GetActor()),
			strconv.FormatBool(k.GetCurrent()), base64.StdEncoding.EncodeToString(k.GetPublicKey())})
	}
	if err := c.table("KIND\tKEY ID\tVERSION\tACTOR\tCURRENT\tPUBLIC KEY", rows); err != nil {
		return err
	}
	names := make([]string, 0, len(resp.GetPolicies()))
	for _, p := range resp.GetPolicies() {
		names = append(names, p.GetProtocol())
	}
	fmt.Fprintf(c.out, "policies: %s\n", strings.Join(names, ", "))
	fmt.Fprintln(c.out, "publish the output of `debatectl --json keys`; verifiers pass it to `debatectl verify --trusted-keys`")
	return nil
}

// readTrust reads the keys file `debatectl --json keys` printed: the
// trust it gives the ledger's verification, and its current checkpoint
// verifier key ("" if it lists none), so that `verify --trusted-keys` also
// checks who signed the bundle's checkpoint.
func readTrust(path string) (ledger.Trust, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ledger.Trust{}, "", err
	}
	var resp debatedv1.GetSigningKeysResponse
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &resp); err != nil {
		return ledger.Trust{}, "", fmt.Errorf("trusted keys %s: not the output of `debatectl --json keys`: %s", path, jsonProblem(err))
	}
	if resp.GetTenantId() == "" || len(resp.GetKeys()) == 0 {
		return ledger.Trust{}, "", fmt.Errorf("trusted keys %s: no tenant or no keys", path)
	}
	t, err := apiconv.TrustFromProto(&resp)
	if err != nil {
		return ledger.Trust{}, "", fmt.Errorf("trusted keys %s: %w", path, err)
	}
	checkpointKey := ""
	for _, k := range resp.GetKeys() {
		if k.GetKind() == debatedv1.KeyKind_KEY_KIND_CHECKPOINT && k.GetCurrent() && k.GetNoteVerifierKey() != "" {
			checkpointKey = k.GetNoteVerifierKey()
		}
	}
	return t, checkpointKey, nil
}

// verifyReport is what `debatectl --json verify` prints.
type verifyReport struct {
	ledger.Report
	// Checked is "origin" when the bundle was verified against trusted
	// keys, "integrity" when only against the keys it carries.
	Checked string `json:"checked"`
}

// verifyCmd checks an exported bundle (a debate's ledger or a deal's audit
// log, told apart by its format) offline: no server is contacted.
func (c *cli) verifyCmd(ctx context.Context, out io.Writer, args []string) error {
	asJSON := c.json
	fs := c.subflags("verify")
	trustedPath := fs.String("trusted-keys", "", "the `FILE` that debatectl --json keys printed")
	var o verifyOptions
	fs.StringVar(&o.checkpoint, "checkpoint", "", "a later (witnessed) checkpoint file, or a witness folder")
	fs.StringVar(&o.checkpointKey, "checkpoint-key", "", "the checkpoint verifier key to trust")
	fs.BoolVar(&o.partial, "partial", false, "accept a bundle that ends before its debate's terminal event")
	path, err := oneArg(fs, args, "BUNDLE.json")
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var trust *ledger.Trust
	if *trustedPath != "" {
		t, checkpointKey, err := readTrust(*trustedPath)
		if err != nil {
			return err
		}
		trust = &t
		if o.checkpointKey == "" {
			o.checkpointKey = checkpointKey
		}
	}
	format, err := ledger.BundleFormat(data)
	if err != nil {
		// The ledger's words name its package; say what the file is not.
		what := `has no "format" member`
		if !json.Valid(data) {
			what = "is not JSON"
		}
		return fmt.Errorf("%s %s: it is not a bundle that debatectl debate export or deal export wrote", path, what)
	}
	var rep ledger.Report
	var what, protocol string
	var debateBundle *ledger.Bundle
	switch format {
	case ledger.FormatV1:
		b, err := ledger.ParseBundle(data)
		if err != nil {
			return err
		}
		debateBundle = b
		what, protocol = fmt.Sprintf("debate %s, %d events", b.DebateID, len(b.Events)), b.Protocol
		if trust != nil {
			rep = ledger.VerifyBundleTrusted(b, *trust)
		} else {
			rep = ledger.VerifyBundle(b)
		}
	case ledger.FormatDealV1:
		if o.checkpoint != "" {
			return errors.New("--checkpoint proves a debate bundle's head: a deal bundle carries no log proof yet")
		}
		b, err := ledger.ParseDealBundle(data)
		if err != nil {
			return err
		}
		what, protocol = fmt.Sprintf("deal %s, %d chained events", b.DealID, len(b.Events)), b.Protocol
		if n := len(b.LegacyEvents); n > 0 {
			what += fmt.Sprintf(" after %d legacy events recorded before the log was chained (not verifiable)", n)
		}
		if trust != nil {
			rep = ledger.VerifyDealBundleTrusted(b, *trust)
		} else {
			rep = ledger.VerifyDealBundle(b)
		}
	default:
		return fmt.Errorf("%s: unknown bundle format %q (want %q or %q)", path, format, ledger.FormatV1, ledger.FormatDealV1)
	}
	checked := "integrity"
	if trust != nil {
		checked = "origin"
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(verifyReport{Report: rep, Checked: checked}); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintf(out, "  seq %d: %s: %s\n", p.Seq, p.Rule, p.Detail)
		}
		switch {
		case rep.OK && trust != nil:
			fmt.Fprintf(out, "bundle verifies: %s; signed by the trusted keys of tenant %s under the published policy of %s\n", what, trust.TenantID, protocol)
		case rep.OK:
			fmt.Fprintf(out, "bundle verifies: %s\n", what)
			fmt.Fprintln(out, "checked integrity only, not origin: the bundle was verified with the keys it carries, which whoever rewrote it could have replaced;")
			fmt.Fprintln(out, "pass --trusted-keys FILE (what `debatectl --json keys` printed, obtained from the operator) to check who signed it")
		}
	}
	if !rep.OK {
		if rep.FirstBadSeq == 0 {
			return errors.New("bundle does not verify: " + rep.Problems[0].Detail)
		}
		return fmt.Errorf("bundle does not verify: first bad event is seq %d", rep.FirstBadSeq)
	}
	if debateBundle == nil {
		return nil
	}
	logOut := out
	if asJSON {
		logOut = io.Discard
	}
	return c.verifyLog(ctx, logOut, debateBundle, o)
}

// dealVerify asks the server to verify a deal's audit log.
func (c *cli) dealVerify(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("deal verify"), args, "DEAL_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewDealAuditServiceClient(c.conn).VerifyDeal(ctx, &debatedv1.VerifyDealRequest{DealId: id})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	for _, p := range resp.GetProblems() {
		fmt.Fprintf(c.out, "  seq %d: %s: %s\n", p.GetSeq(), p.GetRule(), p.GetDetail())
	}
	if !resp.GetOk() {
		return fmt.Errorf("deal %s does not verify: first bad event is seq %d", id, resp.GetFirstBadSeq())
	}
	fmt.Fprintf(c.out, "deal %s verifies: %d events, head %s\n", id, resp.GetEventCount(), orDash(resp.GetHeadHash()))
	if n := resp.GetLegacyEventCount(); n > 0 {
		fmt.Fprintf(c.out, "the first %d events were recorded before the audit log was chained and are not verifiable\n", n)
	}
	return nil
}

// dealExport prints a deal's audit log bundle for `debatectl verify`.
func (c *cli) dealExport(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("deal export"), args, "DEAL_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewDealAuditServiceClient(c.conn).ExportDeal(ctx, &debatedv1.ExportDealRequest{DealId: id})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(c.out, resp.GetBundleJson())
	return err
}

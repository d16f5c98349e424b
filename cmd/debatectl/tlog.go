package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/tlog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The transparency log from the command line (docs/transparency.md): a
// witness that keeps a tenant's checkpoints and checks each new one is
// consistent with the last, and the log checks of `verify`.

// Witness folder layout: the pinned verifier key and origin, and every
// checkpoint seen, one file per tree size.
const (
	witnessKeyFile    = "checkpoint.key"
	witnessOriginFile = "origin"
	witnessDirCPs     = "checkpoints"
)

// errLogInconsistent marks a log that was rewritten or shortened.
var errLogInconsistent = errors.New("the transparency log is inconsistent")

func (c *cli) logClient() debatedv1.LogServiceClient { return debatedv1.NewLogServiceClient(c.conn) }

// witness fetches the tenant's checkpoint, checks its signature with the
// pinned key and its consistency with the last checkpoint kept in the
// folder, and keeps it.
func (c *cli) witness(ctx context.Context, args []string) error {
	fs := c.subflags("witness")
	dir := fs.String("dir", "", "the witness folder (created on first use)")
	key := fs.String("checkpoint-key", "", "the checkpoint verifier key to pin (default: the server's, on first use)")
	if _, err := parseAll(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("witness: --dir is required")
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.logClient().GetCheckpoint(ctx, &debatedv1.GetCheckpointRequest{})
	if err != nil {
		return err
	}
	got := resp.GetCheckpoint()
	if err := os.MkdirAll(filepath.Join(*dir, witnessDirCPs), 0o750); err != nil {
		return err
	}
	vkey, err := pinned(filepath.Join(*dir, witnessKeyFile), *key, got.GetVerifierKey(), "checkpoint key")
	if err != nil {
		return err
	}
	origin, err := pinned(filepath.Join(*dir, witnessOriginFile), "", got.GetOrigin(), "log origin")
	if err != nil {
		return err
	}
	cp, err := tlog.Open([]byte(got.GetSignedNote()), origin, vkey)
	if err != nil {
		return fmt.Errorf("%w: the server's checkpoint does not verify with the pinned key %s and origin %s: %w", errLogInconsistent, vkey, origin, err)
	}
	last, lastSigned, err := lastWitnessed(*dir, origin, vkey)
	if err != nil {
		return err
	}
	if last != nil {
		if err := c.checkConsistent(ctx, *last, cp); err != nil {
			return err
		}
	}
	name := filepath.Join(*dir, witnessDirCPs, fmt.Sprintf("%020d.checkpoint", cp.Size))
	if last == nil || last.Size != cp.Size || !bytes.Equal(lastSigned, []byte(got.GetSignedNote())) {
		if err := os.WriteFile(name, []byte(got.GetSignedNote()), 0o600); err != nil {
			return err
		}
	}
	if last == nil {
		fmt.Fprintf(c.out, "checkpoint %d of %s kept (first; key %s pinned)\n", cp.Size, origin, vkey)
	} else {
		fmt.Fprintf(c.out, "checkpoint %d of %s is consistent with %d: kept\n", cp.Size, origin, last.Size)
	}
	return nil
}

// pinned returns the value kept in path, writing want (or, if empty,
// offered) there on first use. A given want that differs from the kept
// value is an error.
func pinned(path, want, offered, what string) (string, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		v := want
		if v == "" {
			v = offered
		}
		if v == "" {
			return "", fmt.Errorf("no %s to pin", what)
		}
		return v, os.WriteFile(path, []byte(v+"\n"), 0o600)
	case err != nil:
		return "", err
	}
	v := strings.TrimSpace(string(data))
	if want != "" && want != v {
		return "", fmt.Errorf("the %s given (%s) is not the one pinned in %s (%s)", what, want, path, v)
	}
	return v, nil
}

// lastWitnessed returns the largest checkpoint kept in dir, verified.
func lastWitnessed(dir, origin, vkey string) (*tlog.Checkpoint, []byte, error) {
	entries, err := os.ReadDir(filepath.Join(dir, witnessDirCPs))
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".checkpoint") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, nil, nil
	}
	slices.Sort(names)
	signed, err := os.ReadFile(filepath.Join(dir, witnessDirCPs, names[len(names)-1]))
	if err != nil {
		return nil, nil, err
	}
	cp, err := tlog.Open(signed, origin, vkey)
	if err != nil {
		return nil, nil, fmt.Errorf("the kept checkpoint %s does not verify: %w", names[len(names)-1], err)
	}
	return &cp, signed, nil
}

// checkConsistent checks that the log at newer extends the log at older
// (in either order of sizes), asking the server for the proof.
func (c *cli) checkConsistent(ctx context.Context, older, newer tlog.Checkpoint) error {
	switch {
	case newer.Size < older.Size:
		return fmt.Errorf("%w: the log shrank from %d to %d leaves (a shortened or rewritten log)", errLogInconsistent, older.Size, newer.Size)
	case newer.Size == older.Size:
		if !bytes.Equal(newer.Root, older.Root) {
			return fmt.Errorf("%w: two checkpoints of size %d with different roots (a rewritten log)", errLogInconsistent, newer.Size)
		}
		return nil
	}
	resp, err := c.logClient().GetConsistencyProof(ctx, &debatedv1.GetConsistencyProofRequest{FromSize: older.Size, ToSize: newer.Size})
	if err != nil {
		return fmt.Errorf("%w: the server proves no consistency from %d to %d: %w", errLogInconsistent, older.Size, newer.Size, err)
	}
	if err := tlog.VerifyConsistency(older.Size, newer.Size, resp.GetHashes(), older.Root, newer.Root); err != nil {
		return fmt.Errorf("%w: the checkpoint of %d leaves does not extend the one of %d (a rewritten log): %w", errLogInconsistent, newer.Size, older.Size, err)
	}
	return nil
}

// verifyOptions are verify's flags.
type verifyOptions struct {
	checkpoint    string // a later checkpoint file, or a witness folder
	checkpointKey string // the trusted checkpoint verifier key
	partial       bool   // accept a bundle that ends before a terminal event
}

// verifyLog checks what a bundle says about the log: it ends with its
// debate's terminal event (or says plainly that it does not), its last
// event is in the checkpoint it carries, and, with o.checkpoint, that
// checkpoint is consistent with the later one. It prints what it checked
// and returns an error for any failure.
func (c *cli) verifyLog(ctx context.Context, out io.Writer, b *ledger.Bundle, o verifyOptions) error {
	var cp tlog.Checkpoint
	var later *tlog.Checkpoint
	if b.Log != nil {
		var err error
		if cp, later, err = verifyBundleProof(out, b, o); err != nil {
			return err
		}
	}
	if !ledger.HasTerminal(b.Events, b.Policy) {
		end := "it has no events"
		if n := len(b.Events); n > 0 {
			end = fmt.Sprintf("its last event is seq %d", b.Events[n-1].Seq)
		}
		if b.Log != nil && isTerminalStatus(b.Log.DebateStatus) {
			return fmt.Errorf("the bundle ends before the debate's terminal event (the debate was %s; %s): events were cut", b.Log.DebateStatus, end)
		}
		if !o.partial {
			return fmt.Errorf("the bundle ends before the debate's terminal event (%s): it does not show how the debate ended (--partial accepts an unfinished debate)", end)
		}
		fmt.Fprintf(out, "note: the bundle ends before the debate's terminal event (%s)\n", end)
	}
	if b.Log == nil {
		if o.checkpoint != "" {
			return errors.New("the bundle carries no log proof: it cannot be checked against --checkpoint")
		}
		fmt.Fprintln(out, "log: not checked (the bundle carries no transparency log proof)")
		return nil
	}
	if later == nil {
		return nil
	}
	if err := c.connect(); err != nil {
		return err
	}
	tctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return fmt.Errorf("checking against --checkpoint asks the server for a consistency proof: %w", err)
	}
	defer cancel()
	older, newer := cp, *later
	if newer.Size < older.Size {
		older, newer = newer, older
	}
	if err := c.checkConsistent(tctx, older, newer); err != nil {
		return err
	}
	fmt.Fprintf(out, "log: the bundle's checkpoint (size %d) is consistent with the given one (size %d)\n", cp.Size, later.Size)
	return nil
}

// verifyBundleProof checks the bundle's log proof: its last event is the
// leaf the inclusion proof proves in its checkpoint, signed by the trusted
// key when there is one. It returns the checkpoint, and the later one of
// o.checkpoint (nil without).
func verifyBundleProof(out io.Writer, b *ledger.Bundle, o verifyOptions) (tlog.Checkpoint, *tlog.Checkpoint, error) {
	if len(b.Events) == 0 {
		return tlog.Checkpoint{}, nil, errors.New("the bundle carries a log proof but no events: events were cut")
	}
	signed := []byte(b.Log.Checkpoint)
	cp, err := tlog.ParseUnverified(signed)
	if err != nil {
		return tlog.Checkpoint{}, nil, err
	}
	if !strings.HasSuffix(cp.Origin, "/tenants/"+b.TenantID) {
		return tlog.Checkpoint{}, nil, fmt.Errorf("the bundle's checkpoint is of log %q, not of tenant %s", cp.Origin, b.TenantID)
	}
	vkey := o.checkpointKey
	var later *tlog.Checkpoint
	if o.checkpoint != "" {
		lp, key, err := readLaterCheckpoint(o.checkpoint, cp.Origin, vkey)
		if err != nil {
			return tlog.Checkpoint{}, nil, err
		}
		later, vkey = &lp, key
	}
	if vkey != "" {
		if cp, err = tlog.Open(signed, cp.Origin, vkey); err != nil {
			return tlog.Checkpoint{}, nil, fmt.Errorf("the bundle's checkpoint is not signed by the trusted key: %w", err)
		}
	}
	last := b.Events[len(b.Events)-1]
	leafHash, err := tlog.Leaf{Kind: tlog.KindStep, Subject: b.DebateID, Seq: last.Seq, Hash: last.Hash}.LeafHash()
	if err != nil {
		return tlog.Checkpoint{}, nil, err
	}
	if err := tlog.VerifyInclusion(b.Log.LeafIndex, cp.Size, leafHash, b.Log.InclusionProof, cp.Root); err != nil {
		return tlog.Checkpoint{}, nil, fmt.Errorf("the bundle's last event (seq %d) is not the head its log proof proves (events were cut or changed): %w", last.Seq, err)
	}
	signedBy := "signature not checked: give --checkpoint-key or --checkpoint"
	if vkey != "" {
		signedBy = "signed by " + vkey
	}
	fmt.Fprintf(out, "log: the last event (seq %d) is leaf %d of %s at size %d (%s)\n", last.Seq, b.Log.LeafIndex, cp.Origin, cp.Size, signedBy)
	return cp, later, nil
}

// readLaterCheckpoint reads a checkpoint file, or the latest checkpoint of
// a witness folder (whose pinned key is used when vkey is empty), and
// verifies it.
func readLaterCheckpoint(path, origin, vkey string) (tlog.Checkpoint, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return tlog.Checkpoint{}, "", err
	}
	if st.IsDir() {
		if vkey == "" {
			data, err := os.ReadFile(filepath.Join(path, witnessKeyFile))
			if err != nil {
				return tlog.Checkpoint{}, "", fmt.Errorf("witness folder without a pinned key: %w", err)
			}
			vkey = strings.TrimSpace(string(data))
		}
		cp, _, err := lastWitnessed(path, origin, vkey)
		if err != nil {
			return tlog.Checkpoint{}, "", err
		}
		if cp == nil {
			return tlog.Checkpoint{}, "", fmt.Errorf("the witness folder %s holds no checkpoint", path)
		}
		return *cp, vkey, nil
	}
	if vkey == "" {
		return tlog.Checkpoint{}, "", errors.New("--checkpoint FILE needs --checkpoint-key (the key that signed it)")
	}
	signed, err := os.ReadFile(path)
	if err != nil {
		return tlog.Checkpoint{}, "", err
	}
	cp, err := tlog.Open(signed, origin, vkey)
	if err != nil {
		return tlog.Checkpoint{}, "", fmt.Errorf("the checkpoint %s: %w", path, err)
	}
	return cp, vkey, nil
}

func isTerminalStatus(s string) bool {
	switch s {
	case "completed", "needs_review", "failed", "aborted":
		return true
	}
	return false
}

// connect opens the client connection if the command has none yet.
func (c *cli) connect() error {
	if c.conn != nil {
		return nil
	}
	conn, err := grpc.NewClient(c.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	c.conn = conn
	return nil
}

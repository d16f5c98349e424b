package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
)

func (c *cli) protocolClient() debatedv1.ProtocolServiceClient {
	return debatedv1.NewProtocolServiceClient(c.conn)
}

func (c *cli) protocolRegister(ctx context.Context, args []string) error {
	path, err := oneArg(c.subflags("protocol register"), args, "FILE.yaml")
	if err != nil {
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
	resp, err := c.protocolClient().RegisterProtocol(ctx, &debatedv1.RegisterProtocolRequest{Document: string(data)})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	verb := "registered"
	if !resp.GetCreated() {
		verb = "already registered (unchanged)"
	}
	p := resp.GetProtocol()
	fmt.Fprintf(c.out, "%s %s (sha256 %s)\nrun it with: debatectl debate create --deal DEAL_ID --protocol %s\n",
		p.GetRef(), verb, p.GetSha256(), p.GetRef())
	return nil
}

func (c *cli) protocolGet(ctx context.Context, args []string) error {
	ref, err := oneArg(c.subflags("protocol get"), args, "NAME[@VERSION]")
	if err != nil {
		return err
	}
	name, version := ref, 0
	if n, v, ok := strings.Cut(ref, "@"); ok {
		if version, err = strconv.Atoi(v); err != nil || version < 1 {
			return fmt.Errorf("%q: the version after @ must be a positive integer", ref)
		}
		name = n
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := c.protocolClient().GetProtocol(ctx, &debatedv1.GetProtocolRequest{Name: name, Version: int32(version)}) //nolint:gosec // checked positive; versions are small
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	p := resp.GetProtocol()
	fmt.Fprintf(c.out, "%s (sha256 %s, registered %s)\n%s\n", p.GetRef(), p.GetSha256(),
		p.GetCreateTime().AsTime().Format("2006-01-02T15:04:05Z"), p.GetDocument())
	return nil
}

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
	"google.golang.org/grpc/metadata"
)

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
	// probe, when set, receives the flag set a command's function builds:
	// the cobra tree learns each command's flags by running it with -h.
	probing bool
	probed  *flag.FlagSet
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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestProtocolCommands(t *testing.T) {
	t.Parallel()
	addr := serve(t, "sqlite")
	env := login(t, addr)
	doc := filepath.Join("..", "..", "docs", "protocols", "pros-cons.yaml")

	out, err := ctl(t, addr, env, "protocol", "register", doc)
	require.NoError(t, err, out)
	require.Contains(t, out, "proscons.debate@1 registered")
	out, err = ctl(t, addr, env, "protocol", "register", doc)
	require.NoError(t, err, out)
	require.Contains(t, out, "already registered")

	out, err = ctl(t, addr, env, "protocol", "get", "proscons.debate")
	require.NoError(t, err, out)
	require.Contains(t, out, "proscons.debate@1")
	require.Contains(t, out, `"name":"proscons.debate"`)
	_, err = ctl(t, addr, env, "protocol", "get", "proscons.debate@2")
	require.Equal(t, codes.NotFound, status.Code(err))
	require.Contains(t, describe(err), "not found")
	_, err = ctl(t, addr, env, "protocol", "get", "proscons.debate@x")
	require.ErrorContains(t, err, "positive integer")

	out, err = ctl(t, addr, env, "protocol", "list")
	require.NoError(t, err, out)
	require.Contains(t, out, "proscons.debate@1: two-sided pros and cons debate")
	require.Contains(t, out, "synthetic.v1", "beside the built-in protocols")

	raw, err := os.ReadFile(doc)
	require.NoError(t, err)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(string(raw), "kind: join", "kind: merge", 1)), 0o600))
	out, err = ctl(t, addr, env, "protocol", "register", bad)
	require.Error(t, err)
	require.Contains(t, out, "document.graph.nodes[1].kind")

	out, err = ctl(t, addr, env, "debate", "create", "--deal", "deal-x", "--protocol", "proscons.debate@1")
	require.Error(t, err)
	require.Contains(t, out, "no model is configured")
}

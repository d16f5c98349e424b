package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestEnumFlagsNameTheirChoices: a bad enumeration flag names the flag and
// the values it takes, every bad flag of the line is reported at once, and
// a value is accepted in any case, with or without the wire's prefix.
func TestEnumFlagsNameTheirChoices(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DEBATECTL_API_KEY": "k"}
	_, err := ctl(t, "unused:1", env, "claims", "list", "deal-a", "--class", "finance", "--materiality", "huge")
	require.Error(t, err)
	require.Equal(t, `--class "finance" is not one of FINANCIAL, TRACTION, MARKET_SIZE, COMPETITION, TEAM, LEGAL, TECHNICAL, OTHER`+"\n"+
		`--materiality "huge" is not one of LOW, MEDIUM, HIGH, CRITICAL`, describe(err))

	_, err = ctl(t, "unused:1", env, "defect", "flag", "deal-a", "--claim", "c", "--type", "typo", "--severity", "grave", "--cure", "pray")
	require.Error(t, err)
	require.Contains(t, describe(err), `--type "typo" is not one of INCONSISTENCY, `)
	require.Contains(t, describe(err), `--severity "grave" is not one of FATAL, MAJOR, MINOR`)
	require.Contains(t, describe(err), `--cure "pray" is not one of `)
	require.NotContains(t, describe(err), "DEFECT_", "the wire's prefixes are not shown")

	_, err = ctl(t, "unused:1", env, "debate", "list", "--status", "done")
	require.EqualError(t, err, `--status "done" is not one of QUEUED, RUNNING, AWAITING_REVIEW, NEEDS_REVIEW, COMPLETED, FAILED, ABORTED`)

	for _, v := range []string{"critical", "CRITICAL", "materiality_critical"} {
		n, err := enumFlag(map[int32]string{0: "MATERIALITY_UNSPECIFIED", 4: "MATERIALITY_CRITICAL"}, "MATERIALITY_", "materiality", v)
		require.NoError(t, err, v)
		require.EqualValues(t, 4, n, v)
	}
	_, err = enumFlag(map[int32]string{0: "MATERIALITY_UNSPECIFIED"}, "MATERIALITY_", "materiality", "unspecified")
	require.Error(t, err, "the zero value is no choice")
}

// TestHelpShowsFlagTypes: help shows what a flag takes (--after int,
// --trusted-keys FILE), never a command line as a type.
func TestHelpShowsFlagTypes(t *testing.T) {
	t.Parallel()
	help := func(args ...string) string {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), append(args, "--help"), func(string) string { return "" }, &out, &out))
		return out.String()
	}
	require.Regexp(t, `--after int\s+start after this seq`, help("debate", "watch"))
	require.Regexp(t, `--after int\s+only events after this seq`, help("deal", "events"))
	require.Regexp(t, `--trusted-keys FILE\s+the FILE that debatectl --json keys printed`, help("verify"))
	require.Regexp(t, `--timeout duration`, help("deal", "list"))
}

// TestHelpNeverPrintsSecrets: the API key and the admin token taken from
// the environment are used but never shown, by any help.
func TestHelpNeverPrintsSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DEBATECTL_API_KEY": "dbk_secret-key", "DEBATECTL_ADMIN_TOKEN": "admin-secret-token",
		"DEBATECTL_ADDR": "db.example:50051"}
	for _, args := range [][]string{{"--help"}, {"deal", "list", "--help"}, {"tenant", "--help"}, {"key", "create", "--help"}, {}} {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), args, func(k string) string { return env[k] }, &out, &out))
		require.Contains(t, out.String(), "--api-key", "%v", args)
		require.NotContains(t, out.String(), env["DEBATECTL_API_KEY"], "%v", args)
		require.NotContains(t, out.String(), env["DEBATECTL_ADMIN_TOKEN"], "%v", args)
		require.Contains(t, out.String(), "db.example:50051", "%v: the address is no secret", args)
	}
}

// TestRequiredFlagsAreNamed: a command missing its required flags says
// which, as the command line spells them (not the server's field names),
// before anything is sent; a flags-only command refuses an argument it
// would drop; import-deal names a path that is no directory.
func TestRequiredFlagsAreNamed(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DEBATECTL_API_KEY": "k", "DEBATECTL_ADMIN_TOKEN": "t"}
	for args, want := range map[string]string{
		"tenant create":                           "tenant create needs --name",
		"tenant create acme":                      `tenant create takes no arguments, only flags: unexpected ["acme"] (did you mean --name acme?)`,
		"key create --name ci":                    "key create needs --tenant",
		"debate create":                           "debate create needs --deal and --protocol",
		"debate create --deal d":                  "debate create needs --protocol",
		"validate-output out.json":                "validate-output needs --deal",
		"defect flag deal-a":                      "defect flag needs --claim, --type and --description",
		"defect cure deal-a dfx_1 --actor a":      "defect cure needs --reason",
		"debate resolve d g --approve":            "debate resolve needs --reason",
		"import-deal does-not-exist":              "does-not-exist: no such directory",
		"import-deal newuser_test.go":             "newuser_test.go: not a directory (import-deal takes the folder of deal.json, claims.json, …)",
		"defect flag deal-a --claim c --type bad": "defect flag needs --description\n--type \"bad\" is not one of ",
		"verify newuser_test.go":                  "newuser_test.go is not JSON: it is not a bundle that debatectl debate export or deal export wrote",
	} {
		_, err := ctl(t, "unused:1", env, strings.Fields(args)...)
		require.Error(t, err, args)
		require.True(t, strings.HasPrefix(describe(err), want), "%s: %s", args, describe(err))
	}
}

// TestDescribeWrappedStatus: a gRPC status wrapped by our own words reads
// as the server's message and our words, without gRPC's "rpc error: code
// = …" text.
func TestDescribeWrappedStatus(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("%w (resume with --after 3)", status.Error(codes.Unavailable, "server going away"))
	require.Equal(t, "server going away (resume with --after 3)", describe(err))
	require.Equal(t, "server going away", describe(status.Error(codes.Unavailable, "server going away")))
}

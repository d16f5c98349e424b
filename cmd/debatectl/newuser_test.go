package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
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

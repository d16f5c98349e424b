package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExactNumbers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, want string
	}{
		{exactNumber(3.15e6), "3,150,000"},
		{exactNumber(0.125), "0.125"},
		{exactNumber(-1234.5), "-1,234.5"},
		{exactNumber(999), "999"},
		{exactNumber(1e21), "1,000,000,000,000,000,000,000"},
		{money("3150000", "USD"), "$3,150,000"},
		{money("-12.5", "usd"), "-$12.5"},
		{money("1000", "CHF"), "1,000 CHF"},
		{quantity("120000", "USD/month", "USD"), "$120,000/month"},
		{quantity("42.5", "percent", ""), "42.5%"},
		{quantity("18", "months", ""), "18 months"},
		{figures(map[string]string{"runway_months": "18.5", "arr": "3150000"}), "arr=3,150,000 runway_months=18.5"},
	} {
		require.Equal(t, tc.want, tc.got)
	}
}

func TestRenderMarkdown(t *testing.T) {
	t.Parallel()
	md := "# Brief: Acme\n\n**INVEST** at confidence 0.58.\n\n## Roles\n\n| role | position |\n|---|---|\n| advocate | INVEST |\n| risk_officer | PASS |\n\n- **a**: `x`\n  - nested\n"
	want := "Brief: Acme\n═══════════\n\nINVEST at confidence 0.58.\n\nRoles\n─────\n\nrole          position\n────────────  ────────\nadvocate      INVEST\nrisk_officer  PASS\n\n• a: x\n  • nested\n"
	require.Equal(t, want, renderMarkdown(md, false))
	require.Contains(t, renderMarkdown(md, true), "\x1b[1mINVEST\x1b[0m")
}

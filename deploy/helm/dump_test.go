package helm

import (
	"os"
	"strings"
	"testing"
)

// TestDump prints the production render when DEBATED_CHART_DUMP is set (a debugging aid).
func TestDump(t *testing.T) {
	if os.Getenv("DEBATED_CHART_DUMP") == "" {
		t.Skip("set DEBATED_CHART_DUMP=1 to print the rendered production manifests")
	}
	r := renderDecoded(t, readValues(t, "values-production.yaml"))
	t.Log("\n" + strings.Join(r.raw, "\n---\n"))
}

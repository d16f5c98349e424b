// Package gdbs finds the benchmark deals of ../shared/testdata/gdbs for
// tests. Their authors label them internal-use, so they are read in place,
// never copied into the repository; a test skips, saying why, where they
// are absent.
package gdbs

import (
	"os"
	"path/filepath"
	"testing"
)

// Find returns the GDBS folder: $GDBS_DIR, else the first
// shared/testdata/gdbs (with a deals folder) under the working directory or
// one of its ancestors; the repository's checkout sits beside shared/. It
// reports false when there is none.
func Find() (string, bool) {
	if d := os.Getenv("GDBS_DIR"); d != "" {
		return d, true
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "shared", "testdata", "gdbs")
		if st, err := os.Stat(filepath.Join(cand, "deals")); err == nil && st.IsDir() {
			return cand, true
		}
		if filepath.Dir(dir) == dir {
			return "", false
		}
	}
}

// Dir returns the GDBS folder, or skips the test when it is absent.
func Dir(tb testing.TB) string {
	tb.Helper()
	d, ok := Find()
	if !ok {
		tb.Skip("GDBS data (../shared/testdata/gdbs) not found; skipping (set GDBS_DIR to run it)")
	}
	return d
}

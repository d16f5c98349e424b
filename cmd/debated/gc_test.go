package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCgroupMemoryLimit: the limit comes from cgroup v2's memory.max,
// else v1's memory.limit_in_bytes; "max" and v1's unlimited value mean
// none.
func TestCgroupMemoryLimit(t *testing.T) {
	write := func(t *testing.T, root, name, content string) {
		t.Helper()
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	for _, tc := range []struct {
		name, file, content string
		want                int64
		ok                  bool
	}{
		{"v2 limit", "memory.max", "1073741824\n", 1 << 30, true},
		{"v2 no limit", "memory.max", "max\n", 0, false},
		{"v1 limit", "memory/memory.limit_in_bytes", "536870912\n", 512 << 20, true},
		{"v1 no limit", "memory/memory.limit_in_bytes", "9223372036854771712\n", 0, false},
		{"garbage", "memory.max", "lots", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, tc.file, tc.content)
			got, ok := cgroupMemoryLimit(root)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
	_, ok := cgroupMemoryLimit(t.TempDir())
	require.False(t, ok, "no cgroup files")
}

// TestTuneGC: without GOGC and GOMEMLIMIT the collector gets the service's
// target and 80% of the container's limit; either variable wins over it.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "memory.max"), []byte("1000000000"), 0o600))

	tuneGC(func(string) string { return "" }, root)
	require.Equal(t, DefaultGCPercent, debug.SetGCPercent(-2))
	debug.SetGCPercent(DefaultGCPercent)
	require.Equal(t, int64(800000000), debug.SetMemoryLimit(-1))

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(1 << 40)
	tuneGC(func(k string) string { return map[string]string{"GOGC": "100", "GOMEMLIMIT": "2GiB"}[k] }, root)
	require.Equal(t, 100, debug.SetGCPercent(-2))
	require.Equal(t, int64(1<<40), debug.SetMemoryLimit(-1))
}

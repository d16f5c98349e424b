package migrations_test

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/debated/debated/migrations"
)

func TestEmbeddedMigrationsLoad(t *testing.T) {
	t.Parallel()
	pg, err := migrations.Load(migrations.Postgres)
	require.NoError(t, err)
	lite, err := migrations.Load(migrations.SQLite)
	require.NoError(t, err)

	// Both stores evolve together: every version exists in both dialects,
	// under the same name, numbered 1, 2, 3, … without gaps.
	require.Len(t, lite, len(pg))
	for i := range pg {
		require.Equal(t, int64(i+1), pg[i].Version)
		require.Equal(t, pg[i].Name, lite[i].Name)
		require.NotEmpty(t, pg[i].SQL)
		require.NotEmpty(t, lite[i].SQL)
	}
}

func TestLoadOrdersByVersion(t *testing.T) {
	t.Parallel()
	ms, err := migrations.Load(fstest.MapFS{
		"0010_c.sql": {Data: []byte("c")},
		"0002_a.sql": {Data: []byte("a")},
		"0003_b.sql": {Data: []byte("b")},
		"notes.txt":  {Data: []byte("ignored")},
	})
	require.NoError(t, err)
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	require.Equal(t, []string{"0002_a.sql", "0003_b.sql", "0010_c.sql"}, names)
	require.Equal(t, "b", ms[1].SQL)
}

func TestLoadRejects(t *testing.T) {
	t.Parallel()
	for name, fsys := range map[string]fstest.MapFS{
		"bad name":          {"init.sql": {}},
		"uppercase":         {"0001_Init.sql": {}},
		"version zero":      {"0000_init.sql": {}},
		"duplicate version": {"0001_a.sql": {}, "01_b.sql": {}},
		"empty":             {},
	} {
		_, err := migrations.Load(fsys)
		require.Error(t, err, name)
	}
}

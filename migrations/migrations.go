// Package migrations holds the SQL schema of debated's two stores as
// numbered migrations embedded in the binary: PostgreSQL (the production
// store) and SQLite (the embedded store).
//
// A migration is a file named NNNN_name.sql (for example 0001_init.sql)
// holding one or more statements. The stores apply the migrations they have
// not applied yet in ascending version order, each in its own transaction,
// and record each applied version in their schema_migrations table. A
// migration, once released, is never edited: a change to the schema is a
// new file with the next number.
package migrations

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
)

//go:embed postgres/*.sql
var postgresFiles embed.FS

//go:embed sqlite/*.sql
var sqliteFiles embed.FS

// Postgres and SQLite are the migrations of each store, as flat file
// systems of NNNN_name.sql files. They are read-only.
var (
	Postgres fs.FS = mustSub(postgresFiles, "postgres")
	SQLite   fs.FS = mustSub(sqliteFiles, "sqlite")
)

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // unreachable: dir is a literal embedded above
	}
	return sub
}

// Migration is one numbered schema change.
type Migration struct {
	Version int64  // the NNNN of the file name, at least 1
	Name    string // the file name, e.g. "0001_init.sql"
	SQL     string // the statements, run as one script in one transaction
}

var fileName = regexp.MustCompile(`^([0-9]+)_[a-z0-9_]+\.sql$`)

// Load returns the migrations in the top directory of fsys ordered by
// version. Files that do not end in .sql are ignored. Returns an error if
// a .sql file is not named NNNN_name.sql, if its version is 0, or if two
// files share a version.
func Load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: read directory: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrations: file %q is not named NNNN_name.sql", e.Name())
		}
		v, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migrations: file %q: version must be a number of at least 1", e.Name())
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("migrations: read %q: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(data)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return cmp.Compare(a.Version, b.Version) })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations: %q and %q share version %d", out[i-1].Name, out[i].Name, out[i].Version)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("migrations: no migration found")
	}
	return out, nil
}

// Package web holds the browser dashboard: its TypeScript sources under
// src/, and the built bundle under dist/, embedded into debated so that
// `make run` serves it with no Node on the machine.
package web

import (
	"embed"
	"io/fs"
)

//go:embed dist
var dist embed.FS

// Dist returns the built dashboard (index.html, app.js, app.css).
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is embedded above; fs.Sub fails only on a bad name
	}
	return sub
}

package main

import "runtime/debug"

// version reports the module version and VCS revision the binary was built
// from.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "debated (unknown version)"
	}
	v := "debated " + info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			v += " " + s.Value
		}
	}
	return v
}

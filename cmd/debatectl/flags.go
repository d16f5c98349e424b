package main

import (
	"flag"
	"fmt"
	"strings"
)

// required returns an error naming every required flag left empty, as
// the command line spells them ("debate create needs --deal and
// --protocol"), or nil. pairs are flag names and their values.
func required(cmd string, pairs ...string) error {
	var missing []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			missing = append(missing, "--"+pairs[i])
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s needs %s", cmd, missing[0])
	}
	return fmt.Errorf("%s needs %s and %s", cmd, strings.Join(missing[:len(missing)-1], ", "), missing[len(missing)-1])
}

// noArgs parses args with fs and refuses positional arguments, which a
// command that takes only flags would otherwise drop silently; it names
// the command's flags (and, with one flag and one argument, the line meant).
func noArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return nil
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	hint := ""
	switch {
	case len(names) == 1 && fs.NArg() == 1:
		hint = fmt.Sprintf(" (did you mean %s %s?)", names[0], fs.Arg(0))
	case len(names) > 0:
		hint = " (its flags: " + strings.Join(names, ", ") + ")"
	}
	return fmt.Errorf("%s takes no arguments, only flags: unexpected %q%s", fs.Name(), fs.Args(), hint)
}

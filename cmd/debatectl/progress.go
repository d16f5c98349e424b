package main

import (
	"fmt"
	"io"
	"os"
)

// progress is a one-line progress display: redrawn in place on a
// terminal, silent otherwise (logs and pipes get the summary only).
type progress struct {
	w     io.Writer
	total int
	tty   bool
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: total, tty: isTerminal(w)}
}

// step shows that item i (from 0) of the total, named name, is under way.
func (p *progress) step(i int, name string) {
	if !p.tty {
		return
	}
	const width = 24
	filled := width * i / max(p.total, 1)
	bar := make([]rune, width)
	for k := range bar {
		bar[k] = '·'
		if k < filled {
			bar[k] = '█'
		}
	}
	fmt.Fprintf(p.w, "\r\033[K[%s] %d/%d %s", string(bar), i+1, p.total, name)
}

// done clears the progress line.
func (p *progress) done() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

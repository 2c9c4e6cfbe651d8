package cli

import (
	"fmt"
	"io"

	"github.com/braidhq/braid/cmd/braid/internal/client"
)

// painter draws progress lines: on a terminal it redraws one line in
// place; elsewhere (a pipe, a CI log) it prints a new line only when the
// progress changed.
type painter struct {
	w    io.Writer
	tty  bool
	last string
}

func newPainter(w io.Writer, tty bool) *painter { return &painter{w: w, tty: tty} }

// draw shows run's progress.
func (p *painter) draw(run client.Run) {
	line := progressLine(run)
	if line == p.last {
		return
	}
	p.last = line
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

// warn prints a notice on its own line.
func (p *painter) warn(err error) {
	if p.tty && p.last != "" {
		fmt.Fprintln(p.w)
		p.last = ""
	}
	fmt.Fprintf(p.w, "warning: %v\n", err)
}

// finish ends the progress line.
func (p *painter) finish() {
	if p.tty && p.last != "" {
		fmt.Fprintln(p.w)
	}
}

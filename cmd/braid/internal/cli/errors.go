package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/braidhq/braid/cmd/braid/internal/client"
)

// exitError carries an exit code. A nil err means the command already told
// the user what happened.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode returns err's exit code without printing anything more.
func exitCode(code int) error { return &exitError{code: code} }

// usageErrorf is a usage error (exit code 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// report prints err to w as the CLI shows errors and returns the exit code:
// "error: <detail>" then one "  <path>: <message>" line per problem the
// detail does not already spell out (a lone problem often is the detail).
func report(w io.Writer, err error) int {
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
		err = ee.err
	}
	var p *client.Problem
	if errors.As(err, &p) {
		text := problemText(p)
		fmt.Fprintf(w, "error: %s\n", text)
		for _, fe := range p.Errors {
			line := fe.Path + ": " + fe.Message
			if !strings.Contains(text, line) {
				fmt.Fprintf(w, "  %s\n", line)
			}
		}
		return code
	}
	fmt.Fprintf(w, "error: %v\n", err)
	return code
}

// problemText is the detail of p, else its title, else its status.
func problemText(p *client.Problem) string {
	switch {
	case p.Detail != "":
		return p.Detail
	case p.Title != "":
		return p.Title
	}
	return fmt.Sprintf("HTTP %d", p.Status)
}

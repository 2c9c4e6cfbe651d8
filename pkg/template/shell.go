package template

import (
	"errors"
	"fmt"
	"strings"
)

// ResolveShell resolves the templates in a shell command so that no substituted value can inject
// shell syntax. Each value is rendered as in interpolation and then quoted for the POSIX sh
// context its template sits in: unquoted (also inside $(...) and subshells) → '...' with ' as
// '\”; inside "..." → $ ` " \ backslash-escaped; inside '...' → ' as '\”; in a # comment →
// single-quoted with newlines turned into spaces. A template is rejected (with an error) inside
// `...`, ${...}, $((...)), directly after a "$", after a here-document operator, and after
// constructs this lexer does not model with certainty ($'...', $[...], ((...)), "case" inside
// $(...)). Values containing NUL bytes are rejected. The command is meant for /bin/sh -c.
func ResolveShell(cmd string, scope Scope) (string, error) {
	pieces, err := parse(cmd)
	if err != nil {
		return "", err
	}
	lx := newShellLexer()
	var b strings.Builder
	for _, p := range pieces {
		if p.tmpl == nil {
			lx.feed(p.lit)
			b.WriteString(p.lit)
			continue
		}
		s, err := renderTemplate(p.tmpl, scope)
		if err != nil {
			return "", err
		}
		q, err := lx.quote(s)
		if err != nil {
			return "", fmt.Errorf("shell template %q at offset %d: %w", p.tmpl.raw, p.tmpl.offset, err)
		}
		b.WriteString(q)
	}
	return b.String(), nil
}

// ErrUnsafeShellContext is returned (wrapped) by ResolveShell for a template placed where its
// value cannot be quoted safely.
var ErrUnsafeShellContext = errors.New("cannot quote a value safely here")

// quote quotes value s for the lexer's current context.
func (lx *shellLexer) quote(s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", errors.New("value contains a NUL byte")
	}
	if err := lx.placeable(); err != nil {
		return "", err
	}
	lx.prev = 0
	switch lx.top().kind {
	case frameCmd, frameSub:
		lx.continueWord()
		return singleQuote(s), nil
	case frameSingle:
		return strings.ReplaceAll(s, "'", `'\''`), nil
	case frameDouble:
		return doubleQuoteEscape(s), nil
	case frameComment:
		return singleQuote(strings.ReplaceAll(s, "\n", " ")), nil
	}
	return "", fmt.Errorf("%w: inside %s", ErrUnsafeShellContext, lx.top().kind)
}

// placeable reports why no template may be placed at the current position, if so.
func (lx *shellLexer) placeable() error {
	switch {
	case lx.poison != "":
		return fmt.Errorf("%w: after %s", ErrUnsafeShellContext, lx.poison)
	case lx.dollar:
		return fmt.Errorf(`%w: directly after "$"`, ErrUnsafeShellContext)
	case lx.escaped:
		return fmt.Errorf(`%w: directly after a backslash`, ErrUnsafeShellContext)
	}
	return nil
}

// singleQuote returns s as one sh word in single quotes.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// doubleQuoteEscape escapes the bytes that are special inside "...".
func doubleQuoteEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("$`\"\\", s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// String names a context in error messages.
func (k frameKind) String() string {
	return [...]string{"a command", "$(...)", "'...'", `"..."`, "a comment", "`...`", "${...}", "$((...))"}[k]
}

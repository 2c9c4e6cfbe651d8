package template

import "strings"

// frameKind is a POSIX sh lexical context that a template may sit in.
type frameKind int

const (
	frameCmd      frameKind = iota // unquoted command text at top level
	frameSub                       // unquoted command text inside $( ... )
	frameSingle                    // inside '...'
	frameDouble                    // inside "..."
	frameComment                   // after an unquoted # at the start of a word, to end of line
	frameBacktick                  // inside `...`
	frameParam                     // inside ${...}
	frameArith                     // inside $(( ... ))
)

// frame is one open context. depth counts nested parentheses or braces inside it; in command
// frames wordStart says the next byte starts a word and word holds the current word's unquoted
// bytes (a quoted or substituted part is recorded as a 0 byte).
type frame struct {
	kind      frameKind
	depth     int
	wordStart bool
	word      []byte
}

// shellLexer tracks sh quoting state over the literal parts of a command, one part at a time.
// It models POSIX sh (dash) conservatively: a construct it cannot model with certainty sets
// poison, and every template after it is rejected instead of being guessed at.
type shellLexer struct {
	stack   []frame
	escaped bool   // the previous byte was a backslash outside single quotes
	dollar  bool   // the previous part ended with a bare "$"
	prev    byte   // the last byte consumed (0 at the start and after a template)
	poison  string // why templates can no longer be placed safely; "" when they can
}

func newShellLexer() *shellLexer {
	return &shellLexer{stack: []frame{{kind: frameCmd, wordStart: true}}}
}

func (lx *shellLexer) top() *frame { return &lx.stack[len(lx.stack)-1] }

// unquoted reports whether the innermost context is unquoted command text.
func (lx *shellLexer) unquoted() bool {
	k := lx.top().kind
	return k == frameCmd || k == frameSub
}

// push opens a context. Anything but a comment continues the enclosing word.
func (lx *shellLexer) push(k frameKind) {
	if k != frameComment {
		lx.continueWord()
	}
	lx.stack = append(lx.stack, frame{kind: k, wordStart: true})
}

// pop closes the innermost context; closing a comment starts a new word.
func (lx *shellLexer) pop() {
	if len(lx.stack) == 1 {
		return
	}
	closed := lx.top().kind
	lx.stack = lx.stack[:len(lx.stack)-1]
	if closed == frameComment {
		lx.endWord()
	}
}

// feed advances the state over literal command text s.
func (lx *shellLexer) feed(s string) {
	lx.dollar = false
	for i := 0; i < len(s); {
		if n := lx.continuation(s[i:]); n > 0 {
			i += n
			continue
		}
		n := lx.step(s[i:], i+1 == len(s))
		lx.prev = s[i+n-1]
		i += n
	}
}

// continuation consumes a backslash-newline line continuation, which sh removes before it
// tokenises (outside single quotes and comments), and returns its length or 0. One that could
// split a multi-byte token such as "$(", "<<" or "((" poisons instead of being modelled.
func (lx *shellLexer) continuation(s string) int {
	if lx.escaped || !strings.HasPrefix(s, "\\\n") {
		return 0
	}
	if k := lx.top().kind; k == frameSingle || k == frameComment {
		return 0
	}
	if strings.IndexByte("$<()", lx.prev) >= 0 {
		lx.setPoison("a line continuation inside an operator")
	}
	return 2
}

// step consumes the start of s (last reports that s has one byte left) and returns how many
// bytes it consumed.
func (lx *shellLexer) step(s string, last bool) int {
	if lx.escaped {
		lx.escaped = false
		lx.continueWord() // a quoted byte: part of a word, never a keyword
		return 1
	}
	switch lx.top().kind {
	case frameCmd, frameSub:
		return lx.stepCmd(s, last)
	case frameSingle:
		if s[0] == '\'' {
			lx.pop()
		}
	case frameDouble:
		return lx.stepDouble(s, last)
	case frameComment:
		if s[0] == '\n' {
			lx.pop()
		}
	case frameBacktick:
		lx.stepBacktick(s[0])
	case frameParam:
		return lx.stepParam(s)
	case frameArith:
		return lx.stepArith(s)
	}
	return 1
}

// stepDollar handles a "$" in a command or double-quoted frame.
func (lx *shellLexer) stepDollar(s string, last bool) int {
	switch {
	case last:
		lx.dollar = true
	case strings.HasPrefix(s, "$(("):
		lx.push(frameArith)
		return 3
	case strings.HasPrefix(s, "$("):
		lx.push(frameSub)
		return 2
	case strings.HasPrefix(s, "${"):
		lx.push(frameParam)
		return 2
	case s[1] == '"' && lx.unquoted():
		lx.push(frameDouble) // bash locale quoting; a plain "$" then "..." in dash: same context
		return 2
	case s[1] == '\'' && lx.unquoted():
		lx.setPoison(`ANSI-C quoting $'...'`)
	case strings.HasPrefix(s, "$["):
		lx.setPoison("arithmetic $[...]")
	case strings.ContainsRune("$@*#?!-0123456789", rune(s[1])):
		lx.wordByte('$')
		lx.wordByte(s[1])
		return 2
	}
	lx.wordByte('$')
	return 1
}

func (lx *shellLexer) stepDouble(s string, last bool) int {
	switch s[0] {
	case '\\':
		lx.escaped = true
	case '"':
		lx.pop()
	case '`':
		lx.push(frameBacktick)
	case '$':
		return lx.stepDollar(s, last)
	}
	return 1
}

func (lx *shellLexer) stepBacktick(c byte) {
	switch c {
	case '\\':
		lx.escaped = true
	case '`':
		lx.pop()
	}
}

// stepParam tracks ${...}; any quoting inside it is beyond this lexer.
func (lx *shellLexer) stepParam(s string) int {
	f := lx.top()
	switch {
	case strings.HasPrefix(s, "${"):
		f.depth++
		return 2
	case s[0] == '}' && f.depth == 0:
		lx.pop()
	case s[0] == '}':
		f.depth--
	case strings.ContainsRune("'\"`\\", rune(s[0])) || strings.HasPrefix(s, "$("):
		lx.setPoison("quoting or command substitution inside ${...}")
	}
	return 1
}

// stepArith tracks $(( ... )) by parenthesis depth.
func (lx *shellLexer) stepArith(s string) int {
	f := lx.top()
	switch {
	case s[0] == '(':
		f.depth++
	case s[0] == ')' && f.depth > 0:
		f.depth--
	case strings.HasPrefix(s, "))"):
		lx.pop()
		return 2
	case s[0] == ')' || strings.ContainsRune("'\"`\\", rune(s[0])) || strings.HasPrefix(s, "$("):
		lx.setPoison("unusual syntax inside $((...))")
	}
	return 1
}

func (lx *shellLexer) setPoison(why string) {
	if lx.poison == "" {
		lx.poison = why
	}
}

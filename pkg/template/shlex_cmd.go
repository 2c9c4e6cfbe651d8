package template

import "strings"

// stepCmd consumes unquoted command text.
func (lx *shellLexer) stepCmd(s string, last bool) int {
	c := s[0]
	switch {
	case c == '\\':
		lx.escaped = true
	case c == '\'':
		lx.push(frameSingle)
	case c == '"':
		lx.push(frameDouble)
	case c == '`':
		lx.push(frameBacktick)
	case c == '$':
		return lx.stepDollar(s, last)
	case c == '#' && lx.top().wordStart:
		lx.push(frameComment)
	case strings.HasPrefix(s, "<<<"):
		lx.endWord()
		return 3
	case strings.HasPrefix(s, "<<"):
		lx.setPoison("a here-document")
		lx.endWord()
		return 2
	case c == '(' || c == ')':
		lx.paren(s)
	case strings.IndexByte(" \t\n;&|<>", c) >= 0:
		lx.endWord()
	default:
		lx.wordByte(c)
	}
	return 1
}

// paren tracks subshell parentheses and the ")" that closes $( ... ).
func (lx *shellLexer) paren(s string) {
	wordStart := lx.top().wordStart
	lx.endWord()
	f := lx.top()
	switch {
	case strings.HasPrefix(s, "((") && wordStart:
		lx.setPoison("arithmetic command ((...))") // bash expands its text as if in "..."
		f.depth++
	case s[0] == '(' && lx.prev == '=':
		lx.setPoison("array assignment =(...)") // bash only; a syntax error in sh
		f.depth++
	case s[0] == '(':
		f.depth++
	case f.depth > 0:
		f.depth--
	case f.kind == frameSub:
		lx.pop()
	}
}

// wordByte records a byte of the current word; in a command frame it is an unquoted byte.
func (lx *shellLexer) wordByte(c byte) {
	if lx.unquoted() {
		f := lx.top()
		f.wordStart = false
		f.word = append(f.word, c)
	}
}

// continueWord records a quoted or substituted part of the current word.
func (lx *shellLexer) continueWord() { lx.wordByte(0) }

// endWord ends the current word. Inside $( ... ), "case" makes ")" ambiguous, so it poisons.
func (lx *shellLexer) endWord() {
	if !lx.unquoted() {
		return
	}
	f := lx.top()
	if string(f.word) == "case" && lx.insideSub() {
		lx.setPoison(`"case" inside $(...)`)
	}
	f.word = f.word[:0]
	f.wordStart = true
}

func (lx *shellLexer) insideSub() bool {
	for _, f := range lx.stack {
		if f.kind == frameSub {
			return true
		}
	}
	return false
}

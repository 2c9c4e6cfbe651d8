package template

import (
	"encoding/json"
	"fmt"
	"strings"
)

// piece is one part of a parsed string: literal text, or a template when tmpl is set.
type piece struct {
	lit  string
	tmpl *expr
}

// expr is one parsed << path | filter ... >> template.
type expr struct {
	raw     string // the template as written, delimiters included
	offset  int    // byte offset of "<<" in the parsed string
	root    string
	steps   []step
	filters []filter
}

// step is one ".key" or "[index]" path element.
type step struct {
	key   string
	index int
	isIdx bool
}

// filter is one "| name [arg]" element.
type filter struct {
	name   string
	arg    any
	hasArg bool
}

// filterArity says whether each known filter takes an argument.
var filterArity = map[string]bool{
	"default": true,
	"json":    false,
	"upper":   false,
	"lower":   false,
	"length":  false,
}

// parse splits s into literal and template pieces. Adjacent literal text is merged.
func parse(s string) ([]piece, error) {
	var out []piece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, piece{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], `\<<`):
			lit.WriteString("<<")
			i += 3
		case strings.HasPrefix(s[i:], "<<"):
			e, end, err := parseExpr(s, i)
			if err != nil {
				return nil, err
			}
			flush()
			out = append(out, piece{tmpl: e})
			i = end
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	flush()
	return out, nil
}

// parseExpr parses the template starting at s[start:] ("<<") and returns it with the offset just
// past its closing ">>".
func parseExpr(s string, start int) (*expr, int, error) {
	sc := &scanner{src: s, pos: start + 2, start: start}
	e := &expr{offset: start}
	if err := sc.path(e); err != nil {
		return nil, 0, err
	}
	for {
		sc.skipSpace()
		switch {
		case strings.HasPrefix(sc.rest(), ">>"):
			sc.pos += 2
			e.raw = s[start:sc.pos]
			return e, sc.pos, nil
		case sc.eof():
			return nil, 0, sc.errAt(start, `unterminated "<<"`)
		case sc.peek() == '|':
			sc.pos++
			f, err := sc.filter()
			if err != nil {
				return nil, 0, err
			}
			e.filters = append(e.filters, f)
		default:
			return nil, 0, sc.unexpected()
		}
	}
}

// scanner walks the inside of one template.
type scanner struct {
	src   string
	pos   int
	start int // offset of the template's "<<"
}

func (sc *scanner) eof() bool    { return sc.pos >= len(sc.src) }
func (sc *scanner) rest() string { return sc.src[sc.pos:] }
func (sc *scanner) peek() byte   { return sc.src[sc.pos] }
func (sc *scanner) errAt(off int, msg string) error {
	return &SyntaxError{Input: sc.src, Offset: off, Msg: msg}
}

func (sc *scanner) skipSpace() {
	for !sc.eof() && isSpace(sc.peek()) {
		sc.pos++
	}
}

// unexpected reports the byte at the cursor, or an unterminated template at end of input.
func (sc *scanner) unexpected() error {
	if sc.eof() {
		return sc.errAt(sc.start, `unterminated "<<"`)
	}
	return sc.errAt(sc.pos, fmt.Sprintf("unexpected %q in template", sc.peek()))
}

// ident consumes [A-Za-z0-9_-]+ and returns it ("" when none).
func (sc *scanner) ident() string {
	begin := sc.pos
	for !sc.eof() && isIdentByte(sc.peek()) {
		sc.pos++
	}
	return sc.src[begin:sc.pos]
}

// path parses root ( "." ident | "[" int "]" )*.
func (sc *scanner) path(e *expr) error {
	sc.skipSpace()
	if e.root = sc.ident(); e.root == "" {
		if sc.eof() {
			return sc.unexpected()
		}
		return sc.errAt(sc.pos, "expected a root name")
	}
	for !sc.eof() {
		switch sc.peek() {
		case '.':
			sc.pos++
			key := sc.ident()
			if key == "" {
				return sc.errAt(sc.pos, `expected a key after "."`)
			}
			e.steps = append(e.steps, step{key: key})
		case '[':
			st, err := sc.index()
			if err != nil {
				return err
			}
			e.steps = append(e.steps, st)
		default:
			return nil
		}
	}
	return nil
}

// index parses "[" digits "]".
func (sc *scanner) index() (step, error) {
	sc.pos++ // '['
	begin, n := sc.pos, 0
	for !sc.eof() && isDigit(sc.peek()) && sc.pos-begin < 9 {
		n = n*10 + int(sc.peek()-'0')
		sc.pos++
	}
	if sc.pos == begin || sc.eof() || sc.peek() != ']' {
		return step{}, sc.errAt(begin, `expected a non-negative index (at most 9 digits) and "]"`)
	}
	sc.pos++
	return step{index: n, isIdx: true}, nil
}

// filter parses a filter name and its optional argument after "|".
func (sc *scanner) filter() (filter, error) {
	sc.skipSpace()
	at := sc.pos
	f := filter{name: sc.ident()}
	takesArg, known := filterArity[f.name]
	switch {
	case f.name == "":
		return f, sc.unexpected()
	case !known:
		return f, sc.errAt(at, fmt.Sprintf("unknown filter %q", f.name))
	case !takesArg:
		return f, nil
	}
	sc.skipSpace()
	arg, err := sc.literal()
	if err != nil {
		return f, err
	}
	f.arg, f.hasArg = arg, true
	return f, nil
}

// literal parses a double-quoted string, a JSON number, true, false or null.
func (sc *scanner) literal() (any, error) {
	if sc.eof() {
		return nil, sc.unexpected()
	}
	if sc.peek() == '"' {
		return sc.quoted()
	}
	begin := sc.pos
	for !sc.eof() && isLiteralByte(sc.peek()) {
		sc.pos++
	}
	tok := sc.src[begin:sc.pos]
	switch {
	case tok == "true":
		return true, nil
	case tok == "false":
		return false, nil
	case tok == "null":
		return nil, nil
	case tok != "" && (tok[0] == '-' || isDigit(tok[0])) && json.Valid([]byte(tok)):
		return json.Number(tok), nil
	}
	return nil, sc.errAt(begin, `expected a literal ("text", number, true, false or null)`)
}

// quoted parses a "..." string literal where only \" and \\ are escapes.
func (sc *scanner) quoted() (string, error) {
	open := sc.pos
	sc.pos++
	var b strings.Builder
	for !sc.eof() {
		c := sc.peek()
		switch {
		case c == '"':
			sc.pos++
			return b.String(), nil
		case c == '\\' && sc.pos+1 < len(sc.src) && (sc.src[sc.pos+1] == '"' || sc.src[sc.pos+1] == '\\'):
			b.WriteByte(sc.src[sc.pos+1])
			sc.pos += 2
		case c == '\\':
			return "", sc.errAt(sc.pos, `invalid escape in string literal (only \" and \\)`)
		default:
			b.WriteByte(c)
			sc.pos++
		}
	}
	return "", sc.errAt(open, "unterminated string literal")
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentByte(c byte) bool {
	return isDigit(c) || c == '_' || c == '-' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isLiteralByte(c byte) bool {
	return isDigit(c) || c == '-' || c == '+' || c == '.' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

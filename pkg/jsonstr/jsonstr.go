// Package jsonstr writes JSON string literals exactly as encoding/json
// does, for the hand-written encoders on the engine's hot paths (node
// records in pkg/records, whole runs in pkg/apiwire) whose output must stay
// byte for byte what encoding/json wrote.
package jsonstr

import "unicode/utf8"

// hexDigits are the lower-case digits encoding/json writes in \u escapes.
const hexDigits = "0123456789abcdef"

// safe and htmlSafe report, per ASCII byte, whether encoding/json copies it
// into a string literal as it is: printable ASCII and DEL but the quote and
// the backslash; under HTML escaping (json.Marshal's default) not <, > and &
// either.
var safe, htmlSafe = func() (plain, html [utf8.RuneSelf]bool) {
	for c := byte(' '); c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return plain, html
}()

// Append appends s as a JSON string literal as encoding/json writes it: the
// quote, the backslash and control characters escaped (\b, \f, \n, \r, \t
// short, the rest as \u00XX), U+2028 and U+2029 escaped for JavaScript, each
// byte of invalid UTF-8 replaced by \ufffd, and with html <, > and & escaped
// as \u003c, \u003e and \u0026 (json.Marshal; an Encoder with
// SetEscapeHTML(false) leaves them). Runs of bytes copied as they are go in
// one append, so a plain ASCII string costs one scan and one copy.
func Append(b []byte, s string, html bool) []byte {
	ok := &safe
	if html {
		ok = &htmlSafe
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if ok[c] {
				i++
				continue
			}
			b = appendEscapedByte(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscapedByte appends the escape encoding/json writes for an ASCII
// byte it does not copy as it is.
func appendEscapedByte(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

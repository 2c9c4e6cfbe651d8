// Package template resolves Braid's << ... >> templates (SPEC §4) in workflow node
// configuration.
//
// # Syntax
//
// A template is "<<", an expression, then ">>":
//
//	expr   = path { "|" filter }
//	path   = root { "." ident | "[" index "]" }
//	root   = ident          node id, or input, run, item, index, count
//	ident  = [A-Za-z0-9_-]+
//	index  = [0-9]{1,9}
//	filter = "default" literal | "json" | "upper" | "lower" | "length"
//
// Whitespace is allowed after "<<", before ">>" and around "|" and filter arguments, but not
// inside a path. The default argument is a double-quoted string (escapes \" and \\ only), a
// JSON number, true, false or null. "\<<" is a literal "<<" (the only escape outside
// templates; other backslashes are kept). Any other "<<" starts a template, so an
// unterminated one is a *SyntaxError naming its byte offset; a shell here-document is written
// "\<<EOF".
//
// # Values
//
// Values are decoded JSON: map[string]any, []any, string, json.Number (decode with UseNumber),
// float64, bool and nil; int and int64 are accepted too (for index and count). A string that is
// exactly one template (nothing before "<<" or after ">>") resolves to the referenced value with
// its JSON type. Otherwise each template is interpolated: strings as they are, numbers as JSON
// text, true/false, null as "null", objects and arrays as compact JSON (no HTML escaping).
//
// # Filters
//
// Filters apply left to right. default replaces a missing path (unset root, missing key, index
// out of range, or an element that is not an object or array) or a null value; other filters
// pass a missing path through unchanged so a later default can still catch it. json renders
// compact JSON text; upper and lower need a string; length counts the runes of a string or the
// elements of an array or object and yields a json.Number.
//
// # Errors
//
// Roots, Resolve, ResolveString and ResolveShell return a *SyntaxError for malformed templates
// and an *Error (template text, root, failing path, key, reason) when resolution fails, e.g.
//
//	template "<< fetch.body.name >>": key "name" not found in fetch.body
//
// Callers add the node id; errors.As recovers the fields.
//
// # Shell commands
//
// ResolveShell quotes every value for the POSIX sh quoting context its template sits in, which a
// small lexer tracks over the literal text (unquoted, '...', "...", backslash escapes, line
// continuations, comments, $(...), subshells). Inside `...`, ${...} and $((...)), directly
// after "$", and after constructs whose effect on quoting the lexer cannot be sure of
// (here-documents, bash $'...', $[...] and ((...)), "case" inside $(...)) templates are
// rejected with ErrUnsafeShellContext rather than guessed at. A template the workflow author
// puts inside $(...) is quoted for that command substitution: the author chose to run the
// value as part of a command there, and the value still cannot add syntax. The lexer models
// dash and bash's non-interactive syntax; the command is meant for /bin/sh -c.
package template

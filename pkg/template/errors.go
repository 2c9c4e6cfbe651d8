package template

import "fmt"

// SyntaxError reports a malformed template. Offset is the byte offset in Input where the
// problem was found (for an unterminated template, the offset of its "<<").
type SyntaxError struct {
	Input  string // the whole string that was parsed
	Offset int    // byte offset of the problem in Input
	Msg    string // what is wrong, e.g. `unknown filter "foo"`
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("template syntax error at offset %d: %s", e.Offset, e.Msg)
}

// Error reports a template that parsed but could not be resolved against a Scope. Callers such as
// the orchestrator add the node id: fmt.Errorf("node %s: %w", id, err), and recover the fields
// with errors.As.
type Error struct {
	Template string // the template as written, e.g. "<< fetch.body.name >>"
	Root     string // the root name, e.g. "fetch"
	Path     string // the path up to and including the failing element, e.g. "fetch.body.name"
	Key      string // the missing or failing key or index, e.g. "name" or "3"; "" for root and filter errors
	Reason   string // human text, e.g. `key "name" not found in fetch.body`
}

// Error implements error: template "<< fetch.body.name >>": key "name" not found in fetch.body.
func (e *Error) Error() string {
	return fmt.Sprintf("template %q: %s", e.Template, e.Reason)
}

package browser

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/runtime"
)

// consoleText reports a console call: "console.error at URL:line:col: args".
func consoleText(e *runtime.EventConsoleAPICalled) string {
	where := "an unknown location"
	if e.StackTrace != nil && len(e.StackTrace.CallFrames) > 0 {
		f := e.StackTrace.CallFrames[0]
		where = location(f.URL, f.LineNumber, f.ColumnNumber)
	}
	parts := make([]string, 0, len(e.Args))
	for _, a := range e.Args {
		parts = append(parts, render(a))
	}
	return fmt.Sprintf("console.%s at %s: %s", e.Type, where, strings.Join(parts, " "))
}

// exceptionText reports an uncaught exception or unhandled rejection:
// "uncaught exception at URL:line:col: Uncaught Error: message\n stack".
func exceptionText(d *runtime.ExceptionDetails) string {
	where := location(d.URL, d.LineNumber, d.ColumnNumber)
	if d.URL == "" && d.StackTrace != nil && len(d.StackTrace.CallFrames) > 0 {
		f := d.StackTrace.CallFrames[0]
		where = location(f.URL, f.LineNumber, f.ColumnNumber)
	}
	msg := d.Text
	if d.Exception != nil {
		msg += " " + render(d.Exception)
	}
	return fmt.Sprintf("uncaught exception at %s: %s", where, msg)
}

// location is URL:line:column, 1-based (the protocol counts from 0).
func location(url string, line, column int64) string {
	if url == "" {
		url = "(inline)"
	}
	return fmt.Sprintf("%s:%d:%d", url, line+1, column+1)
}

// render is a JavaScript value as the console would show it: a string
// unquoted, an object by its description.
func render(o *runtime.RemoteObject) string {
	switch {
	case o.Type == runtime.TypeString:
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
	case o.Description != "":
		return o.Description
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	}
	if len(o.Value) > 0 {
		return string(o.Value)
	}
	return string(o.Type)
}

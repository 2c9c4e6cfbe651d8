package browser

import (
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
)

// listen records the page's problems (chromedp calls it on its own
// goroutine, hence the mutex).
func (b *Browser) listen(ev any) {
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.APITypeError || e.Type == runtime.APITypeAssert {
			b.add(fmt.Sprintf("console.%s: %s", e.Type, args(e.Args)))
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		b.add(fmt.Sprintf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
	case *network.EventLoadingFailed:
		// A fetch or stream the page aborted on purpose (leaving a view,
		// closing a feed) is not a problem.
		if e.Canceled || strings.Contains(e.ErrorText, "ERR_ABORTED") || b.failureExpected(e.ErrorText) {
			return
		}
		b.add(fmt.Sprintf("request %s failed: %s", e.RequestID, e.ErrorText))
	case *network.EventResponseReceived:
		if e.Response.Status >= 400 && !b.isExpected(int(e.Response.Status), e.Response.URL) {
			b.add(fmt.Sprintf("HTTP %d from %s", e.Response.Status, e.Response.URL))
		}
	}
}

func (b *Browser) add(p string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, p)
}

func (b *Browser) failureExpected(text string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.failures {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}

func (b *Browser) isExpected(status int, url string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, x := range b.expected {
		if x.status == status && strings.Contains(url, x.url) {
			return true
		}
	}
	return false
}

// args renders console arguments.
func args(as []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(as))
	for _, a := range as {
		switch {
		case a.Description != "":
			parts = append(parts, a.Description)
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

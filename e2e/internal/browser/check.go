package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// inspectTimeout bounds what a failure report asks the page (its URL, an
// element's text): the page may be why the test failed.
const inspectTimeout = 5 * time.Second

// Run runs chromedp actions within b.Timeout. On failure it saves a
// screenshot failure-<n>.png, then fails t with the error, the page's URL
// and the problems so far.
func (b *Browser) Run(t testing.TB, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.fail(t, "%v", err)
	}
}

// WaitText waits up to timeout until the element matching the CSS selector
// contains text.
func (b *Browser) WaitText(t testing.TB, selector, text string, timeout time.Duration) {
	t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.textContent.includes(%s); })()`,
		jsString(selector), jsString(text))
	// The page stops polling at timeout; the context only guards against a
	// browser that stopped answering.
	ctx, cancel := context.WithTimeout(b.ctx, timeout+inspectTimeout)
	defer cancel()
	err := chromedp.Run(ctx, chromedp.Poll(js, nil,
		chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		b.fail(t, "%q never contained %q within %s; it holds %q (%v)", selector, text, timeout, b.textOf(selector), err)
	}
}

// Expect declares that responses with this status to URLs containing
// urlSubstring are expected, not problems (e.g. a deliberate sign-in with a
// wrong key returning 401). It covers those already seen too.
func (b *Browser) Expect(status int, urlSubstring string) { b.rec.expectStatus(status, urlSubstring) }

// ExpectFailed declares that failed requests whose net error contains text
// are expected (e.g. net::ERR_CONNECTION_REFUSED while a test keeps the api
// down). It covers those already seen too.
func (b *Browser) ExpectFailed(text string) { b.rec.expectFailed(text) }

// Problems returns every console error (console.error or a failed
// console.assert) and uncaught exception, with its message and source
// location; every failed request (but those cancelled by a navigation or
// aborted by the page on purpose: net::ERR_ABORTED is not a problem); and
// every HTTP response with status >= 400 seen since Start, except those
// declared expected with Expect or ExpectFailed. The browser's own request
// for /favicon.ico counts too: a page should declare its icon (the UI has
// <link rel="icon" href="data:,">).
func (b *Browser) Problems() []string { return b.rec.problems() }

// RequireNoProblems fails t listing Problems(). Start registers it in
// t.Cleanup, so a test cannot forget it; call it too where a test wants
// the check at a point of its own.
func (b *Browser) RequireNoProblems(t testing.TB) {
	t.Helper()
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the page met %d problems:\n  %s", len(p), strings.Join(p, "\n  "))
	}
}

// fail saves a failure screenshot, then fails t with the message, the
// page's URL and the problems so far.
func (b *Browser) fail(t testing.TB, format string, args ...any) {
	t.Helper()
	shot := b.failureShot()
	problems := "none"
	if p := b.Problems(); len(p) > 0 {
		problems = "\n    " + strings.Join(p, "\n    ")
	}
	t.Fatalf("%s\n  page: %s\n  screenshot: %s\n  problems so far: %s", fmt.Sprintf(format, args...), b.url(), shot, problems)
}

// url is the page's URL, or why it is unknown.
func (b *Browser) url() string {
	ctx, cancel := context.WithTimeout(b.ctx, inspectTimeout)
	defer cancel()
	var u string
	if err := chromedp.Run(ctx, chromedp.Location(&u)); err != nil {
		return fmt.Sprintf("unknown (%v)", err)
	}
	return u
}

// textOf is the text of the element matching selector, or why there is none.
func (b *Browser) textOf(selector string) string {
	ctx, cancel := context.WithTimeout(b.ctx, inspectTimeout)
	defer cancel()
	var s string
	js := fmt.Sprintf(`document.querySelector(%s)?.textContent ?? "(no element)"`, jsString(selector))
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &s)); err != nil {
		return fmt.Sprintf("unknown (%v)", err)
	}
	return s
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	q, _ := json.Marshal(s) // a string always marshals
	return string(q)
}

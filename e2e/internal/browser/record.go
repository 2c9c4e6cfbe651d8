package browser

import (
	"fmt"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
)

// recorder collects the problems a page meets from chromedp's events.
// chromedp calls listen on its own goroutine while the test reads, hence
// mu; listen must not block, as chromedp delivers command results on the
// same goroutine.
type recorder struct {
	mu       sync.Mutex
	seen     []problem                    // every problem, expected ones too
	aborted  []string                     // requests cancelled on purpose: not problems
	requests map[network.RequestID]string // in flight: "METHOD url", to name a failed one
	statuses []expectedStatus             // from Expect
	failures []string                     // from ExpectFailed
}

// problem is one thing the page met. Expectations are applied when the
// problems are read, so a test may declare one after the fact.
type problem struct {
	status int    // an error response's HTTP status, else 0
	url    string // the error response's URL
	failed string // a failed request's net error, else ""
	text   string // the report, as Problems gives it
}

type expectedStatus struct {
	status int
	url    string // substring
}

// listen records ev if it is a problem.
func (r *recorder) listen(ev any) {
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.APITypeError || e.Type == runtime.APITypeAssert {
			r.add(problem{text: consoleText(e)})
		}
	case *runtime.EventExceptionThrown:
		r.add(problem{text: exceptionText(e.ExceptionDetails)})
	case *network.EventRequestWillBeSent:
		r.track(e.RequestID, e.Request.Method+" "+e.Request.URL)
	case *network.EventLoadingFinished:
		r.untrack(e.RequestID)
	case *network.EventLoadingFailed:
		r.loadingFailed(e)
	case *network.EventResponseReceived:
		if s := int(e.Response.Status); s >= 400 {
			r.add(problem{status: s, url: e.Response.URL, text: fmt.Sprintf("HTTP %d from %s", s, e.Response.URL)})
		}
	}
}

// loadingFailed records a failed request, except one cancelled by a
// navigation or aborted by the page on purpose (an AbortController, a
// closed EventSource): Chromium reports those as net::ERR_ABORTED.
func (r *recorder) loadingFailed(e *network.EventLoadingFailed) {
	req := r.untrack(e.RequestID)
	if req == "" {
		req = "request " + string(e.RequestID)
	}
	if e.Canceled || strings.Contains(e.ErrorText, "ERR_ABORTED") {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.aborted = append(r.aborted, req)
		return
	}
	text := fmt.Sprintf("request failed: %s: %s", req, e.ErrorText)
	if e.BlockedReason != "" {
		text += " (blocked: " + string(e.BlockedReason) + ")"
	}
	r.add(problem{failed: e.ErrorText, text: text})
}

func (r *recorder) add(p problem) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, p)
}

func (r *recorder) track(id network.RequestID, req string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.requests == nil {
		r.requests = make(map[network.RequestID]string)
	}
	r.requests[id] = req
}

// untrack forgets a request that ended and returns what it was.
func (r *recorder) untrack(id network.RequestID) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	req := r.requests[id]
	delete(r.requests, id)
	return req
}

// problems are the reports of the problems seen, but the expected ones.
func (r *recorder) problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.seen {
		if !r.expected(p) {
			out = append(out, p.text)
		}
	}
	return out
}

// expected is whether a declared expectation covers p; r.mu is held.
func (r *recorder) expected(p problem) bool {
	for _, x := range r.statuses {
		if p.status == x.status && strings.Contains(p.url, x.url) {
			return true
		}
	}
	for _, f := range r.failures {
		if p.failed != "" && strings.Contains(p.failed, f) {
			return true
		}
	}
	return false
}

func (r *recorder) expectStatus(status int, urlSubstring string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, expectedStatus{status, urlSubstring})
}

func (r *recorder) expectFailed(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, text)
}

// counts is how many problems (expected ones included) and how many
// requests aborted on purpose were seen: the tests wait on them, as network
// events arrive in no fixed order with the page's own.
func (r *recorder) counts() (seen, aborted int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen), len(r.aborted)
}

package browser

import (
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The harness against real Chromium and tiny pages served on loopback. Not
// parallel: each Chromium wants a core of its own, and on a 2-core machine
// several at once only make every wait slower (9 at once: 60 s, not 20).

// settleWait bounds the wait for the events a page causes to reach the
// recorder.
const settleWait = 10 * time.Second

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// site serves the test pages (/page/<name>), a failing /bad, a /slow
// request that stays open until the page gives up, and a /events stream.
type site struct {
	*httptest.Server
	arrived map[string]chan struct{} // a request to /slow or /events came
}

func newSite(t *testing.T, pages map[string]string) *site {
	t.Helper()
	s := &site{arrived: map[string]chan struct{}{"/slow": make(chan struct{}, 1), "/events": make(chan struct{}, 1)}}
	mux := http.NewServeMux()
	mux.HandleFunc("/page/{name}", func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The icon link spares the browser's own /favicon.ico request (a
		// 404 here), as the UI's index.html does.
		_, _ = fmt.Fprintf(w, `<!doctype html><link rel="icon" href="data:,"><title>%s</title>%s`, r.PathValue("name"), body)
	})
	mux.HandleFunc("/bad", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "broken on purpose", http.StatusInternalServerError)
	})
	mux.HandleFunc("/slow", s.hold)
	mux.HandleFunc("/events", s.hold)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// hold sends the headers (and one event on /events), reports the request,
// and holds it open until the client goes away.
func (s *site) hold(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/events" {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, "data: hello\n\n")
	}
	w.(http.Flusher).Flush()
	select {
	case s.arrived[r.URL.Path] <- struct{}{}:
	default: // one signal is enough
	}
	<-r.Context().Done() // httptest's Close cancels it too
}

// waitArrived waits for a request to path to reach the site.
func (s *site) waitArrived(t *testing.T, path string) {
	t.Helper()
	select {
	case <-s.arrived[path]:
	case <-time.After(settleWait):
		t.Fatalf("no request to %s within %s", path, settleWait)
	}
}

// fakeT stands in for t where a test checks what the harness reports: it
// records Errorf and Fatalf (logging them) instead of failing, and Fatalf
// ends the calling goroutine as t.Fatalf does.
type fakeT struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (f *fakeT) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	f.TB.Logf("reported: %s", msg)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, msg)
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

func (f *fakeT) reported() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}

// refusedURL is a loopback URL nothing listens on.
func refusedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, l.Close())
	return "http://" + l.Addr().String() + "/gone"
}

func TestBrowserReportsWhatThePageMeets(t *testing.T) {
	gone := refusedURL(t)
	tests := []struct {
		name   string
		page   string
		expect func(*Browser)                    // before the page opens
		act    func(*testing.T, *site, *Browser) // after it opened
		// settled says the events the page causes have all reached the
		// recorder (network ones come in no fixed order with the page's).
		settled func(b *Browser) bool
		want    []string // in the only problem, and in the cleanup's report; none for no problem
	}{
		{name: "clean page", page: `<p id="x">hello</p>`},
		{name: "console.error", page: `<script>console.error("boom", 42)</script>`,
			want: []string{"console.error at URL/page/console.error:1:", ": boom 42"}},
		{name: "uncaught exception", page: `<script>throw new Error("uncaught in the page")</script>`,
			want: []string{"uncaught exception at URL/page/uncaught_exception:1:", "Uncaught Error: uncaught in the page"}},
		{name: "error response", page: `<script>fetch("/bad")</script>`, want: []string{"HTTP 500 from URL/bad"}},
		{name: "expected error response", page: `<script>fetch("/bad")</script>`,
			expect:  func(b *Browser) { b.Expect(500, "/bad") },
			settled: func(b *Browser) bool { seen, _ := b.rec.counts(); return seen == 1 }},
		{name: "failed request", page: fmt.Sprintf(`<script>fetch(%q).catch(() => {})</script>`, gone),
			want: []string{"request failed: GET " + gone + ": net::ERR_CONNECTION_REFUSED"}},
		{name: "fetch aborted by the page", page: `<script>
			const c = new AbortController();
			fetch("/slow", {signal: c.signal}).catch(() => {});
			window.abortFetch = () => c.abort();</script>`,
			act: func(t *testing.T, s *site, b *Browser) {
				s.waitArrived(t, "/slow")
				b.Run(t, chromedp.Evaluate(`abortFetch()`, nil))
			},
			settled: func(b *Browser) bool { _, aborted := b.rec.counts(); return aborted == 1 }},
		{name: "event stream closed by the page", page: `<script>
			const es = new EventSource("/events");
			es.onmessage = () => es.close();</script>`,
			act:     func(t *testing.T, s *site, _ *Browser) { s.waitArrived(t, "/events") },
			settled: func(b *Browser) bool { _, aborted := b.rec.counts(); return aborted == 1 }},
	}
	pages := make(map[string]string)
	for _, tc := range tests {
		pages[pageName(tc.name)] = tc.page
	}
	s := newSite(t, pages)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.ReplaceAll(w, "URL", s.URL))
			}
			ft := &fakeT{TB: t}
			// Registered first, so it runs after Start's own cleanups.
			t.Cleanup(func() { requireReported(t, ft.reported(), want) })
			b := Start(ft)
			if tc.expect != nil {
				tc.expect(b)
			}
			b.Run(t, chromedp.Navigate(s.URL+"/page/"+pageName(tc.name)), chromedp.WaitReady("body", chromedp.ByQuery))
			if tc.act != nil {
				tc.act(t, s, b)
			}
			settled := tc.settled
			if settled == nil {
				settled = func(b *Browser) bool { return len(b.Problems()) == min(len(want), 1) }
			}
			require.Eventually(t, func() bool { return settled(b) }, settleWait, 10*time.Millisecond, "events never settled")
			requireOne(t, b.Problems(), want)
		})
	}
}

// pageName is a test's name as a URL path segment.
func pageName(test string) string { return strings.ReplaceAll(test, " ", "_") }

// requireOne checks that got is empty when want is, else one text holding
// each of want.
func requireOne(t *testing.T, got, want []string) {
	t.Helper()
	if len(want) == 0 {
		require.Empty(t, got)
		return
	}
	require.Len(t, got, 1, "%q", got)
	for _, w := range want {
		require.Contains(t, got[0], w)
	}
}

// requireReported checks what Start's cleanup reported: nothing, or the
// one problem want.
func requireReported(t *testing.T, reported, want []string) {
	t.Helper()
	if len(want) > 0 {
		want = append([]string{"the page met 1 problems"}, want...)
	}
	requireOne(t, reported, want)
}

func TestScreenshotWritesPNGs(t *testing.T) {
	root := t.TempDir()
	t.Setenv(screenshotEnv, root)
	s := newSite(t, map[string]string{"clean": `<p id="x">hello</p>`})
	b := Start(t)
	b.Run(t, chromedp.Navigate(s.URL+"/page/clean"))
	b.WaitText(t, "#x", "hello", settleWait)
	dir := filepath.Join(root, t.Name())
	for _, want := range []string{"clean.png", "clean-2.png"} {
		path := b.Screenshot(t, "clean")
		require.Equal(t, filepath.Join(dir, want), path)
		png, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(png, pngSignature), "%s is not a PNG", path)
		require.Greater(t, len(png), len(pngSignature))
	}
}

func TestFailuresSaveAScreenshotAndNameThePage(t *testing.T) {
	root := t.TempDir()
	t.Setenv(screenshotEnv, root)
	s := newSite(t, map[string]string{"clean": `<p id="x">hello</p>`})
	b := Start(t)
	b.Run(t, chromedp.Navigate(s.URL+"/page/clean"), chromedp.WaitVisible("#x", chromedp.ByQuery))
	b.Timeout = time.Second
	ft := &fakeT{TB: t}
	fails := func(f func()) string {
		done := make(chan struct{})
		go func() { defer close(done); f() }() // Fatalf ends this goroutine
		select {
		case <-done:
		case <-time.After(settleWait):
			t.Fatal("the failing call did not return")
		}
		got := ft.reported()
		require.NotEmpty(t, got, "no failure reported")
		return got[len(got)-1]
	}
	dir := filepath.Join(root, t.Name())
	msg := fails(func() { b.Run(ft, chromedp.WaitVisible("#missing", chromedp.ByQuery)) })
	assert.Contains(t, msg, "context deadline exceeded")
	assert.Contains(t, msg, "page: "+s.URL+"/page/clean")
	assert.Contains(t, msg, filepath.Join(dir, "failure-1.png"))
	msg = fails(func() { b.WaitText(ft, "#x", "goodbye", 200*time.Millisecond) })
	assert.Contains(t, msg, `"#x" never contained "goodbye" within 200ms; it holds "hello"`)
	assert.Contains(t, msg, filepath.Join(dir, "failure-2.png"))
	for _, name := range []string{"failure-1.png", "failure-2.png"} {
		png, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(png, pngSignature), "%s is not a PNG", name)
	}
}

func TestCleanupLeavesNoChromium(t *testing.T) {
	var profile string
	var pid int
	t.Run("browser", func(t *testing.T) {
		b := Start(t)
		profile = b.profile
		pid = chromedp.FromContext(b.Ctx()).Browser.Process().Pid
		require.Contains(t, leftovers(profile), pid, "the running browser is found by its profile")
		require.Eventually(t, func() bool { return len(leftovers(profile)) > 1 }, settleWait, 10*time.Millisecond,
			"and so are its helpers")
	})
	require.NotEmpty(t, profile, "the subtest ran")
	require.Empty(t, leftovers(profile), "processes left")
	require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "chromium's main process is gone")
	_, err := os.Stat(profile)
	require.ErrorIs(t, err, fs.ErrNotExist, "the profile was removed")
}

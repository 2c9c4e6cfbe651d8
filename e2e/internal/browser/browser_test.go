package browser

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// pages are tiny pages that each meet (or do not meet) one kind of problem.
var pages = map[string]string{
	"/clean":   `<p id="x">hello</p>`,
	"/console": `<script>console.error("boom from the page")</script>`,
	"/throw":   `<script>throw new Error("uncaught in the page")</script>`,
	"/fetch":   `<script>fetch("/bad").then(r => document.title = "got " + r.status)</script>`,
	"/abort":   `<script>const c = new AbortController(); fetch("/slow", {signal: c.signal}).catch(() => {}); setTimeout(() => c.abort(), 50)</script>`,
}

func server(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bad":
			http.Error(w, "broken", http.StatusInternalServerError)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		default:
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<!doctype html><title>t</title>" + pages[r.URL.Path]))
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv
}

// visit opens path in a fresh browser and returns its problems; the
// browser's own cleanup check is disarmed by clearing them.
func visit(t *testing.T, srv *httptest.Server, path string, prepare func(*Browser)) []string {
	b := Start(t)
	if prepare != nil {
		prepare(b)
	}
	b.Run(t, chromedp.Navigate(srv.URL+path), chromedp.WaitReady("body", chromedp.ByQuery))
	var title string
	if path == "/fetch" {
		b.Run(t, chromedp.Poll(`document.title.startsWith("got")`, nil), chromedp.Title(&title))
	}
	if path == "/abort" {
		b.Run(t, chromedp.Poll(`performance.now() > 300`, nil))
	}
	got := b.Problems()
	b.mu.Lock()
	b.problems = nil
	b.mu.Unlock()
	return got
}

func TestBrowserReportsWhatThePageMeets(t *testing.T) {
	srv := server(t)
	require.Empty(t, visit(t, srv, "/clean", nil))
	require.Empty(t, visit(t, srv, "/abort", nil), "a fetch the page aborts on purpose is not a problem")
	requireOne(t, visit(t, srv, "/console", nil), "boom from the page")
	requireOne(t, visit(t, srv, "/throw", nil), "uncaught in the page")
	requireOne(t, visit(t, srv, "/fetch", nil), "HTTP 500")
	require.Empty(t, visit(t, srv, "/fetch", func(b *Browser) { b.Expect(500, "/bad") }), "an expected error response")
}

func requireOne(t *testing.T, problems []string, want string) {
	t.Helper()
	require.Len(t, problems, 1, "%v", problems)
	require.Contains(t, problems[0], want)
}

func TestScreenshotIsAPNG(t *testing.T) {
	srv := server(t)
	t.Setenv("BRAID_SCREENSHOT_DIR", t.TempDir())
	b := Start(t)
	b.Run(t, chromedp.Navigate(srv.URL+"/clean"), chromedp.WaitVisible("#x", chromedp.ByQuery))
	b.WaitText(t, "#x", "hello", DefaultTimeout)
	path := b.Screenshot(t, "clean")
	require.True(t, strings.HasSuffix(path, "01-clean.png"), path)
	png, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "not a PNG")
}

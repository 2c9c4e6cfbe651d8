// Package browser drives Debian's Chromium headless from Go (chromedp) for
// the web UI's tests: it launches a browser per test with its own profile,
// records every console error, uncaught exception, failed request and HTTP
// error response the page meets, and saves screenshots.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// DefaultTimeout bounds each Run call.
const DefaultTimeout = 30 * time.Second

// Browser is one headless Chromium with an empty profile, driven by chromedp.
type Browser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
	expected []expectation
	failures []string // error texts of failed requests that are expected
	shots    int
	dir      string
}

type expectation struct {
	status int
	url    string
}

// Binary finds Chromium: chromium on PATH, then the usual install paths.
func Binary() (string, bool) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", true
	}
	return "", false
}

// Start launches headless Chromium for t (skipping t, with the reason, only
// when no Chromium is installed: `make deps` installs it) and stops it in
// t.Cleanup, after failing t on any problem the page met.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin, ok := Binary()
	if !ok {
		t.Skip("no Chromium found: run `make deps` (scripts/ensure-deps.sh installs Debian's chromium)")
	}
	// The profile is removed by hand once Chromium is gone: its helper
	// processes may still write there when t.TempDir's cleanup would run.
	profile, err := os.MkdirTemp("", "braid-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile),
		chromedp.WindowSize(1440, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &Browser{ctx: ctx, dir: screenshotDir(t)}
	chromedp.ListenTarget(ctx, b.listen)
	if err := chromedp.Run(ctx, network.Enable(), runtime.Enable()); err != nil {
		cancel()
		cancelAlloc()
		removeProfile(profile)
		t.Fatalf("start chromium %s: %v", bin, err)
	}
	t.Cleanup(func() {
		b.RequireNoProblems(t)
		cancel()
		cancelAlloc()
		removeProfile(profile)
	})
	return b
}

// screenshotDir is BRAID_SCREENSHOT_DIR/<test> when set, else a temp dir.
func screenshotDir(t testing.TB) string {
	root := os.Getenv("BRAID_SCREENSHOT_DIR")
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Ctx is the chromedp context of the browser's tab.
func (b *Browser) Ctx() context.Context { return b.ctx }

// Run runs actions within DefaultTimeout; on failure it saves a screenshot
// and fails t with the error and the page's URL.
func (b *Browser) Run(t testing.TB, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, DefaultTimeout)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var url string
		_ = chromedp.Run(b.ctx, chromedp.Location(&url))
		shot := b.Screenshot(t, "failure")
		t.Fatalf("browser at %s: %v (screenshot %s; problems so far: %v)", url, err, shot, b.Problems())
	}
}

// Screenshot saves a full-page PNG named name (numbered) in the test's
// screenshot directory, logs and returns its path.
func (b *Browser) Screenshot(t testing.TB, name string) string {
	t.Helper()
	var png []byte
	ctx, cancel := context.WithTimeout(b.ctx, DefaultTimeout)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	b.mu.Lock()
	b.shots++
	path := filepath.Join(b.dir, fmt.Sprintf("%02d-%s.png", b.shots, name))
	b.mu.Unlock()
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// Expect declares responses with status to URLs containing url expected
// (not problems), e.g. a deliberate sign-in with a wrong key.
func (b *Browser) Expect(status int, url string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expected = append(b.expected, expectation{status, url})
}

// ExpectFailed declares failed requests whose error text contains text
// expected (e.g. net::ERR_CONNECTION_REFUSED while a test keeps the api down).
func (b *Browser) ExpectFailed(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures = append(b.failures, text)
}

// Problems is every console error, uncaught exception, failed request and
// HTTP error response seen so far, but the expected ones.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// RequireNoProblems fails t listing Problems.
func (b *Browser) RequireNoProblems(t testing.TB) {
	t.Helper()
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the page met %d problems:\n  %s", len(p), strings.Join(p, "\n  "))
	}
}

// WaitText waits up to timeout until the element selected by sel contains text.
func (b *Browser) WaitText(t testing.TB, sel, text string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, text)
	if err := chromedp.Run(ctx, chromedp.Poll(js, nil, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		var got string
		_ = chromedp.Run(b.ctx, chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q)?.textContent ?? "(no element)"`, sel), &got))
		shot := b.Screenshot(t, "wait-failed")
		t.Fatalf("%q never contained %q within %s; it holds %q (screenshot %s)", sel, text, timeout, got, shot)
	}
}

// removeProfile deletes a browser profile, retrying a few times while
// Chromium's last helper processes finish writing to it.
func removeProfile(dir string) {
	for range 20 {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(50 * time.Millisecond) // bounded: 20 tries, 1 s in all
	}
}

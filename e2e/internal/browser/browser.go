// Package browser drives Debian's Chromium headless from Go (chromedp) for
// the web UI's tests: it launches a browser per test with its own empty
// profile, records every console error, uncaught exception, failed request
// and HTTP error response the page meets, fails the test on any it was not
// told to expect, and saves screenshots.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	// DefaultTimeout bounds each Run call unless Browser.Timeout says otherwise.
	DefaultTimeout = 30 * time.Second
	// launchTimeout bounds Chromium's start, up to its first tab answering.
	launchTimeout = time.Minute
	// closeTimeout bounds the graceful close, and then the wait for the
	// last of Chromium's processes to be gone.
	closeTimeout = 10 * time.Second
)

// Browser is one headless Chromium (its own temp --user-data-dir) driven by
// chromedp, with one tab. Its methods that take a testing.TB must be called
// from the test's goroutine.
type Browser struct {
	// Timeout bounds each Run call; Start sets it to DefaultTimeout.
	Timeout time.Duration

	ctx         context.Context // the tab's chromedp context
	cancel      context.CancelFunc
	cancelAlloc context.CancelFunc // kills Chromium if still running, waits for it
	profile     string             // the --user-data-dir
	shotDir     string
	rec         recorder
}

// Start launches Debian's chromium headless with a 1440x900 window and a new
// empty user-data-dir under t.TempDir(). It skips t only when no Chromium is
// installed at all, and fails it when one is but will not start. In
// t.Cleanup it fails t on any problem the page met (RequireNoProblems), then
// closes Chromium and waits until none of its processes is left.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := findChromium()
	if bin == "" {
		t.Skip("no Chromium found: run `make deps` (scripts/ensure-deps.sh installs Debian's chromium)")
	}
	b := &Browser{Timeout: DefaultTimeout, profile: t.TempDir(), shotDir: screenshotDir(t)}
	// Not t.Context(): that is cancelled before the cleanups run, which
	// would kill Chromium before stop could close it.
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocatorOptions(bin, b.profile)...)
	b.ctx, b.cancel = chromedp.NewContext(actx)
	b.cancelAlloc = cancelAlloc
	chromedp.ListenTarget(b.ctx, b.rec.listen)
	// Registered after t.TempDir, so it runs before the profile is removed.
	t.Cleanup(func() { b.stop(t) })
	if err := b.launch(); err != nil {
		t.Fatalf("start chromium %s: %v", bin, err)
	}
	t.Cleanup(func() { b.RequireNoProblems(t) })
	return b
}

// findChromium is the Chromium to run: chromium on PATH, then Debian's
// /usr/bin/chromium, then the other usual names; "" when there is none.
func findChromium() string {
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// allocatorOptions are Chromium's flags: headless, no sandbox (tests run as
// root in containers), and nothing that talks to the outside world.
func allocatorOptions(bin, profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1440, 900),
		chromedp.UserDataDir(profile),
	}
}

// launch starts Chromium and enables the events the recorder needs
// (chromedp v0.16 enables both domains on a new tab too; the harness does
// not rely on that). The first chromedp.Run allocates the browser and ties
// its process to the context it gets, so it runs on the tab's own context
// and is bounded here instead.
func (b *Browser) launch() error {
	done := make(chan error, 1)
	go func() { done <- chromedp.Run(b.ctx, network.Enable(), runtime.Enable()) }()
	select {
	case err := <-done:
		return err
	case <-time.After(launchTimeout):
		b.cancel() // ends the Run above; stop kills and waits for the rest
		select {
		case <-done:
		case <-time.After(closeTimeout):
		}
		return fmt.Errorf("no answer within %s", launchTimeout)
	}
}

// stop closes Chromium gracefully (killing it when that fails), then kills
// and waits out the helper processes (a zygote can outlive the main one), so
// that none writes to the profile while t.TempDir's cleanup removes it.
func (b *Browser) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(b.ctx, closeTimeout)
	err := chromedp.Cancel(ctx)
	cancel()
	b.cancel()
	b.cancelAlloc()
	if err != nil {
		t.Logf("chromium did not close gracefully (%v); killed it", err)
	}
	killLeftovers(b.profile)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Empty(c, leftovers(b.profile), "pids of chromium processes still running after close")
	}, closeTimeout, 20*time.Millisecond)
}

// Ctx is the chromedp context of the browser's tab, for callers that need
// it directly. Bound what you run on it: it has no deadline.
func (b *Browser) Ctx() context.Context { return b.ctx }

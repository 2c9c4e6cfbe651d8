package browser

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// screenshotEnv names the directory that keeps screenshots after the test.
const screenshotEnv = "BRAID_SCREENSHOT_DIR"

// maxShots bounds the numbered names tried for one screenshot name.
const maxShots = 1000

// Screenshot saves a full-page PNG named name+".png" in the test's
// screenshot dir (t.TempDir() unless BRAID_SCREENSHOT_DIR is set, then that
// dir/<TestName>/), logs its path, and returns it. A name already taken in
// that dir (by an earlier call, or another browser of the same test) gets
// "-2", "-3"... rather than being overwritten. Failing to take or save it
// fails t but lets it go on ("" is returned).
func (b *Browser) Screenshot(t testing.TB, name string) string {
	t.Helper()
	path, err := b.save(func(i int) string {
		if i == 1 {
			return name + ".png"
		}
		return fmt.Sprintf("%s-%d.png", name, i)
	})
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	t.Logf("screenshot: %s", path)
	return path
}

// failureShot saves failure-<n>.png (the first n free) and says where, or
// why it could not.
func (b *Browser) failureShot() string {
	path, err := b.save(func(i int) string { return fmt.Sprintf("failure-%d.png", i) })
	switch {
	case err != nil:
		return fmt.Sprintf("none (%v)", err)
	case os.Getenv(screenshotEnv) == "":
		return path + " (removed with the test's temp dir: set " + screenshotEnv + " to keep it)"
	}
	return path
}

// save takes a full-page PNG and writes it to the first of names(1),
// names(2)... that does not exist yet in the screenshot dir.
func (b *Browser) save(names func(int) string) (string, error) {
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil { // quality 100: PNG
		return "", err
	}
	for i := 1; i <= maxShots; i++ {
		path := filepath.Join(b.shotDir, names(i))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(png)
		return path, errors.Join(err, f.Close())
	}
	return "", fmt.Errorf("%s, %s... up to %d all taken", names(1), names(2), maxShots)
}

// unsafeName matches what a test name may hold that a file name should not.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// screenshotDir is BRAID_SCREENSHOT_DIR/<TestName> when that is set (a
// subtest's "/" becomes "_"), else a new t.TempDir().
func screenshotDir(t testing.TB) string {
	root := os.Getenv(screenshotEnv)
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, unsafeName.ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot dir: %v", err)
	}
	return dir
}

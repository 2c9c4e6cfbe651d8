package apisvc

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// uiFiles is the web UI: plain ES modules, CSS and the repository's example
// workflows, served as they are (no build step; see DESIGN.md "Web UI").
//
//go:embed ui
var uiFiles embed.FS

// uiFS is uiFiles rooted at ui/.
var uiFS = func() fs.FS {
	f, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	return f
}()

// uiCSP allows the UI's own scripts, styles and API calls only: no inline
// script, no other origin, no framing (clickjacking), no form posts.
const uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// serveUI serves the web UI under /ui/. It needs no API key: the page holds
// no data; the browser sends the key the user entered with each API call,
// in the X-API-Key header (never in a URL, never in a cookie, so a foreign
// page cannot make the browser send it: no CSRF). Unknown paths are 404.
func serveUI(c *gin.Context) {
	name := strings.TrimPrefix(path.Clean("/"+c.Param("path")), "/")
	if name == "" {
		name = "index.html"
	}
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache") // revalidate: a new binary serves new assets at once
	b, err := fs.ReadFile(uiFS, name)
	if err != nil {
		abort(c, errNotFound("no UI file %q", name))
		return
	}
	sum := sha256.Sum256(b)
	h.Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		h.Set("Content-Type", ct)
	}
	// ServeContent answers If-None-Match with 304 and HEAD without a body.
	http.ServeContent(c.Writer, c.Request, name, time.Time{}, bytes.NewReader(b))
}

// redirectUI sends /ui to /ui/.
func redirectUI(c *gin.Context) { c.Redirect(http.StatusMovedPermanently, "/ui/") }

// whoami names the caller's key and role, so that the UI shows a read key
// no mutating controls (the api refuses them anyway).
func whoami(c *gin.Context) {
	p := c.MustGet(ctxPrincipal).(principal)
	respond(c, http.StatusOK, map[string]string{"name": p.Name, "role": string(p.Role)})
}

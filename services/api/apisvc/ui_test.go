package apisvc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUIServedWithoutKeyUnderStrictHeaders: the UI's files need no key
// (they hold no data), come with a CSP and no-sniff/no-frame headers, and
// unknown files are 404 problems.
func TestUIServedWithoutKeyUnderStrictHeaders(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	for path, ctype := range map[string]string{"/ui/": "text/html", "/ui/js/main.js": "text/javascript", "/ui/css/app.css": "text/css"} {
		r := e.do(req{method: http.MethodGet, path: path, key: "-", malformed: true})
		require.Equal(t, http.StatusOK, r.Status, path)
		require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), ctype), "%s: %s", path, r.Header.Get("Content-Type"))
		require.Contains(t, r.Header.Get("Content-Security-Policy"), "script-src 'self'")
		require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"))
		require.Equal(t, "DENY", r.Header.Get("X-Frame-Options"))
		require.NotEmpty(t, r.Body)
	}
	r := e.do(req{method: http.MethodGet, path: "/ui/nope.js", key: "-", malformed: true})
	require.Equal(t, http.StatusNotFound, r.Status)
	require.Contains(t, string(r.Body), "no UI file")
	r = e.do(req{method: http.MethodGet, path: "/ui/%2e%2e/openapi.json", key: "-", malformed: true})
	require.Equal(t, http.StatusNotFound, r.Status, "no way out of the UI's files")
}

// TestWhoamiNamesTheKeyAndRole is what the UI reads to hide mutating
// controls from a read key.
func TestWhoamiNamesTheKeyAndRole(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	r := e.must(req{method: http.MethodGet, path: "/whoami", key: readSecret}, http.StatusOK)
	require.JSONEq(t, `{"name": "`+readKey+`", "role": "read"}`, string(r.Body))
	r = e.must(req{method: http.MethodGet, path: "/whoami"}, http.StatusOK)
	require.JSONEq(t, `{"name": "`+writeKey+`", "role": "write"}`, string(r.Body))
	e.must(req{method: http.MethodGet, path: "/whoami", key: "wrong"}, http.StatusUnauthorized)
}

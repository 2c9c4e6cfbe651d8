package apisvc_test

import (
	"net/http"
	"regexp"
	"sort"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
)

var ginParam = regexp.MustCompile(`[:*]([A-Za-z]+)`)

// TestOpenAPIMatchesRoutes checks that every gin route is in the document
// and every operation of the document is a gin route.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	doc, _ := openAPIDoc(t)
	engine, ok := e.api.Handler().(*gin.Engine)
	require.True(t, ok, "Handler is a *gin.Engine")
	routes := map[string]bool{}
	for _, r := range engine.Routes() {
		p := ginParam.ReplaceAllString(r.Path, "{$1}")
		routes[r.Method+" "+p] = true
		item := doc.Paths.Find(p)
		require.NotNil(t, item, "route %s %s is missing from openapi.json", r.Method, p)
		require.NotNil(t, item.GetOperation(r.Method), "operation %s %s is missing from openapi.json", r.Method, p)
	}
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
			require.True(t, routes[method+" "+path], "openapi.json documents %s %s, which is not a route", method, path)
		}
	}
	sort.Strings(documented)
	require.Len(t, documented, len(routes))
	require.GreaterOrEqual(t, len(routes), 31, "every endpoint of SPEC §8")
}

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	resp := e.must(req{method: "GET", path: "/openapi.json", key: "-"}, http.StatusOK)
	var doc map[string]any
	resp.json(t, &doc)
	require.Equal(t, "3.0.3", doc["openapi"])
}

package apisvc_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/stretchr/testify/require"
)

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	e.must(req{method: "GET", path: "/healthz", key: "-"}, http.StatusOK)
	var ready struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	e.must(req{method: "GET", path: "/readyz", key: "-"}, http.StatusOK).json(t, &ready)
	require.Equal(t, map[string]string{"redis": "ok", "kafka": "ok", "events": "ok"}, ready.Checks)

	name, _ := e.register(`{"name":"m","nodes":[{"id":"a","handler":"noop"}]}`)
	e.startRun(name, nil, nil)
	e.must(req{method: "GET", path: "/workflows/nope"}, http.StatusNotFound)
	body := string(e.must(req{method: "GET", path: "/metrics", key: "-"}, http.StatusOK).Body)
	for _, want := range []string{
		`braid_http_requests_total{code="201",method="POST",route="/workflows"} 1`,
		`braid_http_requests_total{code="404",method="GET",route="/workflows/:name"} 1`,
		`braid_http_request_duration_seconds_bucket{method="POST",route="/workflows/:name/runs"`,
		"braid_runs_created_total 1",
		"braid_sse_clients 0",
		"go_goroutines",
	} {
		require.Contains(t, body, want)
	}
}

func TestReadyzFailsWithoutRedis(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	e.redis.Kill()
	p := e.must(req{method: "GET", path: "/readyz", key: "-"}, http.StatusServiceUnavailable).problem(t)
	require.Contains(t, p.Detail, "not ready")
	require.Equal(t, "redis", p.Errors[0].Path)
	e.must(req{method: "GET", path: "/healthz", key: "-"}, http.StatusOK)
	// A request that needs Redis is a 503, not a 500.
	p = e.must(req{method: "GET", path: "/workflows"}, http.StatusServiceUnavailable).problem(t)
	require.Contains(t, p.Detail, "unavailable")
}

// TestRunGracefulShutdown serves through Run, holds an SSE stream open, and
// checks that cancelling the context ends the stream and Run returns.
func TestRunGracefulShutdown(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	addr := "127.0.0.1:" + strconv.Itoa(testinfra.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- apisvc.Run(ctx, apisvc.Config{
			Addr: addr, APIKeys: []apisvc.APIKey{{Name: writeKey, Key: writeSecret, Role: apisvc.RoleWrite}},
			Bus: e.bus, Redis: e.rdb, Keys: e.keys, Logger: newTextLogger(io.Discard),
		})
	}()
	c := newClient(t, "http://"+addr)
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond)
	name, _ := registerWith(t, c, `{"name":"sd","nodes":[{"id":"a","handler":"noop"}]}`)
	var acc struct {
		RunID string `json:"run_id"`
	}
	c.do(t, req{method: "POST", path: "/workflows/" + name + "/runs"}, true).json(t, &acc)
	stream := c.stream(t, req{method: "GET", path: "/runs/" + acc.RunID + "/events"})
	events := newSSEReader(stream.Body)
	require.Equal(t, "snapshot", events.next(t, 10*time.Second).event)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
	require.Eventually(t, func() bool {
		select {
		case _, ok := <-events.ch:
			return !ok
		default:
			return false
		}
	}, 10*time.Second, 10*time.Millisecond, "the SSE stream ended on shutdown")
}

func registerWith(t *testing.T, c *client, def string) (string, int) {
	t.Helper()
	var ref struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
	}
	resp := c.do(t, req{method: "POST", path: "/workflows", body: def}, true)
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
	resp.json(t, &ref)
	require.True(t, strings.HasPrefix(resp.Header.Get("Location"), "/workflows/"))
	return ref.Name, ref.Version
}

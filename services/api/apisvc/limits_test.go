package apisvc_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// requireLimited checks a 429: problem+json naming the limit, and a
// Retry-After of whole seconds from 1 to maxRetry.
func requireLimited(t *testing.T, resp response, maxRetry int, detail ...string) apisvc.Problem {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, resp.Status, "%s", resp.Body)
	p := resp.problem(t)
	require.Equal(t, "urn:braid:problem:too-many-requests", p.Type)
	for _, d := range detail {
		require.Contains(t, p.Detail, d)
	}
	n, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q is whole seconds", resp.Header.Get("Retry-After"))
	require.GreaterOrEqual(t, n, 1)
	require.LessOrEqual(t, n, maxRetry)
	return p
}

// limitedCount reads braid_api_limited_total for limit from /metrics.
func (e *env) limitedCount(limit string) string {
	e.t.Helper()
	body := string(e.must(req{method: "GET", path: "/metrics", key: "-"}, http.StatusOK).Body)
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, `braid_api_limited_total{limit="`+limit+`"} `); ok {
			return v
		}
	}
	return "0"
}

// TestRateLimitPerKey spends a key's burst and gets 429s with Retry-After,
// while another key, the public endpoints and the UI are not throttled.
func TestRateLimitPerKey(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{limits: limitOpts{rate: 0.5, burst: 3}})
	for range 3 {
		e.must(req{method: "GET", path: "/workflows"}, http.StatusOK)
	}
	requireLimited(t, e.do(req{method: "GET", path: "/workflows"}), 2,
		`API key "admin" is over its rate limit of 0.5 requests/s (burst 3`, "BRAID_API_RATE_LIMIT")
	requireLimited(t, e.do(req{method: "POST", path: "/workflows", body: `{"name":"x","nodes":[{"id":"a","handler":"noop"}]}`}), 2, `API key "admin"`)
	for range 3 {
		e.must(req{method: "GET", path: "/workflows", key: readSecret}, http.StatusOK)
	}
	requireLimited(t, e.do(req{method: "POST", path: "/workflows", key: readSecret, malformed: true}), 2, `API key "viewer"`)
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json", "/ui/", "/ui/index.html"} {
		for range 5 {
			e.must(req{method: "GET", path: path, malformed: path == "/ui/"}, http.StatusOK) // the document names /ui/{path}
		}
	}
	require.Equal(t, "3", e.limitedCount("rate"))
}

// TestRateLimitWithoutKey charges requests without a valid key to their
// client address: past its burst, wrong keys get a 429 instead of a 401,
// while a valid key keeps its own budget.
func TestRateLimitWithoutKey(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{limits: limitOpts{rate: 0.5, burst: 2}})
	e.must(req{method: "GET", path: "/workflows", key: "wrong"}, http.StatusUnauthorized)
	e.must(req{method: "GET", path: "/workflows", key: "-"}, http.StatusUnauthorized)
	requireLimited(t, e.do(req{method: "GET", path: "/workflows", key: "guess"}), 4, "client address 127.0.0.1")
	requireLimited(t, e.do(req{method: "GET", path: "/workflows", key: "-"}), 4, "client address 127.0.0.1")
	e.must(req{method: "GET", path: "/workflows"}, http.StatusOK)
}

// TestRateLimitAuthOff charges every request to its client address when
// authentication is off.
func TestRateLimitAuthOff(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{authOff: true, limits: limitOpts{rate: 0.5, burst: 2}})
	e.must(req{method: "GET", path: "/workflows", key: "-"}, http.StatusOK)
	e.must(req{method: "GET", path: "/runs", key: "-"}, http.StatusOK)
	requireLimited(t, e.do(req{method: "GET", path: "/workflows", key: "-"}), 4, "client address 127.0.0.1")
	requireLimited(t, e.do(req{method: "GET", path: "/workflows", key: writeSecret}), 4, "client address 127.0.0.1")
}

// openStream opens a streaming request; it returns the open response on a
// 200, else the buffered answer (checked against the OpenAPI document).
func (e *env) openStream(r req) (*http.Response, response) {
	e.t.Helper()
	hr := e.client.request(e.t, r)
	input, ok := validateRequest(e.t, hr, nil, true)
	require.True(e.t, ok)
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := e.client.hc.Do(hr.WithContext(ctx))
	require.NoError(e.t, err)
	if resp.StatusCode == http.StatusOK {
		e.t.Cleanup(func() { cancel(); _ = resp.Body.Close() })
		return resp, response{}
	}
	defer cancel()
	defer resp.Body.Close()
	out := response{Status: resp.StatusCode, Header: resp.Header, Body: readAll(e.t, resp.Body)}
	validateResponse(e.t, input, out)
	return nil, out
}

// TestStreamsPerKey opens MaxStreamsPerKey event and log streams with one
// key; the next is a 429 until one closes, and another key is not affected.
func TestStreamsPerKey(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{limits: limitOpts{streamsPerKey: 2}})
	name, _ := e.register(`{"name":"streams","nodes":[{"id":"a","handler":"noop"}]}`)
	run := e.startRun(name, nil, nil)
	events := req{method: "GET", path: "/runs/" + run + "/events"}
	logs := req{method: "GET", path: "/runs/" + run + "/tasks/a/logs?follow=true"}
	first, _ := e.openStream(events)
	require.NotNil(t, first)
	second, _ := e.openStream(logs)
	require.NotNil(t, second, "a followed log is a stream too")
	for _, r := range []req{events, logs} {
		open, resp := e.openStream(r)
		require.Nil(t, open, "%s opened past the limit", r.path)
		requireLimited(t, resp, 1, `API key "admin" has 2 event streams open`, "BRAID_API_MAX_STREAMS_PER_KEY")
	}
	events.key = readSecret
	other, _ := e.openStream(events)
	require.NotNil(t, other, "another key has its own streams")
	require.Equal(t, "2", e.limitedCount("streams"))

	require.NoError(t, first.Body.Close())
	events.key = ""
	require.Eventually(t, func() bool {
		open, resp := e.openStream(events)
		if open == nil {
			require.Equal(t, http.StatusTooManyRequests, resp.Status)
		}
		return open != nil
	}, 30*time.Second, 20*time.Millisecond, "a closed stream frees its slot")
}

// TestWaitersPerKey lets one key wait MaxWaitersPerKey times at once; more
// waiting requests of that key get a 429 and start no run, while another
// key may still wait.
func TestWaitersPerKey(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{limits: limitOpts{waitersPerKey: 1}, waitRecheck: time.Hour})
	name, _ := e.register(`{"name":"patient","nodes":[{"id":"a","handler":"noop"}]}`)
	id := e.startRun(name, nil, nil)
	first := e.client.send(t, req{method: "GET", path: "/runs/" + id + "?wait=60s"})
	e.waitForWaiters(1)
	requireLimited(t, e.do(req{method: "GET", path: "/runs/" + id + "?wait=5s"}), 1,
		`API key "admin" has 1 requests waiting for runs`, "BRAID_API_MAX_WAITERS_PER_KEY")
	requireLimited(t, e.do(req{method: "POST", path: "/workflows/" + name + "/runs?wait=5s"}), 1, "BRAID_API_MAX_WAITERS_PER_KEY")
	n, err := e.rdb.ZCard(t.Context(), e.keys.WorkflowRunShards(name)[0]).Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the refused request started no run")
	e.must(req{method: "GET", path: "/runs/" + id}, http.StatusOK) // without wait: not limited

	second := e.client.send(t, req{method: "GET", path: "/runs/" + id + "?wait=60s", key: readSecret})
	e.waitForWaiters(2)
	e.waitSubscribed()
	e.endRun(id, "succeeded")
	require.Equal(t, "succeeded", first.run(t, "the run ended").Status)
	require.Equal(t, "succeeded", second.run(t, "the run ended").Status)
	e.waitForWaiters(0)
	require.Equal(t, "2", e.limitedCount("waiters"))
	e.must(req{method: "GET", path: "/runs/" + id + "?wait=1s"}, http.StatusOK) // the slot was given back
}

// TestNewRejectsBadLimits: a limit is positive or NoLimit, and a write
// timeout leaves time to answer a request that came at the read timeout.
func TestNewRejectsBadLimits(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = rdb.Close() })
	_, err := apisvc.New(context.Background(), apisvc.Config{AuthOff: true, Redis: rdb, Bus: eventbus.Config{Brokers: []string{"127.0.0.1:1"}},
		RateLimit: -2, RateBurst: -1, MaxStreamsPerKey: -3, MaxWaitersPerKey: -4, ReadTimeout: -time.Second, WriteTimeout: 2 * time.Second})
	for _, want := range []string{"RateLimit must be positive or NoLimit", "RateBurst must be positive",
		"MaxStreamsPerKey must be positive or NoLimit", "MaxWaitersPerKey must be positive or NoLimit", "ReadTimeout must be positive"} {
		require.ErrorContains(t, err, want)
	}
	_, err = apisvc.New(context.Background(), apisvc.Config{AuthOff: true, Redis: rdb, Bus: eventbus.Config{Brokers: []string{"127.0.0.1:1"}},
		ReadTimeout: time.Minute, WriteTimeout: 30 * time.Second})
	for _, want := range []string{"WriteTimeout (30s) must exceed ReadTimeout (1m0s)"} {
		require.ErrorContains(t, err, want)
	}
}

package apisvc_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/syncbuf"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/braidhq/braid/services/orchestrator/orchsvc"
	"github.com/braidhq/braid/services/worker/workersvc"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Test keys. Their secrets must never show up in the logs.
const (
	writeSecret = "w-secret-3f9a1c7e5b2d4a68"
	readSecret  = "r-secret-8e2b6d0f1a3c5e79"
	writeKey    = "admin"
	readKey     = "viewer"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer = syncbuf.Buffer

// env is an api server over real Redis and Kafka, optionally with an
// orchestrator and a worker, and a client that checks every exchange
// against the OpenAPI document.
type env struct {
	t      *testing.T
	api    *apisvc.Server
	url    string // where the api serves, http://host:port
	rdb    redis.UniversalClient
	keys   statestore.Keys
	bus    eventbus.Config
	logs   *syncBuffer
	client *client
	redis  *testinfra.Redis
	kafka  *testinfra.Kafka
}

type envOpts struct {
	engine    bool          // run an orchestrator and a worker in-process
	keepAlive time.Duration // SSE keep-alive interval
	maxBody   int64
	sseBuffer int
	timeout   time.Duration // RequestTimeout
	// maxWaiters and waitRecheck are Config.MaxWaiters and Config.WaitRecheck.
	maxWaiters  int
	waitRecheck time.Duration
	// waitLinger is Config.WaitLinger.
	waitLinger time.Duration
	// limits and timeouts sets the Config fields of the same names.
	limits   limitOpts
	timeouts timeoutOpts
	authOff  bool
	// serve serves through Server.Serve on a real listener, with its
	// timeouts, instead of an httptest server.
	serve bool
	// shellKeys is Config.ShellKeys.
	shellKeys []string
	// cluster puts the api on a Redis Cluster instead of one server
	// (e.redis is then nil).
	cluster bool
}

// limitOpts are Config's per-client limits (zero: the defaults).
type limitOpts struct {
	rate          float64
	burst         int
	streamsPerKey int
	waitersPerKey int
}

// timeoutOpts are Config's HTTP server bounds (zero: the defaults).
type timeoutOpts struct {
	readHeader, read, write time.Duration
	maxHeaderBytes          int
}

func setup(t *testing.T, o envOpts) *env {
	t.Helper()
	var rdb redis.UniversalClient
	var redisSrv *testinfra.Redis
	if o.cluster {
		rdb = testinfra.StartRedisCluster(t).Client(t)
	} else {
		redisSrv = testinfra.StartRedis(t)
		rdb = redisSrv.Client(t)
	}
	kafka := testinfra.StartKafka(t)
	e := &env{
		t: t, rdb: rdb, redis: redisSrv, kafka: kafka, logs: &syncBuffer{},
		keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"},
		bus:  eventbus.Config{Brokers: []string{kafka.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."},
	}
	logger := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	api, err := apisvc.New(context.Background(), apisvc.Config{
		APIKeys: []apisvc.APIKey{
			{Name: writeKey, Key: writeSecret, Role: apisvc.RoleWrite},
			{Name: readKey, Key: readSecret, Role: apisvc.RoleRead},
		},
		Bus: e.bus, Redis: e.rdb, Keys: e.keys, Logger: logger,
		KeepAlive: o.keepAlive, MaxBodyBytes: o.maxBody, SSEBuffer: o.sseBuffer, LogPoll: 50 * time.Millisecond,
		RequestTimeout: o.timeout, MaxWaiters: o.maxWaiters, WaitRecheck: o.waitRecheck, WaitLinger: o.waitLinger, AuthOff: o.authOff, ShellKeys: o.shellKeys,
		RateLimit: o.limits.rate, RateBurst: o.limits.burst, MaxStreamsPerKey: o.limits.streamsPerKey, MaxWaitersPerKey: o.limits.waitersPerKey,
		ReadHeaderTimeout: o.timeouts.readHeader, ReadTimeout: o.timeouts.read, WriteTimeout: o.timeouts.write, MaxHeaderBytes: o.timeouts.maxHeaderBytes,
	})
	require.NoError(t, err)
	e.api = api
	if o.serve {
		e.url = e.serve()
	} else {
		srv := httptest.NewServer(api.Handler())
		t.Cleanup(func() {
			require.NoError(t, api.Close()) // ends open streams first
			srv.Close()
		})
		e.url = srv.URL
	}
	e.client = newClient(t, e.url)
	if o.engine {
		e.startEngine(logger)
	}
	return e
}

// serve serves e.api with Server.Serve on a loopback listener until the
// test ends, and returns its URL.
func (e *env) serve() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(e.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.api.Serve(ctx, ln) }()
	e.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(e.t, err)
		case <-time.After(30 * time.Second):
			e.t.Error("Serve did not return within 30s")
		}
		require.NoError(e.t, e.api.Close())
	})
	return "http://" + ln.Addr().String()
}

// startEngine runs one orchestrator and one worker until the test ends.
func (e *env) startEngine(logger *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	ocfg := orchsvc.Config{ID: "orch-0", Bus: e.bus, Redis: e.rdb, Keys: e.keys, Logger: logger}
	go func() { done <- orchsvc.Run(ctx, ocfg) }()
	wcfg := workersvc.Config{ID: "worker-0", Bus: e.bus, Redis: e.rdb, Keys: e.keys, Concurrency: 4, Logger: logger}
	go func() { done <- workersvc.Run(ctx, wcfg) }()
	e.t.Cleanup(func() {
		cancel()
		for range 2 {
			select {
			case err := <-done:
				require.NoError(e.t, err)
			case <-time.After(30 * time.Second):
				e.t.Error("a service did not stop within 30s")
				return
			}
		}
	})
}

// response is a buffered HTTP response.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// json decodes the body into v.
func (r response) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "body: %s", r.Body)
}

// problem decodes a problem+json body and checks its basic shape.
func (r response) problem(t *testing.T) apisvc.Problem {
	t.Helper()
	require.Equal(t, apisvc.ProblemContentType, r.Header.Get("Content-Type"), "status %d body %s", r.Status, r.Body)
	var p apisvc.Problem
	r.json(t, &p)
	require.Equal(t, r.Status, p.Status)
	require.NotEmpty(t, p.Detail)
	require.True(t, strings.HasPrefix(p.Type, "urn:braid:problem:"), p.Type)
	return p
}

// req describes one request.
type req struct {
	method, path string
	body         any // string, []byte or a value to marshal; nil for none
	key          string
	header       map[string]string
	// malformed requests are not held to the OpenAPI document (their
	// responses still are).
	malformed bool
}

// do sends r with the write key unless r.key is set ("-" for none).
func (e *env) do(r req) response {
	e.t.Helper()
	return e.client.do(e.t, r, !r.malformed)
}

// must sends r and requires status want.
func (e *env) must(r req, want int) response {
	e.t.Helper()
	resp := e.do(r)
	require.Equal(e.t, want, resp.Status, "%s %s: %s", r.method, r.path, resp.Body)
	return resp
}

// register POSTs a definition and returns its name and version.
func (e *env) register(def string) (string, int) {
	e.t.Helper()
	var ref struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
	}
	e.must(req{method: "POST", path: "/workflows", body: def}, http.StatusCreated).json(e.t, &ref)
	return ref.Name, ref.Version
}

// startRun POSTs a run request and returns the run id.
func (e *env) startRun(name string, body any, header map[string]string) string {
	e.t.Helper()
	var acc struct {
		RunID string `json:"run_id"`
	}
	e.must(req{method: "POST", path: "/workflows/" + name + "/runs", body: body, header: header}, http.StatusAccepted).json(e.t, &acc)
	require.NotEmpty(e.t, acc.RunID)
	return acc.RunID
}

// runView is the subset of GET /runs/{id} tests read.
type runView struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Seq    uint64 `json:"seq"`
	Nodes  []struct {
		ID              string `json:"id"`
		State           string `json:"state"`
		Attempt         int    `json:"attempt"`
		Worker          string `json:"worker"`
		Error           string `json:"error"`
		WaitingReason   string `json:"waiting_reason"`
		ApprovalMessage string `json:"approval_message"`
	} `json:"nodes"`
}

// waitStatus polls GET /runs/{id} until the run reaches status.
func (e *env) waitStatus(id, status string, within time.Duration) runView {
	e.t.Helper()
	var v runView
	require.Eventually(e.t, func() bool {
		v = runView{}
		e.client.quiet(e.t, req{method: "GET", path: "/runs/" + id}).json(e.t, &v)
		return v.Status == status
	}, within, 25*time.Millisecond, "run %s did not reach %s (last %+v)", id, status, v)
	return v
}

// bodyReader turns a req body into bytes.
func bodyBytes(t *testing.T, body any) []byte {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return []byte(b)
	case []byte:
		return b
	}
	out, err := json.Marshal(body)
	require.NoError(t, err)
	return out
}

// readAll drains r.
func readAll(t *testing.T, r io.Reader) []byte {
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

func itoa(n int) string { return strconv.Itoa(n) }

// newRecorder returns an httptest recorder.
func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

// newTextLogger logs text to w.
func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

package worker_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/pkg/worker"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// Test time bounds.
const (
	within   = 20 * time.Second      // for anything to happen
	tick     = 10 * time.Millisecond // require.Eventually poll
	stopWait = 40 * time.Second      // for Run to return after cancel
	beat     = 50 * time.Millisecond // HeartbeatInterval in tests
)

// bundle is one running worker with its own Redis, broker, namespace and topics.
type bundle struct {
	t       *testing.T
	rdb     *redis.Client
	keys    statestore.Keys
	bus     eventbus.Config
	prod    *eventbus.Producer
	w       *worker.Worker
	results *collector // task.complete
	dlq     *collector // task.dispatch.dlq
	cancel  context.CancelFunc
	done    chan error
}

// setup starts a worker running handlers; tune adjusts its Config first.
func setup(t *testing.T, handlers map[string]worker.Handler, tune func(*worker.Config)) *bundle {
	t.Helper()
	b := setupIdle(t, handlers, tune)
	b.start()
	return b
}

// setupIdle is setup without starting the worker: dispatches published
// before start wait in the topic and are fetched together.
func setupIdle(t *testing.T, handlers map[string]worker.Handler, tune func(*worker.Config)) *bundle {
	t.Helper()
	srv := testinfra.StartRedis(t)
	kafka := testinfra.StartKafka(t)
	b := &bundle{
		t: t, rdb: srv.Client(t),
		keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"},
		bus:  eventbus.Config{Brokers: []string{kafka.Addr}, ClientID: "worker-test", TopicPrefix: testinfra.UniqueName(t, "t") + "."},
	}
	ctx := context.Background()
	require.NoError(t, eventbus.EnsureTopics(ctx, b.bus, eventsv1.TopicTaskDispatch, eventsv1.TopicTaskComplete))
	prod, err := eventbus.NewProducer(b.bus)
	require.NoError(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	b.prod = prod
	b.results = collect(t, b.bus, eventsv1.TopicTaskComplete)
	b.dlq = collect(t, b.bus, eventsv1.DLQ(eventsv1.TopicTaskDispatch))
	cfg := worker.Config{
		ID: testinfra.UniqueName(t, "w"), Bus: b.bus, Redis: b.rdb, Keys: b.keys, Handlers: handlers,
		Group: testinfra.UniqueName(t, "g"), HeartbeatInterval: beat, LogFlushInterval: beat, DrainTimeout: 2 * time.Second,
		Logger: testLogger(t),
	}
	if tune != nil {
		tune(&cfg)
	}
	b.w, err = worker.New(cfg)
	require.NoError(t, err)
	return b
}

// peer starts a second worker on b's broker, Redis, namespace and topics,
// running handlers (its own ID; tune adjusts its Config first), stopped at
// the end of the test.
func (b *bundle) peer(handlers map[string]worker.Handler, tune func(*worker.Config)) *worker.Worker {
	b.t.Helper()
	cfg := worker.Config{
		ID: testinfra.UniqueName(b.t, "peer"), Bus: b.bus, Redis: b.rdb, Keys: b.keys, Handlers: handlers,
		Group: testinfra.UniqueName(b.t, "g"), HeartbeatInterval: beat, LogFlushInterval: beat, DrainTimeout: 2 * time.Second,
		Logger: testLogger(b.t),
	}
	if tune != nil {
		tune(&cfg)
	}
	w, err := worker.New(cfg)
	require.NoError(b.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(b.t, err)
		case <-time.After(stopWait):
			b.t.Errorf("peer worker Run did not return within %s of cancel", stopWait)
		}
	})
	return w
}

// start runs the worker until stop or the end of the test.
func (b *bundle) start() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b.cancel, b.done = cancel, done
	go func() { done <- b.w.Run(ctx) }()
	b.t.Cleanup(func() {
		if b.done != nil {
			b.stop()
		}
	})
}

// stop cancels Run and requires it to return nil within stopWait.
func (b *bundle) stop() {
	b.t.Helper()
	b.cancel()
	select {
	case err := <-b.done:
		require.NoError(b.t, err)
		b.done = nil
	case <-time.After(stopWait):
		b.t.Fatalf("worker Run did not return within %s of cancel", stopWait)
	}
}

// putNode writes the record the claim script checks: the node's for
// instance 0, else a fan-out node's and its instance's.
func (b *bundle) putNode(run, node string, inst int, record string) {
	b.t.Helper()
	ctx := context.Background()
	if inst == 0 {
		require.NoError(b.t, b.rdb.HSet(ctx, b.keys.Nodes(run), node, record).Err())
		return
	}
	require.NoError(b.t, b.rdb.HSet(ctx, b.keys.Nodes(run), node, `{"s":"running","fo":true}`).Err())
	require.NoError(b.t, b.rdb.HSet(ctx, b.keys.Instances(run, node), statestore.InstanceField(inst), record).Err())
}

// dispatch publishes d to task.dispatch, keyed by its run id.
func (b *bundle) dispatch(d *eventsv1.TaskDispatch) {
	b.t.Helper()
	m, err := eventbus.NewMessage(eventsv1.TopicTaskDispatch, d.GetRunId(), d)
	require.NoError(b.t, err)
	require.NoError(b.t, b.prod.Publish(context.Background(), m))
}

// queued writes a queued node record for attempt 1 and returns its dispatch.
func (b *bundle) queued(run, node, handler string, config string) *eventsv1.TaskDispatch {
	b.putNode(run, node, 0, `{"s":"queued","a":1}`)
	return &eventsv1.TaskDispatch{
		RunId: run, Workflow: "wf", Version: 1, NodeId: node, Count: 1, Attempt: 1, Handler: handler,
		Config: []byte(config), IdempotencyKey: run + "/" + node + "/0/1", DispatchedAtMs: time.Now().UnixMilli(),
	}
}

// result waits for the result of (run, node) with status st.
func (b *bundle) result(run, node string, st eventsv1.TaskStatus) *eventsv1.TaskResult {
	b.t.Helper()
	var got *eventsv1.TaskResult
	require.Eventually(b.t, func() bool {
		for _, r := range b.results.taskResults(b.t) {
			if r.GetRunId() == run && r.GetNodeId() == node && r.GetStatus() == st {
				got = r
				return true
			}
		}
		return false
	}, within, tick, "no %s result for run=%s node=%s", st, run, node)
	return got
}

// resultsOf returns every result seen so far for (run, node), in order.
func (b *bundle) resultsOf(run, node string) []*eventsv1.TaskResult {
	var out []*eventsv1.TaskResult
	for _, r := range b.results.taskResults(b.t) {
		if r.GetRunId() == run && r.GetNodeId() == node {
			out = append(out, r)
		}
	}
	return out
}

// collector records every message of one topic, read by its own consumer group.
type collector struct {
	mu   sync.Mutex
	msgs []eventbus.Message
}

func collect(t *testing.T, bus eventbus.Config, topic string) *collector {
	t.Helper()
	cons, err := eventbus.NewConsumer(t.Context(), bus, testinfra.UniqueName(t, "collect"), topic)
	require.NoError(t, err)
	c := &collector{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			msgs, err := cons.Fetch(ctx, 100)
			if err != nil {
				return
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, msgs...)
			c.mu.Unlock()
			_ = cons.Commit(ctx, msgs...)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = cons.Close()
	})
	return c
}

func (c *collector) all() []eventbus.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]eventbus.Message(nil), c.msgs...)
}

func (c *collector) taskResults(t *testing.T) []*eventsv1.TaskResult {
	var out []*eventsv1.TaskResult
	for _, m := range c.all() {
		r := &eventsv1.TaskResult{}
		require.NoError(t, eventbus.Decode(m, r))
		out = append(out, r)
	}
	return out
}

// testLogger logs to stderr when BRAID_TEST_LOG is set, else nowhere.
func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("BRAID_TEST_LOG") == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", t.Name())
}

// clone copies a dispatch so that tests can vary it.
func clone(d *eventsv1.TaskDispatch) *eventsv1.TaskDispatch {
	return proto.Clone(d).(*eventsv1.TaskDispatch)
}

// logLines reads the stored log of attempt of (run, node, instance 0).
func (b *bundle) logLines(run, node string, attempt int) []records.LogLine {
	b.t.Helper()
	raw, err := b.rdb.LRange(context.Background(), b.keys.Logs(run, node, 0, attempt), 0, -1).Result()
	require.NoError(b.t, err)
	out := make([]records.LogLine, len(raw))
	for i, r := range raw {
		require.NoError(b.t, json.Unmarshal([]byte(r), &out[i]))
	}
	return out
}

// eventbusConfig is a valid bus config pointing nowhere, for tests that do not run.
func eventbusConfig() eventbus.Config {
	return eventbus.Config{Brokers: []string{"127.0.0.1:1"}}
}

// publishRaw publishes value to task.dispatch as is, without headers.
func (b *bundle) publishRaw(key string, value []byte) {
	b.t.Helper()
	m := eventbus.Message{Topic: eventsv1.TopicTaskDispatch, Key: []byte(key), Value: value}
	require.NoError(b.t, b.prod.Publish(context.Background(), m))
}

// dlqReasons returns the dlq-reason header of every dead-lettered dispatch, in order.
func (b *bundle) dlqReasons() []string {
	var out []string
	for _, m := range b.dlq.all() {
		out = append(out, m.Headers.Get(eventsv1.HeaderDLQReason))
	}
	return out
}

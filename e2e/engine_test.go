package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/orchsvc"
	"github.com/braidhq/braid/services/worker/workersvc"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// engine is a running Braid engine: orchestrators and workers in this
// process, real redis-server and kfake over TCP.
type engine struct {
	t     *testing.T
	rdb   *redis.Client
	keys  statestore.Keys
	bus   eventbus.Config
	prod  *eventbus.Producer
	runID atomic.Int64
}

type engineOpts struct {
	orchestrators int
	workers       int // built-in workers; default 1
	noWorkers     bool
	concurrency   int
	// reconcileEvery overrides the orchestrators' reconcile interval.
	reconcileEvery time.Duration
}

func startEngine(t *testing.T, o engineOpts) *engine {
	t.Helper()
	redisSrv := testinfra.StartRedis(t)
	kafka := testinfra.StartKafka(t)
	e := &engine{
		t: t, rdb: redisSrv.Client(t),
		keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"},
		bus:  eventbus.Config{Brokers: []string{kafka.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."},
	}
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, eventbus.EnsureTopics(ctx, e.bus, eventsv1.Topics...))
	prod, err := eventbus.NewProducer(e.bus)
	require.NoError(t, err)
	e.prod = prod
	workers := max(o.workers, 1)
	if o.noWorkers {
		workers = 0
	}
	done := make(chan error, max(o.orchestrators, 1)+workers)
	for i := 0; i < max(o.orchestrators, 1); i++ {
		cfg := orchsvc.Config{ID: "orch-" + strconv.Itoa(i), Bus: e.bus, Redis: e.rdb, Keys: e.keys, Logger: testLogger(t),
			ReconcileEvery: o.reconcileEvery}
		go func() { done <- orchsvc.Run(ctx, cfg) }()
	}
	for i := 0; i < workers; i++ {
		cfg := workersvc.Config{ID: "worker-" + strconv.Itoa(i), Bus: e.bus, Redis: e.rdb, Keys: e.keys, Concurrency: max(o.concurrency, 4),
			Logger: testLogger(t)}
		go func() { done <- workersvc.Run(ctx, cfg) }()
	}
	t.Cleanup(func() {
		cancel()
		for i := 0; i < max(o.orchestrators, 1)+workers; i++ {
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Error("a service did not stop within 30s")
				return
			}
		}
		_ = prod.Close()
	})
	return e
}

// register stores a workflow definition (seed formats accepted) and returns its name and version.
func (e *engine) register(def []byte) (string, int) {
	e.t.Helper()
	d, err := dag.Parse(def)
	require.NoError(e.t, err)
	norm, err := json.Marshal(d)
	require.NoError(e.t, err)
	v, err := e.keys.PutWorkflow(context.Background(), e.rdb, d.Name, norm, time.Now())
	require.NoError(e.t, err)
	return d.Name, v
}

// start asks for a run the way the api does: one RunStartRequested.
func (e *engine) start(name string, version int, input string) string {
	e.t.Helper()
	id := e.t.Name() + "-" + strconv.FormatInt(e.runID.Add(1), 10)
	id = sanitize(id)
	m, err := eventbus.NewMessage(eventsv1.TopicWorkflowStart, id, &eventsv1.RunStartRequested{
		RunId: id, Workflow: name, Version: int32(version), Input: []byte(input), RequestedAtMs: time.Now().UnixMilli(),
	})
	require.NoError(e.t, err)
	require.NoError(e.t, e.prod.Publish(context.Background(), m))
	return id
}

// wait blocks until run id is terminal and returns it.
func (e *engine) wait(id string, within time.Duration) statestore.StoredRun {
	e.t.Helper()
	var st statestore.StoredRun
	var lastErr error
	err := poll(within, func() (bool, error) {
		got, err := e.keys.LoadRun(context.Background(), e.rdb, id)
		if err != nil {
			lastErr = err // Redis slow under load: poll again
			return false, nil
		}
		st = got
		return records.RunStatus(st.Fields[records.FieldStatus]).Terminal(), nil
	})
	if err != nil {
		// The state read last, not the one before the wait began.
		e.t.Fatalf("run %s not terminal within %s: %v (last read: %v; last read error: %v; nodes: %v)", id, within, err, st.Fields, lastErr, st.Nodes)
	}
	return st
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '-'
		}
	}
	return string(b)
}

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../examples/" + name)
	require.NoError(t, err)
	return b
}

func nodeRecord(t *testing.T, st statestore.StoredRun, id string) records.NodeRecord {
	t.Helper()
	r, err := records.DecodeNodeRecord([]byte(st.Nodes[id]))
	require.NoError(t, err, "node %s record %q", id, st.Nodes[id])
	return r
}

package orchsvc

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// startEnv is a Service on real Redis and a real Kafka-protocol broker,
// driven batch by batch (tryBatch) without its event loop.
type startEnv struct {
	ctx   context.Context
	s     *Service
	trips *atomic.Int64 // Redis round trips (commands and pipelines) so far
}

// testConfig is the Config of a test's orchestrator "orch-a" on rdb, keys
// and kafka, with a topic prefix and group of the test's own.
func testConfig(t *testing.T, rdb redis.UniversalClient, keys statestore.Keys, kafka *testinfra.Kafka) Config {
	return Config{ID: "orch-a", Redis: rdb, Keys: keys, Logger: slog.New(slog.DiscardHandler),
		LockWait: 20 * time.Second, Group: testinfra.UniqueName(t, "g"),
		Bus: eventbus.Config{Brokers: []string{kafka.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."}}
}

// workflowEnv starts a Redis and a broker for one test, stores def as
// version 1 of workflow wf, and returns the orchestrator's config for them.
func workflowEnv(t *testing.T, wf, def string) (*redis.Client, statestore.Keys, Config) {
	t.Helper()
	rdb := testinfra.StartRedis(t).Client(t)
	kafka := testinfra.StartKafka(t)
	keys := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}
	_, err := keys.PutWorkflow(context.Background(), rdb, wf, []byte(def), time.Now())
	require.NoError(t, err)
	return rdb, keys, testConfig(t, rdb, keys, kafka)
}

func newStartEnv(t *testing.T, workflow string) *startEnv {
	t.Helper()
	ctx := context.Background()
	rdb, _, cfg := workflowEnv(t, "wf", workflow)
	s, err := New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.close(ctx) })
	trips := testinfra.CountTrips(rdb)
	return &startEnv{ctx: ctx, s: s, trips: trips}
}

// start requests run as the api does (pending record, then the start
// message) and hands the message to one batch.
func (e *startEnv) start(t *testing.T, run string) {
	t.Helper()
	p := statestore.PendingRun{ID: run, Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
	_, err := e.s.keys.CreatePendingRun(e.ctx, e.s.rdb, p)
	require.NoError(t, err)
	e.batch(t, run)
}

// batch hands run's start message (again) to one batch.
func (e *startEnv) batch(t *testing.T, run string) {
	t.Helper()
	p := statestore.PendingRun{ID: run, Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
	m, err := eventbus.NewMessage(eventsv1.TopicWorkflowStart, run, p.StartRequest())
	require.NoError(t, err)
	require.NoError(t, e.s.tryBatch(e.ctx, []eventbus.Message{m}))
}

// node reads the record of node a of run.
func (e *startEnv) node(t *testing.T, run string) records.NodeRecord {
	t.Helper()
	raw, err := e.s.rdb.HGet(e.ctx, e.s.keys.Nodes(run), "a").Bytes()
	require.NoError(t, err)
	rec, err := records.DecodeNodeRecord(raw)
	require.NoError(t, err)
	return rec
}

const oneNode = `{"name":"wf","nodes":[{"id":"a","handler":"noop"}]}`

func TestOptimisticStartLocksAndCreatesInOneRoundTrip(t *testing.T) {
	t.Parallel()
	e := newStartEnv(t, oneNode)
	e.start(t, "warm") // the plan cache and the connection pool are warm from here on
	before := e.trips.Load()
	p := statestore.PendingRun{ID: "r1", Workflow: "wf", Version: 1, Input: []byte(`{}`), Created: time.Now()}
	_, err := e.s.keys.CreatePendingRun(e.ctx, e.s.rdb, p)
	require.NoError(t, err)
	pending := e.trips.Load() - before

	e.batch(t, "r1")
	require.EqualValues(t, 1, e.trips.Load()-before-pending, "lock, fence, create and indexes: one pipeline")
	require.Equal(t, records.NodeQueued, e.node(t, "r1").State)
	require.Equal(t, "running", e.s.rdb.HGet(e.ctx, e.s.keys.Run("r1"), records.FieldStatus).Val())
	require.Equal(t, "1", e.s.rdb.Get(e.ctx, e.s.keys.Fence("r1")).Val(), "the fence is set as on the normal path")
	lock := e.s.rdb.Get(e.ctx, e.s.keys.Lock("r1")).Val()
	require.True(t, strings.HasSuffix(lock, "orch-a"), "lock value %q", lock)
	require.Equal(t, lock, e.s.leases.value("r1"), "the lock is a lease like any other")
	require.EqualValues(t, 1, e.s.owned["r1"].fence)
	require.NotNil(t, e.s.owned["r1"].run, "the created run is cached")
	require.Zero(t, e.s.StaleWrites.Load())
}

func TestOptimisticStartWaitsForALockHeldElsewhere(t *testing.T) {
	t.Parallel()
	e := newStartEnv(t, oneNode)
	require.NoError(t, e.s.rdb.Set(e.ctx, e.s.keys.Lock("r1"), "tokenorch-b", 300*time.Millisecond).Err())
	e.start(t, "r1") // falls back to acquireAll, which waits until the lock lapses
	require.Equal(t, records.NodeQueued, e.node(t, "r1").State)
	require.Equal(t, "1", e.s.rdb.Get(e.ctx, e.s.keys.Fence("r1")).Val(), "the fence moved once: when the lock was had")
	require.True(t, strings.HasSuffix(e.s.rdb.Get(e.ctx, e.s.keys.Lock("r1")).Val(), "orch-a"))
	require.Zero(t, e.s.StaleWrites.Load(), "a fallback is not a stale write")
}

func TestOptimisticStartOfAStartedRunChangesNothing(t *testing.T) {
	t.Parallel()
	e := newStartEnv(t, oneNode)
	e.start(t, "r1")
	first := e.node(t, "r1")
	require.Equal(t, records.NodeQueued, first.State)
	// The run moves on, then its start is delivered again to a process
	// that does not hold it (a restart, or another orchestrator).
	done := first
	done.State = records.NodeSucceeded
	require.NoError(t, e.s.rdb.HSet(e.ctx, e.s.keys.Nodes("r1"), "a", done.Encode()).Err())
	require.NoError(t, e.s.rdb.HSet(e.ctx, e.s.keys.Run("r1"), records.FieldStatus, "succeeded").Err())
	e.s.disownAll(e.ctx)

	e.batch(t, "r1")
	require.Equal(t, done, e.node(t, "r1"), "the node record is left alone")
	require.Equal(t, "succeeded", e.s.rdb.HGet(e.ctx, e.s.keys.Run("r1"), records.FieldStatus).Val())
	require.Equal(t, "3", e.s.rdb.Get(e.ctx, e.s.keys.Fence("r1")).Val(),
		"fenced twice: by the optimistic start that found the run, then by the normal path that loaded it")
	hist := strings.Join(e.s.rdb.LRange(e.ctx, e.s.keys.History("r1"), 0, -1).Val(), "\n")
	require.Contains(t, hist, "duplicate", "the repeated start is recorded as a duplicate")
}

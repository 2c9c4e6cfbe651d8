package orchsvc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/metrics"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestOpsServeMetricsAndHealth(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	reg := metrics.New()
	s := &Service{cfg: Config{Metrics: reg}, log: slog.New(slog.DiscardHandler), rdb: testinfra.StartRedis(t).Client(t)}
	m, err := newOrchMetrics(reg.Registerer)
	require.NoError(t, err)
	m.svc.Store(s)
	s.StaleWrites.Add(3)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := s.serveOps(ctx, addr)
	require.NoError(t, err)
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(b), "braid_orchestrator_stale_writes_total 3")
	_, err = s.serveOps(ctx, addr)
	require.Error(t, err, "a taken address is an error")
	for _, path := range []string{"/healthz", "/readyz"} {
		res, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
	}
	cancel() // stopping: not ready
	res, err := http.Get("http://" + addr + "/readyz")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	srv.Stop() // gone once Stop returns
	_, err = http.Get("http://" + addr + "/readyz")
	require.Error(t, err)
}

// TestLeaderAndWorkerGauges: the leader gauge follows each duty's lease,
// and only the maintenance leader exports the live-worker count.
func TestLeaderAndWorkerGauges(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := newOrchMetrics(reg)
	require.NoError(t, err)
	require.True(t, m.leading(dutyMaintenance, true))
	require.False(t, m.leading(dutyScheduler, false))
	m.liveWorkers(3)
	require.Equal(t, 1.0, testutil.ToFloat64(m.leader[dutyMaintenance]))
	require.Equal(t, 0.0, testutil.ToFloat64(m.leader[dutyScheduler]))
	require.Equal(t, 1, testutil.CollectAndCount(m.workers))
	require.Equal(t, 3.0, testutil.ToFloat64(m.workers))
	require.False(t, m.leading(dutyMaintenance, false))
	require.Equal(t, 0, testutil.CollectAndCount(m.workers), "a former leader exports no worker count")

	now := time.Now()
	m.decided(now, now, false, false) // not due: nothing
	m.decided(now, now, true, false)  // skipped: overlap
	m.decided(now, now.Add(time.Hour), true, true)
	require.Equal(t, 1.0, testutil.ToFloat64(m.overlap))
	require.Equal(t, 1.0, testutil.ToFloat64(m.late))
}

// TestRunCountsSumTheShards: braid_runs adds up every shard of each index
// (a sharded keyspace, as on Redis Cluster).
func TestRunCountsSumTheShards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testinfra.StartRedis(t).Client(t)
	keys := statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":", Shards: 4}
	m, err := newOrchMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	s := &Service{rdb: rdb, keys: keys, metrics: m}
	shards := map[int]bool{}
	for i := range 40 {
		run := fmt.Sprintf("run-%d", i)
		shards[keys.ShardOf(run)] = true
		rdb.ZAdd(ctx, keys.AllRunsOf(run), redis.Z{Member: run})
		if i%2 == 0 {
			rdb.ZAdd(ctx, keys.ActiveRunsOf(run), redis.Z{Member: run})
		}
		if i%4 == 0 {
			rdb.ZAdd(ctx, keys.BusyRunsOf(run), redis.Z{Member: run})
		}
	}
	require.Greater(t, len(shards), 1, "the runs fell in one shard")
	require.NoError(t, s.countRuns(ctx))
	for set, want := range map[string]float64{"stored": 40, "active": 20, "busy": 10} {
		require.Equal(t, want, testutil.ToFloat64(m.indexed.WithLabelValues(set)), "braid_runs{set=%q}", set)
	}
}

package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/metrics/catalog"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestRedisHookTimesCommandsAndScripts: single commands count by name, a
// pipeline once as "pipeline", and a store script by its name, whether
// alone or in a pipeline; keys never become labels.
func TestRedisHookTimesCommandsAndScripts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testinfra.StartRedis(t).Client(t)
	reg := prometheus.NewRegistry()
	require.NoError(t, InstrumentRedis(rdb, reg))
	require.NoError(t, rdb.Set(ctx, "k-0195d2c4-5f5e-7c1a-9e8b-3f2d1c0b9a87", "v", 0).Err())
	pipe := rdb.Pipeline()
	pipe.Get(ctx, "a")
	pipe.Get(ctx, "b")
	_, _ = pipe.Exec(ctx)
	keys := statestore.Keys{Namespace: "hook:"}
	_, err := keys.DueSchedules(ctx, rdb, time.Now(), 10) // a plain read
	require.NoError(t, err)
	require.NoError(t, statestore.LoadScripts(ctx, rdb))
	require.NoError(t, keys.ReleaseLocks(ctx, rdb, []statestore.HeldLock{{Run: "r", Value: "v"}})) // a script in a pipeline
	_, err = statestore.DropLockOf(ctx, rdb, keys.Lock("r"), "me")                                 // a script alone
	require.NoError(t, err)

	cmds, err := reg.Gather()
	require.NoError(t, err)
	require.NoError(t, Lint(cmds))
	got := map[string]map[string]uint64{}
	for _, mf := range cmds {
		got[mf.GetName()] = map[string]uint64{}
		for _, m := range mf.GetMetric() {
			got[mf.GetName()][m.GetLabel()[0].GetValue()] = m.GetHistogram().GetSampleCount()
		}
	}
	cmd := got[catalog.RedisCommandDuration.Name]
	require.Equal(t, uint64(1), cmd["set"])
	require.GreaterOrEqual(t, cmd["pipeline"], uint64(2), "a pipeline is one round trip")
	require.NotContains(t, cmd, "get", "commands in a pipeline are not timed one by one")
	require.Equal(t, uint64(1), got[catalog.RedisScriptDuration.Name]["release"], "the release script by name: %v", got)
	require.Positive(t, got[catalog.RedisScriptDuration.Name]["drop_holder"], "EVALSHA, then EVAL after NOSCRIPT: %v", got)
}

// TestBusObserver: lag is kept per topic and partition (last value wins)
// and dead letters are counted by source topic; two observers registered
// on one registry (two workers in `braid dev`) share their collectors.
func TestBusObserver(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	o, err := NewBusObserver(reg)
	require.NoError(t, err)
	o2, err := NewBusObserver(reg)
	require.NoError(t, err, "registering twice reuses the collectors")
	o.Lag("task.dispatch", 0, 7)
	o2.Lag("task.dispatch", 0, 2)
	o.Lag("task.dispatch", 1, 5)
	o.DeadLettered("task.complete", 1)
	o2.DeadLettered("task.complete", 2)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP braid_consumer_lag `+catalog.ConsumerLag.Help+`
# TYPE braid_consumer_lag gauge
braid_consumer_lag{partition="0",topic="task.dispatch"} 2
braid_consumer_lag{partition="1",topic="task.dispatch"} 5
# HELP braid_dlq_records_total `+catalog.DLQRecords.Help+`
# TYPE braid_dlq_records_total counter
braid_dlq_records_total{topic="task.complete"} 3
`)))
}

// TestBusObserverOnABroker: a consumer reports the lag of what it fetched,
// and a producer counts the dead letters it published.
func TestBusObserverOnABroker(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	k := testinfra.StartKafka(t)
	reg := prometheus.NewRegistry()
	obs, err := NewBusObserver(reg)
	require.NoError(t, err)
	bus := eventbus.Config{Brokers: []string{k.Addr}, TopicPrefix: "obs.", Partitions: 1, Observer: obs}
	require.NoError(t, eventbus.EnsureTopics(ctx, bus, eventsv1.TopicTaskComplete))
	prod, err := eventbus.NewProducer(bus)
	require.NoError(t, err)
	defer prod.Close()
	var msgs []eventbus.Message
	for range 5 {
		m, err := eventbus.NewMessage(eventsv1.TopicTaskComplete, "r", &eventsv1.TaskResult{RunId: "r"})
		require.NoError(t, err)
		msgs = append(msgs, m)
	}
	require.NoError(t, prod.Publish(ctx, msgs...))
	cons, err := eventbus.NewConsumer(ctx, bus, "obs-group", eventsv1.TopicTaskComplete)
	require.NoError(t, err)
	defer cons.Close()
	got, err := cons.Fetch(ctx, 2)
	require.NoError(t, err)
	require.NoError(t, prod.DeadLetter(ctx, got[0], "test"))
	require.Equal(t, float64(4-got[len(got)-1].Offset), value(t, reg, catalog.ConsumerLag.Name, "partition", "0"))
	require.Equal(t, 1.0, value(t, reg, catalog.DLQRecords.Name, "topic", eventsv1.TopicTaskComplete))
}

// value is the value of the gauge or counter series of family name whose
// label is v.
func value(t *testing.T, reg prometheus.Gatherer, name, label, v string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if mf.GetName() == name && l.GetName() == label && l.GetValue() == v {
					return m.GetGauge().GetValue() + m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", name, label, v)
	return 0
}

// TestLintCatchesUnboundedLabels: a run id label, an id-like value, a
// family missing from the catalog and too many values all fail Lint.
func TestLintCatchesUnboundedLabels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		build   func(reg *prometheus.Registry)
		wantErr string
	}{
		{"catalogued families pass", func(reg *prometheus.Registry) {
			c, _ := NewCounterVec(reg, catalog.RunsEnded)
			c.WithLabelValues("etl-daily", "succeeded").Inc()
		}, ""},
		{"a run_id label", func(reg *prometheus.Registry) {
			c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: catalog.RunsStarted.Name, Help: "x"}, []string{"workflow", "run_id"})
			reg.MustRegister(c)
			c.WithLabelValues("w", "r1").Inc()
		}, `label "run_id" is not in catalog.AllowedLabels`},
		{"a run id as a value", func(reg *prometheus.Registry) {
			c, _ := NewCounterVec(reg, catalog.RunsStarted)
			c.WithLabelValues("0195d2c4-5f5e-7c1a-9e8b-3f2d1c0b9a87").Inc()
		}, "looks like an id"},
		{"a family outside the catalog", func(reg *prometheus.Registry) {
			reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "braid_surprise_total", Help: "x"}))
		}, "not in pkg/metrics/catalog"},
		{"too many values", func(reg *prometheus.Registry) {
			c, _ := NewCounterVec(reg, catalog.RunsStarted)
			for i := range MaxValues + 1 {
				c.WithLabelValues("wf-" + string(rune('a'+i%26)) + string(rune('a'+i/26))).Inc()
			}
		}, "values, over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			tc.build(reg)
			mfs, err := reg.Gather()
			require.NoError(t, err)
			err = Lint(mfs)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// TestCatalogLabelsAllowed: every catalogued label is in the allowlist.
func TestCatalogLabelsAllowed(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, f := range catalog.Families {
		require.False(t, seen[f.Name], "%s listed twice", f.Name)
		seen[f.Name] = true
		for _, l := range f.Labels {
			require.Contains(t, catalog.AllowedLabels, l, f.Name)
		}
		require.NotEmpty(t, f.Services, f.Name)
	}
}

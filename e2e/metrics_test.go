package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/metrics"
	"github.com/braidhq/braid/pkg/metrics/catalog"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// scrape reads url's Prometheus text exposition.
func scrape(t testing.TB, url string) map[string]*dto.MetricFamily {
	t.Helper()
	hc := &http.Client{Timeout: httpTimeout}
	resp, err := hc.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err, url)
	return mfs
}

// sample sums the series of family name (a histogram's sample count) whose
// labels include want; ok is false when no series matches.
func sample(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (v float64, ok bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
series:
	for _, m := range mf.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, w := range want {
			if got[k] != w {
				continue series
			}
		}
		ok = true
		v += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
	}
	return v, ok
}

// lintAll runs metrics.Lint over scraped families.
func lintAll(t testing.TB, mfs map[string]*dto.MetricFamily) {
	t.Helper()
	list := make([]*dto.MetricFamily, 0, len(mfs))
	for _, mf := range mfs {
		list = append(list, mf)
	}
	require.NoError(t, metrics.Lint(list))
}

// expectation is one series that must exist on a service after the run
// and, when moves is set, have grown since before it.
type expectation struct {
	family catalog.Family
	labels map[string]string
	moves  bool
}

// TestMetricsOnEveryService scrapes the api's, the orchestrator's and the
// worker's /metrics around a run of seed 000, a schedule fire and a poison
// record: every catalogued family of each service is served, the ones the
// issue lists move, no family is outside the catalog, and label
// cardinality passes metrics.Lint.
func TestMetricsOnEveryService(t *testing.T) {
	t.Parallel()
	orchAddr, workerAddr := freeAddr(t), freeAddr(t)
	s, stop := StartStack(t, stackOpts{workers: 1,
		orchEnv:   func(int) []string { return []string{"BRAID_ORCHESTRATOR_METRICS_ADDR=" + orchAddr} },
		workerEnv: func(int) []string { return []string{"BRAID_WORKER_HTTP_ADDR=" + workerAddr} }})
	t.Cleanup(stop)
	s.dumpOnFailure(t)
	waitOpsReady(t, orchAddr, workerAddr)
	urls := map[string]string{catalog.API: s.URL + "/metrics",
		catalog.Orchestrator: "http://" + orchAddr + "/metrics", catalog.Worker: "http://" + workerAddr + "/metrics"}
	before := map[string]map[string]*dto.MetricFamily{}
	for svc, u := range urls {
		before[svc] = scrape(t, u)
	}

	c := s.client(t)
	name, _ := c.register(readExample(t, "seed-000-example-workflow.json"))
	run := c.waitDone(c.start(name, `{}`), runTimeout)
	require.Equal(t, "succeeded", run.Status, run.Error)
	var sched struct {
		ID string `json:"id"`
	}
	c.call(http.MethodPost, "/schedules", []byte(`{"workflow":"`+name+`","cron":"@every 1s","overlap":"allow"}`), http.StatusCreated, &sched)
	poison(t, s)
	// The api reads workflow.events only while someone watches a run: keep
	// a stream open, so the scheduled runs' events pass its feed (and its
	// consumer lag is reported).
	watch := watchEvents(t, s.URL+"/runs/"+run.ID+"/events", s.Key)
	defer watch()

	want := map[string][]expectation{
		catalog.API: {
			{catalog.HTTPRequests, map[string]string{"route": "/workflows/:name/runs", "method": "POST"}, true},
			{catalog.HTTPRequestDuration, nil, true}, {catalog.RunsCreated, nil, true},
			{catalog.SSEClients, nil, false}, {catalog.APIWaiting, nil, false},
			{catalog.ConsumerLag, map[string]string{"topic": eventsv1.TopicWorkflowEvents}, false},
			{catalog.RedisCommandDuration, nil, true}, {catalog.RedisScriptDuration, map[string]string{"script": "create_pending"}, true},
		},
		catalog.Orchestrator: {
			{catalog.RunsStarted, map[string]string{"workflow": name}, true},
			{catalog.RunsEnded, map[string]string{"workflow": name, "outcome": "succeeded"}, true},
			{catalog.StaleWrites, nil, false}, {catalog.WorkersLost, nil, false}, {catalog.AttemptsLost, nil, false},
			{catalog.LockTakeovers, nil, false},
			{catalog.Leader, map[string]string{"duty": "scheduler"}, false}, {catalog.Leader, map[string]string{"duty": "maintenance"}, false},
			{catalog.SchedulerFires, nil, true}, {catalog.LiveWorkers, nil, false},
			{catalog.IndexedRuns, map[string]string{"set": "stored"}, true}, {catalog.IndexedRuns, map[string]string{"set": "busy"}, false},
			{catalog.ConsumerLag, map[string]string{"topic": eventsv1.TopicTaskComplete}, false},
			{catalog.DLQRecords, map[string]string{"topic": eventsv1.TopicWorkflowStart}, true},
			{catalog.RedisCommandDuration, map[string]string{"command": "pipeline"}, true},
			{catalog.RedisScriptDuration, map[string]string{"script": "apply"}, true},
		},
		catalog.Worker: {
			{catalog.NodeAttempts, map[string]string{"outcome": "succeeded"}, true},
			{catalog.TaskQueueWait, nil, true}, {catalog.TaskDuration, nil, true},
			{catalog.ConsumerLag, map[string]string{"topic": eventsv1.TopicTaskDispatch}, false},
			{catalog.RedisCommandDuration, nil, true}, {catalog.RedisScriptDuration, map[string]string{"script": "claims"}, true},
		},
	}
	after := map[string]map[string]*dto.MetricFamily{}
	// The lease gauges follow the maintenance leader's checks (every
	// second once it holds the lease), so they are waited for like the rest.
	unmet := func() []string {
		out := missing(before, after, want)
		if v, _ := sample(after[catalog.Orchestrator], catalog.Leader.Name, map[string]string{"duty": "scheduler"}); v != 1 {
			out = append(out, fmt.Sprintf("orchestrator: %s{duty=scheduler} = %v, want 1 (the one orchestrator leads the scheduler)", catalog.Leader.Name, v))
		}
		if v, _ := sample(after[catalog.Orchestrator], catalog.LiveWorkers.Name, nil); v != 1 {
			out = append(out, fmt.Sprintf("orchestrator: %s = %v, want 1 (one live worker)", catalog.LiveWorkers.Name, v))
		}
		return out
	}
	err := poll(30*time.Second, func() (bool, error) {
		for svc, u := range urls {
			after[svc] = scrape(t, u)
		}
		return len(unmet()) == 0, nil
	})
	require.NoError(t, err, "%s", strings.Join(unmet(), "\n")) // unmet as of the last scrape
	for svc, mfs := range after {
		lintAll(t, mfs)
		for _, f := range catalog.Families {
			if f.In(svc) && len(f.Labels) == 0 {
				require.Contains(t, mfs, f.Name, "%s serves every label-less family of its own", svc)
			}
		}
		for n := range mfs {
			if f, ok := catalog.Lookup(n); ok {
				require.True(t, f.In(svc), "%s serves %s, which the catalog gives to %v", svc, n, f.Services)
			}
		}
	}
}

// missing lists the expectations after does not meet yet.
func missing(before, after map[string]map[string]*dto.MetricFamily, want map[string][]expectation) []string {
	var out []string
	for svc, exps := range want {
		for _, e := range exps {
			now, ok := sample(after[svc], e.family.Name, e.labels)
			was, _ := sample(before[svc], e.family.Name, e.labels)
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s: no %s%v", svc, e.family.Name, e.labels))
			case e.moves && now <= was:
				out = append(out, fmt.Sprintf("%s: %s%v did not move (%v)", svc, e.family.Name, e.labels, now))
			}
		}
	}
	return out
}

// poison publishes an undecodable record on the stack's workflow.start:
// the orchestrator dead-letters it.
func poison(t *testing.T, s *Stack) {
	t.Helper()
	prod, err := eventbus.NewProducer(eventbus.Config{Brokers: []string{s.Kafka}, TopicPrefix: s.TopicPrefix})
	require.NoError(t, err)
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, prod.Publish(ctx, eventbus.Message{Topic: eventsv1.TopicWorkflowStart, Key: []byte("poison"), Value: []byte("\xff not protobuf")}))
}

// TestDevMetrics: braid dev serves all three services' metrics from its
// api's /metrics, told apart by a service label, within the lint's bounds.
func TestDevMetrics(t *testing.T) {
	t.Parallel()
	dir, dataDir, addrs := t.TempDir(), t.TempDir()+"/.braid", freeDevAddrs(t)
	d := startDev(t, dir, dataDir, addrs)
	c := d.stack.client(t)
	name, _ := c.register(readExample(t, "seed-000-example-workflow.json"))
	run := c.waitDone(c.start(name, `{}`), runTimeout)
	require.Equal(t, "succeeded", run.Status, run.Error)
	want := []struct { // each present and, but for the lag, positive
		f      *catalog.Family
		labels map[string]string
	}{
		{&catalog.HTTPRequests, map[string]string{"service": "api"}},
		{&catalog.RunsEnded, map[string]string{"service": "orchestrator", "workflow": name, "outcome": "succeeded"}},
		{&catalog.NodeAttempts, map[string]string{"service": "worker", "outcome": "succeeded"}},
		{&catalog.RedisCommandDuration, map[string]string{"service": "worker"}},
		{&catalog.ConsumerLag, map[string]string{"service": "orchestrator"}},
	}
	var mfs map[string]*dto.MetricFamily
	var lacks []string
	err := poll(30*time.Second, func() (bool, error) {
		mfs, lacks = scrape(t, d.stack.URL+"/metrics"), nil
		for _, w := range want {
			if v, ok := sample(mfs, w.f.Name, w.labels); !ok || (v == 0 && w.f != &catalog.ConsumerLag) {
				lacks = append(lacks, fmt.Sprintf("%s%v", w.f.Name, w.labels))
			}
		}
		return len(lacks) == 0, nil
	})
	require.NoError(t, err, "braid dev's /metrics lacks %v", lacks) // as of the last scrape
	lintAll(t, mfs)
	require.Contains(t, mfs, "go_goroutines", "the runtime collectors once, without a service label")
	// braid dev runs on half the CPUs unless GOMAXPROCS says otherwise
	// (this test's runtime saw the same CPUs and environment), and up to
	// all of them while its goroutines queue for a P: idle, it is back at
	// half within about a second.
	wantProcs := max(1, runtime.GOMAXPROCS(0)/2)
	if env := os.Getenv("GOMAXPROCS"); env != "" {
		wantProcs = runtime.GOMAXPROCS(0)
	}
	// It starts there (the line is logged before the controller runs, so a
	// start on all CPUs cannot hide behind the controller's first move down).
	require.Contains(t, d.log(), fmt.Sprintf(`msg="braid dev: Go runtime" gomaxprocs=%d `, wantProcs), "braid dev's GOMAXPROCS at start")
	var procs float64
	err = poll(15*time.Second, func() (bool, error) {
		v, ok := sample(scrape(t, d.stack.URL+"/metrics"), "go_sched_gomaxprocs_threads", nil)
		if !ok {
			return false, errors.New("braid dev's /metrics lacks go_sched_gomaxprocs_threads")
		}
		procs = v
		return v == float64(wantProcs), nil
	})
	require.NoError(t, err, "braid dev's GOMAXPROCS, idle: %v, want %d", procs, wantProcs)
	// and collects at GOGC 400 unless GOGC says otherwise.
	if os.Getenv("GOGC") == "" {
		gogc, ok := sample(mfs, "go_gc_gogc_percent", nil)
		require.True(t, ok, "braid dev's /metrics lacks go_gc_gogc_percent")
		require.Equal(t, 400.0, gogc, "braid dev's GC percent")
	}
}

// watchEvents holds an event stream of url open, reading and discarding it,
// until the returned func is called (or the test ends). The stream must be
// answered 200.
func watchEvents(t *testing.T, url, key string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp := openEvents(t, ctx, url, key)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			_ = resp.Body.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

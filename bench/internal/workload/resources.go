package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/testkit/procstack"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// idleLockRelease is when the orchestrator has released an idle run's
// lock at the latest: orchsvc.Config.IdleRelease (3 s) plus a turn of its
// lease loop (min(LockTTL/3, IdleRelease/2) = 1.33 s), by default.
const idleLockRelease = 4333 * time.Millisecond

// resourceFigures are the resources line's costs: each one is reported
// per task (the diamond phase) and per run (the 1-node phase).
var resourceFigures = []struct {
	name  string
	value func(u usage) float64
}{
	{"orchestrator_cpu_us", func(u usage) float64 { return cpuUs(u, "orchestrator") }},
	{"worker_cpu_us", func(u usage) float64 { return cpuUs(u, "workers") }},
	{"api_cpu_us", func(u usage) float64 { return cpuUs(u, "api") }},
	{"redis_cpu_us", func(u usage) float64 { return cpuUs(u, "redis") }},
	{"redis_commands", func(u usage) float64 { return float64(u.redis.commands) }},
	{"redis_bytes", func(u usage) float64 { return float64(u.redis.clientBytes) }},
	{"redis_repl_bytes", func(u usage) float64 { return float64(u.redis.replBytes) }},
	{"kafka_records", func(u usage) float64 { return float64(u.kafkaRecords) }},
	{"kafka_bytes", func(u usage) float64 { return float64(u.kafkaBytes) }},
}

// cpuUs is group's CPU time in µs (NaN when its processes were not found).
func cpuUs(u usage, group string) float64 {
	d, ok := u.cpu[group]
	if !ok {
		return nanF()
	}
	return float64(d / time.Microsecond)
}

// Resources counts what runs cost in CPU, Redis and Kafka: per
// repetition, an idle window, then ResourceRuns runs of a 1-node workflow
// started at once (per run), then ResourceRuns runs of the 10-node diamond
// started at once (per task). The bench learns that runs ended from
// workflow.events, so it sends Redis and the api nothing while a window
// is open but the POSTs that start the runs.
func Resources(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.ResourceRuns
	l := Line{Workload: "resources", N: n, Runs: e.Reps, Target: "reported (#18): CPU, Redis and Kafka per task and per run, for the capacity model",
		Method: resourcesMethod(e.Sizes)}
	l.keepSamples()
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	r, err := s.newResourceRig(ctx)
	if err != nil {
		return l, err
	}
	defer r.close()
	samples := map[string][]float64{}
	for rep := range e.Reps {
		if err := r.repetition(ctx, n, samples); err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		e.Log.Info(l.Workload, "rep", rep+1, "orchestrator_cpu_us_per_task", samples["orchestrator_cpu_us_per_task"][rep],
			"redis_commands_per_task", samples["redis_commands_per_task"][rep], "kafka_records_per_task", samples["kafka_records_per_task"][rep])
	}
	for _, name := range resourceNames() {
		l.set(name, samples[name])
	}
	return l, nil
}

// resourcesMethod is the resources line's method.
func resourcesMethod(sz Sizes) string {
	locks := "past the orchestrator's release of idle run locks (3–4.3 s after a run's last step), which is counted"
	if sz.ResourceSettle <= idleLockRelease {
		locks = "before the orchestrator's release of idle run locks (3–4.3 s after a run's last step), which is not counted"
	}
	return fmt.Sprintf("per repetition on one stack: an idle window of %s, then %d runs of a 1-node noop workflow started at once over HTTP (32 senders) and run to the end, "+
		"then %d runs of the 10-node diamond (root, 8 parallel, join) the same way; a window opens before the first POST and closes %s after the last run's end "+
		"was seen on workflow.events (read by the bench in a group of its own; the bench sends Redis and the api nothing else meanwhile), %s. "+
		"*_per_task: the diamond window's totals / (10 × runs); *_per_run: the 1-node window's totals / runs (a run of one task: start, dispatch, result, end); "+
		"both net of the background: each counter less the idle window's rate of it × the window's length. "+
		"*_cpu_us: utime+stime from /proc (10 ms ticks) of the orchestrator, the worker processes summed, the api, and every redis-server process (a cluster's replicas too); "+
		"redis_commands: total_commands_processed summed over the masters (INFO stats; the meter's own INFO, one per master at each end, included); "+
		"redis_bytes: client traffic in + out summed over the masters (total_net_input_bytes + total_net_output_bytes less their replication parts); "+
		"redis_repl_bytes: total_net_repl_output_bytes of the masters (0 without replicas); the cluster bus is not counted; "+
		"kafka_records: high-watermark deltas summed over every partition of the stack's topics; kafka_bytes: those records read back after the window, key + value + headers "+
		"(uncompressed, as produced; batch framing and replication not counted; kfake's CPU is not reported: it is not Kafka); "+
		"wall_ms, tasks_per_s: the diamond window from the first POST to the last end seen; "+
		"idle_cpu_us_per_s, idle_redis_commands_per_s: the idle window's CPU (the four groups summed) and commands per second of wall time — the background in every window; "+
		"samples: every repetition's value", sz.ResourceIdle, sz.ResourceRuns, sz.ResourceRuns, sz.ResourceSettle, locks)
}

// resourceNames are the line's figures in output order.
func resourceNames() []string {
	names := []string{"wall_ms", "tasks_per_s"}
	for _, f := range resourceFigures {
		names = append(names, f.name+"_per_task")
	}
	for _, f := range resourceFigures {
		names = append(names, f.name+"_per_run")
	}
	return append(names, "idle_cpu_us_per_s", "idle_redis_commands_per_s")
}

// resourceRig is what the resources workload measures a session with.
type resourceRig struct {
	s             *session
	tail          *endTail
	kafka         *kafkaCounter
	single, shape string // the 1-node and diamond workflows
}

// newResourceRig registers the workflows, starts the end tail and waits
// until it sees a run end.
func (s *session) newResourceRig(ctx context.Context) (*resourceRig, error) {
	single, err := s.api.Register(ctx, chainDef("res1", 1))
	if err != nil {
		return nil, err
	}
	shape, err := s.api.Register(ctx, fanOutDef("res10", diamondNodes))
	if err != nil {
		return nil, err
	}
	tail, err := startEndTail(ctx, s.bus, "braid-bench-ends")
	if err != nil {
		return nil, err
	}
	r := &resourceRig{s: s, tail: tail, kafka: newKafkaCounter(s.bus.Brokers, s.bus.TopicPrefix), single: single, shape: shape}
	// A run the tail saw end proves it live: later ends arrive in real time.
	if _, err := r.runAll(ctx, single, 1); err != nil {
		r.close()
		return nil, fmt.Errorf("end tail warm-up: %w", err)
	}
	// The first idle window starts once that run's lock is released.
	if err := clock.Sleep(ctx, s.env.Sizes.ResourceSettle); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *resourceRig) close() { r.tail.close() }

// repetition measures the idle window and both phases and appends every
// figure of resourceNames to samples.
func (r *resourceRig) repetition(ctx context.Context, n int, samples map[string][]float64) error {
	sz := r.s.env.Sizes
	idle, err := r.window(ctx, func() (time.Duration, error) { return sz.ResourceIdle, clock.Sleep(ctx, sz.ResourceIdle) }, false)
	if err != nil {
		return fmt.Errorf("idle window: %w", err)
	}
	perRun, err := r.window(ctx, func() (time.Duration, error) { return r.runAll(ctx, r.single, n) }, true)
	if err != nil {
		return fmt.Errorf("1-node runs: %w", err)
	}
	perTask, err := r.window(ctx, func() (time.Duration, error) { return r.runAll(ctx, r.shape, n) }, true)
	if err != nil {
		return fmt.Errorf("diamond runs: %w", err)
	}
	tasks := float64(n * diamondNodes)
	add := func(name string, x float64) { samples[name] = append(samples[name], x) }
	add("wall_ms", float64(perTask.work.Microseconds())/1000)
	add("tasks_per_s", tasks/perTask.work.Seconds())
	runNet, taskNet := perRun.lessIdle(idle.usage), perTask.lessIdle(idle.usage)
	for _, f := range resourceFigures {
		add(f.name+"_per_task", f.value(taskNet)/tasks)
		add(f.name+"_per_run", f.value(runNet)/float64(n))
	}
	secs := idle.window.Seconds()
	add("idle_cpu_us_per_s", (cpuUs(idle.usage, "orchestrator")+cpuUs(idle.usage, "workers")+cpuUs(idle.usage, "api")+cpuUs(idle.usage, "redis"))/secs)
	add("idle_redis_commands_per_s", float64(idle.redis.commands)/secs)
	return nil
}

// measured is a window's usage and how long its work took.
type measured struct {
	usage
	work time.Duration
}

// window opens a meter, does work (which returns how long it took), waits
// Sizes.ResourceSettle when settle is set, and closes the meter.
func (r *resourceRig) window(ctx context.Context, work func() (time.Duration, error), settle bool) (measured, error) {
	m, err := r.s.startMeter(ctx, r.kafka)
	if err != nil {
		return measured{}, err
	}
	took, err := work()
	if err == nil && settle {
		err = clock.Sleep(ctx, r.s.env.Sizes.ResourceSettle)
	}
	if err != nil {
		return measured{}, err
	}
	u, err := m.stop(ctx)
	return measured{usage: u, work: took}, err
}

// runAll starts n runs of wf at once, waits until the tail saw every one
// end, requires they all succeeded, and returns the time from before the
// first start to the last end seen.
func (r *resourceRig) runAll(ctx context.Context, wf string, n int) (time.Duration, error) {
	t0 := time.Now()
	ids, err := r.s.startMany(ctx, wf, n)
	if err != nil {
		return 0, err
	}
	var ends []runEnd
	err = procstack.Poll(bigRunTimeout, pollEvery, func() (bool, error) {
		var all bool
		ends, all = r.tail.ends(ids)
		return all, r.s.alive()
	})
	if err != nil {
		return 0, fmt.Errorf("wait for %d runs to end on workflow.events: %w", n, err)
	}
	last := t0
	for i, e := range ends {
		if e.status != eventsv1.RunStatus_RUN_STATUS_SUCCEEDED {
			return 0, fmt.Errorf("run %s ended %s", ids[i], e.status)
		}
		last = later(last, e.at)
	}
	return last.Sub(t0), nil
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

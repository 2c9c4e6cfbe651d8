package e2e

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// Worker fault settings: claims beat every 500 ms and lapse after 2 s; the
// reconciler looks every second, so a dead worker's attempt is retried
// within a few seconds.
var workerFaultEnv = []string{"BRAID_WORKER_HEARTBEAT_INTERVAL=500ms", "BRAID_RECONCILE_EVERY=1s"}

const (
	workerConcurrency = 4
	heartbeatTimeout  = 2 * time.Second
)

// sleepyNodes returns n independent simulate nodes of duration d that
// retry (up to 25 attempts) when their worker is lost: under repeated
// worker kills one task can be hit several times in a row.
func sleepyNodes(n int, d time.Duration) []faultNode {
	nodes := make([]faultNode, n)
	for i := range nodes {
		nodes[i] = faultNode{ID: fmt.Sprintf("t%03d", i), Handler: "simulate",
			Config:           map[string]any{"duration": d.String(), "output": map[string]any{"i": i}},
			HeartbeatTimeout: heartbeatTimeout.String(),
			Retry:            map[string]any{"max_attempts": 25, "initial_interval": "100ms"}}
	}
	return nodes
}

// TestFaultWorkerPausedPastHeartbeat SIGSTOPs the worker running an attempt
// for three heartbeat timeouts, and until the attempt runs on the other
// worker: the attempt is lost, not failed, and runs again there as the
// same attempt; if the paused one also gets to publish its result of that
// attempt, whichever comes second is recorded in the run's history as a
// duplicate and changes nothing.
func TestFaultWorkerPausedPastHeartbeat(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 2, env: workerFaultEnv})
	c := f.client(t)
	wf := f.register(c, "workerstop", sleepyNodes(1, 2*time.Second))
	id := c.start(wf, `{}`)
	r := c.waitRun(id, runTimeout, "t000 running", func(r apiRun) bool {
		return len(r.Nodes) == 1 && r.Nodes[0].State == "running" && r.Nodes[0].Worker != ""
	})
	first := r.Nodes[0].Worker
	i := slices.Index(f.Workers, first)
	require.GreaterOrEqual(t, i, 0, "unknown worker %s", first)
	f.pause(f.workerProcs[i])
	f.hold(3*heartbeatTimeout, f.workerProcs[i])
	// The retry is dispatched on a partition the paused worker may still
	// own until its group session expires: stay paused until the
	// other worker has it, so that it cannot land back on the paused one.
	c.waitRun(id, 30*time.Second, "t000 running again on the other worker", func(r apiRun) bool {
		n := r.Nodes[0]
		return n.Lost > 0 && n.State == "running" && n.Worker != first || n.State == "succeeded"
	})
	f.resume(f.workerProcs[i])
	rep := f.checkInvariants([]string{id}, 60*time.Second)
	rep.requireAllSucceeded(t)
	rec := rep.Nodes[id]["t000"]
	require.Equal(t, 1, rec.Attempt, "a lost attempt consumed a retry")
	require.Equal(t, records.OutcomeLost, rec.Past[0].Outcome)
	late := f.resultsFrom(id, first, 1)
	hist := strings.Join(rep.History[id], "\n")
	require.Contains(t, hist, "node t000 attempt 1 lost: worker "+first+" stopped responding")
	if late > 0 && f.resultsFrom(id, f.Workers[1-i], 1) > 0 { // both published attempt 1
		// The late result may be published after the retry's: the run is
		// then already terminal when the checker reads its history, and the
		// line comes when the orchestrator gets to the late record.
		require.NoError(t, poll(30*time.Second, func() (bool, error) {
			h, err := f.rdb.LRange(f.ctx(5*time.Second), f.keys.History(id), 0, -1).Result()
			return err == nil && strings.Contains(strings.Join(h, "\n"), "late or duplicate result for node t000 attempt 1"), nil
		}), "a late result the paused worker published is not in the run's history")
	}
	t.Logf("late results published by the paused worker: %d; history:\n%s", late, hist)
}

// resultsFrom counts the terminal results worker published on task.complete
// for attempt of run's nodes.
func (f *faultStack) resultsFrom(run, worker string, attempt int32) int {
	msgs, err := readTopic(f.ctx(checkTimeout), f.Kafka, f.TopicPrefix+eventsv1.TopicTaskComplete)
	require.NoError(f.t, err)
	n := 0
	for _, m := range msgs {
		var r eventsv1.TaskResult
		require.NoError(f.t, proto.Unmarshal(m.Value, &r))
		if r.RunId == run && r.WorkerId == worker && r.Attempt == attempt && r.Status != eventsv1.TaskStatus_TASK_STATUS_RUNNING {
			n++
		}
	}
	return n
}

// TestFaultWorkerSIGTERMDrains sends SIGTERM to the worker running a long
// task while shorter ones run too (the stack's drain timeout is 5 s): the
// worker lets tasks that end within the drain finish, gives the long one
// back, and exits cleanly; the long task runs again elsewhere under the
// same attempt (a graceful stop costs no attempt, and the node has only
// one), and the run succeeds.
func TestFaultWorkerSIGTERMDrains(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 2, env: workerFaultEnv})
	c := f.client(t)
	nodes := []faultNode{{ID: "long", Handler: "simulate", Config: map[string]any{"duration": "8s"}}}
	for i := range 6 {
		nodes = append(nodes, faultNode{ID: fmt.Sprintf("short%d", i), Handler: "simulate",
			Config: map[string]any{"duration": "2s", "output": map[string]any{"i": i}}})
	}
	wf := f.register(c, "drain", nodes)
	id := c.start(wf, `{}`)
	r := c.waitRun(id, runTimeout, "long running", func(r apiRun) bool {
		n := r.node(t, "long")
		return n.State == "running" && n.Worker != ""
	})
	first := r.node(t, "long").Worker
	i := slices.Index(f.Workers, first)
	require.GreaterOrEqual(t, i, 0, "unknown worker %s", first)
	w := f.workerProcs[i]
	t.Logf("fault: SIGTERM %s pid=%d", w.name, w.pid())
	require.NoError(t, w.signal(syscall.SIGTERM))
	require.NoError(t, w.wait(30*time.Second), "the worker did not exit cleanly within its drain bound")

	rep := f.checkInvariants([]string{id}, 60*time.Second)
	rep.requireAllSucceeded(t)
	long := rep.Nodes[id]["long"]
	require.Equal(t, 1, long.Attempt, "a hand-back costs no attempt")
	require.NotEqual(t, first, long.Worker, "the long task ran again elsewhere")
	handedBack := grep(rep.History[id], "handed back by worker")
	require.Len(t, handedBack, 1, "only the long task is handed back; tasks that end within the drain finish: %v", handedBack)
	require.Contains(t, handedBack[0], "node long attempt 1 handed back by worker "+first)
	for id, rec := range rep.Nodes[id] {
		require.Equal(t, 1, rec.Attempt, "node %s was retried", id)
	}
}

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lockTTL is the orchestrators' run lock TTL in the fence test.
const lockTTL = 6 * time.Second

// holdWriteEnv makes a failpoints orchestrator hold its first write of an
// existing run that dispatches tasks (services/orchestrator/internal/failpoint).
const holdWriteEnv = "BRAID_FAILPOINT_HOLD_WRITE=first"

// TestFaultFenceRejectsPausedOrchestrator SIGSTOPs an orchestrator while it
// holds a run's write in hand, for twice the lock TTL while a second
// orchestrator takes the run over, then SIGCONTs it: the write is refused
// by the run's fence and counted (braid_orchestrator_stale_writes_total),
// the paused orchestrator drops the run and keeps working (once the other
// one is stopped, a new wave of runs completes on it alone), and the
// checker finds no stale state applied.
//
// The paused orchestrator is the failpoints build with holdWriteEnv: right
// before the pipeline that persists its first write of an existing run
// that dispatches tasks, it logs "failpoint: holding a write" with the
// run's id and waits until it has been stopped and continued. The SIGSTOP therefore always lands with
// that write in hand, and the write that goes on after SIGCONT is the
// orchestrator's real one, under the fence it held before the pause.
func TestFaultFenceRejectsPausedOrchestrator(t *testing.T) {
	t.Parallel()
	metrics := []string{freeAddr(t), freeAddr(t)}
	f := startFaultStack(t, stackOpts{workers: 2, orchestrators: 2,
		env: []string{"BRAID_LOCK_TTL=" + lockTTL.String()},
		orchBin: func(i int) string {
			if i == 0 {
				return failpointOrchestrator(t)
			}
			return ""
		},
		orchEnv: func(i int) []string {
			env := []string{"BRAID_ORCHESTRATOR_METRICS_ADDR=" + metrics[i]}
			if i == 0 {
				env = append(env, holdWriteEnv)
			}
			return env
		}})
	c := f.client(t)
	wf := f.register(c, "fence", layered(50, 5, 20*time.Millisecond))
	held, other := f.orchs[0], f.orchs[1]
	// The held write is of a run whose events reach the held orchestrator
	// (its partitions): start waves of runs until one did.
	var ids []string
	run := ""
	for wave := 0; run == "" && wave < 8; wave++ {
		ids = append(ids, startRuns(c, wf, scale(4, 8))...)
		run = heldWrite(held, 20*time.Second)
	}
	require.NotEmpty(t, run, "%s never held a write for %d runs", held.name, len(ids))
	f.pause(held)
	fence := f.fence(run)
	f.hold(2*lockTTL, held)
	require.NoError(t, poll(30*time.Second, func() (bool, error) { return f.fence(run) > fence, nil }),
		"run %s: %s did not take the lock while %s was stopped", run, other.name, held.name)
	f.resume(held)
	require.NoError(t, poll(30*time.Second, func() (bool, error) { return refused(held, run), nil }),
		"run %s: the held write was not refused by the fence", run)
	stale := staleWrites(t, metrics[0])
	require.Positive(t, stale, "braid_orchestrator_stale_writes_total")
	t.Logf("run %s taken over (fence %d → %d); stale writes refused: %d", run, fence, f.fence(run), stale)

	t.Logf("fault: SIGTERM %s pid=%d", other.name, other.pid())
	require.NoError(t, other.stop(procStopTimeout), "%s did not stop cleanly", other.name)
	ids = append(ids, startRuns(c, wf, scale(4, 8))...)
	f.checkInvariants(ids, 90*time.Second).requireAllSucceeded(t)
}

// heldWrite waits up to within for p to log that its failpoint holds a
// write, and returns the run's id ("" when it did not).
func heldWrite(p *proc, within time.Duration) string {
	run := ""
	_ = poll(within, func() (bool, error) {
		run = logged(p, "failpoint: holding a write", "")
		return run != "", nil
	})
	return run
}

// refused reports whether p logged that the fence refused its write of run.
func refused(p *proc, run string) bool {
	return logged(p, "fence refused write; reloading run", run) != ""
}

// logged returns the run_id of the first JSON log line of p whose msg is
// msg (and whose run_id is run, unless run is ""), or "".
func logged(p *proc, msg, run string) string {
	sc := bufio.NewScanner(strings.NewReader(p.log()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(msg)) {
			continue
		}
		var rec struct {
			Msg   string `json:"msg"`
			RunID string `json:"run_id"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Msg == msg && rec.RunID != "" && (run == "" || rec.RunID == run) {
			return rec.RunID
		}
	}
	return ""
}

// fence reads a run's fencing counter.
func (f *faultStack) fence(run string) int64 {
	n, _ := f.rdb.Get(f.ctx(5*time.Second), f.keys.Fence(run)).Int64()
	return n
}

// staleWrites reads braid_orchestrator_stale_writes_total from an
// orchestrator's /metrics (-1 when unreadable).
func staleWrites(t *testing.T, addr string) int {
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Logf("metrics %s: %v", addr, err)
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "braid_orchestrator_stale_writes_total "); ok {
			n, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, "metric value %q", v)
			return int(n)
		}
	}
	return -1
}

// TestFailpointOnlyInTaggedBuild checks that the orchestrator every other
// test runs (built without the failpoints tag) carries no failpoint code,
// while the failpoints build does: the package path is in the symbol
// table of a binary that links any of its functions.
func TestFailpointOnlyInTaggedBuild(t *testing.T) {
	t.Parallel()
	const mark = "orchestrator/internal/failpoint."
	normal, err := os.ReadFile(bins(t).Orchestrator)
	require.NoError(t, err)
	require.False(t, bytes.Contains(normal, []byte(mark)), "the normal orchestrator build links the failpoint package")
	require.False(t, bytes.Contains(normal, []byte("BRAID_FAILPOINT_HOLD_WRITE")), "the normal orchestrator build reads the failpoint variable")
	tagged, err := os.ReadFile(failpointOrchestrator(t))
	require.NoError(t, err)
	require.True(t, bytes.Contains(tagged, []byte(mark)), "the failpoints build lacks the failpoint package")
}

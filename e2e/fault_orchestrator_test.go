package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chaos reports whether BRAID_CHAOS=1 asks for the full fault suite
// (`make chaos`); otherwise the fault tests run their short versions.
func chaos() bool { return os.Getenv("BRAID_CHAOS") == "1" }

// scale picks the short or the full count.
func scale[T any](short, full T) T {
	if chaos() {
		return full
	}
	return short
}

// faultRand is a seeded source whose seed is logged, so a failing fault
// schedule can be read back from the log.
func faultRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("fault schedule seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed>>1))
}

// between returns a random duration in [lo, hi).
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// TestFaultOrchestratorKill9 SIGKILLs the orchestrator at random moments
// while runs of a 50-node DAG are in flight (a wave of runs is started
// before each kill), restarting it each time: no accepted run is lost, no
// instance completes twice, and every run is terminal within 30 s of the
// last restart. The two workers run 8 tasks each at once, so a wave (10
// runs, 500 tasks of 50 ms) takes about 1.5 s of worker time: longer than
// the pause before the next kill (restarts are immediate), so every kill
// lands on runs in flight, while the backlog left after the last kill
// (about 10 s in the full run) stays well within the 30 s.
func TestFaultOrchestratorKill9(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 2, env: []string{"BRAID_WORKER_CONCURRENCY=8"}})
	c := f.client(t)
	wf := f.register(c, "orchkill", layered(50, 10, 50*time.Millisecond))
	runs, kills := scale(18, 200), scale(3, 20)
	rnd := faultRand(t)
	var ids []string
	orch := f.orchs[0]
	for k := range kills {
		ids = append(ids, startRuns(c, wf, runs/kills)...)
		f.waitJoined(orch)
		f.hold(between(rnd, 200*time.Millisecond, 1500*time.Millisecond))
		active := f.activeRuns()
		f.kill(orch)
		f.restart(orch)
		t.Logf("kill %d/%d with %d runs active", k+1, kills, active)
	}
	rep := f.checkInvariants(ids, 30*time.Second)
	rep.requireAllSucceeded(t)
	t.Logf("%d runs, %d attempts dispatched", len(ids), len(rep.Dispatches))
}

// TestFaultOrchestratorRestartResumes SIGKILLs the only orchestrator in
// the middle of a chain of short tasks and starts it again at once: the
// run resumes within resumeBound, and the test reports how long after the
// restart the next node succeeded. Under a stable id
// (BRAID_ORCHESTRATOR_ID) the restarted process evicts its killed
// predecessor's group membership and takes over the run locks and leader
// leases held under its name at once (about 0.1 s). Without one it is a
// stranger to its predecessor: it waits for the dead member's group
// session and the run lock's TTL (4 s by default).
func TestFaultOrchestratorRestartResumes(t *testing.T) {
	t.Parallel()
	for _, stable := range []bool{true, false} {
		t.Run(fmt.Sprintf("stable_id=%t", stable), func(t *testing.T) {
			t.Parallel()
			o := stackOpts{workers: 2}
			if !stable {
				o.orchEnv = func(int) []string { return []string{"BRAID_ORCHESTRATOR_ID="} }
			}
			restartResumes(t, startFaultStack(t, o))
		})
	}
}

// restartResumes kills and restarts f's orchestrator mid-chain and checks
// that progress resumes within resumeBound each time.
func restartResumes(t *testing.T, f *faultStack) {
	c := f.client(t)
	nodes := make([]faultNode, 40)
	for i := range nodes {
		nodes[i] = faultNode{ID: fmt.Sprintf("c%02d", i), Handler: "simulate", Config: map[string]any{"duration": "100ms"}}
		if i > 0 {
			nodes[i].DependsOn = []string{nodes[i-1].ID}
		}
	}
	wf := f.register(c, "orchrestart", nodes)
	var gaps []time.Duration
	for range scale(1, 5) {
		id := c.start(wf, `{}`)
		c.waitRun(id, runTimeout, "5 nodes done", func(r apiRun) bool { return succeededNodes(r) >= 5 })
		f.kill(f.orchs[0])
		before := succeededNodes(c.run(id))
		f.restart(f.orchs[0])
		restarted := time.Now()
		c.waitRun(id, 60*time.Second, "progress after the restart", func(r apiRun) bool { return succeededNodes(r) > before })
		gap := time.Since(restarted)
		require.Less(t, gap, resumeBound, "progress resumed only %s after the restart", gap)
		gaps = append(gaps, gap)
		t.Logf("progress resumed %s after the restart", gap.Round(10*time.Millisecond))
		f.checkInvariants([]string{id}, 60*time.Second).requireAllSucceeded(t)
	}
	t.Logf("progress resumed after restarts in %v", gaps)
}

// resumeBound is the bound on progress after an orchestrator's
// restart.
const resumeBound = 5 * time.Second

// succeededNodes counts r's succeeded nodes.
func succeededNodes(r apiRun) int {
	n := 0
	for _, node := range r.Nodes {
		if node.State == "succeeded" {
			n++
		}
	}
	return n
}

package e2e

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// chaos reports whether BRAID_CHAOS=1 asks for the full fault suite
// (`make chaos`); otherwise the fault tests run their short versions.
func chaos() bool { return os.Getenv("BRAID_CHAOS") == "1" }

// chaosOnly skips t unless BRAID_CHAOS=1, saying why it is not yet part of
// `make test`.
func chaosOnly(t *testing.T, why string) {
	if !chaos() {
		t.Skip("make chaos only: " + why)
	}
}

// scale picks the short or the full count.
func scale(short, full int) int {
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
// last restart.
func TestFaultOrchestratorKill9(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 2})
	c := f.client(t)
	wf := f.register(c, "orchkill", layered(50, 10, 50*time.Millisecond))
	runs, kills := scale(18, 200), scale(3, 20)
	rnd := faultRand(t)
	var ids []string
	orch := f.orchs[0]
	for k := range kills {
		ids = append(ids, startRuns(c, wf, runs/kills)...)
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

package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// leaderTTL is the orchestrators' default leader lease TTL (orchsvc.Config.LeaderTTL).
const leaderTTL = 3 * time.Second

// startOrchestrator starts one more orchestrator process of the stack.
func (s *Stack) startOrchestrator(t testing.TB, id string) *proc {
	t.Helper()
	p := startProc(t, s.Dir, id, s.bins.Orchestrator, append(append([]string{}, s.env...), "BRAID_ORCHESTRATOR_ID="+id))
	s.procs = append(s.procs, p)
	return p
}

// procNamed returns the stack's process called name.
func (s *Stack) procNamed(t testing.TB, name string) *proc {
	for _, p := range s.procs {
		if p.name == name {
			return p
		}
	}
	t.Fatalf("no process %s", name)
	return nil
}

// leadsScheduler reports whether p's log says it took the scheduler lease.
func leadsScheduler(p *proc) bool {
	for _, line := range strings.Split(p.log(), "\n") {
		if strings.Contains(line, "took leader lease") && strings.Contains(line, "leader:scheduler") {
			return true
		}
	}
	return false
}

// kill9 sends SIGKILL to p and waits for it to be gone.
func kill9(t testing.TB, p *proc) {
	t.Helper()
	require.False(t, p.exited(), "%s exited before the kill", p.name)
	p.kill()
}

// fireTimes lists the fire times of schedule id's runs of workflow name,
// parsed from the run ids (schedule id, '.', UTC fire time).
func (c *apiClient) fireTimes(name, id string) []time.Time {
	c.t.Helper()
	var list struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	c.call(http.MethodGet, "/runs?limit=500&workflow="+url.QueryEscape(name), nil, http.StatusOK, &list)
	out := make([]time.Time, 0, len(list.Items))
	seen := map[time.Time]bool{}
	for _, it := range list.Items {
		stamp, ok := strings.CutPrefix(it.ID, id+".")
		require.True(c.t, ok, "run %s is not of schedule %s", it.ID, id)
		at, err := time.Parse("20060102T150405Z", stamp)
		require.NoError(c.t, err)
		require.False(c.t, seen[at], "two runs for fire time %s", at)
		seen[at] = true
		out = append(out, at)
	}
	return out
}

func countIn(ts []time.Time, after, upTo time.Time) int {
	n := 0
	for _, t := range ts {
		if t.After(after) && !t.After(upTo) {
			n++
		}
	}
	return n
}

// TestStackScheduleLeaderKillAndOutage runs two orchestrator processes and
// a schedule firing every 2 s: kill -9 of the scheduler's leader hands the
// lease to the other within its TTL; with both killed for 10 s nothing
// fires, and a fresh orchestrator starts exactly one catch-up run.
func TestStackScheduleLeaderKillAndOutage(t *testing.T) {
	t.Parallel()
	s, stop := StartStack(t, stackOpts{workers: 1})
	defer stop()
	s.dumpOnFailure(t)
	c := s.client(t)
	orchs := []*proc{s.procNamed(t, "orchestrator"), s.startOrchestrator(t, "orch-b-"+randomHex(t, 3))}
	name, _ := c.register([]byte(`{"name":"heartbeat","nodes":[{"id":"beat","handler":"noop"}]}`))
	var sched struct {
		ID string `json:"id"`
	}
	c.call(http.MethodPost, "/schedules", []byte(`{"workflow":"`+name+`","cron":"@every 2s","overlap":"allow"}`), http.StatusCreated, &sched)
	require.NoError(t, poll(20*time.Second, func() (bool, error) { return len(c.fireTimes(name, sched.ID)) >= 2, nil }))

	var leader, standby *proc
	require.NoError(t, poll(10*time.Second, func() (bool, error) {
		for i, p := range orchs {
			if leadsScheduler(p) {
				leader, standby = p, orchs[1-i]
				return true, nil
			}
		}
		return false, nil
	}), "no orchestrator logged taking the scheduler lease")
	require.False(t, leadsScheduler(standby), "both orchestrators took the scheduler lease")

	kill9(t, leader)
	killedAt := time.Now()
	require.NoError(t, poll(leaderTTL+10*time.Second, func() (bool, error) { return leadsScheduler(standby), nil }))
	// Liveness bound from the lease's contract: the TTL, plus generous
	// slack for a loaded machine.
	require.Less(t, time.Since(killedAt), leaderTTL+5*time.Second, "handover took longer than the lease TTL allows")
	require.NoError(t, poll(20*time.Second, func() (bool, error) {
		return countIn(c.fireTimes(name, sched.ID), killedAt, time.Now().Add(time.Hour)) >= 1, nil
	}), "no fire after the handover")

	kill9(t, standby)
	outageFrom := time.Now()
	require.Never(t, func() bool {
		return countIn(c.fireTimes(name, sched.ID), outageFrom, outageFrom.Add(time.Hour)) > 0
	}, 10*time.Second, 250*time.Millisecond, "a run fired with no orchestrator running")

	restartedAt := time.Now()
	s.startOrchestrator(t, "orch-c-"+randomHex(t, 3))
	require.NoError(t, poll(30*time.Second, func() (bool, error) {
		return countIn(c.fireTimes(name, sched.ID), restartedAt, restartedAt.Add(time.Hour)) >= 1, nil
	}), "the schedule did not resume")
	// About five fire times passed with no orchestrator; at most the latest
	// of them runs (the newest missed fire may also fall after restartedAt,
	// while the new process started).
	fires := c.fireTimes(name, sched.ID)
	require.LessOrEqual(t, countIn(fires, outageFrom, restartedAt), 1,
		"only the latest fire missed during the outage may run (fires %v)", fires)
}

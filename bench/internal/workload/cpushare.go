package workload

import (
	"os"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// cpuShares samples the CPU time of every process of a session — the
// services, the broker process (in the single setup the infra process,
// kfake running inside it), the redis-server process(es) and the bench
// itself — so a load can say which one was busy.
type cpuShares struct {
	t0   time.Time
	pids map[string][]int
	at0  map[string]time.Duration
}

// cpuShareNames are the groups reported, as cpu_pct_<name> figures.
var cpuShareNames = []string{"orchestrator", "api", "workers", "kfake", "redis", "bench"}

// startCPUShares records the processes' CPU times now.
func (s *session) startCPUShares() *cpuShares {
	c := &cpuShares{t0: time.Now(), pids: map[string][]int{
		"orchestrator": {s.svc.Orchestrator.PID()}, "api": {s.svc.API.PID()},
		"kfake": s.env.Infra.KafkaPIDs(), "redis": s.env.Infra.RedisPIDs(), "bench": {os.Getpid()},
	}, at0: map[string]time.Duration{}}
	for _, w := range s.svc.Workers {
		c.pids["workers"] = append(c.pids["workers"], w.PID())
	}
	for name, pids := range c.pids {
		if len(pids) == 0 {
			delete(c.pids, name) // not found: reported as NaN
		}
	}
	for name := range c.pids {
		c.at0[name] = c.total(name)
	}
	return c
}

// total is the summed CPU time of a group's processes.
func (c *cpuShares) total(name string) time.Duration {
	var sum time.Duration
	for _, pid := range c.pids[name] {
		if d, err := procstack.PIDCPU(pid); err == nil {
			sum += d
		}
	}
	return sum
}

// used returns each group's CPU time since start (groups without a
// process found are left out).
func (c *cpuShares) used() map[string]time.Duration {
	out := map[string]time.Duration{}
	for name := range c.pids {
		out[name] = c.total(name) - c.at0[name]
	}
	return out
}

// percents returns each group's CPU use since start, in percent of one core.
func (c *cpuShares) percents() map[string]float64 {
	wall := time.Since(c.t0)
	out := map[string]float64{}
	for _, name := range cpuShareNames {
		if _, ok := c.pids[name]; !ok {
			out[name] = nanF()
			continue
		}
		out[name] = 100 * float64(c.total(name)-c.at0[name]) / float64(wall)
	}
	return out
}

package workload

import (
	"os"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// cpuShares samples the CPU time of every process of a session — the
// services, the infra process (kfake runs inside it), its redis-server
// child and the bench itself — so a load can say which one was busy.
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
		"kfake": {s.env.Infra.Proc().PID()}, "bench": {os.Getpid()},
	}, at0: map[string]time.Duration{}}
	for _, w := range s.svc.Workers {
		c.pids["workers"] = append(c.pids["workers"], w.PID())
	}
	if kids, err := s.env.Infra.Proc().Children(); err == nil {
		c.pids["redis"] = kids // braid dev --only infra has one child: redis-server
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

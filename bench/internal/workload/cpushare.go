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
	t0    time.Time
	names []string
	pids  map[string][]int
	at0   map[string]time.Duration
}

// cpuShareNames are the groups reported on separate processes, as
// cpu_pct_<name> figures; devShareNames those of the dev setup, where one
// braid_dev process runs kfake, the api, the orchestrator and the workers.
var (
	cpuShareNames = []string{"orchestrator", "api", "workers", "kfake", "redis", "bench"}
	devShareNames = []string{"braid_dev", "redis", "bench"}
)

// shareNames are the CPU groups of s.
func (s *session) shareNames() []string {
	if s.dev != nil {
		return devShareNames
	}
	return cpuShareNames
}

// startCPUShares records the processes' CPU times now.
func (s *session) startCPUShares() *cpuShares {
	c := &cpuShares{t0: time.Now(), names: s.shareNames(),
		pids: map[string][]int{"redis": s.redisPIDs(), "bench": {os.Getpid()}}, at0: map[string]time.Duration{}}
	if s.dev != nil {
		c.pids["braid_dev"] = []int{s.dev.Proc.PID()}
	} else {
		c.pids["orchestrator"], c.pids["api"] = []int{s.svc.Orchestrator.PID()}, []int{s.svc.API.PID()}
		c.pids["kfake"] = s.env.Infra.KafkaPIDs()
		for _, w := range s.svc.Workers {
			c.pids["workers"] = append(c.pids["workers"], w.PID())
		}
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
	return c.scaled(100 / float64(time.Since(c.t0)))
}

// perNode returns each group's CPU time since start in µs per node of a
// run of nodes (NaN for a group without a process found).
func (c *cpuShares) perNode(nodes int) map[string]float64 {
	return c.scaled(1 / float64(time.Microsecond) / float64(nodes))
}

// scaled returns each group's CPU time since start (ns) times k (NaN for
// a group without a process found).
func (c *cpuShares) scaled(k float64) map[string]float64 {
	out := map[string]float64{}
	for _, name := range c.names {
		if _, ok := c.pids[name]; !ok {
			out[name] = nanF()
			continue
		}
		out[name] = k * float64(c.total(name)-c.at0[name])
	}
	return out
}

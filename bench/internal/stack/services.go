package stack

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/testkit/procstack"
)

// Bounds on starting the services.
const (
	readyTimeout = 60 * time.Second      // /readyz and every worker listed
	pollEvery    = 20 * time.Millisecond // between readiness checks
	logTailBytes = 4 << 10               // of a process log, in an error
)

// Options configures StartServices.
type Options struct {
	// Workers is the number of worker processes; default 2.
	Workers int
	// WorkerConcurrency is BRAID_WORKER_CONCURRENCY of each worker; default 64.
	WorkerConcurrency int
	// Partitions is BRAID_KAFKA_PARTITIONS; default 6.
	Partitions int
	// OrchestratorPprof, when set, is the orchestrator's BRAID_PPROF_ADDR.
	OrchestratorPprof string
	// LogLevel, when set, is BRAID_LOG_LEVEL of every service; by default
	// it is not set, so the services log at their default level (info,
	// pkg/envconf), as they run in production.
	LogLevel string
	// Env is added to every service's environment (e.g. OTEL_* settings).
	Env []string
}

// Services are the api, an orchestrator and workers on one Infra, under a
// unique topic prefix and Redis namespace.
type Services struct {
	// URL is the api's base URL; Key a write API key.
	URL, Key string
	// Namespace is BRAID_REDIS_NAMESPACE; TopicPrefix BRAID_KAFKA_TOPIC_PREFIX.
	Namespace, TopicPrefix string
	// API, Orchestrator and Workers are the processes.
	API, Orchestrator *procstack.Proc
	Workers           []*procstack.Proc
	// WorkerIDs are the workers' BRAID_WORKER_ID values.
	WorkerIDs []string
}

// StartServices starts an orchestrator, the workers and the api on infra,
// logging under dir, and waits until ready(URL, Key, WorkerIDs) is true.
func StartServices(infra *Infra, bins procstack.Binaries, dir string, o Options, ready func(s *Services) bool) (*Services, error) {
	id, err := uniqueID()
	if err != nil {
		return nil, err
	}
	apiAddr, err := procstack.FreeAddr()
	if err != nil {
		return nil, err
	}
	s := &Services{URL: "http://" + apiAddr, Key: "bench" + id, Namespace: id + ":", TopicPrefix: id + "."}
	env := []string{
		"BRAID_KAFKA_BROKERS=" + infra.Brokers, "BRAID_REDIS_URL=" + infra.RedisURL,
		"BRAID_KAFKA_TOPIC_PREFIX=" + s.TopicPrefix, "BRAID_REDIS_NAMESPACE=" + s.Namespace,
		"BRAID_KAFKA_PARTITIONS=" + strconv.Itoa(cmp.Or(o.Partitions, 6)),
	}
	if o.LogLevel != "" {
		env = append(env, "BRAID_LOG_LEVEL="+o.LogLevel)
	}
	env = append(env, o.Env...)
	if err := s.start(dir, bins, env, o, apiAddr, id); err != nil {
		s.Stop()
		return nil, err
	}
	err = procstack.Poll(readyTimeout, pollEvery, func() (bool, error) {
		if err := s.Alive(); err != nil {
			return false, err
		}
		return ready(s), nil
	})
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("services not ready: %w", err)
	}
	return s, nil
}

// start launches the processes: orchestrator, workers, api.
func (s *Services) start(dir string, bins procstack.Binaries, env []string, o Options, apiAddr, id string) error {
	orchEnv := append(env[:len(env):len(env)], "BRAID_ORCHESTRATOR_ID="+id+"-orch")
	if o.OrchestratorPprof != "" {
		orchEnv = append(orchEnv, "BRAID_PPROF_ADDR="+o.OrchestratorPprof)
	}
	p, err := startProc(dir, id+"-orchestrator", bins.Orchestrator, orchEnv)
	if err != nil {
		return err
	}
	s.Orchestrator = p
	for i := range cmp.Or(o.Workers, 2) {
		wid := fmt.Sprintf("%s-worker-%d", id, i+1)
		p, err := startProc(dir, wid, bins.Worker, append(env[:len(env):len(env)], "BRAID_WORKER_ID="+wid,
			"BRAID_WORKER_CONCURRENCY="+strconv.Itoa(cmp.Or(o.WorkerConcurrency, 64)), "BRAID_WORKER_DRAIN_TIMEOUT=5s"))
		if err != nil {
			return err
		}
		s.Workers = append(s.Workers, p)
		s.WorkerIDs = append(s.WorkerIDs, wid)
	}
	p, err = startProc(dir, id+"-api", bins.API, append(env[:len(env):len(env)], "BRAID_API_ADDR="+apiAddr,
		"BRAID_API_KEYS=bench:"+s.Key+":write"))
	if err != nil {
		return err
	}
	s.API = p
	return nil
}

// procs lists the started processes in start order.
func (s *Services) procs() []*procstack.Proc {
	var out []*procstack.Proc
	if s.Orchestrator != nil {
		out = append(out, s.Orchestrator)
	}
	out = append(out, s.Workers...)
	if s.API != nil {
		out = append(out, s.API)
	}
	return out
}

// Stop stops the processes in reverse start order (api first) by PID and
// returns what went wrong, if anything. Safe to call twice.
func (s *Services) Stop() error {
	ps := s.procs()
	var errs []error
	for i := len(ps) - 1; i >= 0; i-- {
		if err := ps[i].Stop(procstack.StopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Alive reports an error naming the first service process that exited.
func (s *Services) Alive() error {
	for _, p := range s.procs() {
		if p.Exited() {
			return fmt.Errorf("%w\n%s", p.ErrExited(), p.Tail(logTailBytes))
		}
	}
	return nil
}

// startProc starts bin as process name in dir with env (BRAID_* variables).
func startProc(dir, name, bin string, env []string) (*procstack.Proc, error) {
	return procstack.Start(procstack.Spec{Name: name, Bin: bin, Dir: dir, Env: env})
}

// uniqueID is "b<pid><random hex>", safe in topic names and Redis keys.
func uniqueID() (string, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return "b" + strconv.Itoa(os.Getpid()) + hex.EncodeToString(b), nil
}

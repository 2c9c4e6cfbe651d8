package workload

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/braidhq/braid/bench/internal/api"
	"github.com/braidhq/braid/bench/internal/stack"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/procstack"
	"github.com/redis/go-redis/v9"
)

// Sizes are the workloads' sizes; Full and Smoke are the two presets.
type Sizes struct {
	FloorHops     int // sequential hops of the latency floor
	FloorMessages int // hops of the throughput floor
	// LineFloorHops and LineFloorMessages are the floor measured again
	// before each later workload (lineFloor).
	LineFloorHops, LineFloorMessages int
	HopChain                         int           // nodes of the per-hop chain
	SingleRuns                       int           // sequential 1-node runs per repetition
	FanOut                           int           // nodes of the small fan-out + join
	Chain                            int           // nodes of the chain measured by wall time
	BigFanOut                        int           // nodes of the large fan-out + join
	Diamonds                         int           // concurrent 10-node diamond runs
	Sustain                          time.Duration // how long the diamond load is held
	MemNodes                         int           // nodes of the fan-out whose Redis memory is counted
	InFlightRuns                     int           // BigFanOut runs started at once for the RSS figure
	CostNodes                        int           // nodes of the large DAG of the cost comparison
	CostForeachItems                 int           // foreach items of the large run of the foreach cost comparison
	ForeachItems                     int           // items of the foreach
	ResourceRuns                     int           // runs of each shape whose resource costs are counted
	WorkerProcesses                  int           // worker processes of each stack
	// ResourceIdle is the resources workload's idle window: the background
	// (timer and schedule polls, liveness, heartbeats, a reconcile pass
	// every 5 s) every window holds, taken out of the costs.
	ResourceIdle time.Duration
	// ResourceSettle is how long a resources window stays open after the
	// last run ended, so what the runs still cost is counted: the
	// orchestrator releases a finished run's lock once it has been idle
	// for 3 s (orchsvc.Config.IdleRelease), on its lease loop's next turn
	// (every 1.33 s), and the last tasks' commits trail their results.
	ResourceSettle time.Duration
}

// Full are the sizes of `make bench` (issue 6's table).
var Full = Sizes{
	FloorHops: 2000, FloorMessages: 50000, LineFloorHops: 500, LineFloorMessages: 10000, HopChain: 100, SingleRuns: 200, FanOut: 1000, Chain: 1000,
	BigFanOut: 10000, Diamonds: 1000, Sustain: 20 * time.Second, MemNodes: 1000, InFlightRuns: 10,
	CostNodes: 10000, CostForeachItems: 100000, ForeachItems: 100000, ResourceRuns: 1000, ResourceIdle: 5 * time.Second, ResourceSettle: 5 * time.Second, WorkerProcesses: 2,
}

// Smoke are tiny sizes for the test that keeps the bench from rotting.
var Smoke = Sizes{
	FloorHops: 50, FloorMessages: 500, LineFloorHops: 20, LineFloorMessages: 200, HopChain: 10, SingleRuns: 5, FanOut: 20, Chain: 20,
	BigFanOut: 50, Diamonds: 10, Sustain: 2 * time.Second, MemNodes: 20, InFlightRuns: 2,
	CostNodes: 50, CostForeachItems: 100, ForeachItems: 100, ResourceRuns: 10, ResourceIdle: 300 * time.Millisecond, ResourceSettle: 300 * time.Millisecond, WorkerProcesses: 1,
}

// Env is what every workload shares: the binaries, the infrastructure and
// the settings. Workloads start their own services on Infra.
type Env struct {
	Bins  procstack.Binaries
	Infra *stack.Infra
	// Setup, when set, is written into every line (`"setup"`): the
	// default single-node setup leaves it empty, so its lines read as
	// before the cluster setup existed.
	Setup string
	// SetupNote, with Setup, is appended to every line's method: what the
	// setup is and how the figures read on it.
	SetupNote string
	// Redis is a client of Infra's Redis (a cluster client on a cluster),
	// for read-only inspection.
	Redis redis.UniversalClient
	// Dir holds the processes' logs.
	Dir string
	// Reps is how many times each measurement is repeated (≥ 3).
	Reps  int
	Sizes Sizes
	// Log receives progress.
	Log *slog.Logger
	// Floor is the transport floor the running line's ratios divide by:
	// lineFloor's, measured right before it, or RefFloor when that failed.
	Floor FloorFigures
	// RefFloor is the transport_floor line's floor, measured first.
	RefFloor FloorFigures
	// Profile, when set, asks for an orchestrator CPU profile of the
	// repetition of the named workload, written to ProfilePath.
	Profile, ProfilePath string
	// dev makes sessions `braid dev` processes (see OnDev).
	dev bool
}

// FloorFigures are the medians of the transport floor.
type FloorFigures struct {
	// HopP50Ms and HopP99Ms are the latency of one sequential floor hop.
	HopP50Ms, HopP99Ms float64
	// HopsPerS is the floor's batched throughput in hops per second.
	HopsPerS float64
}

// runResult is a finished run as the api shows it.
type runResult = api.Run

// session is one workload's services and clients: separate processes on
// Infra (svc), or one `braid dev` process with its own broker and Redis
// (dev). Exactly one of svc and dev is set.
type session struct {
	env *Env
	svc *stack.Services
	dev *stack.Dev
	// main is the process whose memory and CPU a line reports as the
	// engine's: the orchestrator, or the whole braid dev process.
	main *procstack.Proc
	// rdb reads the session's Redis: Env.Redis, or the dev process's own.
	rdb  redis.UniversalClient
	api  *api.Client
	keys statestore.Keys
	bus  eventbus.Config
}

// warmTimeout bounds the first run of a session (the orchestrator's and
// workers' consumer-group joins happen during it).
const warmTimeout = 90 * time.Second

// startSession starts fresh services (fresh processes, so their memory
// figures belong to this workload alone) with pprof on the orchestrator
// when profile is set, and completes one warm-up run.
func (e *Env) startSession(ctx context.Context, name string, pprofAddr string) (*session, error) {
	return e.startSessionWith(ctx, name, stack.Options{Workers: e.Sizes.WorkerProcesses, OrchestratorPprof: pprofAddr})
}

// startSessionWith is startSession with the services' options given. On
// the dev setup (Env.OnDev) it starts a fresh `braid dev` instead, as a
// user runs it: of opts only OrchestratorPprof applies there, as the
// process's pprof address.
func (e *Env) startSessionWith(ctx context.Context, name string, opts stack.Options) (*session, error) {
	dir := filepath.Join(e.Dir, name)
	if e.dev {
		dir += "_dev"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var s *session
	var err error
	if e.dev {
		s, err = e.startDev(ctx, dir, opts.OrchestratorPprof)
	} else {
		s, err = e.startServices(ctx, dir, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := s.warmUp(ctx); err != nil {
		s.close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// startServices starts an orchestrator, workers and the api on e.Infra.
func (e *Env) startServices(ctx context.Context, dir string, opts stack.Options) (*session, error) {
	svc, err := stack.StartServices(e.Infra, e.Bins, dir, opts, func(s *stack.Services) bool {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return api.New(s.URL, s.Key, 1).Ready(rctx, s.WorkerIDs)
	})
	if err != nil {
		return nil, err
	}
	return &session{env: e, svc: svc, main: svc.Orchestrator, rdb: e.Redis, api: api.New(svc.URL, svc.Key, 256),
		keys: statestore.Keys{Namespace: svc.Namespace},
		bus:  eventbus.Config{Brokers: e.Infra.BrokerList(), TopicPrefix: svc.TopicPrefix, ClientID: "braid-bench"}}, nil
}

// startDev starts a fresh `braid dev` (serving pprof at pprofAddr when
// set) and a client of its Redis; its keys and topics carry no namespace
// or prefix, as for a user.
func (e *Env) startDev(ctx context.Context, dir, pprofAddr string) (*session, error) {
	d, err := stack.StartDev(e.Bins, dir, pprofAddr, func(d *stack.Dev) bool {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return api.New(d.URL, d.Key, 1).Ready(rctx, d.WorkerIDs)
	})
	if err != nil {
		return nil, err
	}
	rdb, err := statestore.NewClient(ctx, d.RedisURL, 10*time.Second)
	if err != nil {
		return nil, errors.Join(err, d.Stop())
	}
	return &session{env: e, dev: d, main: d.Proc, rdb: rdb, api: api.New(d.URL, d.Key, 256),
		bus: eventbus.Config{Brokers: []string{d.Kafka}, ClientID: "braid-bench"}}, nil
}

// warmUp registers and completes a 3-node chain.
func (s *session) warmUp(ctx context.Context) error {
	wf, err := s.api.Register(ctx, chainDef("warmup", 3))
	if err != nil {
		return err
	}
	_, err = s.runOnce(ctx, wf, warmTimeout)
	return err
}

// close stops the services (and closes the dev setup's Redis client).
func (s *session) close() {
	var err error
	if s.dev != nil {
		err = errors.Join(s.rdb.Close(), s.dev.Stop())
	} else {
		err = s.svc.Stop()
	}
	if err != nil {
		s.env.Log.Warn("stop services", "err", err)
	}
}

// alive reports an error naming a service process that exited.
func (s *session) alive() error {
	if s.dev != nil {
		return s.dev.Alive()
	}
	return s.svc.Alive()
}

// redisPIDs are the redis-server processes the session's state lives in.
func (s *session) redisPIDs() []int {
	if s.dev != nil {
		return s.dev.RedisPIDs()
	}
	return s.env.Infra.RedisPIDs()
}

// runOnce starts a run of wf and waits until it ends; a run that did not
// succeed is an error.
func (s *session) runOnce(ctx context.Context, wf string, within time.Duration) (api.Run, error) {
	id, err := s.api.Start(ctx, wf)
	if err != nil {
		return api.Run{}, err
	}
	return s.waitSucceeded(ctx, id, within)
}

// runWaited requests a run of wf with ?wait= (then GET /runs/{id}?wait=
// while it goes on, for up to within in all) and returns the ended run
// and its client wall: the bench clock from sending the POST to holding
// the answer with the ended run (its last byte read), in ms, and the ms the
// bench then took to decode that answer (encoding/json; about 30 ms for a
// 10,000-node run). A run that did not succeed, or did not end within, is
// an error.
func (s *session) runWaited(ctx context.Context, wf string, within time.Duration) (api.Run, clientTime, error) {
	t0 := time.Now()
	r, got, err := s.api.RunAndWait(ctx, wf, within)
	ct := clientTime{ms: float64(got.At.Sub(t0).Microseconds()) / 1000, decodeMs: float64(got.Decode.Microseconds()) / 1000}
	if err != nil {
		if aerr := s.alive(); aerr != nil {
			err = fmt.Errorf("%w (%v)", err, aerr)
		}
		return r, clientTime{}, err
	}
	if r.Status != "succeeded" {
		return r, clientTime{}, fmt.Errorf("run %s ended %s: %s", r.ID, r.Status, r.Error)
	}
	return r, ct, nil
}

// clientTime is a waited run's time at the client (see runWaited).
type clientTime struct {
	// ms is from sending the request to the answer's last byte.
	ms float64
	// decodeMs is the bench's decoding of the answer after that.
	decodeMs float64
}

// waitSucceeded polls the run until it ends and requires it succeeded.
func (s *session) waitSucceeded(ctx context.Context, id string, within time.Duration) (api.Run, error) {
	r, err := s.api.WaitRun(ctx, id, within, 10*time.Millisecond)
	if err != nil {
		if aerr := s.alive(); aerr != nil {
			err = fmt.Errorf("%w (%v)", err, aerr)
		}
		return r, err
	}
	if r.Status != "succeeded" {
		return r, fmt.Errorf("run %s ended %s: %s", id, r.Status, r.Error)
	}
	return r, nil
}

// orchestratorPeak resets the VmHWM of the orchestrator (of the braid dev
// process on the dev setup); read it with rssMB.
func (s *session) orchestratorPeak() {
	if err := s.main.ResetPeak(); err != nil {
		s.env.Log.Warn("reset peak", "err", err)
	}
}

// rssMB returns the orchestrator's (braid dev's) VmHWM in MiB (NaN when
// unreadable).
func (s *session) rssMB() float64 {
	m, err := s.main.ReadMem()
	if err != nil {
		s.env.Log.Warn("read orchestrator memory", "err", err)
		return nanF()
	}
	return m.HWM
}

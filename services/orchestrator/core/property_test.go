package core

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
)

// TestPropertyRandomDAGs drives random DAGs (up to 200 nodes) through random
// completion orders, random failures, duplicated and stale results and stale
// timers, simulated crashes that reload the run from what was persisted, and
// checks the core's invariants after every step. Seeds are fixed; set
// BRAID_PROP_SEED to replay one.
func TestPropertyRandomDAGs(t *testing.T) {
	t.Parallel()
	seeds := make([]uint64, 0, 300)
	if s := os.Getenv("BRAID_PROP_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("BRAID_PROP_SEED: %v", err)
		}
		seeds = append(seeds, n)
	} else {
		count := uint64(300)
		if testing.Short() {
			count = 40
		}
		for i := uint64(1); i <= count; i++ {
			seeds = append(seeds, i)
		}
	}
	var fans fanStats
	for _, seed := range seeds {
		if err := runProperty(seed, &fans); err != nil {
			t.Fatalf("seed %d (replay with BRAID_PROP_SEED=%d): %v", seed, seed, err)
		}
	}
	t.Logf("fan-out nodes: %+v", fans)
	if len(seeds) > 1 && (fans.succeeded == 0 || fans.failed == 0 || fans.empty == 0 || fans.instances == 0) {
		t.Fatalf("the random DAGs no longer exercise fan-out: %+v", fans)
	}
	if len(seeds) > 1 && (fans.cancels == 0 || fans.retries == 0) {
		t.Fatalf("the random runs no longer exercise cancel and retry: %+v", fans)
	}
}

// fanStats tallies how fan-out nodes ended, so the test notices when its
// generator stops exercising them.
type fanStats struct{ succeeded, failed, empty, instances, cancels, retries int }

var rules = []dag.TriggerRule{dag.TriggerAllDone, dag.TriggerOneSuccess, dag.TriggerOneFailed, dag.TriggerNoneFailed, dag.TriggerAllFailed}

// randomDefinition builds a random DAG: edges go from lower to higher rank,
// then definition positions are shuffled.
func randomDefinition(rng *rand.Rand) *dag.Definition {
	n := 1 + rng.IntN(200)
	perm := rng.Perm(n) // rank → position
	nodes := make([]dag.Node, n)
	for rank := 0; rank < n; rank++ {
		nd := dag.Node{ID: fmt.Sprintf("n%d", rank), Handler: "noop"}
		for k := 0; k < rng.IntN(4) && rank > 0; k++ {
			dep := fmt.Sprintf("n%d", rank-1-rng.IntN(min(rank, 20)))
			if !contains(nd.DependsOn, dep) {
				nd.DependsOn = append(nd.DependsOn, dep)
			}
		}
		if rng.IntN(3) == 0 {
			nd.TriggerRule = rules[rng.IntN(len(rules))]
		}
		if rng.IntN(4) == 0 {
			nd.Retry = &dag.RetryPolicy{MaxAttempts: 1 + rng.IntN(3), InitialInterval: dag.Duration(time.Duration(rng.IntN(5)) * time.Millisecond)}
		}
		if rng.IntN(10) == 0 {
			nd.Timeout = dag.Duration(time.Second)
		}
		if rng.IntN(12) == 0 {
			nd.When = "false"
		}
		if rng.IntN(5) == 0 {
			fanOut(rng, &nd)
		}
		nodes[perm[rank]] = nd
	}
	return &dag.Definition{Name: "prop", Nodes: nodes}
}

// fanOut turns nd into a fan-out node: a parallel of 1-4 instances, or a
// foreach over a parent's items (0-3 of them; every simulated output carries
// some), with a small concurrency cap at random.
func fanOut(rng *rand.Rand, nd *dag.Node) {
	if len(nd.DependsOn) > 0 && rng.IntN(2) == 0 {
		nd.Foreach = "<< " + nd.DependsOn[0] + ".items >>"
	} else {
		nd.Parallel = json.RawMessage(strconv.Itoa(1 + rng.IntN(4)))
	}
	nd.Concurrency = rng.IntN(3)
	nd.Config = json.RawMessage(`{"i":"<< index >>","c":"<< count >>"}`)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// sim is the outside world of one property run.
type sim struct {
	rng       *rand.Rand
	r         *Run
	now       int64
	inflight  []Dispatch
	results   []Result // every result sent, for duplicates
	timers    []TimerArm
	persisted []records.NodeRecord
	outputs   []json.RawMessage
	terminal  []int // terminal transitions per node
	// fan-out storage, as the shell would hold it in Redis
	instances map[Slot]records.NodeRecord
	instOuts  map[Slot]json.RawMessage
	items     map[int][]json.RawMessage
	instTerm  map[Slot]int // terminal transitions per instance
	// orphans are attempts whose worker died while its claim stays stored
	// (held by an incarnation that is gone), by node and instance.
	orphans map[Slot]int
	// cancels and retries count the run's cancellations and the retries of
	// its failed or cancelled end; stats tallies them over all seeds.
	cancels, retries int
	// attemptBase is each node's attempt number when a retry last reset
	// it; instBase the same for fan-out instances a retry kept.
	attemptBase []int
	instBase    map[Slot]int
	// genBase is, per fan-out node, the highest instance attempt of its
	// launches before a rerun started every instance afresh: the new
	// launch's instances count from it. lastAttempt is the highest attempt
	// dispatched per node instance, which a dispatch may repeat (a lost
	// attempt sent again) but never go below (its key would repeat).
	genBase     map[int]int
	lastAttempt map[Slot]int
}

func runProperty(seed uint64, stats *fanStats) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g, err := dag.Compile(randomDefinition(rng))
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	p, err := NewPlan(g)
	if err != nil {
		return err
	}
	r, err := NewRun("run", 1, p, nil, 0)
	if err != nil {
		return err
	}
	n := len(g.Def.Nodes)
	s := &sim{rng: rng, r: r, persisted: make([]records.NodeRecord, n), outputs: make([]json.RawMessage, n), terminal: make([]int, n),
		instances: map[Slot]records.NodeRecord{}, instOuts: map[Slot]json.RawMessage{}, items: map[int][]json.RawMessage{}, instTerm: map[Slot]int{},
		orphans: map[Slot]int{}, attemptBase: make([]int, n), instBase: map[Slot]int{}, genBase: map[int]int{}, lastAttempt: map[Slot]int{}}
	for i := range s.persisted { // a record never written reads as the initial one (the shell's restore)
		s.persisted[i] = InitialRecord(p, i)
	}
	if err := s.step(Start{Now: 0}); err != nil {
		return err
	}
	for steps := 0; steps < 200*n+1000; steps++ {
		if len(s.inflight) == 0 && len(s.timers) == 0 {
			if s.r.Status.Terminal() {
				if err := s.checkFinal(stats); err != nil {
					return err
				}
				if !s.retryEnd() {
					stats.cancels, stats.retries = stats.cancels+s.cancels, stats.retries+s.retries
					return nil
				}
				if err := s.step(Control{Now: s.now, Action: ControlRetry, Reason: "prop retry"}); err != nil {
					return fmt.Errorf("step %d (retry): %w", steps, err)
				}
				continue
			}
			// Workers died with attempts in hand: only the reconciler can help.
			if err := s.step(s.reconcileEvent()); err != nil {
				return fmt.Errorf("step %d: %w", steps, err)
			}
			continue
		}
		ev := s.nextEvent()
		if err := s.step(ev); err != nil {
			return fmt.Errorf("step %d (%T %+v; cancels %d, retries %d): %w", steps, ev, ev, s.cancels, s.retries, err)
		}
	}
	return fmt.Errorf("no quiescence after %d steps", 200*n+1000)
}

// nextEvent picks what happens next in the world.
func (s *sim) nextEvent() Event {
	s.now++
	if s.rng.IntN(80) == 0 {
		s.crash()
	}
	if s.rng.IntN(60) == 0 && len(s.inflight) > 0 { // a worker dies mid-attempt
		i := s.rng.IntN(len(s.inflight))
		if d := s.inflight[i]; s.rng.IntN(2) == 0 { // its claim outlives it
			s.orphans[Slot{Node: d.Node, Instance: d.Instance}] = d.Attempt
		}
		s.inflight = append(s.inflight[:i], s.inflight[i+1:]...)
	}
	if s.rng.IntN(100) == 0 || len(s.inflight) == 0 && len(s.timers) == 0 {
		return s.reconcileEvent()
	}
	if s.rng.IntN(400) == 0 && !s.r.Status.Terminal() && s.cancels < 2 {
		s.cancels++ // results and timers still in flight arrive afterwards
		return Control{Now: s.now, Action: ControlCancel, Reason: "prop cancel"}
	}
	switch k := s.rng.IntN(20); {
	case k == 0 && len(s.results) > 0: // duplicate or stale result
		res := s.results[s.rng.IntN(len(s.results))]
		res.Now = s.now
		return res
	case k < 4 && len(s.timers) > 0 || len(s.inflight) == 0:
		i := s.rng.IntN(len(s.timers))
		tm := s.timers[i]
		s.timers = append(s.timers[:i], s.timers[i+1:]...)
		return Timer{Now: max(s.now, tm.At), Kind: tm.Kind, Node: tm.Node, Instance: tm.Instance, Attempt: tm.Attempt}
	}
	i := s.rng.IntN(len(s.inflight))
	d := s.inflight[i]
	res := Result{Now: s.now, Node: s.r.NodeID(d.Node), Instance: d.Instance, Attempt: d.Attempt, Worker: "w"}
	switch k := s.rng.IntN(10); {
	case k == 0:
		res.Status = ResultRunning
		return res // stays in flight
	case k < 3:
		res.Status, res.Error, res.Permanent = ResultFailed, "boom", s.rng.IntN(3) == 0
	default:
		res.Status, res.Output = ResultSucceeded, json.RawMessage(fmt.Sprintf(`{"n":%d,"i":%d,"items":[%s]}`, d.Node, d.Instance, "1,2,3"[:2*(d.Node%4)-min(d.Node%4, 1)]))
	}
	s.inflight = append(s.inflight[:i], s.inflight[i+1:]...)
	s.results = append(s.results, res)
	return res
}

// retryEnd decides whether a failed or cancelled end is retried (at most
// twice per run): the failed, cancelled and skipped nodes and what follows
// them run again.
func (s *sim) retryEnd() bool {
	if s.r.Status == records.RunSucceeded || s.retries >= 2 || s.rng.IntN(2) == 0 {
		return false
	}
	s.retries++
	s.now++
	return true
}

// reconcileEvent jumps time past every repair threshold and reports which
// current attempts a live worker still holds.
func (s *sim) reconcileEvent() Event {
	s.now += RedispatchAfter.Milliseconds() + 10_000
	claimed, insts := map[int]bool{}, map[Slot]bool{}
	current := map[Slot]int{}
	for _, a := range s.r.InFlightInstances() {
		current[a.Slot] = a.Attempt
	}
	for _, d := range s.inflight {
		slot := Slot{Node: d.Node, Instance: d.Instance}
		switch {
		case s.r.Nodes[d.Node].FanOut && current[slot] == d.Attempt:
			insts[slot] = true
		case !s.r.Nodes[d.Node].FanOut && d.Attempt == s.r.Nodes[d.Node].Attempt:
			claimed[d.Node] = true
		}
	}
	ev := Reconcile{Now: s.now, Claimed: claimed, Instances: insts,
		Orphaned: map[int]records.Holder{}, OrphanedInstances: map[Slot]records.Holder{}}
	for slot, attempt := range s.orphans {
		dead := records.Holder{Incarnation: "gone", Worker: "w"}
		switch {
		case s.r.Nodes[slot.Node].FanOut && current[slot] == attempt && !insts[slot]:
			ev.OrphanedInstances[slot] = dead
		case !s.r.Nodes[slot.Node].FanOut && s.r.Nodes[slot.Node].Attempt == attempt && s.r.Nodes[slot.Node].State.InFlight() && !claimed[slot.Node]:
			ev.Orphaned[slot.Node] = dead
		}
	}
	clear(s.orphans) // the repair deletes the orphaned claims
	return ev
}

// crash reloads the run from what was persisted, as a new owner would.
func (s *sim) crash() {
	old := s.r
	nodes := append([]records.NodeRecord(nil), s.persisted...)
	outs := append([]json.RawMessage(nil), s.outputs...)
	r := Restore(old.ID, old.Version, old.Plan, nodes, outs)
	r.Status, r.Input, r.CreatedAt, r.StartedAt, r.Seq = old.Status, old.Input, old.CreatedAt, old.StartedAt, old.Seq
	r.FinishedAt, r.Error, r.Paused = old.FinishedAt, old.Error, old.Paused
	for _, i := range r.FanOutsToLoad() {
		st := FanOutState{Items: s.items[i], Instances: map[int]records.NodeRecord{}, Outputs: map[int]json.RawMessage{}}
		for slot, rec := range s.instances {
			if slot.Node == i {
				st.Instances[slot.Instance] = rec
			}
		}
		for slot, out := range s.instOuts {
			if slot.Node == i {
				st.Outputs[slot.Instance] = out
			}
		}
		r.RestoreFanOut(i, st)
	}
	s.r = r
}

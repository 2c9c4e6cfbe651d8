package orchsvc

import (
	"context"
	"errors"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
)

// reconcileBatch bounds the active runs one ZSCAN call asks for (and so
// the RECONCILE controls published per produce call).
const reconcileBatch = 500

// maintain runs the duties one orchestrator performs for all: firing due
// timers, asking the owners of active runs to reconcile them (at
// start-up, then every ReconcileEvery, and as soon as possible when a
// worker starts or is found dead, so that attempts lost with a worker run
// again within a pass instead of a heartbeat timeout), and deleting the
// runs past their retention (prune.go). The holder of the
// maintenance lease (dutylease.go) does them; the others stand by.
func (s *Service) maintain(ctx context.Context) {
	timers := time.NewTicker(s.cfg.TimerPoll)
	defer timers.Stop()
	started := s.rdb.Subscribe(ctx, s.keys.WorkerChannel())
	defer started.Close()
	rc := s.newReconciler()
	pr := newPruner(s.keys.AllRunShards())
	var lastLiveness, lastCount time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-started.Channel():
			s.log.Info("worker started: reconciling what a predecessor may have left", logkey.WorkerID, m.Payload)
			s.offers.forget() // the pass should see the handlers it offers
			rc.busy.request()
			continue
		case <-timers.C:
		}
		if !s.metrics.leading(dutyMaintenance, s.maintLease.hold(ctx)) {
			rc.reset()
			pr.reset()
			continue
		}
		if err := s.fireAllDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("fire due timers", logkey.Err, err)
		}
		if time.Since(lastLiveness) >= s.cfg.LivenessCheck {
			lastLiveness = time.Now()
			if s.workersDied(ctx) {
				rc.busy.request()
			}
		}
		if time.Since(lastCount) >= s.cfg.ReconcileEvery {
			lastCount = time.Now()
			if err := s.countRuns(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("count the runs of each index", logkey.Err, err)
			}
		}
		if err := s.reconcileStep(ctx, rc, time.Now()); err != nil && ctx.Err() == nil {
			s.log.Warn("reconcile runs", logkey.Err, err)
		}
		if err := s.pruneStep(ctx, pr, time.Now()); err != nil && ctx.Err() == nil {
			s.log.Warn("delete runs past their retention", logkey.Err, err)
		}
	}
}

// runSets are the run indexes braid_runs counts, by its set label.
func (s *Service) runSets() map[string][]string {
	return map[string][]string{
		"stored": s.keys.AllRunShards(),
		"active": s.keys.ActiveRunShards(),
		"busy":   s.keys.BusyRunShards(),
	}
}

// countRuns sets braid_runs: the size of each run index, summed over its
// shards with one pipelined ZCARD each (a few dozen commands every
// ReconcileEvery, whatever the number of runs).
func (s *Service) countRuns(ctx context.Context) error {
	sets := s.runSets()
	cmds := map[string][]*redis.IntCmd{}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for set, shards := range sets {
			for _, k := range shards {
				cmds[set] = append(cmds[set], p.ZCard(ctx, k))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	counts := make(map[string]int64, len(sets))
	for set, cs := range cmds {
		for _, c := range cs {
			counts[set] += c.Val()
		}
	}
	s.metrics.indexedRuns(counts)
	return nil
}

// The reconcile passes, as sweep names and metric labels.
const (
	passBusy   = "busy"
	passActive = "active"
)

// reconciler is the maintenance leader's two reconcile passes: over the
// busy runs every ReconcileEvery at ReconcileRate, and — as the backstop —
// over every active run every ReconcileAllEvery at a quarter of that rate
// (busy.go). A worker that starts or dies asks for a pass over the busy
// runs only: they are the runs its attempts are in.
type reconciler struct {
	busy, all *sweep
}

func (s *Service) newReconciler() *reconciler {
	return &reconciler{
		busy: newSweep(passBusy, s.keys.BusyRunShards(), s.cfg.ReconcileRate, s.cfg.TimerPoll),
		all:  newSweep(passActive, s.keys.ActiveRunShards(), allRate(s.cfg.ReconcileRate), s.cfg.TimerPoll),
	}
}

// reset abandons both passes: a new leader begins them at once.
func (rc *reconciler) reset() {
	rc.busy.reset()
	rc.all.reset()
}

// reconcileStep steps both passes, the busy runs' first.
func (s *Service) reconcileStep(ctx context.Context, rc *reconciler, now time.Time) error {
	return errors.Join(s.sweepStep(ctx, rc.busy, now, s.cfg.ReconcileEvery), s.sweepStep(ctx, rc.all, now, s.cfg.ReconcileAllEvery))
}

// allRate is the rate of the pass over every active run: a quarter of the
// busy runs' (at least one run a second). It is the backstop for what is
// not busy — a timer or an admission nudge lost with Redis's last second,
// a run the api recorded but whose start was lost, an entry of a run that
// ended — so it may be slow, and with many runs waiting it should be.
func allRate(rate int) int { return max(1, rate/4) }

// sweep is one of the maintenance leader's reconcile passes: it walks
// every shard of an index (the busy runs, or every active run) with ZSCAN
// and asks for a RECONCILE of each run it finds, at most rate runs a
// second. A pass over a few thousand runs
// still takes a moment; one over a hundred thousand is spread over its
// length instead of landing on the orchestrators as one burst every
// ReconcileEvery (each control loads its run), so a stack holding many
// runs that wait (approvals, long tasks) spends a bounded share of its
// CPU on them. ZSCAN returns every member present for the whole walk at
// least once however the set changes meanwhile (a run may be asked twice;
// RECONCILE is idempotent), where pages by rank skip members when earlier
// ones leave. Not safe for concurrent use: the maintain loop owns it.
type sweep struct {
	name   string // which runs: "busy" or "active"
	shards []string
	rate   float64 // runs a second
	burst  float64 // the most credit that can gather: one poll's worth

	shard   int    // the shard being walked; len(shards) when no pass is in progress
	cursor  uint64 // the ZSCAN cursor within it
	started time.Time
	asked   int  // runs asked in this pass
	again   bool // a pass is wanted as soon as the current one ends
	credit  float64
	at      time.Time // when credit was last refilled
}

func newSweep(name string, shards []string, rate int, poll time.Duration) *sweep {
	sw := &sweep{name: name, shards: shards, rate: float64(rate)}
	sw.burst = max(1, sw.rate*poll.Seconds())
	sw.reset()
	return sw
}

// reset abandons the pass in progress; the next step begins one.
func (sw *sweep) reset() {
	sw.shard, sw.cursor, sw.started, sw.again = len(sw.shards), 0, time.Time{}, false
}

// active reports whether a pass is in progress.
func (sw *sweep) active() bool { return sw.shard < len(sw.shards) }

// request asks for a pass as soon as possible: at the next step when none
// is in progress, right after the current one otherwise (a pass restarted
// at every worker event could starve the runs at its end).
func (sw *sweep) request() {
	if sw.active() {
		sw.again = true
		return
	}
	sw.started = time.Time{}
}

// due reports whether a new pass should begin at now.
func (sw *sweep) due(now time.Time, every time.Duration) bool {
	return !sw.active() && (sw.again || sw.started.IsZero() || now.Sub(sw.started) >= every)
}

// begin starts a pass at now, with one poll's worth of credit.
func (sw *sweep) begin(now time.Time) {
	sw.shard, sw.cursor, sw.started, sw.again, sw.asked = 0, 0, now, false, 0
	sw.credit, sw.at = sw.burst, now
}

// refill adds the credit earned since the last refill, up to burst.
func (sw *sweep) refill(now time.Time) {
	if d := now.Sub(sw.at); d > 0 {
		sw.credit = min(sw.burst, sw.credit+sw.rate*d.Seconds())
	}
	sw.at = now
}

// advance moves past one ZSCAN page that returned next as its cursor.
func (sw *sweep) advance(next uint64) {
	sw.cursor = next
	if next == 0 {
		sw.shard++
	}
}

// sweepStep begins a pass when one is due (every after the last began)
// and asks for as many RECONCILEs as the pass's credit allows. An error
// leaves the pass where it was: the next step scans the failed page again.
func (s *Service) sweepStep(ctx context.Context, sw *sweep, now time.Time, every time.Duration) error {
	if sw.due(now, every) {
		sw.begin(now)
	} else if sw.active() {
		sw.refill(now)
	}
	for sw.active() && sw.credit >= 1 {
		page, next, err := s.rdb.ZScan(ctx, sw.shards[sw.shard], sw.cursor, "", int64(min(sw.credit, reconcileBatch))).Result()
		if err != nil {
			return err
		}
		if err := s.askReconcile(ctx, page); err != nil {
			return err
		}
		n := len(page) / 2
		s.metrics.reconciled(sw.name, n)
		sw.credit -= float64(n) // a small set comes whole (ZSCAN's COUNT is a hint): the debt is paid from later credit
		sw.asked += n
		sw.advance(next)
		if !sw.active() {
			s.log.Debug("reconcile pass done", logkey.Pass, sw.name, logkey.Runs, sw.asked, logkey.Took, time.Since(sw.started).Round(time.Millisecond))
		}
	}
	return nil
}

// askReconcile publishes a RECONCILE control for each run of page, a ZSCAN
// answer of an active-runs shard (member, score, member, score, ...).
func (s *Service) askReconcile(ctx context.Context, page []string) error {
	if len(page) < 2 {
		return nil
	}
	msgs := make([]eventbus.Message, 0, len(page)/2)
	for i := 0; i+1 < len(page); i += 2 {
		run := page[i]
		m, err := eventbus.NewMessage(eventsv1.TopicWorkflowControl, run, &eventsv1.RunControl{
			RunId: run, Action: eventsv1.ControlAction_CONTROL_ACTION_RECONCILE, RequestedAtMs: time.Now().UnixMilli(),
		})
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	return s.prod.Publish(ctx, msgs...)
}

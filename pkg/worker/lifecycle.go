package worker

import (
	"context"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
)

// Shutdown bounds beyond Config.DrainTimeout.
const (
	// handbackGrace is how long cancelled handlers get to return before the
	// worker releases their claims without them.
	handbackGrace = 5 * time.Second
	// publishGrace is how long the last results get to be acknowledged.
	publishGrace = 10 * time.Second
)

// running holds what Run started and shutdown stops: the functions that end
// each part, not the parts' contexts, which start passes to them.
type running struct {
	prod       *eventbus.Producer
	cons       *eventbus.Consumer
	cancelExec context.CancelCauseFunc
	execDone   <-chan struct{}
	stopPub    context.CancelFunc
	pubDone    <-chan struct{}
	stopMaint  context.CancelFunc
	maintDone  <-chan struct{}
	liveDone   <-chan struct{}
}

// start launches the executors, the publisher, the maintenance loop and
// the liveness renewal, each under its own context derived from ctx without
// its cancellation: they outlive ctx, and shutdown ends them in turn. The
// executors' context is the parent of every attempt's; it is cancelled with
// errShutdown when the drain time is up.
func (w *Worker) start(ctx context.Context, prod *eventbus.Producer, cons *eventbus.Consumer) *running {
	w.started = time.Now()
	base := context.WithoutCancel(ctx)
	execCtx, cancelExec := context.WithCancelCause(base)
	pubCtx, stopPub := context.WithCancel(base)
	maintCtx, stopMaint := context.WithCancel(base)
	w.announce(base)
	return &running{
		liveDone: goDone(func() { w.keepLiving(maintCtx) }),
		prod:     prod, cons: cons,
		cancelExec: cancelExec, execDone: w.startExecutors(execCtx),
		stopPub: stopPub, pubDone: goDone(func() { w.publishLoop(pubCtx, prod) }),
		stopMaint: stopMaint, maintDone: goDone(func() { w.maintain(maintCtx) }),
	}
}

// startExecutors starts the fixed pool of Concurrency executors, which run
// attempts under ctx. Each returns its slot after every attempt; the returned
// channel closes when all have exited (after work is closed).
func (w *Worker) startExecutors(ctx context.Context) <-chan struct{} {
	var wg sync.WaitGroup
	for range w.cfg.Concurrency {
		wg.Go(func() {
			for a := range w.work {
				w.execute(ctx, a)
				w.slots <- struct{}{}
			}
		})
	}
	return goDone(wg.Wait)
}

// shutdown runs after fetching stopped: leave the consumer group (so other
// workers take over its partitions while this one drains; everything fetched
// but not settled is delivered to them), drain, hand back, publish, stop
// maintenance and the heartbeats, close. Every wait is bounded but the one
// for the heartbeats, each of which ends within ioTimeout. ctx is Run's
// (ended) context: its values go with the hand-backs' I/O.
func (w *Worker) shutdown(ctx context.Context, r *running) {
	w.commits.Close() // what was settled is committed before the group moves on
	if err := r.cons.Close(); err != nil {
		w.log.Warn("close consumer", logkey.Err, err)
	}
	close(w.work)
	if !waitDone(r.execDone, w.cfg.DrainTimeout) {
		w.log.Warn("drain timeout: cancelling attempts still running", logkey.InFlight, w.inflight.len())
		r.cancelExec(errShutdown)
		if !waitDone(r.execDone, handbackGrace) {
			w.abandon(ctx)
		}
	}
	w.out.close()
	if !waitDone(r.pubDone, publishGrace) {
		r.stopPub()
		<-r.pubDone
	}
	r.stopMaint()
	w.inflight.leaveAll() // what is left had its result lost: its heartbeats end
	<-r.maintDone
	<-r.liveDone
	w.beats.Wait()
	// The liveness key is left to expire (LivenessTimeout), not deleted:
	// everything was finished or handed back, and a deleted key would make
	// the maintenance leader reconcile at once and declare lost an attempt
	// whose result is published but not applied yet (found by the scaling
	// test). By the time it expires, the results are applied.
	r.cancelExec(errShutdown)
	r.stopPub()
	if err := r.prod.Close(); err != nil {
		w.log.Warn("close producer", logkey.Err, err)
	}
	w.log.Info("worker stopped", logkey.Stats, w.Stats())
}

// abandon releases the claims of attempts whose handlers ignored
// cancellation, so that the reconciler re-dispatches them; their results, if
// they ever come, are not published. Their executors are the only
// goroutines of the worker that Run does not wait for.
func (w *Worker) abandon(ctx context.Context) {
	for _, a := range w.inflight.snapshot() {
		a.mu.Lock()
		done := a.finished
		a.mu.Unlock()
		if done {
			continue
		}
		a.log().Error("handler ignored cancellation; handing the attempt back without it")
		w.handBack(ctx, a)
	}
}

// goDone runs f in a goroutine and returns a channel closed when f returns.
func goDone(f func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return done
}

// waitDone waits for done up to d; false on timeout.
func waitDone(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
